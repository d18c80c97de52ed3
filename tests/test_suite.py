"""Suite models, ladders, profiles and the built-in suites: the seeds' numbers, resolved into mixes."""

from __future__ import annotations

import importlib.resources
import math
import re

import pytest
from pydantic import ValidationError

from crest.errors import ConfigError
from crest.suite import (
    PROFILES,
    Ladder,
    MixOverride,
    RequestClass,
    Suite,
    SuiteError,
    Timing,
    Workload,
    builtin_names,
    builtin_suites,
    load_suite,
    parse_suite,
    scale_timing,
)

BY_NAME = {s.name: s for s in builtin_suites()}


def _counts(suite: Suite, profile: str = "full") -> list[tuple[int, int]]:
    return [(m.clients, m.threads_per_client) for m in suite.mixes(profile)]


# ---------------------------------------------------------------- built-ins, generic


def test_builtin_names_match_the_shipped_files_in_a_stable_order() -> None:
    folder = importlib.resources.files("crest.suite").joinpath("builtin")
    shipped = sorted(p.name.removesuffix(".toml") for p in folder.iterdir() if p.name.endswith(".toml"))
    assert sorted(builtin_names()) == shipped
    assert [s.name for s in builtin_suites()] == builtin_names()
    assert builtin_names() == builtin_names()


def test_at_least_the_suites_the_design_names_are_built_in() -> None:
    required = {
        "veritest-static",
        "veritest-static-mt",
        "veritest-cgi",
        "veritest-ecommerce",
        "veritest-isapi",
        "veritest-large",
        "mindcraft-webbench",
        "webcat-webstone",
        "webcat-cgi-html",
        "webcat-large-filemix",
        "zeus-cached",
        "zeus-noncached",
        "zeus-dynamic",
        "kornecki-detail-static",
        "kornecki-detail-dynamic",
    }
    assert required <= set(builtin_names())


@pytest.mark.parametrize("name", builtin_names())
def test_every_builtin_loads_validates_and_cites_its_seed(name: str) -> None:
    suite = load_suite(name)
    assert suite == BY_NAME[name]
    assert re.search(r"\(seed 00[0-4]\)", suite.source), suite.source
    assert suite.description.strip()
    # A round trip through the model proves the shipped data obeys every rule.
    assert parse_suite(suite.model_dump(exclude_none=True), name) == suite


@pytest.mark.parametrize("name", builtin_names())
@pytest.mark.parametrize("profile", PROFILES)
def test_every_builtin_resolves_in_every_profile(name: str, profile: str) -> None:
    suite = BY_NAME[name]
    mixes = suite.mixes(profile)
    assert [m.index for m in mixes] == list(range(1, len(mixes) + 1))
    sizes = suite.sweep_sizes() or [None]
    assert [m.clients for m in mixes] == suite.ladder.client_counts() * len(sizes)
    assert [m.size_bytes for m in mixes] == [s for s in sizes for _ in suite.ladder.client_counts()]
    full = suite.mixes("full")
    # Profiles scale durations and nothing else.
    assert [(m.clients, m.threads_per_client, m.connections) for m in mixes] == [
        (m.clients, m.threads_per_client, m.connections) for m in full
    ]
    for mix in mixes:
        t = mix.timing
        assert t.window_s > 0
        assert t.ramp_up_s == math.floor(t.ramp_up_s) and t.ramp_down_s == math.floor(t.ramp_down_s)
        assert t.think_time_s == suite.timing.think_time_s
        if profile == "quick":
            assert (t.length_s, t.ramp_up_s, t.ramp_down_s, t.window_s) == (4, 1, 1, 2)
            assert t.delay_s == min(suite.timing.delay_s, 0.5)
        elif profile == "standard":
            assert t.length_s == min(60, suite.timing.length_s)
            assert t.window_s >= 2 / 3 * t.length_s or t == suite.timing
        else:
            assert t == suite.timing


# ---------------------------------------------------------------- built-ins, the seeds' numbers


def test_veritest_static_is_the_standard_60_client_webbench_suite() -> None:
    suite = BY_NAME["veritest-static"]
    assert _counts(suite) == [(1, 1)] + [(n, 1) for n in range(4, 61, 4)]
    assert len(suite.mixes()) == 16
    t = suite.timing
    assert (t.length_s, t.ramp_up_s, t.ramp_down_s, t.delay_s, t.think_time_s, t.window_s) == (300, 30, 30, 0, 0, 240)
    w = suite.workload
    assert (w.http_version, w.keepalive, w.fileset) == ("1.0", False, "webbench")
    assert w.shares() == {"static": 1.0}
    assert suite.repeat == 2  # VeriTest ran each suite twice and averaged


def test_veritest_large_suites_climb_to_120_clients_in_eights() -> None:
    for name in (
        "veritest-large",
        "veritest-large-cgi",
        "veritest-large-isapi",
        "veritest-large-ecommerce",
        "veritest-large-ecommerce-isapi",
        "veritest-large-mt4",
    ):
        assert BY_NAME[name].ladder.client_counts() == [1, *range(8, 121, 8)], name
    # The DL760 suites ran "one WebBench engine running one thread on each physical test client".
    for name in ("veritest-large-isapi", "veritest-large-ecommerce-isapi"):
        assert {t for _, t in _counts(BY_NAME[name])} == {1}, name
    assert {t for _, t in _counts(BY_NAME["veritest-large-mt4"])} == {4}
    assert {t for _, t in _counts(BY_NAME["veritest-static-mt4"])} == {4}
    assert BY_NAME["veritest-static-mt4"].ladder.client_counts() == [1, *range(4, 61, 4)]


@pytest.mark.parametrize("name", ["veritest-static-mt", "veritest-isapi-mt"])
def test_veritest_multithreaded_switches_from_10_to_15_threads_after_88_clients(name: str) -> None:
    mixes = {m.clients: m for m in BY_NAME[name].mixes()}
    assert len(mixes) == 16
    assert all(mixes[n].threads_per_client == 10 for n in mixes if n <= 88)
    assert all(mixes[n].threads_per_client == 15 for n in mixes if n >= 96)
    assert (mixes[88].connections, mixes[96].connections, mixes[120].connections) == (880, 1440, 1800)


def test_veritest_dynamic_mixes() -> None:
    assert BY_NAME["veritest-cgi"].workload.shares() == {"static": 0.8, "cgi": 0.2}
    isapi = BY_NAME["veritest-isapi"].workload
    assert isapi.shares() == {"static": 0.8, "isapi": 0.2}
    assert [c.kind for c in isapi.classes] == ["static", "inproc"]
    ecommerce = BY_NAME["veritest-ecommerce"].workload
    assert ecommerce.shares() == pytest.approx({"static": 0.76, "cgi": 0.16, "ssl-static": 0.04, "ssl-cgi": 0.04})
    assert [(c.kind, c.tls) for c in ecommerce.classes] == [
        ("static", False),
        ("cgi", False),
        ("static", True),
        ("cgi", True),
    ]
    tls_share = sum(v for k, v in ecommerce.shares().items() if k.startswith("ssl-"))
    assert tls_share == pytest.approx(0.08)
    assert [c.kind for c in BY_NAME["veritest-ecommerce-isapi"].workload.classes] == [
        "static",
        "inproc",
        "static",
        "inproc",
    ]
    # The DL760 ISAPI suites keep the DL380 ones' mixes: only the ladder differs.
    for large, standard in (
        ("veritest-large-isapi", "veritest-isapi"),
        ("veritest-large-ecommerce-isapi", "veritest-ecommerce-isapi"),
    ):
        assert BY_NAME[large].workload == BY_NAME[standard].workload, large


def test_mindcraft_is_144_clients_in_sixteens_with_2_threads() -> None:
    suite = BY_NAME["mindcraft-webbench"]
    assert _counts(suite) == [(1, 2)] + [(n, 2) for n in range(16, 145, 16)]
    assert [m.connections for m in suite.mixes()][-1] == 288  # "up through 288 test threads"
    t = suite.timing
    assert (t.length_s, t.ramp_up_s, t.ramp_down_s, t.delay_s, t.think_time_s) == (300, 30, 30, 0, 0)
    w = suite.workload
    assert (w.http_version, w.keepalive, w.read_buffer_bytes) == ("1.0", False, 4096)
    assert w.shares() == {"static": 1.0}


def test_mindcraft_restart_is_the_webbench_ladder_restarted_before_256_threads() -> None:
    plain, restart = BY_NAME["mindcraft-webbench"], BY_NAME["mindcraft-webbench-restart"]
    assert (restart.workload, restart.timing) == (plain.workload, plain.timing)
    assert _counts(restart) == _counts(plain)
    restarted = [m.connections for m in restart.mixes() if m.restart_target]
    assert restarted == [256]  # "restarting Apache at the 256 threads data point"
    assert not any(m.restart_target for m in plain.mixes())  # figures 4-5: 78 req/s at 256 threads, no restart
    assert "profile=mindcraft" in (plain.notes or "") and "profile=mindcraft" in (restart.notes or "")


def test_veritests_tls_suites_use_the_seeds_rsa_at_2048_bits() -> None:
    """The seed's SSL used 1024-bit RSA keys, which the engine cannot verify: crest's nearest is RSA 2048.
    Apache served every SSL request behind TUX in the SSL/CGI suites; IIS served all of the ISAPI ones."""
    routes = {}
    tls_suites = [n for n, s in BY_NAME.items() if any(c.tls for c in s.workload.classes)]
    assert all(n.startswith("veritest-") for n in tls_suites)  # the one seed that ran SSL
    for name in tls_suites:
        tls = BY_NAME[name].workload.tls
        assert tls is not None and tls.key == "rsa2048", name
        routes[name] = tls.route
    assert routes == {"veritest-ecommerce": "dynamic", "veritest-large-ecommerce": "dynamic",
                      "veritest-ecommerce-isapi": "kind", "veritest-large-ecommerce-isapi": "kind"}  # fmt: skip


def test_a_tls_route_names_a_server_role() -> None:
    with pytest.raises(ValidationError, match="route"):
        Workload.model_validate({"classes": [{"name": "s", "kind": "cgi", "weight": 1, "tls": True}],
                                 "tls": {"route": "tls"}})  # fmt: skip


def test_kornecki_detail_is_static_and_dynamic_at_1_to_32_clients_three_times() -> None:
    static, dynamic = BY_NAME["kornecki-detail-static"], BY_NAME["kornecki-detail-dynamic"]
    for suite in (static, dynamic):
        assert _counts(suite) == [(n, 1) for n in (1, 2, 4, 8, 16, 32)]
        assert suite.repeat == 3
        assert suite.timing.length_s == 30
    assert static.workload.shares() == {"static": 1.0}
    assert {c.kind for c in dynamic.workload.classes} == {"static", "cgi"}


def test_webcat_suites_use_their_filesets_and_the_48_to_264_ladder() -> None:
    for name, fileset in (
        ("webcat-webstone", "webcat-webstone"),
        ("webcat-large-filemix", "webcat-large-filemix"),
        ("webcat-cgi-html", "webcat-cgi-html"),
    ):
        suite = BY_NAME[name]
        assert suite.workload.fileset == fileset
        assert _counts(suite) == [(48, 1), (96, 1), (192, 1), (264, 1)]
    cgi = BY_NAME["webcat-cgi-html"].workload
    assert cgi.shares() == {"cgi": 0.75, "static": 0.25}
    assert [(c.kind, c.size_bytes) for c in cgi.classes] == [("webstone-cgi", 10240), ("static", None)]


def test_zeus_suites_pick_the_nearest_filesets_and_say_what_the_runner_must_do() -> None:
    assert BY_NAME["zeus-cached"].workload.fileset == "sizes"
    noncached = BY_NAME["zeus-noncached"]
    assert noncached.workload.fileset == "specweb99-lengths" and noncached.workload.fileset_copies == 100
    assert noncached.workload.selection == "once" and noncached.workload.drop_caches
    # Every request measured, as ab -n measures: a mix ends when each of its files was sent once.
    assert (noncached.timing.ramp_up_s, noncached.timing.ramp_down_s) == (0, 0)
    dynamic = BY_NAME["zeus-dynamic"].workload
    assert dynamic.fileset == "sizes" and [c.kind for c in dynamic.classes] == ["specweb99-get"]
    for name in ("zeus-cached", "zeus-noncached", "zeus-dynamic"):
        assert BY_NAME[name].notes


def test_zeus_cached_and_dynamic_sweep_content_length() -> None:
    cached = BY_NAME["zeus-cached"]
    assert cached.ladder.sizes == "fileset"
    sizes = [m.size_bytes for m in cached.mixes()]
    assert len(sizes) == 22 and sizes[0] == 1 and sizes[-1] == 10_000_000
    assert all(m.connections == 32 for m in cached.mixes())
    dynamic = BY_NAME["zeus-dynamic"]
    assert [m.size_bytes for m in dynamic.mixes()][0::8] == [500, 200_000]
    # The non-cached sweep: one mix per SPECweb99 length, 102 B … 921,600 B.
    lengths = [m.size_bytes for m in BY_NAME["zeus-noncached"].mixes()]
    assert len(lengths) == 36 and lengths[0] == 102 and lengths[-1] == 921_600


# ---------------------------------------------------------------- ladders


@pytest.mark.parametrize(
    ("start", "step", "stop", "expected"),
    [
        (1, 4, 60, [1, *range(4, 61, 4)]),
        (1, 8, 120, [1, *range(8, 121, 8)]),
        (1, 16, 144, [1, *range(16, 145, 16)]),
        (4, 4, 12, [4, 8, 12]),
        (1, 16, 150, [1, *range(16, 145, 16)]),  # stop need not be a multiple
        (5, 5, 5, [5]),
        (3, 4, 12, [3, 4, 8, 12]),
    ],
)
def test_arithmetic_ladder_is_start_then_multiples_of_step(
    start: int, step: int, stop: int, expected: list[int]
) -> None:
    assert Ladder(start=start, step=step, stop=stop).client_counts() == expected


def test_the_last_matching_override_wins() -> None:
    ladder = Ladder(
        clients=[1, 5, 10, 20],
        threads_per_client=1,
        overrides=[
            MixOverride(from_clients=10, threads_per_client=2),
            MixOverride(from_clients=5, threads_per_client=3),
        ],
    )
    assert [ladder.threads_for(n) for n in ladder.client_counts()] == [1, 3, 3, 3]


# ---------------------------------------------------------------- profiles


def test_standard_profile_keeps_the_ramp_shares_in_60_seconds() -> None:
    t = scale_timing(Timing(length_s=300, ramp_up_s=30, ramp_down_s=30), "standard")
    assert (t.length_s, t.ramp_up_s, t.ramp_down_s, t.window_s) == (60, 6, 6, 48)


def test_standard_profile_caps_ramps_at_a_third_and_delay_so_every_client_runs_two_thirds() -> None:
    t = scale_timing(Timing(length_s=120, ramp_up_s=50, ramp_down_s=30, delay_s=50, think_time_s=2), "standard")
    assert (t.length_s, t.ramp_up_s + t.ramp_down_s) == (60, 20)
    assert t.window_s >= 40
    assert t.delay_s == 20 - t.ramp_down_s
    assert t.think_time_s == 2
    small = scale_timing(Timing(length_s=660, ramp_up_s=30, ramp_down_s=30, delay_s=5, think_time_s=2), "standard")
    assert (small.ramp_up_s, small.ramp_down_s, small.delay_s, small.think_time_s) == (3, 3, 5, 2)


def test_standard_profile_leaves_short_suites_alone() -> None:
    t = Timing(length_s=30, ramp_up_s=5, ramp_down_s=5)
    assert scale_timing(t, "standard") == t


def test_quick_profile_is_four_seconds_with_a_two_second_window() -> None:
    t = scale_timing(Timing(length_s=300, ramp_up_s=30, ramp_down_s=30, delay_s=5, think_time_s=2), "quick")
    assert (t.length_s, t.ramp_up_s, t.ramp_down_s, t.window_s, t.delay_s, t.think_time_s) == (4, 1, 1, 2, 0.5, 2)


def test_unknown_profile_is_a_config_error() -> None:
    with pytest.raises(SuiteError, match="unknown profile 'slow': expected one of quick, standard, full"):
        BY_NAME["veritest-static"].mixes("slow")
    assert issubclass(SuiteError, ConfigError)


# ---------------------------------------------------------------- python API


def test_webstone_cgi_size_defaults_to_10240() -> None:
    assert RequestClass(name="cgi", kind="webstone-cgi", weight=1).size_bytes == 10240
    assert RequestClass(name="cgi", kind="webstone-cgi", weight=1, size_bytes=500).size_bytes == 500
    assert RequestClass(name="cgi", kind="cgi", weight=1).size_bytes is None


def test_models_are_immutable_and_build_from_python() -> None:
    suite = Suite(
        name="tiny",
        description="d",
        source="s",
        workload=Workload(classes=[RequestClass(name="dyn", kind="inproc", weight=1)]),
        ladder=Ladder(clients=[1, 2]),
        timing=Timing(length_s=10, ramp_up_s=2, ramp_down_s=2),
    )
    assert [(m.index, m.connections, m.timing.window_s) for m in suite.mixes()] == [(1, 1, 6), (2, 2, 6)]
    with pytest.raises(ValidationError):
        suite.repeat = 3  # type: ignore[misc]


def test_kornecki_detail_is_a_group_of_static_and_dynamic_runs() -> None:
    from crest.suite import load_group

    members = load_group("kornecki-detail")
    assert [(s.name, f) for s, f in members] == [
        ("kornecki-detail-static", {"workload": "static"}),
        ("kornecki-detail-dynamic", {"workload": "dynamic"}),
    ]
    for suite, _ in members:
        assert [m.clients for m in suite.mixes("full")] == [1, 2, 4, 8, 16, 32]
        assert suite.repeat == 3
    assert load_group("veritest-static") == []


# ---------------------------------------------------------------- HTTP/2 and HTTP/3


@pytest.mark.parametrize("version", ["2", "3"])
def test_multiplexed_versions_imply_keepalive_and_take_streams(version: str) -> None:
    from crest.suite.describe import workload_text

    data = {"classes": [{"name": "dyn", "kind": "inproc", "weight": 1}], "http_version": version, "streams": 10}
    w = Workload.model_validate(data)
    assert (w.http_version, w.keepalive, w.streams) == (version, True, 10)
    assert workload_text(w) == f"100% dyn (inproc) · HTTP/{version}, 10 streams per connection"
    one = Workload.model_validate({**data, "streams": 1})
    assert workload_text(one).endswith(f"HTTP/{version}, 1 stream per connection")


def test_with_protocol_gives_streams_to_http2_and_http3_only() -> None:
    suite = BY_NAME["zeus-cached"]
    assert suite.workload.http_version != "3"
    h3 = suite.with_protocol("3", 10).workload
    assert (h3.http_version, h3.keepalive, h3.streams) == ("3", True, 10)
    h2 = suite.with_protocol("2", 4).workload
    assert (h2.http_version, h2.streams) == ("2", 4)
    h11 = suite.with_protocol("1.1", 10).workload  # a comparison of 1.1 with 3 at 10 streams runs 1.1 as it is
    assert (h11.http_version, h11.keepalive, h11.streams) == ("1.1", True, 1)
