"""crest.analysis.summary: peaks, saturation and curve shape of rising, plateau, graceful and collapsing curves."""

from __future__ import annotations

import math

import pytest

from analysis_records import mix, run
from crest import verdicts
from crest.analysis import CurveSummary, points_from_run, summarize
from crest.analysis.points import LoadPoint, point_from_mix
from crest.analysis.summary import NOT_SATURATED, shape_of
from crest.errors import ConfigError
from crest.verdicts import BUSY_AT_PEAK_PCT


def summary_of(rps: list[float]) -> CurveSummary:
    return summarize(points_from_run(run(rps, loads=[4 * (i + 1) for i in range(len(rps))])))


def test_rising_curve_is_not_saturated() -> None:
    s = summary_of([100.0, 200.0, 300.0])
    assert (s.peak_rps, s.peak_rps_load) == (300.0, 12.0)
    assert (s.saturated, s.shape, s.verdict, s.past_peak_ratio) == (False, "rising", NOT_SATURATED, None)
    assert s.verdict == "not saturated — add load"
    assert (s.peak_throughput_Bps, s.peak_throughput_load) == (300_000.0, 12.0)


def test_saturation_is_a_dash_where_there_is_no_curve_to_judge() -> None:
    """One load point (a bench, a timed replay) is neither saturated nor not: the tables say a dash."""
    from crest.report import fmt

    one, rising, flat = summary_of([100.0]), summary_of([100.0, 200.0]), summary_of([100.0, 200.0, 200.0])
    assert one.shape == "single point" and fmt.saturation({"shape": one.shape, "saturated": one.saturated}) == "–"
    assert fmt.saturation({"shape": "published peak", "saturated": False}) == "–"
    assert fmt.saturation({"shape": rising.shape, "saturated": rising.saturated}, shout=True) == "NOT saturated"
    assert fmt.saturation({"shape": flat.shape, "saturated": flat.saturated}) == "saturated"


def test_plateau() -> None:
    s = summary_of([100.0, 200.0, 190.0, 185.0])
    assert (s.saturated, s.shape, s.peak_rps_load) == (True, "plateau", 8.0)
    assert s.past_peak_ratio == pytest.approx(0.925)
    assert s.verdict == "saturated — plateau past the peak (falls to 92% of peak)"


def test_graceful_degradation() -> None:
    s = summary_of([100.0, 200.0, 150.0, 120.0])
    assert (s.saturated, s.shape, s.past_peak_ratio) == (True, "graceful degradation", 0.6)


def test_collapse() -> None:
    s = summary_of([100.0, 200.0, 20.0, 30.0])
    assert (s.saturated, s.shape, s.past_peak_ratio) == (True, "collapse", 0.1)


def test_thresholds() -> None:
    assert [shape_of(r) for r in (1.0, 0.9, 0.89, 0.5, 0.49, 0.0)] == [
        "plateau", "plateau", "graceful degradation", "graceful degradation", "collapse", "collapse",
    ]  # fmt: skip


def test_single_point() -> None:
    s = summary_of([42.0])
    assert (s.peak_rps, s.shape, s.saturated) == (42.0, "single point", False)


def test_points_are_taken_in_load_order_and_nan_never_peaks() -> None:
    points = points_from_run(run([300.0, math.nan, 100.0], loads=[12, 16, 4]))
    s = summarize(points)
    assert (s.peak_rps, s.peak_rps_load, s.shape) == (300.0, 12.0, "rising")


def test_first_of_equal_peaks() -> None:
    s = summary_of([100.0, 200.0, 200.0])
    assert (s.peak_rps_load, s.shape, s.past_peak_ratio) == (8.0, "plateau", 1.0)


def test_no_points() -> None:
    with pytest.raises(ConfigError, match="no load points with a measured req/s"):
        summarize([])


def test_verdicts() -> None:
    points = [
        point_from_mix(mix(0, 1, 100.0, requests=1000, errors={"timeout": 50})),
        point_from_mix(mix(1, 2, 200.0, verdicts=[verdicts.client_bound(97.0, 1)])),
        point_from_mix(mix(2, 3, 300.0, monitor={"target_idle_pct": 60.0})),
    ]
    s = summarize(points)
    assert s.max_error_rate == pytest.approx(50 / 1050)
    # In crest.verdicts.RANK's one order: what decided the result first.
    assert [v.kind for v in s.verdicts] == ["client_bound", "not_saturated", "target_idle", "error_rate"]
    bound, rising, idle, errors = s.verdicts
    assert errors.message.startswith("errors above 1% of attempts at 1 load point(s) (worst 4.8% at load 1)")
    assert errors.figures == {"threshold": 0.01, "points": 1, "worst_error_rate": pytest.approx(50 / 1050),
                              "worst_load": 1.0}  # fmt: skip
    assert bound.message.startswith("client-bound at load 2:") and bound.figures == {"loads": [2.0]}
    assert idle.message.startswith("target idle at the peak (load 3) (60% idle)")
    assert idle.figures == {"load": 3.0, "target_idle_pct": 60.0}
    assert rising.message.startswith("not saturated: req/s was still rising at the highest load (3)")
    assert rising.figures == {"highest_load": 3.0}


def test_a_collapse_is_a_verdict_and_a_plateau_none() -> None:
    collapsed = summarize(
        [point_from_mix(mix(i, c, r)) for i, (c, r) in enumerate([(1, 100.0), (2, 1000.0), (3, 70.0)])]
    )
    assert [(v.kind, v.figures) for v in collapsed.verdicts] == [("collapse", {"past_peak_ratio": pytest.approx(0.07)})]
    assert collapsed.verdicts[0].message == "collapsed past its peak: req/s fell to 7% of the peak as load grew"
    held = summarize([point_from_mix(mix(i, c, r)) for i, (c, r) in enumerate([(1, 100.0), (2, 1000.0), (3, 950.0)])])
    assert held.shape == "plateau" and held.verdicts == []


def test_target_idle_only_at_the_peak() -> None:
    """The rule is the monitor's BUSY_AT_PEAK_PCT: an idle target below the peak says nothing."""
    points = [
        point_from_mix(mix(0, 1, 100.0, monitor={"target_idle_pct": 90.0})),
        point_from_mix(mix(1, 2, 200.0, monitor={"target_idle_pct": 100.0 - BUSY_AT_PEAK_PCT})),
    ]
    assert [v for v in summarize(points).verdicts if v.kind == "target_idle"] == []
    points[1].target_idle_pct = 100.0 - BUSY_AT_PEAK_PCT + 1
    assert [v.kind for v in summarize(points).verdicts] == ["not_saturated", "target_idle"]


def test_a_stored_target_idle_verdict_counts_at_the_peak_only() -> None:
    """Files of store schema 1 carry the verdict their runner judged on the peak mix."""
    stored = [verdicts.Verdict(verdicts.TARGET_IDLE, "target idle: 90% idle")]
    points = [point_from_mix(mix(0, 1, 100.0, verdicts=stored)), point_from_mix(mix(1, 2, 200.0))]
    assert [v for v in summarize(points).verdicts if v.kind == verdicts.TARGET_IDLE] == []
    points[1].target_idle = True
    (idle,) = [v for v in summarize(points).verdicts if v.kind == verdicts.TARGET_IDLE]
    assert idle.message.startswith("target idle at the peak (load 2):")


def test_clean_curve_has_no_verdicts() -> None:
    assert summary_of([1.0, 2.0, 1.95]).verdicts == []  # saturated, a plateau past the peak


def test_the_limit_is_what_held_at_the_peak() -> None:
    # Client-bound at a low load only: the target decided the peak. A link that ran at its rate at the peak
    # decided it, and leads the verdicts.
    link = verdicts.link_bound("subnet 1", "down", 0.998, 100e6, subnet=1)
    points = [
        point_from_mix(mix(0, 1, 100.0, verdicts=[verdicts.client_bound(97.0, 1)])),
        point_from_mix(mix(1, 2, 300.0, verdicts=[link])),
        point_from_mix(mix(2, 3, 250.0)),
    ]
    s = summarize(points)
    assert s.limit is not None and s.limit.kind == verdicts.LINK_BOUND
    assert s.limit.message.startswith("link-bound at load 2: the subnet 1 link (down) ran at 99.8%")
    assert [v.kind for v in s.verdicts][:2] == ["client_bound", "link_bound"]
    points[1] = point_from_mix(mix(1, 2, 300.0))
    assert summarize(points).limit is None  # saturated, nothing at the peak: the target set its own
    rising = summarize([point_from_mix(mix(0, 1, 100.0)), point_from_mix(mix(1, 2, 200.0))])
    assert rising.limit is not None and rising.limit.kind == verdicts.NOT_SATURATED


def _shared_host_curve() -> list[LoadPoint]:
    """The README walk's curve (no --cpus): at the peak the target used 42% and the engine 56% of 2 CPUs."""
    bound = verdicts.host_cpu_bound(98.0, 2, 42.0, 56.0)
    monitor = {"target": {"cpu_util_pct": 42.0, "cores": 2}, "engine": {"cpu_util_pct": 56.0, "cores": 2},
               "target_idle_pct": 58.0}  # fmt: skip
    return [
        point_from_mix(mix(0, 8, 9000.0)),
        point_from_mix(mix(1, 16, 16500.0, monitor=monitor, verdicts=[bound])),
        point_from_mix(mix(2, 24, 16400.0, monitor=monitor, verdicts=[bound])),
    ]


def test_a_host_cpu_bound_peak_is_decided_by_the_host_and_the_target_is_not_called_idle() -> None:
    s = summarize(_shared_host_curve())
    assert s.limit is not None and s.limit.kind == verdicts.HOST_CPU_BOUND
    assert [v.kind for v in s.verdicts] == [verdicts.HOST_CPU_BOUND]  # no target_idle: the host's CPUs ran out
    assert s.limit.message.startswith("host-bound at load 16, 24: the target (42%) and the load engine (56%)")
    assert not s.saturated and s.verdict.startswith("host-bound")


def test_ranked_with_client_bound() -> None:
    assert verdicts.DECIDING[:2] == (verdicts.CLIENT_BOUND, verdicts.HOST_CPU_BOUND)


def test_the_saturation_column_names_what_bound_the_peak_instead_of_saturated() -> None:
    """The walk's Peaks table said "saturated" beside configurations client-bound at 14 of 16 loads."""
    from crest.report import fmt

    host = summarize(_shared_host_curve())
    assert fmt.saturation({"shape": host.shape, "saturated": host.saturated, "limit": host.limit.to_json()}) == (
        "host-bound"
    )
    client = [point_from_mix(mix(i, c, r, verdicts=[verdicts.client_bound(97.0, 1)] if i else []))
              for i, (c, r) in enumerate([(1, 100.0), (2, 300.0), (3, 290.0)])]  # fmt: skip
    s = summarize(client)
    assert s.limit is not None and s.limit.kind == verdicts.CLIENT_BOUND
    assert not s.saturated and s.verdict.startswith("client-bound")
    said = fmt.saturation({"shape": s.shape, "saturated": s.saturated, "limit": s.limit.to_json()}, shout=True)
    assert said == "client-bound"
