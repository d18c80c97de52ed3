"""The report's parts for the seeds' grouped figures and throughput ratios: "peaks.grouped" (bars of each
server side by side per CPU count, with percent-improvement rows: VeriTest's figures 1/3/7) and
"throughput_ratios" (Mindcraft's "2.5 times the peak, 2.3 times the load, 43.5% faster at 48").

Each function returns a plain JSON-able part of the report document, or None
when it has nothing to say. The figures come from crest.analysis.grouped and
crest.analysis.ratios; nothing here prints or escapes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from crest.analysis import Configuration, PeakTable
from crest.analysis.grouped import CPUS_FACTOR, Baselines, grouped_bars, pairs
from crest.analysis.ratios import throughput_ratios


def grouped_json(table: PeakTable, baseline: str | None) -> dict[str, Any] | None:
    """The grouped figure of the table's peaks in its headline metric; None when no factor varies within
    groups of another."""
    g = grouped_bars(table.rows, table.metric, table.ranking(), baseline)
    if g is None:
        return None
    return {
        "metric": g.metric, "series_factor": g.series_factor, "series": g.series, "group_factors": g.group_factors,
        "panel_factors": g.panel_factors, "reference": g.reference, "reference_is_baseline": g.reference_is_baseline,
        "panels": [
            {"label": p.label, "groups": p.groups, "group_values": p.group_values,
             "group_titles": [group_title(g.group_factors, v) for v in p.group_values], "values": p.values,
             "configurations": p.configurations,
             "improvements": [{"a": i.a, "b": i.b, "pct": i.pct} for i in p.improvements]}
            for p in g.panels
        ],
    }  # fmt: skip


def group_title(factors: Sequence[str], values: Sequence[Any]) -> list[str]:
    """A group's name in lines, as the seed printed "DL760 - 4P": each factor's value, the CPU count as
    "4 CPUs"."""
    return [f"{v} CPU{'' if v == 1 else 's'}" if f == CPUS_FACTOR else str(v) for f, v in zip(factors, values)]


def ratios_section(
    configs: Sequence[Configuration], table: PeakTable, base: Baselines | None, load_axis: str, why: str
) -> dict[str, Any] | None:
    """Throughput ratios of each configuration over its baseline (or the leader over each other); None for
    a single configuration. `why`: "throughput" (runs judged by it) or "network" (runs over a client network)."""
    chosen = pairs(table.rows, table.ranking(), base)
    if not chosen:
        return None
    rows = throughput_ratios(configs, table.rows, chosen, load_axis)
    return {
        "why": why,
        "pairs": [
            {"a": r.a, "b": r.b, "peak_a_Bps": r.peak_a_Bps, "peak_b_Bps": r.peak_b_Bps, "peak_ratio": r.peak_ratio,
             "load_a": r.load_a, "load_b": r.load_b, "load_ratio": r.load_ratio, "at_load": r.at_load,
             "at_load_a_Bps": r.at_load_a_Bps, "at_load_b_Bps": r.at_load_b_Bps, "at_load_pct": r.at_load_pct,
             "by_load": [{"load": x.load, "a_Bps": x.a_Bps, "b_Bps": x.b_Bps, "ratio": x.ratio} for x in r.by_load]}
            for r in rows
        ],
    }  # fmt: skip
