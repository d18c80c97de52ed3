"""Reading the CSV tables analysis takes as input (published results, designed experiments); no analysis here.

A table is UTF-8 CSV with a header line; blank lines and lines starting
with "#" are skipped, so a file can cite its source in a comment. One record
per line (no quoted line breaks), so errors can name the line.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

from crest.errors import ConfigError

Value: TypeAlias = int | float | str


@dataclass
class CsvTable:
    """A table's columns in file order and its rows as text; lines[i] is the file line of rows[i]."""

    path: Path
    columns: list[str]
    rows: list[dict[str, str]]
    lines: list[int]

    def where(self, row: int) -> str:
        """ "FILE:LINE" of a row, for error messages."""
        return f"{self.path}:{self.lines[row]}"


def read_csv(path: Path) -> CsvTable:
    """Read a table; ConfigError (one line, names the file and line) when it cannot be used."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"no file {path}: check the path") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path} is not UTF-8 text: save the table as a UTF-8 CSV") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}: check the path and its permissions") from exc
    numbered = [(n, line) for n, line in enumerate(text.splitlines(), start=1)
                if line.strip() and not line.lstrip().startswith("#")]  # fmt: skip
    if not numbered:
        raise ConfigError(f"{path} holds no table: give a CSV with a header line and one row per line")
    try:
        records = [next(csv.reader([line], skipinitialspace=True)) for _, line in numbered]
    except csv.Error as exc:
        raise ConfigError(f"{path} is not valid CSV ({exc}): give one record per line") from exc
    columns = [c.strip() for c in records[0]]
    seen: set[str] = set()
    for column in columns:
        if not column or column in seen:
            problem = "an empty column name" if not column else f"column {column!r} twice"
            raise ConfigError(f"{path}:{numbered[0][0]}: the header has {problem}: give each column one unique name")
        seen.add(column)
    rows: list[dict[str, str]] = []
    for (line_no, _), record in zip(numbered[1:], records[1:]):
        if len(record) != len(columns):
            raise ConfigError(
                f"{path}:{line_no}: {len(record)} fields but the header has {len(columns)}: one value per column"
            )
        rows.append({c: v.strip() for c, v in zip(columns, record)})
    if not rows:
        raise ConfigError(f"{path} has a header but no rows: add one row per measurement")
    return CsvTable(path, columns, rows, [n for n, _ in numbered[1:]])


def typed(value: object) -> Value:
    """A cell as the value it spells: an int ("2"), a float ("2.5", "1e3") or else the stripped text."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)):
        return value
    text = str(value).strip()
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text
