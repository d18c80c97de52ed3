"""PointStats: the trials of one configuration merged load point by load point (mean, sd, CI, CV).

Owns matching points across trials by load. It must not group runs into
configurations (group.py) nor compare configurations (compare.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from crest.analysis.points import LoadPoint
from crest.analysis.stats import describe, mean


@dataclass
class PointStats:
    """One load across n trials. sd, cv and the CIs are None when n = 1 (see stats.Summary).

    latency_us holds the mean over trials of each percentile every trial
    reported; target_cpu_pct_mean is None when no trial was monitored.
    """

    load: float
    n: int
    rps_mean: float
    rps_sd: float | None
    rps_ci95: tuple[float, float] | None
    rps_cv: float | None
    throughput_Bps_mean: float
    throughput_Bps_sd: float | None
    throughput_Bps_ci95: tuple[float, float] | None
    latency_us: dict[str, float]
    error_rate_mean: float
    target_cpu_pct_mean: float | None


def aggregate_trials(trials: Sequence[Sequence[LoadPoint]]) -> list[PointStats]:
    """Merge the trials' curves by load, in increasing load; a load missing from a trial has a smaller n.

    A trial with two points at one load (a ladder that repeats a load)
    contributes both, as if they were separate trials.
    """
    by_load: dict[float, list[LoadPoint]] = {}
    for trial in trials:
        for point in trial:
            by_load.setdefault(point.load, []).append(point)
    return [_stats(load, by_load[load]) for load in sorted(by_load)]


def _stats(load: float, points: list[LoadPoint]) -> PointStats:
    rps = describe([p.rps for p in points])
    throughput = describe([p.throughput_Bps for p in points])
    shared = set.intersection(*(set(p.latency_us) for p in points))
    keys = [k for k in points[0].latency_us if k in shared]  # keep the stored order (p50, p90, …)
    cpus = [p.target_cpu_pct for p in points if p.target_cpu_pct is not None]
    return PointStats(
        load=load,
        n=len(points),
        rps_mean=rps.mean,
        rps_sd=rps.sd,
        rps_ci95=rps.ci95,
        rps_cv=rps.cv,
        throughput_Bps_mean=throughput.mean,
        throughput_Bps_sd=throughput.sd,
        throughput_Bps_ci95=throughput.ci95,
        latency_us={k: mean([p.latency_us[k] for p in points]) for k in keys},
        error_rate_mean=mean([p.error_rate for p in points]),
        target_cpu_pct_mean=mean(cpus) if cpus else None,
    )
