"""Throughput ratios: how Mindcraft compared file servers ("2.5 times the peak", "2.3 times the load",
"43.5% faster at 48 test systems"), for runs judged by throughput and runs over a client network.

For a pair A over B (see grouped.pairs): A's peak throughput ÷ B's, the load
A peaks at ÷ the load B peaks at, A's percent improvement over B at the load
where B peaks (Mindcraft's 48 clients were Samba's peak), and A ÷ B at every
load both measured. The throughput of a load is the mean over trials; the
peak is the top of that mean curve (peak.peak_of). Owns these figures; it
must not choose the pairs or print.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from crest.analysis.compare import PeakRow, percent_improvement, ratio
from crest.analysis.group import Configuration
from crest.analysis.repeats import mean_curve
from crest.verdicts import PEAK_ONLY, has


@dataclass(frozen=True)
class LoadRatio:
    """A and B at one load both measured: mean throughput (bytes/s) and A ÷ B."""

    load: float
    a_Bps: float
    b_Bps: float
    ratio: float


@dataclass(frozen=True)
class ThroughputRatio:
    """A over B in throughput. load_a and load_b are where each throughput curve peaks; they, load_ratio
    and the figures at B's peak load are None for peak tables, which give no load."""

    a: str
    b: str
    peak_a_Bps: float
    peak_b_Bps: float
    peak_ratio: float
    load_a: float | None
    load_b: float | None
    load_ratio: float | None
    at_load: float | None
    at_load_a_Bps: float | None
    at_load_b_Bps: float | None
    at_load_pct: float | None
    by_load: list[LoadRatio] = field(default_factory=list)


def throughput_ratios(
    configs: Sequence[Configuration], rows: Sequence[PeakRow], pairs: Sequence[tuple[int, int]], load_axis: str
) -> list[ThroughputRatio]:
    """The throughput ratios of each (A, B) pair of configuration indexes; rows are their peak-table rows."""
    curves = [_curve(c, load_axis) for c in configs]
    out = []
    for i, j in pairs:
        a, b = rows[i], rows[j]
        loads = curves[i] is not None and curves[j] is not None
        by_load: list[LoadRatio] = []
        if loads:
            at_b = dict(curves[j] or [])
            by_load = [LoadRatio(load, v, at_b[load], ratio(v, at_b[load])) for load, v in curves[i] or []
                       if load in at_b]  # fmt: skip
        load_a = a.peak.throughput_load if loads else None
        load_b = b.peak.throughput_load if loads else None
        at = next((r for r in by_load if r.load == load_b), None)
        out.append(ThroughputRatio(
            a=a.label, b=b.label, peak_a_Bps=a.peak_throughput_Bps, peak_b_Bps=b.peak_throughput_Bps,
            peak_ratio=ratio(a.peak_throughput_Bps, b.peak_throughput_Bps),
            load_a=load_a, load_b=load_b,
            load_ratio=ratio(load_a, load_b) if load_a is not None and load_b is not None else None,
            at_load=load_b, at_load_a_Bps=at.a_Bps if at else None, at_load_b_Bps=at.b_Bps if at else None,
            at_load_pct=percent_improvement(at.a_Bps, at.b_Bps) if at else None, by_load=by_load,
        ))  # fmt: skip
    return out


def _curve(config: Configuration, load_axis: str) -> list[tuple[float, float]] | None:
    """(load, mean throughput) of the configuration's mean curve; None for a peak table (no load)."""
    points = mean_curve([p for p in config.trial_points(load_axis) if p])
    if any(has(p.verdicts, PEAK_ONLY) for p in points):  # the mean curve keeps a published peak's verdict
        return None
    return [(p.load, p.throughput_Bps) for p in points if not math.isnan(p.throughput_Bps)]
