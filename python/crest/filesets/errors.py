"""The errors of crest.filesets; every one is bad input (a ConfigError, CLI exit 2) with a one-line message.

They also derive from ValueError so that plain-Python callers can catch them
without knowing crest's hierarchy. This module defines errors only.
"""

from __future__ import annotations

from crest.errors import ConfigError


class FilesetError(ConfigError, ValueError):
    """A fileset request or a fileset directory that crest cannot act on."""


class UnknownFilesetError(FilesetError):
    """A fileset name that is not one of crest.filesets.NAMES."""


class ManifestError(FilesetError):
    """A manifest that is missing, unreadable or not crest's."""


class DirectoryConflictError(FilesetError):
    """A directory that holds something generate must not overwrite (another fileset, foreign files)."""
