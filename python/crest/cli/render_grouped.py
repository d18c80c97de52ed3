"""The terminal tables `crest compare` prints for the seeds' grouped figures and throughput ratios: peaks
by server and CPU count with a percent-improvement row per column (VeriTest's figure 2), and each pair's
throughput ratios (Mindcraft's "2.5 times the peak, 2.3 times the load, 43.5% faster at 48"). Formats the
report document only: every figure comes from crest.report.build.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text

from crest.cli.terminal import Column, FitTable
from crest.cli.terminal import safe as _safe
from crest.report import fmt as rfmt

_UNIT = {"rps": "req/s", "throughput_Bps": "Mbit/s"}


def grouped_tables(grouped: dict[str, Any]) -> list[FitTable]:
    """One table per panel: a row per series, a column per group, then the improvement rows."""
    metric = grouped["metric"]
    tables = []
    for panel in grouped["panels"]:
        title = f"peak {_UNIT[metric]} by {' and '.join(grouped['group_factors'])}"
        if panel["label"]:
            title += f": {panel['label']}"
        columns = [Column(grouped["series_factor"], "left", wrap=True)]
        columns += [Column(" ".join(title), wrap=True) for title in panel["group_titles"]]
        table = FitTable(columns, title=title)
        for name, values in zip(grouped["series"], panel["values"]):
            if any(v is not None for v in values):
                table.add_row(_safe(name), *(rfmt.headline(v, metric) for v in values))
        for row in panel["improvements"]:
            table.add_row(_safe(f"{row['a']} over {row['b']}"), *(rfmt.pct(p) for p in row["pct"]))
        tables.append(table)
    return tables


def ratios_table(section: dict[str, Any], axis: str) -> FitTable:
    """One row per pair: peak throughputs and their ratio, where each peaks and that ratio, and A's gain
    over B at the load where B peaks (the load columns only where the runs give loads)."""
    loads = any(p["load_ratio"] is not None for p in section["pairs"])
    columns = [Column("A", "left", legend=True), Column("B", "left", legend=True), Column("peak Mbit/s A"),
               Column("peak Mbit/s B"), Column("peak A ÷ B")]  # fmt: skip
    if loads:
        columns += [Column(f"A peaks at ({axis})"), Column(f"B peaks at ({axis})"), Column("load A ÷ B"),
                    Column("A over B where B peaks")]  # fmt: skip
    table = FitTable(columns, title="throughput ratios (A over B)")
    mbits = "throughput_Bps"
    for p in section["pairs"]:
        row: list[str | Text] = [_safe(p["a"]), _safe(p["b"]), rfmt.headline(p["peak_a_Bps"], mbits),
               rfmt.headline(p["peak_b_Bps"], mbits), rfmt.times(p["peak_ratio"])]  # fmt: skip
        if loads:
            gain = p["at_load_pct"]
            at = rfmt.DASH if rfmt.missing(gain) else f"{gain:+.1f}% at {rfmt.load_number(p['at_load'])}"
            row += [rfmt.load_number(p["load_a"]), rfmt.load_number(p["load_b"]), rfmt.times(p["load_ratio"]), at]
        table.add_row(*row)
    return table
