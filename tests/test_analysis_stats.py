"""crest.analysis.stats: mean, sample sd, t intervals and CV against hand computations."""

from __future__ import annotations

import math

import pytest

from crest.analysis.stats import (
    coefficient_of_variation,
    confidence_interval,
    describe,
    excludes_zero,
    interval_from_summary,
    mean,
    sample_sd,
    t_quantile,
)
from crest.errors import ConfigError


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


def test_excludes_zero() -> None:
    assert excludes_zero((0.5, 2.0)) and excludes_zero((-3.0, -0.1))
    assert not excludes_zero((-0.1, 2.0)) and not excludes_zero(None)
