"""Peak: the one definition of a peak, used by the report, `crest runs`, `crest compare` and `crest doe`.

The peak of a configuration is the highest point of its mean curve over
trials (mean req/s per load, as the seed reports print it); its interval is
that load's 95% t CI over trials (none below 3 trials, never below 0: see
stats.nonnegative_interval). Each trial's own peak (often at another load) is
kept beside it as secondary information, never averaged into the headline;
`trials_peak_apart` says when the two differ because the trials peaked at
different loads, `rps_cv` the peak's run-to-run spread, and `trials_apart`
when trials of one configuration disagree beyond run-to-run noise. Owns finding
a curve's highest point (NaN never peaks; the first of equal maxima wins). It
must not judge the curve's shape (summary.py) nor compare configurations
(compare.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from crest.analysis.points import LoadPoint, default_load_axis, points_from_run
from crest.analysis.repeats import PointStats, aggregate_trials
from crest.analysis.stats import CONFIDENCE, mean, sample_sd, t_quantile
from crest.errors import ConfigError
from crest.store import RunDetail
from crest.verdicts import NOISY_HOST, has

# Trials of one configuration whose peaks differ by more than this share of the lower one disagree: on a
# quiet host crest's trials land within a few % (docs/analysis.md, "When trials disagree").
TRIALS_APART_PCT = 10.0
# From this many trials, one outside the 95% prediction interval of the others disagrees too (three others
# give the interval a spread to stand on).
TRIALS_FOR_OUTLIERS = 4


def highest(values: Sequence[float]) -> int | None:
    """The index of the highest value in curve order: the first of equal maxima; NaN never peaks.
    None when no value is measured."""
    best: int | None = None
    for i, value in enumerate(values):
        if not math.isnan(value) and (best is None or value > values[best]):
            best = i
    return best


@dataclass
class TrialPeak:
    """One trial's own peak: the highest point of that trial's curve alone."""

    trial: int  # 1-based, in trial order
    rps: float
    load: float


@dataclass
class Peak:
    """The highest point of a mean curve over trials, with that load's spread over trials.

    n: the trials that measured the peak load; rps_sd and rps_ci95 are None
    when n = 1. throughput_Bps is the highest point of the mean throughput
    curve (its own load: a curve of bytes may peak elsewhere); load_throughput_Bps is
    the mean throughput at `load`, the req/s peak's own mix, for a sentence whose
    figures must all come from one mix. trials: each trial's own peak;
    trial_rps_min/max/sd describe them (sd None for one).
    """

    rps: float
    load: float
    n: int
    rps_sd: float | None
    rps_ci95: tuple[float, float] | None
    throughput_Bps: float
    throughput_load: float
    throughput_Bps_ci95: tuple[float, float] | None
    trials: list[TrialPeak] = field(default_factory=list)
    trial_rps_min: float = math.nan
    trial_rps_max: float = math.nan
    trial_rps_sd: float | None = None
    load_throughput_Bps: float = math.nan
    rps_cv: float | None = None  # the run-to-run spread at the peak's load: sd ÷ mean over trials (None for one)

    @property
    def trials_peak_apart(self) -> bool:
        """Whether the trials peaked at different loads. Then at every load some trial is off its peak, so
        the mean curve's peak is lower than the mean of the trials' own peaks, often lower than each:
        a reader comparing the two needs to be told why."""
        return len({t.load for t in self.trials if not math.isnan(t.rps)}) > 1


def peak_of(trials: Sequence[Sequence[LoadPoint]]) -> Peak:
    """The peak of the trials' mean curve (trials merged by load, see aggregate_trials).

    A table that gives only throughput (NetBench's, Zeus' weighted figures) has no req/s: its peak is
    where its throughput peaks, with rps NaN.

    Raises ConfigError when no load has a measured req/s or throughput.
    """
    stats = aggregate_trials(trials)
    tp_at = highest([s.throughput_Bps_mean for s in stats])
    if tp_at is not None and highest([s.rps_mean for s in stats]) is None:
        top = stats[tp_at]
    else:
        top = _top(stats)
    tp = stats[tp_at] if tp_at is not None else top
    own = [_own_peak(i + 1, trial) for i, trial in enumerate(trials) if trial]
    own_rps = [p.rps for p in own if not math.isnan(p.rps)]
    return Peak(
        rps=top.rps_mean,
        load=top.load,
        n=top.n,
        rps_sd=top.rps_sd,
        rps_ci95=top.rps_ci95,
        throughput_Bps=tp.throughput_Bps_mean,
        throughput_load=tp.load,
        throughput_Bps_ci95=tp.throughput_Bps_ci95,
        trials=own,
        trial_rps_min=min(own_rps) if own_rps else math.nan,
        trial_rps_max=max(own_rps) if own_rps else math.nan,
        trial_rps_sd=sample_sd(own_rps) if own_rps else None,
        load_throughput_Bps=top.throughput_Bps_mean,
        rps_cv=top.rps_cv,
    )


@dataclass(frozen=True)
class TrialsApart:
    """Trials of one configuration whose peaks disagree beyond run-to-run noise: the lowest and highest
    trial peaks (trials counted from 1), the trials outside the others' prediction interval, and the trials
    whose mixes carry a noisy_host verdict (the host's noise, which explains a disagreement it touches)."""

    low_trial: int
    low_rps: float
    high_trial: int
    high_rps: float
    outliers: tuple[int, ...]
    noisy_trials: tuple[int, ...]

    @property
    def apart_pct(self) -> float:
        """How far the highest trial peak is above the lowest, in % of the lowest."""
        return 100.0 * (self.high_rps - self.low_rps) / self.low_rps if self.low_rps > 0 else math.inf

    @property
    def explained(self) -> bool:
        """Whether a noisy host explains it: one of the trials that disagree was measured on a noisy host."""
        involved = {*self.outliers, *((self.low_trial, self.high_trial) if self.apart_pct > TRIALS_APART_PCT else ())}
        return bool(involved & set(self.noisy_trials))


def trials_apart(trials: Sequence[Sequence[LoadPoint]]) -> TrialsApart | None:
    """Whether the trials of one configuration disagree: their own peaks more than TRIALS_APART_PCT apart,
    or (from TRIALS_FOR_OUTLIERS trials) one peak outside the 95% prediction interval of the others' (t with
    n − 2 degrees of freedom: mean ± t·sd·√(1 + 1/(n − 1))); None when they agree or are fewer than two."""
    own = [_own_peak(i + 1, trial) for i, trial in enumerate(trials) if trial]
    own = [p for p in own if not math.isnan(p.rps)]
    if len(own) < 2:
        return None
    low, high = min(own, key=lambda p: p.rps), max(own, key=lambda p: p.rps)
    outliers = tuple(p.trial for p in own if len(own) >= TRIALS_FOR_OUTLIERS and _outside(p, own))
    spread = 100.0 * (high.rps - low.rps) / low.rps if low.rps > 0 else math.inf
    if spread <= TRIALS_APART_PCT and not outliers:
        return None
    noisy = tuple(i + 1 for i, trial in enumerate(trials) if any(has(p.verdicts, NOISY_HOST) for p in trial))
    return TrialsApart(low.trial, low.rps, high.trial, high.rps, outliers, noisy)


def _outside(peak: TrialPeak, own: list[TrialPeak]) -> bool:
    """Whether one trial's peak lies outside the 95% prediction interval of the other trials' peaks."""
    others = [p.rps for p in own if p is not peak]
    sd = sample_sd(others)
    if sd is None:
        return False
    half = t_quantile(1 - (1 - CONFIDENCE) / 2, len(others) - 1) * sd * math.sqrt(1 + 1 / len(others))
    return abs(peak.rps - mean(others)) > half


def run_peak(detail: RunDetail) -> Peak:
    """One run's peak: the highest point of its one curve, on the axis that tells its mixes apart
    (content length for a sweep, else clients)."""
    return peak_of([points_from_run(detail, default_load_axis([detail]))])


def peak_rps_of(mix_rps: Sequence[float]) -> float | None:
    """One run's peak req/s from its mixes' req/s in ladder order, for listings that do not load the
    mixes (`crest runs`); None when no mix measured one."""
    at = highest(mix_rps)
    return None if at is None else mix_rps[at]


def _own_peak(trial: int, points: Sequence[LoadPoint]) -> TrialPeak:
    top = _top(aggregate_trials([points]), required=False)
    return TrialPeak(trial, top.rps_mean, top.load)


def _top(stats: list[PointStats], *, required: bool = True) -> PointStats:
    at = highest([s.rps_mean for s in stats])
    if at is None:
        if required or not stats:
            raise ConfigError("no load points with a measured req/s: the run stored no usable mix; pick another run")
        return stats[0]
    return stats[at]
