"""The terminal tables `crest compare` adds to the peak table: paired tests of req/s and throughput, the
pooled test over workloads, the suite behind each point of a better-of curve, and the pivot of peaks by
CPU count. Formats the report document only: every figure comes from crest.report.build.
"""

from __future__ import annotations

from typing import Any

from rich import box
from rich.table import Table

from crest.cli.terminal import safe as _safe
from crest.report import fmt as rfmt

_UNITS = {"rps": ("req/s", rfmt.signed_rps, rfmt.rps), "throughput_Bps": ("throughput, MB/s", rfmt.signed_mbytes, rfmt.mbytes)}  # fmt: skip


def paired_table(rows: list[dict[str, Any]], metric: str, title: str = "paired-difference test") -> Table:
    """One row per pair of configurations: pairs, mean A − B, its interval and the verdict."""
    unit, signed, plain = _UNITS[metric]
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, title=f"{title} of {unit} (A − B)",
                  title_justify="left")  # fmt: skip
    pooled = any("levels" in p for p in rows)
    columns = [("A", "left"), ("B", "left"), ("pairs", "right"), ("mean A − B", "right"), ("sd", "right"),
               ("95% CI", "right"), ("verdict", "left")]  # fmt: skip
    if pooled:
        columns.insert(3, ("levels", "left"))
    for name, justify in columns:
        table.add_column(name, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for p in rows:
        row = [_safe(p["a"]), _safe(p["b"]), str(p["n"]), signed(p["mean_diff"]), plain(p["sd"]),
               rfmt.interval(p["ci95"], signed), p["verdict"]]  # fmt: skip
        if pooled:
            row.insert(3, _safe(", ".join(f"{k} {v}" for k, v in p["pairs_by_level"].items())))
        table.add_row(*row)
    return table


def best_of_table(merged: list[dict[str, Any]], axis: str) -> Table:
    """Each merged configuration's loads and the suite that supplied them."""
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, title_justify="left",
                  title="better of the suites: where each point came from")  # fmt: skip
    for name in ("configuration", "suite", axis):
        table.add_column(name, overflow="fold")
    for m in merged:
        for suite in m["suites"]:
            loads = [rfmt.load_number(p["load"]) for p in m["points"] if p["suite"] == suite]
            table.add_row(_safe(m["label"]), _safe(suite), ", ".join(loads) or rfmt.DASH)
    return table


def pivot_table(pivot: dict[str, Any]) -> Table:
    """Peak req/s, rows by server (every other factor), columns by CPU count (VeriTest's figure 13)."""
    factor = pivot["column_factor"]
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, title_justify="left",
                  title=f"peak req/s by {factor}")  # fmt: skip
    table.add_column("", overflow="fold")
    for column in pivot["columns"]:
        table.add_column(f"{factor}={column}", justify="right")
    for row in pivot["rows"]:
        table.add_row(_safe(row["label"]), *(rfmt.rps(v) for v in row["rps"]))
    return table
