"""PointStats: the trials of one configuration merged load point by load point (mean, sd, CI, CV).

Owns matching points across trials by load, and the mean curve built from it. It must not group runs into
configurations (group.py) nor compare configurations (compare.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from crest.analysis.points import LoadPoint
from crest.analysis.stats import describe, mean
from crest.verdicts import DECIDING, PEAK_ONLY


@dataclass
class PointStats:
    """One load across n trials. sd and cv are None when n = 1, the CIs below 3 trials, and a CI's lower
    end is at least 0 (stats.nonnegative_interval).

    latency_us holds the mean over trials of each percentile every trial
    reported; target_cpu_pct_mean is None when no trial was monitored.
    clients, threads and connections are the first trial's; errors and
    requests are summed over trials; client_bound and target_idle hold when
    any trial's point was.
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
    clients: int = 0
    threads: int = 0
    connections: int = 0
    requests: int = 0
    errors: int = 0
    engine_cpu_pct_mean: float | None = None
    target_idle_pct_mean: float | None = None
    client_bound: bool = False
    target_idle: bool = False


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
    rps = describe([p.rps for p in points], nonnegative=True)
    throughput = describe([p.throughput_Bps for p in points], nonnegative=True)
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
        clients=points[0].clients,
        threads=points[0].threads,
        connections=points[0].connections,
        requests=sum(p.requests for p in points),
        errors=sum(p.errors for p in points),
        engine_cpu_pct_mean=_mean_known([p.engine_cpu_pct for p in points]),
        target_idle_pct_mean=_mean_known([p.target_idle_pct for p in points]),
        client_bound=any(p.client_bound for p in points),
        target_idle=any(p.target_idle for p in points),
    )


def mean_curve(trials: Sequence[Sequence[LoadPoint]]) -> list[LoadPoint]:
    """The configuration's curve: one LoadPoint per load with the trials' means (the trial itself
    when there is one), so a curve summary judges the curve a reader sees."""
    return [_mean_point(s, _all_at(trials, s.load)) for s in aggregate_trials(trials)]


def _mean_point(s: PointStats, at: list[LoadPoint]) -> LoadPoint:
    first = at[0]
    # What decided any trial at this load decided the mean there too: one verdict of each DECIDING kind;
    # a published peak (no load given) stays one, so the curve's summary can say it has no curve.
    deciding = {v.kind: v for p in reversed(at) for v in p.verdicts if v.kind in DECIDING or v.kind == PEAK_ONLY}
    return LoadPoint(
        load=s.load, clients=s.clients, threads=s.threads, connections=s.connections, rps=s.rps_mean,
        throughput_Bps=s.throughput_Bps_mean, requests=s.requests, errors=s.errors, error_rate=s.error_rate_mean,
        latency_us=dict(s.latency_us), target_cpu_pct=s.target_cpu_pct_mean, engine_cpu_pct=s.engine_cpu_pct_mean,
        client_bound=s.client_bound, client_rps=[], littles_load_factor=None, index=first.index,
        window_s=first.window_s, target_idle_pct=s.target_idle_pct_mean, target_idle=s.target_idle,
        verdicts=list(deciding.values()),
    )  # fmt: skip


def _all_at(trials: Sequence[Sequence[LoadPoint]], load: float) -> list[LoadPoint]:
    return [p for trial in trials for p in trial if p.load == load]


def _mean_known(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return mean(known) if known else None
