"""What the CLI prints text through: a console that reads nothing as markup, text with control
characters made visible, and `FitTable`, the one table every command prints.

Every string that came from a target, a suite or a results file goes through `safe`, so it can
inject neither rich markup nor terminal escape sequences. A `FitTable` never cuts a figure or a word:
it wraps labels at spaces, else numbers long labels into a legend, else stacks its rows. Owns no
command; prints nothing itself.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from rich import box
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.table import Table
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


# -- tables that fit the terminal ------------------------------------------------------------------------------------

Justify = Literal["left", "right"]
# Between two columns: the left one's padding, the (blank) divider, the right one's padding.
_GAP = 3
_PAIR_GAP = "   "
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
    """How a `FitTable` is drawn at one width: `table` with these column `widths`; `legend`, the same with
    the legend columns' labels numbered (`labels`: the legend's entries in order); or `stacked`, one block
    per row (a heading line, then `header value` pairs)."""

    kind: Literal["table", "legend", "stacked"]
    widths: tuple[int, ...] = ()
    labels: tuple[str, ...] = ()


class FitTable:
    """A table that keeps every digit and every word of its cells at any width: laid out when the console
    draws it, as a table whose label columns wrap at spaces, else with long labels moved to a numbered
    legend, else stacked one block per row. Every table crest prints in the terminal is one."""

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
        """The layout this table takes at `width` columns."""
        widths = self._widths(width, self.rows)
        if widths is not None:
            return Layout("table", widths)
        if any(c.legend for c in self.columns):
            labels = self._legend_labels()
            widths = self._widths(width, self._numbered(labels))
            if widths is not None:
                return Layout("legend", widths, tuple(labels))
        return Layout("stacked")

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        layout = self.layout(options.max_width)
        if self.title is not None:
            yield Text(self.title) if isinstance(self.title, str) else self.title
        if layout.kind == "stacked":
            yield from self._stacked(options.max_width)
        else:
            rows = self.rows
            if layout.kind == "legend":
                yield from (Text(f"[{n}] ") + Text(label) for n, label in enumerate(layout.labels, 1))
                rows = self._numbered(list(layout.labels))
            yield self._table(layout.widths, rows)
        if self.caption is not None:
            yield Text(self.caption) if isinstance(self.caption, str) else self.caption

    def _widths(self, width: int, rows: list[list[Text]]) -> tuple[int, ...] | None:
        """Each column's width when the table fits `width`, the spare shared by the columns that lack it most;
        None when even each column's narrowest (its widest figure, its longest word) cannot fit."""
        least, most = [], []
        for i, column in enumerate(self.columns):
            cells = [row[i].plain for row in rows]
            lines = [line for text in [column.header, *cells] for line in text.splitlines()]
            header_words = [cell_len(w) for w in column.header.split()]
            if column.wraps:
                narrowest = [cell_len(w) for text in cells for w in text.split()] + header_words
            else:
                narrowest = [cell_len(line) for text in cells for line in text.splitlines()] + header_words
            least.append(max(narrowest, default=0))
            most.append(max((cell_len(line) for line in lines), default=0))
        gaps = _GAP * (len(self.columns) - 1)
        if sum(least) + gaps > width:
            return None
        widths = list(least)
        spare = width - gaps - sum(widths)
        # A figure's header on one line first (it costs a few columns once); then the labels that lack the
        # most, since a wrapped label costs a line in every row.
        for i, column in enumerate(self.columns):
            if not column.wraps and spare >= most[i] - widths[i]:
                spare -= most[i] - widths[i]
                widths[i] = most[i]
        while spare > 0:
            lacking, i = max((most[i] - widths[i], i) for i in range(len(widths)))
            if lacking <= 0:
                break
            widths[i] += 1
            spare -= 1
        return tuple(max(w, 1) for w in widths)

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

    def _table(self, widths: Sequence[int], rows: list[list[Text]]) -> Table:
        table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
        for column, w in zip(self.columns, widths):
            table.add_column(column.header, justify=column.justify, style=column.style, width=w, overflow="fold")
        for row in rows:
            table.add_row(*row)
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
