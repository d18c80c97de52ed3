"""The terminal tables `crest compare` adds to the peak table: paired tests of req/s and throughput, the
pooled test over workloads, the suite behind each point of a better-of curve, and the pivot of peaks by
CPU count. Formats the report document only: every figure comes from crest.report.build.
"""

from __future__ import annotations

from typing import Any

from crest.cli.terminal import Column, FitTable
from crest.cli.terminal import safe as _safe
from crest.report import fmt as rfmt

_UNITS = {"rps": ("req/s", rfmt.signed_rps, rfmt.rps), "throughput_Bps": ("throughput, MB/s", rfmt.signed_mbytes, rfmt.mbytes)}  # fmt: skip


def paired_table(
    rows: list[dict[str, Any]], metric: str, title: str = "paired-difference test", interval: str = "95% CI"
) -> FitTable:
    """One row per pair of configurations: pairs, mean A − B, its interval (headed `interval`, the report's
    paired_interval label) and the verdict; under it, the rows' notes (one trial per side: the test cannot
    tell run-to-run noise from a change)."""
    unit, signed, plain = _UNITS[metric]
    pooled = any("levels" in p for p in rows)
    columns = [Column("A", "left", legend=True), Column("B", "left", legend=True), Column("pairs"),
               Column("mean A − B"), Column("sd"), Column(interval), Column("verdict", "left", wrap=True)]  # fmt: skip
    if pooled:
        columns.insert(3, Column("levels", "left", wrap=True))
    notes = dict.fromkeys(p["note"] for p in rows if p.get("note") and p.get("verdict") != "not comparable")
    table = FitTable(columns, title=f"{title} of {unit} (A − B)", caption="; ".join(notes) or None)
    for p in rows:
        row = [_safe(p["a"]), _safe(p["b"]), str(p["n"]), signed(p["mean_diff"]), plain(p["sd"]),
               rfmt.interval(p["ci95"], signed), p["verdict"]]  # fmt: skip
        if pooled:
            row.insert(3, _safe(", ".join(f"{k} {v}" for k, v in p["pairs_by_level"].items())))
        table.add_row(*row)
    return table


def best_of_table(merged: list[dict[str, Any]], axis: str) -> FitTable:
    """Each merged configuration's loads and the suite that supplied them."""
    columns = [Column("configuration", "left", legend=True), Column("suite", "left"), Column(axis, "left", wrap=True)]
    table = FitTable(columns, title="better of the suites: where each point came from")
    for m in merged:
        for suite in m["suites"]:
            loads = [rfmt.load_number(p["load"]) for p in m["points"] if p["suite"] == suite]
            table.add_row(_safe(m["label"]), _safe(suite), ", ".join(loads) or rfmt.DASH)
    return table


def pivot_table(pivot: dict[str, Any]) -> FitTable:
    """Peak req/s, rows by server (every other factor), columns by CPU count (VeriTest's figure 13)."""
    factor = pivot["column_factor"]
    columns = [Column("", "left", legend=True)] + [Column(f"{factor}={column}") for column in pivot["columns"]]
    table = FitTable(columns, title=f"peak req/s by {factor}")
    for row in pivot["rows"]:
        table.add_row(_safe(row["label"]), *(rfmt.rps(v) for v in row["rps"]))
    return table
