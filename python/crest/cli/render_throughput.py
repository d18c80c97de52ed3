"""The throughput view `crest show` prints for runs judged by throughput (file-server suites, published
NetBench tables): per mix total Mbit/s (10^6 and NetBench's 2^20), MB/s, per-client Mbit/s and ops/s;
the peak and the shape past it; and, for a file run, each operation kind at the peak (and in a file bench). Formats only:
every figure comes from crest.analysis.throughput and the stored mixes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from rich.text import Text

from crest.analysis.throughput import ThroughputCurve
from crest.cli.terminal import Column, FitTable, safe
from crest.store import MixRecord
from crest.units import format_latency_us


def throughput_table(curve: ThroughputCurve) -> FitTable:
    """One row per mix, the peak marked."""
    names = ("mix", curve.load_axis, "Mbit/s", "NB Mbit/s", "MB/s", "Mbit/s per client", "ops/s", "errors")
    table = FitTable([Column(name) for name in names])
    for p in curve.points:
        mark = " ◀ peak" if p.index == curve.peak_index else ""
        table.add_row(
            str(p.index), f"{p.load:g}", f"{p.mbit_s:,.1f}{mark}", f"{p.netbench_mbit_s:,.1f}",
            f"{p.mb_s:,.2f}", "-" if math.isnan(p.per_client_mbit_s) else f"{p.per_client_mbit_s:,.2f}",
            "-" if math.isnan(p.ops_s) else f"{p.ops_s:,.0f}", f"{p.errors:,}",
        )  # fmt: skip
    return table


def operations_table(mix: MixRecord) -> FitTable | None:
    """A file mix's operation kinds: count, ops/s, MB/s moved, mean and p99 latency, errors."""
    return classes_table(mix.classes, f"operations at mix {mix.index}")


def classes_table(classes: Mapping[str, Mapping[str, Any]], title: str) -> FitTable | None:
    """One row per operation kind of a file run's report (its `classes`); None when none ran."""
    rows = [(name, c) for name, c in sorted(classes.items()) if c.get("requests") or c.get("errors")]
    if not rows:
        return None
    columns = [Column("operation", "left")] + [Column(n) for n in ("count", "ops/s", "MB/s", "mean", "p99", "errors")]
    table = FitTable(columns, title=title)
    for name, c in rows:
        lat = c.get("latency_us") or {}
        table.add_row(
            safe(name), f"{c.get('requests', 0):,}", f"{c.get('rps', 0.0):,.0f}", f"{c.get('throughput_Bps', 0.0) / 1e6:,.2f}",
            _us(lat.get("mean")), _us(lat.get("p99")), f"{c.get('errors', 0):,}",
        )  # fmt: skip
    return table


def statement(curve: ThroughputCurve) -> Text:
    """The curve's one-line statement, with NetBench's binary megabits beside crest's."""
    return Text(f"  Throughput {curve.statement} (NetBench's 2^20-bit Mbit/s: {curve.peak_netbench_mbit_s:,.1f})")


def _us(value: object) -> str:
    if not isinstance(value, (int, float)) or math.isnan(value):
        return "-"
    return format_latency_us(value)
