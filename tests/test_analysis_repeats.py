"""crest.analysis.repeats: trials merged load by load."""

from __future__ import annotations

import pytest

from analysis_records import mix, run
from crest import verdicts
from crest.analysis import aggregate_trials, points_from_run
from crest.analysis.peak import trials_apart
from crest.analysis.points import LoadPoint, point_from_mix
from crest.analysis.stats import t_quantile


def test_trials_merge_by_load() -> None:
    trials = [points_from_run(run([10.0, 20.0], repeat_index=i)) for i in range(2)]
    trials[1][0].rps, trials[1][1].rps = 14.0, 20.0
    stats = aggregate_trials(trials)
    assert [s.load for s in stats] == [1.0, 2.0]
    first, second = stats
    assert (first.n, first.rps_mean) == (2, 12.0)
    assert first.rps_sd == pytest.approx(2.0**0.5 * 2.0)  # values 10, 14: s = 2√2
    sd = 8.0**0.5
    assert first.rps_ci95 is None and first.throughput_Bps_ci95 is None  # 2 trials: too few for an interval
    assert first.rps_cv == pytest.approx(sd / 12.0)
    assert (second.rps_sd, second.rps_cv) == (0.0, 0.0)
    assert first.latency_us == {
        "p50": 1000.0,
        "p90": 2000.0,
        "p99": 3000.0,
        "p999": 4000.0,
        "max": 5000.0,
        "mean": 1200.0,
    }


def test_three_trials_give_an_interval_that_never_goes_below_zero() -> None:
    trials = [points_from_run(run([10.0, 20.0], repeat_index=i)) for i in range(3)]
    trials[2][0].rps = 100.0  # at 1 client 10, 10, 100: mean 40, s = √2700, t(2) = 4.3: 40 − 129 < 0
    trials[1][1].rps = 24.0  # at 2 clients 20, 24, 20: mean 21⅓, well inside 0
    first, second = aggregate_trials(trials)
    half = t_quantile(0.975, 2) * 2700.0**0.5 / 3.0**0.5
    assert first.rps_ci95 == pytest.approx((0.0, 40.0 + half))
    assert first.rps_ci95 is not None and first.rps_ci95[0] == 0.0
    half = t_quantile(0.975, 2) * (16.0 / 3.0) ** 0.5 / 3.0**0.5  # values 20, 24, 20: s² = 16/3
    assert second.rps_ci95 == pytest.approx((64.0 / 3.0 - half, 64.0 / 3.0 + half))
    for stats in (first, second):
        assert stats.throughput_Bps_ci95 is not None and stats.throughput_Bps_ci95[0] >= 0.0


def test_a_load_missing_from_a_trial_has_a_smaller_n() -> None:
    stats = aggregate_trials([points_from_run(run([10.0, 20.0])), points_from_run(run([12.0]))])
    assert [(s.load, s.n) for s in stats] == [(1.0, 2), (2.0, 1)]
    lone = stats[1]
    assert (lone.rps_mean, lone.rps_sd, lone.rps_ci95, lone.rps_cv) == (20.0, None, None, None)


def test_latency_keys_every_trial_has_and_cpu_when_monitored() -> None:
    a = point_from_mix(
        mix(0, 1, 10.0, latency_us={"p50": 100.0, "p99": 900.0}, monitor={"target": {"cpu_util_pct": 50.0}})
    )
    b = point_from_mix(mix(0, 1, 10.0, latency_us={"p50": 300.0}, errors={"read": 10}, requests=90))
    (merged,) = aggregate_trials([[a], [b]])
    assert merged.latency_us == {"p50": 200.0}
    assert merged.target_cpu_pct_mean == 50.0
    assert merged.error_rate_mean == pytest.approx((0.0 + 0.1) / 2)
    assert merged.throughput_Bps_mean == 10_000.0


def test_no_trials() -> None:
    assert aggregate_trials([]) == []


def _trials(peaks: list[float], noisy: int | None = None) -> list[list[LoadPoint]]:
    """One trial per peak: a curve of 3 loads topping out at its peak at load 2; `noisy` (0-based) carries a
    noisy_host verdict at its peak."""
    out = []
    for i, top in enumerate(peaks):
        said = [verdicts.noisy_host(0.2, 3.0)] if i == noisy else []
        out.append([point_from_mix(mix(0, 1, top / 2)), point_from_mix(mix(1, 2, top, verdicts=said)),
                    point_from_mix(mix(2, 3, top * 0.95))])  # fmt: skip
    return out


def test_the_peak_carries_its_run_to_run_coefficient_of_variation() -> None:
    from crest.analysis.peak import peak_of

    peak = peak_of(_trials([100.0, 110.0, 90.0]))
    assert peak.rps_cv == pytest.approx(10.0 / 100.0)  # sd 10 of the mean 100 at the peak's load
    assert peak_of(_trials([100.0])).rps_cv is None


def test_trials_that_agree_say_nothing() -> None:
    assert trials_apart(_trials([10_000.0, 9_800.0, 10_150.0])) is None
    assert trials_apart(_trials([10_000.0])) is None


def test_two_trials_more_than_ten_percent_apart_disagree_unless_a_noisy_host_explains_it() -> None:
    apart = trials_apart(_trials([10_000.0, 8_000.0]))
    assert apart is not None and not apart.explained
    assert (apart.low_trial, apart.low_rps, apart.high_trial, apart.high_rps) == (2, 8_000.0, 1, 10_000.0)
    assert apart.apart_pct == pytest.approx(25.0)
    explained = trials_apart(_trials([10_000.0, 8_000.0], noisy=1))
    assert explained is not None and explained.explained and explained.noisy_trials == (2,)


def test_one_trial_outside_the_others_prediction_interval_disagrees() -> None:
    """With 4 trials or more, a trial outside the 95% prediction interval of the others disagrees, even within
    10% of them: 5% off trials that agree to 0.2% is no run-to-run noise."""
    apart = trials_apart(_trials([10_000.0, 10_020.0, 9_990.0, 10_010.0, 9_500.0]))
    assert apart is not None and apart.outliers == (5,) and not apart.explained
    assert trials_apart(_trials([10_000.0, 10_300.0, 9_700.0, 10_150.0, 9_900.0])) is None
