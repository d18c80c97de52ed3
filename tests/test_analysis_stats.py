"""crest.analysis.stats: mean, sample sd, t intervals and CV against hand computations."""

from __future__ import annotations

import math

import pytest

from crest.analysis.stats import (
    MIN_TRIALS_FOR_INTERVAL,
    clipped_at_zero,
    coefficient_of_variation,
    confidence_interval,
    describe,
    excludes_zero,
    interval_from_summary,
    mean,
    nonnegative_interval,
    sample_sd,
    t_quantile,
    too_few_for_interval,
)
from crest.errors import ConfigError
from crest.report import fmt


def test_t_quantiles_match_the_tables() -> None:
    # Jain, Table A.4: t[0.975; 8] = 2.306, t[0.95; 8] = 1.860, t[0.975; 2] = 4.303
    assert t_quantile(0.975, 8) == pytest.approx(2.306, abs=5e-4)
    assert t_quantile(0.95, 8) == pytest.approx(1.860, abs=5e-4)
    assert t_quantile(0.975, 2) == pytest.approx(4.303, abs=5e-4)


def test_describe_by_hand() -> None:
    values = [10.0, 12.0, 14.0]
    # mean 12, s = sqrt((4 + 0 + 4) / 2) = 2, half width = 4.303 × 2 / √3 = 4.9686
    s = describe(values)
    assert (s.n, s.mean, s.sd) == (3, 12.0, 2.0)
    assert s.ci95 is not None
    assert s.ci95[0] == pytest.approx(12.0 - 4.9686, abs=1e-3)
    assert s.ci95[1] == pytest.approx(12.0 + 4.9686, abs=1e-3)
    assert s.cv == pytest.approx(2.0 / 12.0)


def test_a_single_value_has_no_spread() -> None:
    s = describe([7.5])
    assert (s.n, s.mean, s.sd, s.ci95, s.cv) == (1, 7.5, None, None, None)
    assert sample_sd([7.5]) is None and confidence_interval([7.5]) is None


def test_zero_mean_has_no_cv() -> None:
    assert coefficient_of_variation([-1.0, 1.0]) is None


def test_no_values_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="no values to describe"):
        mean([])


def test_nan_propagates() -> None:
    assert math.isnan(mean([1.0, math.nan]))


def test_interval_from_summary_needs_two_values() -> None:
    lo, hi = interval_from_summary(0.0, 1.0, 9, confidence=0.90)
    assert hi == pytest.approx(t_quantile(0.95, 8) / 3.0)
    assert lo == -hi
    with pytest.raises(ConfigError, match="at least 2 values"):
        interval_from_summary(0.0, 1.0, 1)
    with pytest.raises(ConfigError, match="invalid confidence"):
        interval_from_summary(0.0, 1.0, 5, confidence=95)


def test_two_rates_get_no_interval_rather_than_a_negative_bound() -> None:
    # The "21,820 req/s (mean of 2 trials, 95% CI −28,535 to 72,174)": t(1) = 12.7.
    rates = [17_857.0, 25_783.0]
    low, high = confidence_interval(rates) or (0.0, 0.0)
    assert (round(low, -2), round(high, -2)) == (-28_500, 72_200)
    assert MIN_TRIALS_FOR_INTERVAL == 3 and nonnegative_interval(rates) is None
    assert describe(rates, nonnegative=True).ci95 is None and describe(rates, nonnegative=True).sd is not None
    assert too_few_for_interval(2) and not too_few_for_interval(1) and not too_few_for_interval(3)
    assert fmt.mean_interval(None, 2) == "too few trials for an interval (n=2; --repeat 3 or more)"
    assert fmt.half_width(None, 2) == "too few (n<3)" and fmt.plus_minus(None, 1) == ""


def test_a_rate_interval_of_three_or_more_never_goes_below_zero() -> None:
    spread = [1.0, 1.0, 100.0]  # mean 34, s = 57.2, t(2) = 4.3: the t interval reaches −108
    assert (confidence_interval(spread) or (0.0, 0.0))[0] < 0
    interval = nonnegative_interval(spread)
    assert interval == pytest.approx((0.0, (confidence_interval(spread) or (0.0, 0.0))[1]))
    assert clipped_at_zero(interval) and not clipped_at_zero((0.0, 0.0)) and not clipped_at_zero((1.0, 2.0))
    assert fmt.mean_interval(interval, 3) == "95% CI 0 to 176, its 0 a clipped floor, not a measurement"
    assert fmt.half_width(interval, 3) == "0–176" and fmt.plus_minus(interval, 3) == "CI 0–176"
    steady = [10.0, 12.0, 14.0]
    assert nonnegative_interval(steady) == confidence_interval(steady)  # an interval above 0 is left alone
    assert fmt.plus_minus(nonnegative_interval(steady), 3) == "± 5.0"


def test_excludes_zero() -> None:
    assert excludes_zero((0.5, 2.0)) and excludes_zero((-3.0, -0.1))
    assert not excludes_zero((-0.1, 2.0)) and not excludes_zero(None)
