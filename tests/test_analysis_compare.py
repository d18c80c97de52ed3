"""crest.analysis.compare: percent improvement, peak tables and the paired-difference test by hand."""

from __future__ import annotations

import math

import pytest

from analysis_records import run
from crest.analysis import Configuration, configurations, paired_difference, peak_table, percent_improvement
from crest.analysis.stats import t_quantile
from crest.errors import ConfigError


def test_percent_improvement() -> None:
    assert percent_improvement(150.0, 100.0) == 50.0
    assert percent_improvement(50.0, 100.0) == -50.0
    assert math.isnan(percent_improvement(1.0, 0.0))


def two_configs(a: list[list[float]], b: list[list[float]]) -> list[Configuration]:
    details = [run(rps, factors={"server": "a"}, repeat_index=i, run_id=f"a{i}") for i, rps in enumerate(a)]
    details += [run(rps, factors={"server": "b"}, repeat_index=i, run_id=f"b{i}") for i, rps in enumerate(b)]
    return configurations(details)


def test_peak_table_takes_the_mean_curves_peak_and_improves_each_over_each() -> None:
    a, b = two_configs([[10.0, 30.0, 20.0], [10.0, 34.0, 20.0]], [[10.0, 20.0]])
    table = peak_table([a, b])
    row_a, row_b = table.rows
    assert (row_a.label, row_a.n, row_a.peak_rps, row_a.peak_rps_load) == ("server=a", 2, 32.0, 2.0)
    assert row_a.peak_rps_sd == pytest.approx(8.0**0.5)
    assert row_a.peak_rps_ci95 is None  # 2 trials are too few for an interval (stats.MIN_TRIALS_FOR_INTERVAL)
    assert (row_b.n, row_b.peak_rps, row_b.peak_rps_sd, row_b.peak_rps_ci95) == (1, 20.0, None, None)
    assert table.improvement_pct == [[0.0, 60.0], [-37.5, 0.0]]
    assert table.improvement("server=a", "server=b") == 60.0
    assert row_a.summaries[0].shape == "graceful degradation"
    with pytest.raises(ConfigError, match="no configuration 'server=c' in the table"):
        table.improvement("server=c", "server=a")


def test_peak_table_of_a_configuration_without_mixes() -> None:
    (empty,) = configurations([run([])])
    with pytest.raises(ConfigError, match="has no stored mix in any trial"):
        peak_table([empty])


def test_paired_difference_by_hand() -> None:
    a, b = two_configs([[10, 20, 30], [12, 22, 28]], [[9, 18, 27], [11, 21, 27]])
    result = paired_difference(a, b)
    # differences 1, 2, 3, 1, 1, 1: mean 1.5, s = √(3.5 / 5), CI = 1.5 ± t[0.975; 5] · s / √6
    sd = math.sqrt(3.5 / 5)
    half = t_quantile(0.975, 5) * sd / math.sqrt(6)
    assert (result.a, result.b, result.n, result.mean_diff) == ("server=a", "server=b", 6, 1.5)
    assert result.sd == pytest.approx(sd)
    assert result.ci95 == pytest.approx((1.5 - half, 1.5 + half))
    assert half == pytest.approx(0.878, abs=1e-3)
    assert (result.significant, result.verdict) == (True, "significant")
    assert (result.mean_a, result.mean_b) == (pytest.approx(122 / 6), pytest.approx(113 / 6))


def test_paired_difference_not_significant() -> None:
    a, b = two_configs([[10, 20], [10, 20]], [[11, 19], [9, 21]])
    result = paired_difference(a, b)
    assert result.mean_diff == 0.0
    assert (result.significant, result.verdict) == (False, "not significant")


def test_paired_difference_matches_load_and_trial() -> None:
    # B lacks load 3 and a second trial: only (load 1, trial 0) and (load 2, trial 0) pair up.
    a, b = two_configs([[10, 20, 30], [100, 200, 300]], [[5, 10]])
    result = paired_difference(a, b)
    assert (result.n, result.mean_diff) == (2, 7.5)


def test_one_pair_is_not_significant() -> None:
    a, b = two_configs([[10]], [[5]])
    result = paired_difference(a, b)
    assert (result.n, result.sd, result.ci95, result.verdict) == (1, None, None, "not significant")


def test_paired_difference_on_other_metrics() -> None:
    a, b = two_configs([[10, 20]], [[5, 10]])
    assert paired_difference(a, b, metric="throughput_Bps").mean_diff == 7500.0
    assert paired_difference(a, b, metric="p99").mean_diff == 0.0
    with pytest.raises(ConfigError, match="unknown metric 'speed': use one of rps, throughput_Bps"):
        paired_difference(a, b, metric="speed")


def test_no_common_load() -> None:
    a = configurations([run([1.0], loads=[1], factors={"s": 1})])[0]
    b = configurations([run([1.0], loads=[2], factors={"s": 2})])[0]
    with pytest.raises(ConfigError, match="have no load point in common"):
        paired_difference(a, b)


def test_one_trial_per_side_says_the_test_cannot_tell_noise_from_change() -> None:
    # One run each: the pairs are its mixes, which share the run's noise; the verdict stands, with the note.
    a, b = two_configs([[10, 20, 30]], [[9, 18.9, 29.1]])
    single = paired_difference(a, b)
    assert single.trials == 1 and single.significant
    assert single.note is not None and "cannot tell run-to-run noise from a change" in single.note
    a, b = two_configs([[10, 20], [11, 21]], [[9, 18], [10, 19]])
    assert paired_difference(a, b).trials == 2 and paired_difference(a, b).note is None
    a, b = two_configs([[10]], [[5]])
    assert paired_difference(a, b).note is None  # one pair: no interval, nothing to qualify
