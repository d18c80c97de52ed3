"""What the CLI prints text through: a console that reads nothing as markup, and text with control
characters made visible.

Every string that came from a target, a suite or a results file goes through `safe`, so it can
inject neither rich markup nor terminal escape sequences. Owns no command; prints nothing itself.
"""

from __future__ import annotations

import os
import re
from typing import Any

from rich.console import Console
from rich.text import Text

# C0 and C1 control characters and DEL: a target could send ESC sequences that repaint a terminal.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# Piped output is read in logs and files, where wrapping a table row helps nobody.
PIPE_WIDTH = 200


def safe_str(text: Any) -> str:
    """The text with control characters shown as escapes (\\x1b), so a terminal never interprets them."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(text))


def safe(text: Any) -> Text:
    """`safe_str` as a rich Text, which rich never reads as markup."""
    return Text(safe_str(text))


def console(pipe_width: int = PIPE_WIDTH) -> Console:
    """A console with markup, emoji and highlighting off (nothing printed is rich markup, and ":smile:"
    in a URL must stay text), `pipe_width` columns wide when not on a terminal and COLUMNS is unset."""
    out = Console(markup=False, emoji=False, highlight=False)
    if not out.is_terminal and "COLUMNS" not in os.environ:
        out = Console(markup=False, emoji=False, highlight=False, width=pipe_width)
    return out
