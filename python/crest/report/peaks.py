"""The report's peak figures and seed-style comparisons: the peak bar chart's data with an index against a
baseline, the servers × CPUs pivot of peaks (VeriTest's figures 1 and 13), the pooled paired test across
workloads (Kornecki's 36 pairs), and which suite each point of a "better of" curve came from.

Each function returns a plain JSON-able part of the report document (keys
"peaks", "pooled", "best_of"), or None when it has nothing to say. The
statistics come from crest.analysis; nothing here prints or escapes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from crest.analysis import Configuration, PairedResult, PeakTable
from crest.analysis.bestof import BestOf
from crest.analysis.grouped import baselines, indexes
from crest.analysis.pivot import peak_pivot
from crest.analysis.pooled import POOL_FACTOR, can_pool, pooled_tests
from crest.analysis.stats import DEFAULT_INTERVAL, INTERVALS, IntervalMethod
from crest.errors import ConfigError
from crest.report.grouped import grouped_json


def peaks_section(table: PeakTable, baseline: str | None = None) -> dict[str, Any] | None:
    """One bar per configuration (its peak in the table's headline metric, its CI over trials, its index
    against its baseline), the pivot of peaks by CPU count and the grouped figure; None for a single
    configuration without a baseline. A baseline that names a factor value held by several configurations
    indexes each against the one equal to it in every other factor (see crest.analysis.grouped)."""
    rows = table.rows
    if len(rows) < 2 and baseline is None:
        return None
    base = baselines(rows, baseline) if baseline is not None else None
    ratios: list[float | None] = indexes(rows, base, table.metric) if base is not None else [None] * len(rows)
    throughput = table.metric == "throughput_Bps"
    pivot = peak_pivot(rows)
    return {
        "baseline": None if base is None else rows[base.single].label if base.single is not None else base.name,
        "baseline_factor": None if base is None else base.factor,
        "metric": table.metric,
        "bars": [
            {"index": i, "label": r.label, "rps": r.peak_rps, "value": r.peak_value(table.metric),
             "ci95": r.peak.throughput_Bps_ci95 if throughput else r.peak_rps_ci95, "n": r.n,
             "load": r.peak.throughput_load if throughput else r.peak_rps_load, "ratio": ratio,
             "baseline": None if base is None or base.rows[i] is None else rows[base.rows[i] or 0].label}
            for i, (r, ratio) in enumerate(zip(rows, ratios))
        ],
        "pivot": None if pivot is None else {
            "column_factor": pivot.column_factor,
            "columns": pivot.columns,
            "rows": [{"label": p.label, "rps": p.cells, "configurations": p.configurations} for p in pivot.rows],
        },
        "grouped": grouped_json(table, baseline),
    }  # fmt: skip


def pooled_section(
    configs: Sequence[Configuration],
    load_axis: str,
    factor: str | None,
    method: IntervalMethod = INTERVALS[DEFAULT_INTERVAL],
) -> dict[str, Any] | None:
    """Paired tests of req/s and throughput pooled over every level of `factor` (default: workload, when
    the runs span two or more workloads on two or more sides), each with `method`'s interval; None when
    there is nothing to pool."""
    name = factor or POOL_FACTOR
    if factor is None and not can_pool(configs, name):
        return None
    try:
        tests = pooled_tests(configs, name, load_axis=load_axis, confidence=method.confidence, quantile=method.quantile)
    except ConfigError:
        if factor is not None:  # asked for: the reason is the answer
            raise
        return None  # found by itself and not comparable: the pairwise tests say why
    return {
        "factor": name,
        "tests": [
            {**paired_json(t.result, method), "levels": t.levels, "pairs_by_level": dict(t.pairs_by_level)}
            for t in tests
        ],
    }


def best_of_section(configs: Sequence[Configuration], load_axis: str) -> list[dict[str, Any]] | None:
    """Each merged configuration's suites and the suite every load point came from."""
    merged = [c for c in configs if isinstance(c, BestOf)]
    if not merged:
        return None
    return [
        {"label": c.label, "suites": c.suites,
         "points": [{"load": load, "suite": suite} for load, suite in c.sources(load_axis).items()]}
        for c in merged
    ]  # fmt: skip


def paired_json(result: PairedResult, method: IntervalMethod = INTERVALS[DEFAULT_INTERVAL]) -> dict[str, Any]:
    """A paired test as the report's comparison rows carry it; "ci95" keeps its name whatever `method`
    computed it, and "interval" names the method."""
    return {
        "a": result.a, "b": result.b, "n": result.n, "mean_diff": result.mean_diff, "sd": result.sd,
        "ci95": result.ci95, "significant": result.significant, "verdict": result.verdict, "note": result.note,
        "mean_a": result.mean_a, "mean_b": result.mean_b, "metric": result.metric, "interval": method.name,
    }  # fmt: skip


def interval_json(method: IntervalMethod) -> dict[str, Any]:
    """The report's "paired_interval": which interval every paired test in it carries, and how to read it."""
    fixed = method.quantile if not isinstance(method.quantile, str) else None
    return {"name": method.name, "confidence": method.confidence, "critical_value": fixed, "label": method.label,
            "method": method.method}  # fmt: skip
