"""crest.analysis.peak: the one peak, the highest point of the mean curve over trials, by hand."""

from __future__ import annotations

import math

import pytest

from analysis_records import mix, run
from crest.analysis import (
    configurations,
    fairness,
    highest,
    mean_curve,
    peak_of,
    peak_rps_of,
    peak_table,
    points_from_run,
    run_peak,
    size_means,
    summarize,
)
from crest.analysis.stats import t_quantile
from crest.errors import ConfigError
from crest.store import RunDetail

# Trial 1 peaks at 2 clients (50), trial 2 at 3 clients (44); their mean curve 10, 35, 37 peaks at 3.
TRIALS = ([10.0, 50.0, 30.0], [10.0, 20.0, 44.0])


def trials() -> list[RunDetail]:
    return [run(rps, factors={"server": "a"}, repeat_index=i, run_id=f"a{i}") for i, rps in enumerate(TRIALS)]


def test_highest_takes_the_first_of_equal_maxima_and_never_a_nan() -> None:
    assert highest([1.0, 3.0, 3.0, 2.0]) == 1
    assert highest([math.nan, 2.0, math.nan]) == 1
    assert highest([math.nan]) is None and highest([]) is None
    assert peak_rps_of([5.0, math.nan, 7.5, 7.5]) == 7.5 and peak_rps_of([]) is None


def test_the_peak_is_the_top_of_the_mean_curve_not_the_mean_of_the_trials_peaks() -> None:
    peak = peak_of([points_from_run(d) for d in trials()])
    assert (peak.rps, peak.load, peak.n) == (37.0, 3.0, 2)  # the mean of the trials' own peaks would be 47
    assert peak.rps_sd == pytest.approx(98.0**0.5)  # values 30 and 44 at 3 clients
    assert peak.rps_ci95 is None  # 2 trials: too few for an interval
    assert (peak.throughput_Bps, peak.throughput_load) == (37_000.0, 3.0)
    assert [(t.trial, t.rps, t.load) for t in peak.trials] == [(1, 50.0, 2.0), (2, 44.0, 3.0)]
    assert (peak.trial_rps_min, peak.trial_rps_max) == (44.0, 50.0)
    assert peak.trial_rps_sd == pytest.approx(18.0**0.5)
    assert peak.trials_peak_apart  # 2 clients and 3: the mean curve's 37 is below both own peaks


def test_a_third_trial_gives_the_peak_its_interval() -> None:
    details = [*trials(), run([10.0, 30.0, 40.0], factors={"server": "a"}, repeat_index=2, run_id="a2")]
    peak = peak_of([points_from_run(d) for d in details])
    assert (peak.rps, peak.load, peak.n) == (38.0, 3.0, 3)  # 30, 44, 40 at 3 clients: s = √52
    half = t_quantile(0.975, 2) * 52.0**0.5 / 3.0**0.5
    assert peak.rps_ci95 == pytest.approx((38.0 - half, 38.0 + half))


def test_trials_peaking_at_one_load_are_not_apart() -> None:
    details = [run(rps, factors={"server": "a"}, repeat_index=i, run_id=f"a{i}")
               for i, rps in enumerate(([10.0, 50.0, 30.0], [10.0, 44.0, 20.0]))]  # fmt: skip
    peak = peak_of([points_from_run(d) for d in details])
    assert (peak.rps, peak.load) == (47.0, 2.0) and not peak.trials_peak_apart
    assert not peak_of([points_from_run(details[0])]).trials_peak_apart  # one trial is its own peak


def test_every_peak_agrees_with_the_mean_curve() -> None:
    details = trials()
    points = [points_from_run(d) for d in details]
    curve = mean_curve(points)
    assert [p.rps for p in curve] == [10.0, 35.0, 37.0]
    summary = summarize(curve)
    (row,) = peak_table(configurations(details)).rows
    assert (summary.peak_rps, summary.peak_rps_load) == (37.0, 3.0)
    assert (row.peak_rps, row.peak_rps_load, row.n, row.peak_throughput_Bps) == (37.0, 3.0, 2, 37_000.0)
    assert row.peak.trials[0].load == 2.0


def test_one_run_peaks_at_the_top_of_its_one_curve() -> None:
    peak = run_peak(run([10.0, math.nan, 30.0, 25.0]))
    assert (peak.rps, peak.load, peak.n, peak.rps_ci95, peak.trial_rps_sd) == (30.0, 3.0, 1, None, None)
    with pytest.raises(ConfigError, match="no load points with a measured req/s"):
        run_peak(run([math.nan, math.nan]))


def test_a_sweep_run_peaks_at_its_best_size_not_at_the_mean_of_its_one_load() -> None:
    detail = run([100.0, 300.0, 200.0], loads=[4, 4, 4])
    for m, size in zip(detail.mixes, (1024, 10240, 102400)):
        m.size_bytes = size  # a sweep's content length (a column of the mixes table)
    peak = run_peak(detail)
    assert (peak.rps, peak.load) == (300.0, 10240.0)
    means = size_means([detail, detail])
    assert [(s.size_bytes, s.throughput_Bps, s.n) for s in means] == [
        (1024, 100_000.0, 2), (10240, 300_000.0, 2), (102400, 200_000.0, 2)]  # fmt: skip


def test_fairness_takes_every_trials_clients_at_the_load() -> None:
    points = [points_from_run(d) for d in trials()]
    f = fairness(points, 3.0)
    assert f is not None
    assert [(c.trial, c.client, c.rps) for c in f.clients] == [(1, 1, 10.0), (1, 2, 10.0), (1, 3, 10.0),
                                                               (2, 1, 44 / 3), (2, 2, 44 / 3), (2, 3, 44 / 3)]  # fmt: skip
    assert (f.min_rps, f.max_rps, f.min_over_max) == (10.0, 44 / 3, pytest.approx(30 / 44))
    assert f.mean_rps == pytest.approx(37.0 / 3)
    assert [c.share_of_mean for c in f.clients] == pytest.approx([30 / 37] * 3 + [44 / 37] * 3)
    assert fairness(points, 9.0) is None
    silent = points_from_run(run([10.0]))
    silent[0].client_rps = [math.nan]
    assert fairness([silent], 1.0) is None
    assert mix(0, 1, 1.0).client_scores[0]["rps"] == 1.0


def test_crest_doe_response_is_the_runs_peak() -> None:
    from crest.experiment.design import response_of  # the doe planner reads its peak responses from peak.py

    detail = run([10.0, 30.0, 25.0])
    assert response_of(detail, "peak_rps") == run_peak(detail).rps == 30.0
    assert response_of(detail, "peak_throughput_Bps") == 30_000.0
