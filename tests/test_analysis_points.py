"""crest.analysis.points: a stored mix as a LoadPoint (axes, error rate, Little's law, monitor fields)."""

from __future__ import annotations

import pytest

from analysis_records import mix, run
from crest import verdicts
from crest.analysis import LoadPoint, point_from_mix, points_from_run, preferred_load_axis
from crest.errors import ConfigError
from crest.verdicts import Verdict


def test_load_axes() -> None:
    detail = run([100.0, 200.0], loads=[4, 8])
    assert [p.load for p in points_from_run(detail)] == [4.0, 8.0]
    assert [p.load for p in points_from_run(detail, "threads")] == [8.0, 16.0]
    assert [p.load for p in points_from_run(detail, "connections")] == [8.0, 16.0]
    point = points_from_run(detail)[1]
    assert (point.clients, point.threads, point.connections) == (8, 16, 16)


def test_unknown_axis() -> None:
    with pytest.raises(ConfigError, match="unknown load axis 'users': use one of clients, threads, connections"):
        points_from_run(run([1.0]), "users")


def test_points_follow_mix_index_order() -> None:
    detail = run([100.0, 200.0], loads=[4, 8])
    detail.mixes.reverse()
    assert [p.index for p in points_from_run(detail)] == [0, 1]


def test_error_rate_counts_errors_over_attempts() -> None:
    point = point_from_mix(mix(0, 2, 99.0, requests=990, errors={"timeout": 6, "status": 4}))
    assert point.errors == 10
    assert point.error_rate == pytest.approx(10 / 1000)
    assert point_from_mix(mix(0, 2, 0.0, requests=0)).error_rate == 0.0


def test_littles_load_factor() -> None:
    # 1000 requests with a mean latency of 20 ms over 10 s: 20 s of response time / 10 s = 2 in flight.
    point = point_from_mix(mix(0, 1, 100.0, requests=1000, latency_us={"mean": 20_000.0}))
    assert point.littles_load_factor == pytest.approx(2.0)
    assert point_from_mix(mix(0, 1, 100.0, latency_us={})).littles_load_factor is None
    assert point_from_mix(mix(0, 1, 100.0, window_s=0.0)).littles_load_factor is None


def test_monitor_fields_are_optional() -> None:
    bare = point_from_mix(mix(0, 1, 10.0))
    assert (bare.target_cpu_pct, bare.engine_cpu_pct, bare.client_bound, bare.target_idle_pct) == (
        None,
        None,
        False,
        None,
    )
    monitored = point_from_mix(mix(0, 1, 10.0, monitor={
        "target": {"cpu_util_pct": 87.5, "rss_bytes_max": 1}, "engine": {"cpu_util_pct": None},
        "client_bound": True, "target_idle_pct": 3.0,
    }))  # fmt: skip
    assert (monitored.target_cpu_pct, monitored.engine_cpu_pct) == (87.5, None)
    assert monitored.client_bound and monitored.target_idle_pct == 3.0


def test_verdict_kinds_flag_client_bound_and_idle_target() -> None:
    stored = [verdicts.client_bound(97.0, 1), Verdict(verdicts.TARGET_IDLE, "target idle: 80% idle")]
    point = point_from_mix(mix(0, 1, 10.0, verdicts=stored))
    assert point.client_bound and point.target_idle and point.verdicts == stored


def test_a_message_alone_flags_nothing() -> None:
    """Kinds decide, never the text: a note that reads like a verdict is only a note."""
    point = point_from_mix(mix(0, 1, 10.0, verdicts=[verdicts.note("client-bound: target idle:")]))
    assert not point.client_bound and not point.target_idle


def test_client_scores_become_client_rps() -> None:
    assert point_from_mix(mix(0, 4, 100.0)).client_rps == [25.0] * 4


def test_preferred_load_axis() -> None:
    detail = run([1.0])
    assert preferred_load_axis(detail) == "clients"
    detail.meta.config["load_axis"] = "threads"
    assert preferred_load_axis(detail) == "threads"
    detail.meta.config["load_axis"] = "bogus"
    assert preferred_load_axis(detail) == "clients"


def test_load_point_is_a_plain_dataclass() -> None:
    point = LoadPoint(
        load=1.0, clients=1, threads=1, connections=1, rps=1.0, throughput_Bps=1.0, requests=1, errors=0,
        error_rate=0.0, latency_us={}, target_cpu_pct=None, engine_cpu_pct=None, client_bound=False,
        client_rps=[], littles_load_factor=None,
    )  # fmt: skip
    assert point.verdicts == [] and point.index == 0
