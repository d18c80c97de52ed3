"""Descriptive statistics of repeated measurements: mean, sample sd, t confidence interval, CV.

Owns the small-sample formulas every other analysis module uses, so a
confidence interval is computed one way everywhere. Pure functions over
numbers: no records, no I/O. t and normal quantiles come from scipy.special,
the functions scipy.stats computes them with.

Every interval is two-sided and uses Student's t with n − 1 degrees of
freedom unless a caller asks otherwise: `quantile="normal"` takes the normal
quantile instead, and a number is used as the critical value itself (a
table's rounded 1.645), so a published interval computed that way can be
reproduced digit for digit (Kornecki et al.'s, see docs/analysis.md).
INTERVALS names the methods a user picks by name (`crest compare --interval`).

Owns the rule for intervals of quantities that cannot be negative (req/s,
bytes/s, latency): none below MIN_TRIALS_FOR_INTERVAL trials, and a lower end
below 0 clipped to 0 (a floor, not a measurement; `clipped_at_zero` tells a
renderer so). Renderers word these cases; they must not decide them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from crest.errors import ConfigError

CONFIDENCE = 0.95  # the level of every interval crest reports unless asked otherwise
QUANTILES = ("t", "normal")  # the distributions an interval's critical value may come from
Quantile = str | float  # "t", "normal", or a critical value given outright


@dataclass(frozen=True)
class IntervalMethod:
    """A named way to compute a two-sided interval of a mean: its level and where its critical value comes
    from; `label` heads the column that shows it, so a reader knows which interval it is."""

    name: str
    confidence: float
    quantile: Quantile
    label: str
    method: str  # the formula in words, for captions and --help

    def critical_value(self, n: int) -> float | None:
        """The multiplier of s/√n over n values; None below 2 values (no interval)."""
        return critical_value(self.confidence, n, self.quantile) if n >= 2 else None


INTERVALS = {
    "t95": IntervalMethod("t95", CONFIDENCE, "t", "95% CI", "Student's t at 95%: mean ± t[0.975; n − 1] · s/√n"),
    # Kornecki et al. printed this one as a "95% confidence interval": the normal table's 1.645 is the two-sided
    # 90% (one-sided 95%) quantile. Rounded as the table prints it, so their interval comes out to the digit.
    "normal90": IntervalMethod("normal90", 0.90, 1.645, "90% CI (z = 1.645)", "normal at 90%: mean ± 1.645 · s/√n"),
}
DEFAULT_INTERVAL = "t95"


def interval_method(name: str) -> IntervalMethod:
    """The interval method called `name` (one of INTERVALS).

    Raises:
        ConfigError: an unknown name.
    """
    if name not in INTERVALS:
        known = " or ".join(f"{m.name} ({m.method})" for m in INTERVALS.values())
        raise ConfigError(f"unknown interval {name!r}: use {known}")
    return INTERVALS[name]


# Below 3 trials t[0.975; n − 1] is 12.7: two rates 10% apart give an interval wider than the rate and
# reaching below 0, which says nothing; from 3 (t = 4.3) an interval starts to bound something.
MIN_TRIALS_FOR_INTERVAL = 3


@dataclass
class Summary:
    """n values described: mean, sample sd, CI of the mean and coefficient of variation.

    `sd`, `cv` and `ci95` are None when n = 1 (one value has no spread), and
    `cv` is None when the mean is 0 (the ratio is undefined). Described as
    non-negative, `ci95` is also None below MIN_TRIALS_FOR_INTERVAL values and
    its lower end is at least 0.
    """

    n: int
    mean: float
    sd: float | None
    ci95: tuple[float, float] | None
    cv: float | None


def t_quantile(p: float, df: int) -> float:
    """The p-quantile of Student's t distribution with df degrees of freedom, e.g. t(0.975, 8) = 2.306."""
    if df < 1:
        raise ValueError(f"a t quantile needs at least 1 degree of freedom (got {df})")
    # scipy.special's stdtrit is what scipy.stats.t.ppf computes; imported here, and not scipy.stats, because
    # scipy.stats takes 0.6-1.2 s to import and scipy.special 0.2 s, paid by every `crest run` that reports.
    from scipy import special  # type: ignore[import-untyped, unused-ignore]

    return float(special.stdtrit(df, p))


def critical_value(confidence: float, n: int, quantile: Quantile = "t") -> float:
    """The multiplier of s/√n for a two-sided interval at `confidence` over n values: t[1 − α/2; n − 1]
    by default, the normal z[1 − α/2] for "normal", or `quantile` itself when it is a number."""
    if not 0.0 < confidence < 1.0:
        raise ConfigError(f"invalid confidence {confidence}: give a level between 0 and 1, e.g. 0.95")
    if not isinstance(quantile, str):
        if not (math.isfinite(quantile) and quantile > 0):
            raise ConfigError(f"invalid critical value {quantile}: give a positive number, e.g. 1.96")
        return float(quantile)
    p = 1.0 - (1.0 - confidence) / 2.0
    if quantile == "t":
        return t_quantile(p, n - 1)
    if quantile == "normal":
        from scipy import special  # type: ignore[import-untyped, unused-ignore]

        return float(special.ndtri(p))  # scipy.stats.norm.ppf's own function
    raise ConfigError(f"unknown quantile {quantile!r}: use one of {', '.join(QUANTILES)} or a critical value")


def mean(values: Sequence[float]) -> float:
    """The arithmetic mean; a NaN among the values gives NaN."""
    _require(values)
    return math.fsum(values) / len(values)


def sample_sd(values: Sequence[float]) -> float | None:
    """The sample standard deviation (n − 1 in the denominator); None for a single value."""
    _require(values)
    n = len(values)
    if n < 2:
        return None
    m = mean(values)
    return math.sqrt(math.fsum((v - m) ** 2 for v in values) / (n - 1))


def confidence_interval(
    values: Sequence[float], confidence: float = CONFIDENCE, quantile: Quantile = "t"
) -> tuple[float, float] | None:
    """The two-sided CI of the mean: mean ± t[1 − α/2; n − 1] · s/√n; None for a single value."""
    sd = sample_sd(values)
    if sd is None:
        return None
    return interval_from_summary(mean(values), sd, len(values), confidence, quantile)


def nonnegative_interval(
    values: Sequence[float], confidence: float = CONFIDENCE, quantile: Quantile = "t"
) -> tuple[float, float] | None:
    """The CI of the mean of a quantity that cannot be negative (a rate, a size, a latency): None below
    MIN_TRIALS_FOR_INTERVAL values, else confidence_interval with its lower end raised to 0 if below."""
    if len(values) < MIN_TRIALS_FOR_INTERVAL:
        return None
    interval = confidence_interval(values, confidence, quantile)
    if interval is None:
        return None
    return (max(0.0, interval[0]), interval[1])


def too_few_for_interval(n: int) -> bool:
    """Whether n repeated values (2 or more) are too few for nonnegative_interval to give one: the case a
    reader must be told about, where one value has no interval to withhold."""
    return 2 <= n < MIN_TRIALS_FOR_INTERVAL


def clipped_at_zero(interval: Sequence[float] | None) -> bool:
    """Whether a non-negative quantity's interval had its lower end clipped: it starts at exactly 0 and
    is not the interval of values that are all 0. Its 0 is then a floor, not a measured bound."""
    return interval is not None and len(interval) == 2 and interval[0] == 0.0 and interval[1] > 0.0


def interval_from_summary(
    m: float, sd: float, n: int, confidence: float = CONFIDENCE, quantile: Quantile = "t"
) -> tuple[float, float]:
    """The interval of a mean known only by its mean, sample sd and n (as papers print them): t unless
    `quantile` says otherwise (see critical_value)."""
    if n < 2:
        raise ConfigError(f"a confidence interval needs at least 2 values (got {n}): repeat the measurement")
    half = critical_value(confidence, n, quantile) * sd / math.sqrt(n)
    return (m - half, m + half)


def coefficient_of_variation(values: Sequence[float]) -> float | None:
    """sd ÷ mean; None for a single value or a zero mean."""
    sd = sample_sd(values)
    m = mean(values)
    if sd is None or m == 0:
        return None
    return sd / abs(m)


def describe(
    values: Sequence[float], confidence: float = CONFIDENCE, quantile: Quantile = "t", *, nonnegative: bool = False
) -> Summary:
    """All of the above at once; `nonnegative` takes nonnegative_interval's rule for the CI."""
    interval = nonnegative_interval if nonnegative else confidence_interval
    return Summary(
        n=len(values),
        mean=mean(values),
        sd=sample_sd(values),
        ci95=interval(values, confidence, quantile),
        cv=coefficient_of_variation(values),
    )


def excludes_zero(interval: tuple[float, float] | None) -> bool:
    """Whether a CI lies wholly on one side of 0 (Lilja's test of a difference); False without a CI."""
    return interval is not None and (interval[0] > 0.0 or interval[1] < 0.0)


def _require(values: Sequence[float]) -> None:
    if len(values) == 0:
        raise ConfigError("no values to describe: the selection holds no measurements; check the run ids")
