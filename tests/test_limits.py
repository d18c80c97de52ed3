"""What decided a result leads every output: the analysis's one ranking (crest.verdicts.RANK) puts a
client-bound or link-bound peak first in the report's headline and its "Mind these", and a comparison of
configurations limited by the same thing says the difference is not the servers'."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from analysis_records import run
from crest import verdicts
from crest.report import build_report
from crest.store import RunDetail, Store
from support import run_cli_in_process


def _with(detail: RunDetail, index: int, *found: verdicts.Verdict) -> RunDetail:
    mixes = list(detail.mixes)
    mixes[index] = replace(mixes[index], verdicts=list(found))
    return replace(detail, mixes=mixes)


def _config(name: str, rps: list[float], run_id: str, **at: Any) -> RunDetail:
    detail = run(rps, factors={"server": name}, run_id=run_id)
    for index, found in at.items():
        detail = _with(detail, int(index.removeprefix("m")), *found)
    return detail


def test_a_link_bound_peak_leads_the_headline_and_the_warnings() -> None:
    link = verdicts.link_bound("subnet 1", "down", 0.998, 100e6, subnet=1)
    detail = _config("nginx", [100.0, 200.0, 300.0, 290.0], "a", m2=[link], m3=[link])
    summary = build_report([detail])["summary"]
    assert summary["headline"].startswith(
        "server=nginx: subnet 1's link (100 Mbit/s, down) ran at 99.8% of its rate at the peak, so the peak"
        " measures the network, not the target."
    )
    assert "peaked at 300 req/s" in summary["headline"]
    assert summary["warnings"][0].startswith("server=nginx: link-bound at load 3, 4: the subnet 1 link (down)")


def test_two_client_bound_configurations_differ_by_the_engine_not_the_servers() -> None:
    bound = verdicts.client_bound(98.0, 1)
    a = _config("nginx", [100.0, 200.0, 330.0, 320.0], "a", m2=[bound], m3=[bound])
    b = _config("lighttpd", [100.0, 200.0, 300.0, 290.0], "b", m2=[bound])
    summary = build_report([a, b])["summary"]
    assert summary["headline"].startswith(
        "server=nginx and server=lighttpd were both client-bound (the load engine) at their peaks, so the"
        " difference between them is not the servers': give the engine more cores (a lower --cpus) or more load"
        " nodes (--cluster). server=nginx had the highest peak"
    )
    assert "server=nginx had the highest peak" in summary["headline"]  # the figures still follow
    assert [w.split(":")[1].strip().split(" ")[0] for w in summary["warnings"][:2]] == ["client-bound"] * 2


def test_one_limited_configuration_of_two_is_named_first() -> None:
    bound = verdicts.client_bound(98.0, 1)
    a = _config("nginx", [100.0, 200.0, 330.0, 320.0], "a", m2=[bound])
    b = _config("lighttpd", [100.0, 200.0, 300.0, 290.0], "b")
    headline = build_report([a, b])["summary"]["headline"]
    assert headline.startswith("server=nginx: the load engine was client-bound at the peak")
    assert "The comparison is therefore not of the servers alone." in headline


def test_a_target_that_set_its_own_peak_gets_the_plain_headline() -> None:
    doc = build_report([_config("nginx", [100.0, 200.0, 300.0, 295.0], "a")])
    assert doc["summary"]["headline"].startswith("server=nginx peaked at 300 req/s")
    assert doc["configurations"][0]["summary"]["limit"] is None


def test_a_curve_still_rising_says_so_first() -> None:
    doc = build_report([_config("nginx", [100.0, 200.0, 300.0], "a")])
    assert doc["summary"]["headline"].startswith("Not saturated: server=nginx peaked at 300 req/s")
    assert doc["summary"]["warnings"][0].startswith("server=nginx: not saturated")


def test_crest_show_names_the_limit_right_under_the_run_id_and_ranks_its_warnings(tmp_path: Path) -> None:
    link = verdicts.link_bound("subnet 1", "down", 0.998, 100e6, subnet=1)
    detail = _config("nginx", [100.0, 200.0, 300.0, 290.0], "a", m2=[link, verdicts.cache_cold(2 << 20)])
    db = tmp_path / "crest.db"
    with Store(db) as store:
        run_id = store.create_run(detail.meta)
        for m in detail.mixes:
            store.add_mix(run_id, m)
        store.finish_run(run_id, "complete")
    out = run_cli_in_process("show", run_id, "--db", str(db))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("Run ")
    assert (
        lines[1].split()[:1] == ["limit"]
        and "subnet 1's link (100 Mbit/s, down) ran at 99.8% of its rate at the peak" in lines[1]
    )
    warnings = [" ".join(line.split()) for line in lines if line.strip().startswith("warning:")]
    assert warnings[0].startswith("warning: mix 2: the subnet 1 link (down)")
    assert warnings[1].startswith("warning: mix 2: cache cold")


def test_a_capacity_search_and_a_specweb99_test_are_headlined_by_their_results(tmp_path: Path) -> None:
    from analysis_records import mix
    from crest.analysis.rule import parse_rule
    from crest.capacity.runner import CapacityRequest
    from test_run_identity import options, store_run
    from test_specweb99_checks import connection_score, stored_iteration

    settings = CapacityRequest(parse_rule("p99<50ms"), axis="clients", start=1, confirm=2).settings()
    probes = [mix(i, load, 100.0 * load, latency_us={"p99": 9800.0 * load, "mean": 1.0}, threads_per_client=1,
                  connections=load) for i, load in enumerate([1, 2, 4, 8, 6, 5, 5, 5], start=1)]  # fmt: skip
    search = store_run(tmp_path / "a.db", {"options": options(), "capacity": settings}, probes)
    with Store(tmp_path / "a.db") as store:
        summary = build_report(store.select([search]))["summary"]
    # The label is a URL: "…:41000/: capacity the target host's…" ran a limit's sentence into it (the walk's).
    assert summary["headline"].startswith(
        "Capacity search of webbench-static on nginx at http://127.0.0.1:41000/ — 5 clients met"
    )
    assert not any("not saturated" in w or "target idle" in w for w in summary["warnings"])
    good = [connection_score() for _ in range(20)]
    test = store_run(tmp_path / "b.db", {"options": options()}, [stored_iteration(i, good) for i in (1, 2, 3)])
    with Store(tmp_path / "b.db") as store:
        summary = build_report(store.select([test]))["summary"]
    assert summary["headline"] == (
        "webbench-static on nginx at http://127.0.0.1:41000/: SPECweb99 20 conforming connections · VALID"
        " (not a conforming run length)."
    )


def test_configurations_limited_alike_are_named_together_and_the_target_idle_note_gives_way() -> None:
    bound = verdicts.client_bound(98.0, 1)
    a = _config("nginx", [100.0, 200.0, 330.0, 320.0], "a", m2=[bound])
    b = _config("lighttpd", [100.0, 200.0, 300.0, 290.0], "b", m2=[bound])
    c = _config("apache", [100.0, 200.0, 250.0, 240.0], "c")
    summary = build_report([a, b, c])["summary"]
    assert summary["headline"].startswith(
        "server=nginx and server=lighttpd: the load engine was client-bound at their peaks, so their peaks measure"
        " crest, not the target"
    )
    assert not any("target idle" in w for w in summary["warnings"] if w.startswith(("server=nginx", "server=lighttpd")))
