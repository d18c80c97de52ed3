"""Peaks pivoted: one row per server (every factor but the column factor), one column per CPU count.

VeriTest's figure 13 (and figure 1) sets each platform's peak req/s beside
the others at 1, 2, 4 and 8 processors; this is that table from a peak
table's rows. It must not compute peaks (compare.peak_table does).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from crest.analysis.compare import PeakRow
from crest.analysis.group import differing_factors, factor_label

CPUS_FACTOR = "cpus"


@dataclass
class PivotRow:
    """One row: its label and each column's peak req/s (None where it was not measured)."""

    label: str
    cells: list[float | None] = field(default_factory=list)
    configurations: list[str | None] = field(default_factory=list)  # the label behind each cell


@dataclass
class Pivot:
    """Rows × columns of peak req/s; `columns` are the column factor's values, ascending."""

    column_factor: str
    columns: list[Any]
    rows: list[PivotRow]


def peak_pivot(rows: Sequence[PeakRow], column_factor: str = CPUS_FACTOR) -> Pivot | None:
    """The pivot of peaks by `column_factor`; None unless it has two or more values and every row has it
    (a row and column measured twice cannot be: two configurations would share a cell)."""
    if not rows or any(column_factor not in r.factors for r in rows):
        return None
    columns = sorted({_key(r.factors[column_factor]) for r in rows}, key=_order)
    if len(columns) < 2:
        return None
    rest = [{k: v for k, v in r.factors.items() if k != column_factor} for r in rows]
    names = differing_factors(rest)
    out: dict[str, PivotRow] = {}
    for row, factors in zip(rows, rest):
        label = factor_label(factors, names) if names else "all"
        line = out.setdefault(label, PivotRow(label, [None] * len(columns), [None] * len(columns)))
        at = columns.index(_key(row.factors[column_factor]))
        if line.configurations[at] is not None:
            return None
        line.cells[at] = row.peak_rps if math.isfinite(row.peak_rps) else None
        line.configurations[at] = row.label
    return Pivot(column_factor, [_value(c) for c in columns], list(out.values()))


def _key(value: Any) -> str:
    return str(value)


def _order(key: str) -> tuple[int, float, str]:
    try:
        return (0, float(key), key)
    except ValueError:
        return (1, 0.0, key)


def _value(key: str) -> Any:
    try:
        number = float(key)
    except ValueError:
        return key
    return int(number) if number.is_integer() else number
