"""Stock configurations (--server-opt profile=stock): a distribution's configuration file, copied into the
site with only its listen address and port, docroot, pid file and log paths changed.

Owns the line edits and the header that says what was changed; never writes under /etc (it only reads
there) and never starts servers. Each adapter names its own edits (stock_files).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from pathlib import Path

from crest.errors import TargetError

# One edit of a stock file: a pattern (multi-line mode) and what replaces each match.
Edit = tuple[str, str]


def rewrite(source: Path, edits: list[Edit], *, optional: tuple[str, ...] = ()) -> str:
    """`source`'s text with each edit applied, under a header listing them.

    Raises:
        TargetError: an edit not in `optional` matched nothing (the package's file changed, so crest
            cannot tell what its stock configuration would listen on or serve).
    """
    text = source.read_text()
    done: list[str] = []

    def edit(match: re.Match[str], replacement: str) -> str:
        new = match.expand(replacement)
        # The lines as they were and are, not the patterns: a Caddyfile expands {$NAME} even in comments.
        done.append(f"#   {match.group(0)!r} -> {new!r}")
        return new

    for pattern, replacement in edits:
        text, count = re.subn(pattern, functools.partial(_edit_with, edit, replacement), text, flags=re.MULTILINE)
        if count == 0 and pattern not in optional:
            raise TargetError(f"{source} has no line matching {pattern!r}, so crest cannot adapt its stock "
                              "configuration: use --server-opt profile=tuned")  # fmt: skip
    header = [f"# {source} as the distribution ships it, copied by crest (profile=stock); changed only:", *done]
    return "\n".join(header) + "\n" + text


def files_in(directory: Path) -> list[Path]:
    """The configuration files an include of `directory`/* reads (sorted, symbolic links followed)."""
    return sorted(p for p in directory.iterdir() if p.is_file()) if directory.is_dir() else []


def _edit_with(edit: Callable[[re.Match[str], str], str], replacement: str, match: re.Match[str]) -> str:
    return edit(match, replacement)
