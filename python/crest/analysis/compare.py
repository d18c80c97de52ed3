"""Is A faster than B? Percent improvement, peak tables, and Lilja's paired-difference test.

Owns comparisons between configurations: the seed reports' "percent
improvement of A over B" (per point and at peak) and the confidence interval
of the mean of paired differences over matched (load, trial) points. It must
not group runs (group.py) or judge a single curve (summary.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from crest.analysis.group import Configuration
from crest.analysis.peak import Peak, peak_of
from crest.analysis.points import LoadPoint
from crest.analysis.stats import CONFIDENCE, Quantile, describe, excludes_zero, mean
from crest.analysis.summary import CurveSummary, summarize
from crest.errors import ConfigError

# LoadPoint attributes a comparison may use; latency percentiles are named by their key (p50, p99, …).
POINT_METRICS = ("rps", "throughput_Bps", "error_rate", "littles_load_factor", "target_cpu_pct", "engine_cpu_pct")
LATENCY_KEYS = ("p50", "p90", "p99", "p999", "max", "mean", "min", "stdev")
# What a peak table ranks and indexes: req/s, or throughput for runs judged by it (file servers, NetBench).
HEADLINE_METRICS = ("rps", "throughput_Bps")


def percent_improvement(a: float, b: float) -> float:
    """How much better A is than B, in percent of B: (A − B) ÷ B × 100; NaN when B is 0 (undefined)."""
    if b == 0:
        return math.nan
    return (a - b) / b * 100.0


@dataclass
class PeakRow:
    """One configuration's peak: the highest point of its mean curve over trials (see peak.peak_of),
    each trial's own peak included; the properties name its figures as the tables do."""

    label: str
    factors: dict[str, Any]
    peak: Peak
    summaries: list[CurveSummary] = field(default_factory=list)  # one per trial

    @property
    def n(self) -> int:
        """Trials that measured the peak's load."""
        return self.peak.n

    @property
    def peak_rps(self) -> float:
        return self.peak.rps

    @property
    def peak_rps_sd(self) -> float | None:
        """Over trials at the peak's load; None for a single trial."""
        return self.peak.rps_sd

    @property
    def peak_rps_ci95(self) -> tuple[float, float] | None:
        return self.peak.rps_ci95

    @property
    def peak_rps_load(self) -> float:
        """Where the mean curve peaks."""
        return self.peak.load

    @property
    def peak_throughput_Bps(self) -> float:
        return self.peak.throughput_Bps

    def peak_value(self, metric: str = "rps") -> float:
        """The peak of a headline metric (HEADLINE_METRICS): req/s, or bytes/s at the throughput's own peak."""
        return self.peak_throughput_Bps if metric == "throughput_Bps" else self.peak_rps

    def ranking_key(self, metric: str = "rps") -> float:
        """Higher peaks first; a missing peak last."""
        value = self.peak_value(metric)
        return -value if math.isfinite(value) else math.inf


@dataclass
class PeakTable:
    """Peaks side by side; improvement_pct[i][j] is the percent improvement of rows[i] over rows[j] in the
    table's headline metric (req/s; throughput for runs judged by it, see throughput.headline_metric)."""

    rows: list[PeakRow]
    improvement_pct: list[list[float]]
    metric: str = "rps"

    def improvement(self, a: str, b: str) -> float:
        """The percent improvement of the configuration labelled `a` over the one labelled `b`."""
        labels = [r.label for r in self.rows]
        for label in (a, b):
            if label not in labels:
                raise ConfigError(f"no configuration {label!r} in the table: it has {', '.join(map(repr, labels))}")
        return self.improvement_pct[labels.index(a)][labels.index(b)]

    def ranking(self) -> list[int]:
        """Row indices from the highest peak to the lowest (ties keep table order)."""
        return sorted(range(len(self.rows)), key=lambda i: self.rows[i].ranking_key(self.metric))


def peak_table(configs: Sequence[Configuration], load_axis: str = "clients", metric: str = "rps") -> PeakTable:
    """Each configuration's peak (the top of its mean curve) and the percent improvement of each over each,
    in `metric`: req/s, or throughput_Bps for runs judged by throughput."""
    if metric not in HEADLINE_METRICS:
        raise ConfigError(f"unknown headline metric {metric!r}: use one of {', '.join(HEADLINE_METRICS)}")
    rows = [_peak_row(c, load_axis) for c in configs]
    matrix = [[percent_improvement(a.peak_value(metric), b.peak_value(metric)) for b in rows] for a in rows]
    return PeakTable(rows, matrix, metric)


def ratio(a: float, b: float) -> float:
    """A ÷ B as the seeds print "2.5 times" and "Index (Zeus = 1.00)"; NaN when B is not a positive number."""
    return a / b if b > 0 and math.isfinite(b) else math.nan


@dataclass
class PairedResult:
    """Lilja's paired comparison of A and B over matched (load, trial) points: differences are A − B.

    The difference is significant when its confidence interval excludes 0;
    then the sign of mean_diff says which is better. With n = 1 there is no
    interval and the verdict is "not significant". With one trial per side the
    pairs are the mixes of one run each, which share that run's noise: `note`
    says the test cannot tell run-to-run noise from a change.
    """

    a: str
    b: str
    n: int
    mean_diff: float
    sd: float | None
    ci95: tuple[float, float] | None
    significant: bool
    verdict: str  # "significant" or "not significant"
    metric: str = "rps"
    mean_a: float = math.nan
    mean_b: float = math.nan
    confidence: float = CONFIDENCE
    trials: int = 0  # the trials paired per side (the fewer of the two); 0 where not known

    @property
    def note(self) -> str | None:
        """What a reader must be told about the verdict: with one trial per side, that it is not one."""
        return ONE_TRIAL_NOTE if self.trials == 1 and self.n > 1 else None


# The mixes of one run share its host, page cache and target state: pairing them measures how a change varies
# over the ladder, not whether it is larger than what two runs of one configuration differ by.
ONE_TRIAL_NOTE = (
    "one trial per side: the pairs are the mixes of one run each, which share that run's noise, so this test"
    " cannot tell run-to-run noise from a change; repeat each configuration (--repeat 3) to know"
)


def paired_difference(
    a: Configuration,
    b: Configuration,
    metric: str = "rps",
    load_axis: str = "clients",
    confidence: float = CONFIDENCE,
    quantile: Quantile = "t",
) -> PairedResult:
    """Compare A and B point by point: trial i of A against trial i of B, at every load both measured.

    metric: a LoadPoint figure (rps, throughput_Bps, error_rate, …) or a latency
    percentile key (p50, p99, mean, …). Points lacking the metric are left out.
    The interval is Student's t at `confidence` unless `quantile` says otherwise (stats.critical_value).
    """
    pairs = matched_pairs(a, b, metric, load_axis)
    if not pairs:
        raise ConfigError(
            f"{a.label!r} and {b.label!r} have no load point in common with a {metric} value:"
            " compare runs of the same suite ladder"
        )
    result = paired_result(a.label, b.label, pairs, metric, confidence, quantile)
    return replace(result, trials=min(a.trial_count(), b.trial_count()))


def matched_pairs(a: Configuration, b: Configuration, metric: str, load_axis: str) -> list[tuple[float, float]]:
    """(A, B) values of `metric` at every (load, trial) both measured, trial i against trial i."""
    return trial_pairs(a.trial_points(load_axis), b.trial_points(load_axis), metric)


def trial_pairs(
    a: Sequence[Sequence[LoadPoint]], b: Sequence[Sequence[LoadPoint]], metric: str
) -> list[tuple[float, float]]:
    """matched_pairs over curves already read: trial i of `a` against trial i of `b`, load by load."""
    check_metric(metric)
    pairs: list[tuple[float, float]] = []
    for trial_a, trial_b in zip(a, b):
        at_b = {p.load: p for p in trial_b}
        for point in trial_a:
            if point.load in at_b:
                va, vb = metric_value(point, metric), metric_value(at_b[point.load], metric)
                if va is not None and vb is not None:
                    pairs.append((va, vb))
    return pairs


def paired_result(
    a: str,
    b: str,
    pairs: Sequence[tuple[float, float]],
    metric: str,
    confidence: float = CONFIDENCE,
    quantile: Quantile = "t",
) -> PairedResult:
    """Lilja's test over (A, B) pairs already matched: the interval of the mean of A − B."""
    diffs = describe([x - y for x, y in pairs], confidence, quantile)
    significant = excludes_zero(diffs.ci95)
    return PairedResult(
        a=a,
        b=b,
        n=diffs.n,
        mean_diff=diffs.mean,
        sd=diffs.sd,
        ci95=diffs.ci95,
        significant=significant,
        verdict="significant" if significant else "not significant",
        metric=metric,
        mean_a=mean([x for x, _ in pairs]),
        mean_b=mean([y for _, y in pairs]),
        confidence=confidence,
    )


def metric_value(point: LoadPoint, metric: str) -> float | None:
    """One figure of a point by name; None when the point lacks it (or it is NaN)."""
    check_metric(metric)
    value = getattr(point, metric) if metric in POINT_METRICS else point.latency_us.get(metric)
    if value is None or math.isnan(float(value)):
        return None
    return float(value)


def find_label(labels: Sequence[str], name: str) -> int:
    """The index of the configuration `name` names: its whole label, or a value of one of its factors
    ("nginx" for "server=nginx cpus=2") when exactly one label has it. ConfigError otherwise."""
    if name in labels:
        return labels.index(name)
    holders = [i for i, label in enumerate(labels) if name in (w.split("=", 1)[-1] for w in label.split())]
    if len(holders) == 1:
        return holders[0]
    known = ", ".join(map(repr, labels))
    if holders:
        raise ConfigError(f"{name!r} names {len(holders)} configurations: give a whole label, one of {known}")
    raise ConfigError(f"no configuration {name!r}: give a label, one of {known}")


def check_metric(metric: str) -> None:
    """Raise ConfigError unless `metric` names a LoadPoint figure or a latency key."""
    if metric not in POINT_METRICS and metric not in LATENCY_KEYS:
        raise ConfigError(f"unknown metric {metric!r}: use one of {', '.join(POINT_METRICS + LATENCY_KEYS)}")


def _peak_row(config: Configuration, load_axis: str) -> PeakRow:
    trials = [points for points in config.trial_points(load_axis) if points]
    if not trials:
        raise ConfigError(f"configuration {config.label!r} has no stored mix in any trial: pick runs that measured")
    summaries = [summarize(points, sweep=load_axis == "size") for points in trials]
    peak = peak_of(trials)
    return PeakRow(label=config.label, factors=dict(config.factors), peak=peak, summaries=summaries)
