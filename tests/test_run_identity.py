"""Stored runs told apart: `crest runs`, `crest show` and the report name each run's kind, experiment,
configuration label, result and trial (from 1) the same way, over a real store of fabricated runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from analysis_records import mix
from crest.analysis.identity import configuration_label
from crest.analysis.rule import parse_rule
from crest.capacity.runner import CapacityRequest
from crest.cli.render import render_nodes
from crest.report import build_report, render
from crest.store import MixRecord, RunMeta, Store
from test_runs_cli import ok
from test_specweb99_checks import connection_score, stored_iteration

EXTERNAL_URL = "http://198.18.0.2:8080/"


def options(**changes: Any) -> dict[str, Any]:
    """A run's stored options as the runner stores them (RunRequest.options()): a provisioned nginx on 1 CPU."""
    fields: dict[str, Any] = {
        "target": None, "role_targets": {}, "profile": "quick", "server": "nginx", "cpus": 1, "memory_bytes": None,
        "server_options": {}, "network": None, "target_node": None, "cluster": None, "experiment": "x1",
    }  # fmt: skip
    return {**fields, **changes}


def store_run(
    db: Path, config: dict[str, Any], mixes: list[MixRecord], *, factors: dict[str, Any] | None = None,
    target: str = "nginx at http://127.0.0.1:41000/", repeat_index: int = 0,
) -> str:  # fmt: skip
    config = {"suite": {"name": "webbench-static", "workload": {"http_version": "1.1"}}, **config}
    with Store(db) as store:
        run_id = store.create_run(RunMeta(
            suite="webbench-static", target=target, profile="quick", repeat_index=repeat_index, config=config,
            factors=dict(factors or {}), host={"hostname": "lab1"},
        ))  # fmt: skip
        for m in mixes:
            store.add_mix(run_id, m)
        store.finish_run(run_id, "complete")
    return run_id


def ladder(*rps: float) -> list[MixRecord]:
    return [mix(i, 1 + i, r) for i, r in enumerate(rps)]


def runs_json(db: Path) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in json.loads(ok("runs", "--db", str(db), "--json"))}


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "crest.db"


def test_two_runs_that_differ_only_in_network_read_differently(db: Path) -> None:
    slow = store_run(db, {"options": options(network="webcat-100mbit"), "experiment": "x1"}, ladder(100, 200))
    fast = store_run(db, {"options": options(network="lan-1gbit"), "experiment": "x1"}, ladder(100, 300))
    listed = runs_json(db)
    assert listed[slow]["configuration"] == "nginx cpus=1 network=webcat-100mbit"
    assert listed[fast]["configuration"] == "nginx cpus=1 network=lan-1gbit"
    for run in listed.values():
        assert (run["kind"], run["cluster"], run["experiment"], run["trial"]) == ("ladder", False, "x1", 1)
    assert (listed[slow]["result"], listed[slow]["peak_rps"]) == ("200.0 req/s", 200.0)
    table = ok("runs", "--db", str(db))
    assert "network=webcat-100mbit" in table and "network=lan-1gbit" in table
    (row,) = [line for line in table.splitlines() if slow in line]
    assert row.split()[1:3] == ["ladder", "x1"] and "200.0 req/s" in row
    shown = ok("show", slow, "--db", str(db))
    assert "\n  kind      ladder, experiment x1\n  setup     nginx cpus=1 network=webcat-100mbit\n" in shown


def test_an_external_target_is_labelled_by_its_url_never_none(db: Path) -> None:
    plain = store_run(
        db, {"options": options(server=None, cpus=None, target=EXTERNAL_URL)}, ladder(50), target=EXTERNAL_URL
    )
    # --server external --target URL, over HTTP/2 (a factor of the run), across two networks.
    http2 = store_run(
        db, {"options": options(server=None, cpus=None, target=EXTERNAL_URL, network="webcat-10mbit")}, ladder(60),
        factors={"server": "external", "http": "2", "streams": 10}, target=EXTERNAL_URL,
    )  # fmt: skip
    listed = runs_json(db)
    assert listed[plain]["configuration"] == EXTERNAL_URL
    assert listed[http2]["configuration"] == f"{EXTERNAL_URL} network=webcat-10mbit http=2 streams=10"
    out = ok("runs", "--db", str(db)) + ok("show", plain, "--db", str(db))
    assert "none" not in out and f"  setup     {EXTERNAL_URL}\n" in out


def test_the_label_names_every_part_that_was_set_and_only_those() -> None:
    config = {
        "options": options(cpus=0.5, memory_bytes=256 << 20, server_options={"worker_processes": "2"},
                           target_node="node3", network="webcat-100mbit"),
        "suite": {"workload": {"http_version": "2", "streams": 100}},
    }  # fmt: skip
    factors = {"server": "nginx", "cpus": 0.5, "worker_processes": "2", "workload": "static"}
    assert configuration_label(config, factors, "t") == (
        "nginx on node3 cpus=0.5 memory=256M network=webcat-100mbit worker_processes=2 http=2 streams=100"
        " workload=static"
    )
    roles = options(server=None, cpus=None, role_targets={"static": "http://a/", "dynamic": "http://b/"})
    assert configuration_label({"options": roles}, {}, "http://a/") == "static=http://a/,dynamic=http://b/"
    # Published tables (and runs stored before crest kept its options) have their factors only.
    assert configuration_label({"published": {}}, {"server": "IIS 4", "cpus": 4}, "published:x.csv") == (
        "server=IIS 4 cpus=4"
    )


def test_a_capacity_search_reads_as_its_answer(db: Path) -> None:
    # p99 = 9.8 ms × clients: 5 clients meet p99<50ms, 6 do not (as tests/test_capacity_run.py replays it).
    settings = CapacityRequest(parse_rule("p99<50ms"), axis="clients", start=1, confirm=2).settings()
    probes = [
        mix(i, load, 100.0 * load, latency_us={"p99": 9800.0 * load, "mean": 1.0}, threads_per_client=1,
            connections=load)
        for i, load in enumerate([1, 2, 4, 8, 6, 5, 5, 5], start=1)
    ]  # fmt: skip
    run_id = store_run(db, {"options": options(experiment=None), "capacity": settings}, probes)
    (listed,) = runs_json(db).values()
    assert (listed["kind"], listed["result"], listed["experiment"]) == ("capacity", "5 clients", None)
    assert listed["capacity"]["answer"] == 5 and listed["capacity"]["rule"] == "p99<50ms"
    assert listed["capacity"]["statement"].startswith("5 clients met p99<50ms in ")
    (row,) = [line for line in ok("runs", "--db", str(db)).splitlines() if run_id in line]
    assert row.split()[1] == "capacity" and "5 clients" in row
    shown = ok("show", run_id, "--db", str(db))
    assert "  kind      capacity search\n  setup     nginx cpus=1\n  answer    5 clients (rule p99<50ms)\n" in shown
    assert "  answer    5 clients (rule p99<50ms)\n            5 clients met p99<50ms in " in shown
    assert "  mix" not in shown.split("answer")[0]  # the answer leads; the probes' table follows
    shown_json = json.loads(ok("show", run_id, "--db", str(db), "--json"))
    assert (shown_json["kind"], shown_json["result"], shown_json["capacity"]["answer"]) == ("capacity", "5 clients", 5)


def test_a_specweb99_test_reads_as_its_verdict_and_conforming_connections(db: Path) -> None:
    good = [connection_score() for _ in range(20)]
    slow = [connection_score(rate_bps=100_000) for _ in range(20)]
    valid = store_run(db, {"options": options()}, [stored_iteration(i, good) for i in (1, 2, 3)])
    invalid = store_run(db, {"options": options()}, [stored_iteration(1, good), stored_iteration(2, slow)])
    listed = runs_json(db)
    assert (listed[valid]["kind"], listed[valid]["result"]) == ("specweb99", "20 conn VALID")
    assert listed[valid]["specweb99"] == {
        "verdict": "VALID (not a conforming run length)", "valid": True, "conforming_connections": 20,
    }  # fmt: skip
    assert listed[invalid]["result"] == "0 conn INVALID" and listed[invalid]["specweb99"]["valid"] is False
    table = ok("runs", "--db", str(db))
    assert "20 conn VALID" in table and "0 conn INVALID" in table
    shown = ok("show", valid, "--db", str(db))
    assert "  kind      SPECweb99 test\n" in shown
    assert "  result    20 conforming connections · VALID (not a conforming run length)\n" in shown
    shown = ok("show", invalid, "--db", str(db))
    assert "  result    0 conforming connections · INVALID\n" in shown
    assert "            INVALID: iteration 2: conforming connections: 0 of 20" in shown


def test_trials_are_counted_from_one_in_runs_show_and_the_report(db: Path) -> None:
    config = {"options": options(), "experiment": "x1"}
    first = store_run(db, config, ladder(100, 200), factors={"server": "nginx"})
    second = store_run(db, config, ladder(110, 190), factors={"server": "nginx"}, repeat_index=1)
    listed = runs_json(db)
    assert (listed[first]["trial"], listed[second]["trial"], listed[second]["repeat_index"]) == (1, 2, 1)
    assert "(profile quick, trial 2)" in ok("show", second, "--db", str(db))
    assert json.loads(ok("show", second, "--db", str(db), "--json"))["trial"] == 2
    with Store(db) as store:
        doc = build_report(store.select(["x1"]))
    assert sorted(r["trial"] for r in doc["runs"]) == [1, 2]
    assert sorted(m["trial"] for m in doc["mixes"]) == [1, 1, 2, 2]


def test_the_report_names_each_run_as_crest_runs_does(db: Path) -> None:
    settings = CapacityRequest(parse_rule("p99<50ms"), axis="clients", start=1, confirm=1).settings()
    probes = [mix(1, 1, 100.0, latency_us={"p99": 1000.0, "mean": 1.0}, threads_per_client=1, connections=1)]
    config = {"options": options(network="webcat-100mbit", experiment="x2"), "capacity": settings, "experiment": "x2"}
    run_id = store_run(db, config, probes)
    with Store(db) as store:
        doc = build_report([store.run(run_id)])
    (run,) = doc["runs"]
    listed = runs_json(db)[run_id]
    assert (run["kind"], run["setup"], run["result"], run["experiment"], run["trial"]) == (
        listed["kind"], listed["configuration"], listed["result"], "x2", 1,
    )  # fmt: skip
    assert run["setup"] == "nginx cpus=1 network=webcat-100mbit"
    assert doc["title"] == "webbench-static: nginx cpus=1 network=webcat-100mbit (capacity search)"
    text = render(doc, "md")
    assert "Experiment x2" in text
    (row,) = [line for line in text.splitlines() if line.startswith(f"| {run_id} ")]
    assert "| capacity |" in row and "| nginx cpus=1 network=webcat-100mbit |" in row
    page = render(doc, "html")
    assert "nginx cpus=1 network=webcat-100mbit" in page and "capacity" in page


def test_cluster_nodes_are_named_as_the_user_names_them(db: Path) -> None:
    nodes = [
        {"node_id": "aa11bb22cc", "names": ["node2"], "ip": "127.0.0.1", "first_client": 0, "clients": 8,
         "requests": 1200, "rps": 400.0, "engine_cpu_util_pct": 35.0, "client_bound": False,
         "clock_offset_s": 0.0, "clock_uncertainty_s": 0.0001},
        {"node_id": "dd44ee55ff", "ip": "127.0.0.1", "first_client": 8, "clients": 1, "requests": 300,
         "rps": 100.0, "engine_cpu_util_pct": 20.0, "client_bound": False, "clock_offset_s": 0.0,
         "clock_uncertainty_s": 0.0001},
    ]  # fmt: skip
    rows = render_nodes({"nodes": nodes}, width=200).splitlines()
    assert rows[-2].split()[:5] == ["node2", "127.0.0.1", "8", "clients", "(0-7)"]
    assert rows[-1].split()[:5] == ["dd44ee55", "127.0.0.1", "1", "client", "(8)"]  # stored before names were
    server = {"name": "nginx", "version": "1.22.1", "node_id": "ff00ff00ff", "node_ip": "127.0.0.1",
              "node_names": ["node3"], "cpus": [0]}  # fmt: skip
    config = {"options": options(cluster="local:3", target_node="node3"), "cluster": {"address": "local:3"},
              "server": server}  # fmt: skip
    run_id = store_run(db, config, [mix(0, 9, 500.0, cluster={"start_at_unix_s": 0.0, "nodes": nodes})])
    shown = ok("show", run_id, "--db", str(db))
    assert "  kind      ladder on a cluster\n  setup     nginx on node3 cpus=1\n" in shown
    assert "on node node3 (127.0.0.1)" in shown and "ff00ff00" not in shown and "aa11bb22" not in shown
    assert "node2" in shown and "8 clients (0-7)" in shown
    (listed,) = runs_json(db).values()
    assert (listed["kind"], listed["cluster"]) == ("ladder", True)
    assert "ladder (cluster)" in ok("runs", "--db", str(db))


def test_a_report_comparing_a_started_server_with_a_url_target_names_the_url_never_none(db: Path) -> None:
    started = store_run(db, {"options": options()}, ladder(100, 200), factors={"server": "nginx", "cpus": 1})
    external = store_run(
        db, {"options": options(server=None, cpus=None, target=EXTERNAL_URL)}, ladder(90, 150), target=EXTERNAL_URL
    )
    with Store(db) as store:
        doc = build_report([store.run(started), store.run(external)])
    assert [c["label"] for c in doc["configurations"]] == ["server=nginx cpus=1", EXTERNAL_URL]
    assert "=none" not in doc["title"] and "=none" not in render(doc, "md")
