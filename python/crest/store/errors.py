"""StoreError: the one exception the results store raises on purpose; it never prints."""

from __future__ import annotations

from crest.errors import ConfigError


class StoreError(ConfigError):
    """The results database cannot be used as asked: unknown run, foreign or newer file, unwritable place.

    A ConfigError because each case is the user's input to fix (a run id, a
    --db path), reported in one line by the CLI with exit code 2.
    """
