"""How wide the CLI draws, without rich: the terminal's columns, COLUMNS, or PIPE_WIDTH when piped.

Owns the rule `crest.cli.terminal.console()` applies, so that `crest bench` (whose start-up is part
of what it measures) can fit its lines without importing rich. Prints nothing.
"""

from __future__ import annotations

import os
import shutil
import sys

# Piped output is read in logs and files, where wrapping a table row helps nobody.
PIPE_WIDTH = 200


def columns() -> int:
    """COLUMNS when set, else the terminal's width, else PIPE_WIDTH (stdout is not a terminal)."""
    given = os.environ.get("COLUMNS", "")
    if given.isdigit() and int(given) > 0:
        return int(given)
    if sys.stdout.isatty():
        return shutil.get_terminal_size().columns
    return PIPE_WIDTH
