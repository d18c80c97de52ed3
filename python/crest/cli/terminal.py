"""What the CLI prints text through: a console that reads nothing as markup, text with control
characters made visible, and `FitTable`, the one table every command prints.

Every string that came from a target, a suite or a results file goes through `safe`, so it can
inject neither rich markup nor terminal escape sequences. A `FitTable` never cuts a figure or a word:
it wraps labels at spaces, else numbers long labels into a legend, else deals its columns into
several tables, else stacks its rows; `fold` wraps a printed line the same way. Owns no command;
prints nothing itself.
"""

from __future__ import annotations

import io
import os
import re
import textwrap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from rich import box
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.table import Table
from rich.text import Text

from crest.cli.width import PIPE_WIDTH

# C0 and C1 control characters and DEL: a target could send ESC sequences that repaint a terminal.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def safe_str(text: Any) -> str:
    """The text with control characters shown as escapes (\\x1b), so a terminal never interprets them."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(text))


def safe(text: Any) -> Text:
    """`safe_str` as a rich Text, which rich never reads as markup."""
    return Text(safe_str(text))


def console(pipe_width: int = PIPE_WIDTH, *, stderr: bool = False) -> Console:
    """A console on stdout (or `stderr`) with markup, emoji and highlighting off (nothing printed is rich
    markup, and ":smile:" in a URL must stay text). Not on a terminal and COLUMNS unset (a file, a pipe, a
    log), it lays tables out `pipe_width` columns wide and never wraps a line of text: rich's own default
    there is 80 columns, which hard-wrapped every long line of a run sent to a file."""
    out = Console(markup=False, emoji=False, highlight=False, stderr=stderr)
    if not out.is_terminal and "COLUMNS" not in os.environ:
        out = Console(markup=False, emoji=False, highlight=False, stderr=stderr, width=pipe_width, soft_wrap=True)
    return out


# -- tables that fit the terminal ------------------------------------------------------------------------------------

Justify = Literal["left", "right"]
# Between two columns: the left one's padding, the (blank) divider, the right one's padding.
_GAP = 3
_PAIR_GAP = "   "
_MAX_GROUPS = 3  # a table dealt into more reads better stacked
_INDENT = "  "


@dataclass(frozen=True)
class Column:
    """One column of a `FitTable`. A figure column (`wrap` False) keeps each cell on one line: the column is
    as wide as its widest value, and only its header may wrap. A `wrap` column (labels, verdicts) breaks
    cells at spaces, never inside a word; a `legend` column (configuration labels) also gives way to a
    numbered legend above the table when the table cannot fit beside it."""

    header: str
    justify: Justify = "right"
    wrap: bool = False
    legend: bool = False
    style: str = ""

    @property
    def wraps(self) -> bool:
        return self.wrap or self.legend


@dataclass(frozen=True)
class Layout:
    """How a `FitTable` is drawn at one width. `table`: one table, its column `widths`; `legend`: the same
    with the legend columns' labels numbered (`labels`: the legend, in order); `split`: the columns dealt
    into several tables (`groups` of column indices, each led by the first column, with their `widths`),
    labels numbered when there is a legend; `stacked`: one block per row, a heading line then `header value`
    pairs."""

    kind: Literal["table", "legend", "split", "stacked"]
    groups: tuple[tuple[int, ...], ...] = ()
    widths: tuple[tuple[int, ...], ...] = ()
    labels: tuple[str, ...] = ()


class FitTable:
    """A table that keeps every digit and every word of its cells at any width, laid out when the console
    draws it: one table whose label columns wrap at spaces; else long labels moved to a numbered legend;
    else its columns dealt into two or three tables that each fit; else one block per row. Every table
    crest prints in the terminal is one."""

    def __init__(
        self, columns: Sequence[Column], *, title: str | Text | None = None, caption: str | Text | None = None
    ) -> None:
        self.columns = list(columns)
        self.title = title
        self.caption = caption
        self.rows: list[list[Text]] = []

    def add_row(self, *cells: str | Text) -> None:
        if len(cells) != len(self.columns):
            raise ValueError(f"a row of {len(cells)} cells in a table of {len(self.columns)} columns")
        self.rows.append([cell if isinstance(cell, Text) else Text(cell) for cell in cells])

    def layout(self, width: int) -> Layout:
        """The layout this table takes at `width` columns: the first of one table (rows at most two lines
        tall), the same with a legend, the columns dealt into tables of one-line (then two-line) rows, one
        table or a legend with three-line rows, and one block per row."""
        every = tuple(range(len(self.columns)))
        labels = self._legend_labels() if any(c.legend for c in self.columns) else []
        numbered = self._numbered(labels)

        def whole(lines: int) -> Layout | None:
            widths = self._widths(width, self.rows, every, lines)
            if widths is not None:
                return Layout("table", (every,), (widths,))
            widths = self._widths(width, numbered, every, lines) if labels else None
            return None if widths is None else Layout("legend", (every,), (widths,), tuple(labels))

        def split(lines: int) -> Layout | None:
            groups = self._groups(width, numbered, lines)
            if groups is None:
                return None
            return Layout("split", tuple(g for g, _ in groups), tuple(w for _, w in groups), tuple(labels))

        return whole(2) or split(1) or split(2) or whole(3) or Layout("stacked")

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        layout = self.layout(options.max_width)
        if self.title is not None:
            yield Text(self.title) if isinstance(self.title, str) else self.title
        if layout.kind == "stacked":
            yield from self._stacked(options.max_width)
        else:
            rows = self.rows
            if layout.labels:
                yield from (Text(f"[{n}] ") + Text(label) for n, label in enumerate(layout.labels, 1))
                rows = self._numbered(list(layout.labels))
            for n, (group, widths) in enumerate(zip(layout.groups, layout.widths)):
                if n:
                    yield Text()
                yield self._table(group, widths, rows)
        if self.caption is not None:
            yield Text(self.caption) if isinstance(self.caption, str) else self.caption

    def _groups(
        self, width: int, rows: list[list[Text]], lines: int
    ) -> list[tuple[tuple[int, ...], tuple[int, ...]]] | None:
        """The columns dealt in order into at most _MAX_GROUPS tables, each led by the first column, each
        fitting `width` with rows at most `lines` tall; None when they need more, or a column cannot fit
        beside the first."""
        groups: list[tuple[int, ...]] = []
        group: tuple[int, ...] = (0,)
        for i in range(1, len(self.columns)):
            if self._widths(width, rows, (*group, i), lines) is not None:
                group = (*group, i)
                continue
            if len(group) == 1:
                return None
            groups.append(group)
            group = (0, i)
        groups.append(group)
        if len(groups) > _MAX_GROUPS:
            return None
        fitted = [(g, self._widths(width, rows, g, lines)) for g in groups]
        return [(g, w) for g, w in fitted if w is not None] if all(w is not None for _, w in fitted) else None

    def _widths(
        self, width: int, rows: list[list[Text]], columns: tuple[int, ...], lines: int
    ) -> tuple[int, ...] | None:
        """The widths of `columns` drawn side by side in `width`, or None when they cannot fit: even each
        column's narrowest (its widest figure, its longest word) is too wide, or a row would wrap onto more
        than `lines` lines."""
        least, most = [], []
        for i in columns:
            column = self.columns[i]
            cells = [row[i].plain for row in rows]
            header_words = [cell_len(w) for w in column.header.split()]
            if column.wraps:
                narrowest = [cell_len(w) for text in cells for w in text.split()] + header_words
            else:
                narrowest = [cell_len(line) for text in cells for line in text.splitlines()] + header_words
            least.append(max(narrowest, default=0))
            most.append(
                max((cell_len(line) for text in [column.header, *cells] for line in text.splitlines()), default=0)
            )
        gaps = _GAP * (len(columns) - 1)
        if sum(least) + gaps > width:
            return None
        widths = list(least)
        spare = width - gaps - sum(widths)
        # A figure's header on one line first (it costs a few columns once), then whole configuration labels;
        # then a column at a time to the wrapping column whose cells take the most lines.
        for first in (lambda c: not c.wraps, lambda c: c.legend):
            for k, i in enumerate(columns):
                if first(self.columns[i]) and spare >= most[k] - widths[k]:
                    spare -= most[k] - widths[k]
                    widths[k] = most[k]
        wrapping = [k for k, i in enumerate(columns) if self.columns[i].wraps]
        tall = {k: self._tallest(rows, columns[k], widths[k]) for k in wrapping}
        while spare > 0:
            lacking = [k for k in wrapping if widths[k] < most[k]]
            if not lacking:
                break
            k = max(lacking, key=lambda k: (tall[k], most[k] - widths[k]))
            widths[k] += 1
            spare -= 1
            tall[k] = self._tallest(rows, columns[k], widths[k])
        if any(tallest > lines for tallest in tall.values()):
            return None
        return tuple(max(w, 1) for w in widths)

    @staticmethod
    def _tallest(rows: list[list[Text]], i: int, width: int) -> int:
        return max((_lines(row[i].plain, width) for row in rows), default=1)

    def _legend_labels(self) -> list[str]:
        labels: list[str] = []
        for row in self.rows:
            for cell, column in zip(row, self.columns):
                if column.legend and cell.plain and cell.plain not in labels:
                    labels.append(cell.plain)
        return labels

    def _numbered(self, labels: list[str]) -> list[list[Text]]:
        def ref(cell: Text) -> Text:
            return Text(f"[{labels.index(cell.plain) + 1}]") if cell.plain else cell

        return [[ref(cell) if column.legend else cell for cell, column in zip(row, self.columns)] for row in self.rows]

    def _table(self, group: Sequence[int], widths: Sequence[int], rows: list[list[Text]]) -> Table:
        table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
        for i, w in zip(group, widths):
            column = self.columns[i]
            table.add_column(column.header, justify=column.justify, style=column.style, width=w, overflow="fold")
        for row in rows:
            table.add_row(*(row[i] for i in group))
        return table

    def _stacked(self, width: int) -> Iterator[Text]:
        """One block per row: the first cell (a figure named by its header), then the others as `header value`
        pairs packed into lines, a pair never split between lines."""
        first = self.columns[0]
        for row in self.rows:
            head = row[0].copy()
            if not first.wraps and first.header:
                head = Text(f"{first.header} ") + head
            yield head
            line = Text(_INDENT)
            for column, cell in zip(self.columns[1:], row[1:]):
                if not cell.plain:
                    continue
                value = Text(" ").join(cell.split("\n")) if "\n" in cell.plain else cell
                pair = (Text(f"{column.header} ") if column.header else Text()) + value
                if line.plain.strip() and cell_len(line.plain) + len(_PAIR_GAP) + pair.cell_len > width:
                    yield line
                    line = Text(_INDENT)
                if line.plain.strip():
                    line.append(_PAIR_GAP)
                line.append_text(pair)
            if line.plain.strip():
                yield line


def _lines(text: str, width: int) -> int:
    """How many lines `text` takes wrapped at spaces into `width` columns (a longer word: a line of its own)."""
    count = 0
    for paragraph in text.splitlines() or [""]:
        count += 1
        used = 0
        for word in paragraph.split():
            if used and used + 1 + cell_len(word) > width:
                count += 1
                used = 0
            used += (1 if used else 0) + cell_len(word)
    return count


def fold(line: str, width: int | None = None, hang: int = 2) -> str:
    """`line` wrapped at spaces to `width` columns (default: the terminal's; not wrapped at all when not on a
    terminal and COLUMNS is unset: a file keeps its lines whole), never inside a word; each further line
    indented `hang` columns past the line's own indent."""
    if width is None:
        out = console()
        if out.soft_wrap:
            return line
        width = out.width
    indent = " " * (len(line) - len(line.lstrip(" ")) + hang)
    return textwrap.fill(line, width, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False)


def terminal_width() -> int:
    """The width `console()` draws at: the terminal's, COLUMNS, or PIPE_WIDTH when piped."""
    return console().width


def render_text(renderable: RenderableType, width: int, indent: int = 0) -> str:
    """`renderable` drawn as plain text `width` columns wide, `indent` of them blank on the left, lines
    without trailing spaces; for output printed as a string (bench, SPECweb99, the network block)."""
    buffer = io.StringIO()
    out = Console(file=buffer, width=max(width - indent, 1), markup=False, emoji=False, highlight=False,
                  color_system=None)  # fmt: skip
    out.print(renderable)
    return "\n".join((" " * indent + line).rstrip() for line in buffer.getvalue().splitlines())
