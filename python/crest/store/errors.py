"""StoreError and StoreFileError: the exceptions the results store raises on purpose; they never print."""

from __future__ import annotations

from crest.errors import ConfigError, MachineError


class StoreError(ConfigError):
    """The results database cannot be used as asked: unknown run, foreign or newer file, unwritable place.

    A ConfigError because each case is the user's input to fix (a run id, a
    --db path), reported in one line by the CLI with exit code 2.
    """


class StoreFileError(MachineError):
    """The results file failed as it stands, not the input: damaged (garbage where SQLite's pages should be)
    or locked by another process past the busy timeout. One line naming the file and what to do; exit 1."""
