"""`crest capacity`: probes stored as mixes, the answer read back from the store, the confidence statement,
the report's capacity section, and bad input refused before anything is sent."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from analysis_records import mix
from crest import verdicts
from crest.analysis.capacity import capacity_result, is_capacity_run
from crest.analysis.rule import parse_rule
from crest.capacity.runner import CapacityRequest
from crest.report.build import build_report
from crest.store import RunDetail, RunMeta, Store
from support import run_cli, run_cli_in_process, static_suite


def capacity_run(p99_ms_by_load: dict[int, float], loads: list[int], **settings: Any) -> RunDetail:
    """A stored capacity run whose probes (in this order) had these p99 latencies; `settings` are the
    CapacityRequest's (confirm=2 unless given)."""
    asked = {"confirm": 2, **settings}
    config = CapacityRequest(parse_rule("p99<50ms"), axis="clients", start=loads[0], **asked).settings()
    meta = RunMeta(
        suite="s", target="t", profile="quick", repeat_index=0, config={"capacity": config}, factors={}, host={}
    )
    mixes = [
        mix(i, load, 100.0 * load, latency_us={"p99": p99_ms_by_load[load] * 1000, "mean": 1.0}, threads_per_client=1,
            connections=load)
        for i, load in enumerate(loads, start=1)
    ]  # fmt: skip
    return RunDetail("cap", meta, "complete", None, 0.0, 1.0, mixes)


def test_replaying_the_stored_probes_gives_the_answer_and_its_confidence() -> None:
    # p99 = 10 ms × clients: 5 clients meet p99<50ms (49 ms), 6 do not.
    latency = {n: 9.8 * n for n in range(1, 20)}
    detail = capacity_run(latency, [1, 2, 4, 8, 6, 5, 5, 5])
    assert is_capacity_run(detail)
    result = capacity_result(detail)
    assert result.complete and result.answer == 5 and result.failed == 6 and result.trials == 3
    assert [p.phase for p in result.probes] == [
        "grow",
        "grow",
        "grow",
        "grow",
        "bisect",
        "bisect",
        "confirm",
        "confirm",
    ]
    assert [p.passed for p in result.probes] == [True, True, True, False, False, True, True, True]
    assert result.probes[3].failures == ("p99<50ms",)
    assert result.pass_probability_lower == pytest.approx(0.05 ** (1 / 3))
    # Success reads as success; the bound says what 3 passes can prove, and how to prove more.
    assert result.statement() == (
        "5 clients met p99<50ms in all 3 trials and 6 clients broke it; with 3 trials that means, with 95%"
        " confidence, a trial at 5 clients meets the rule at least 37% of the time (more trials, a higher"
        " --confirm, tighten that bound)"
    )
    (margin,) = result.margins
    assert margin.mean == pytest.approx(49_000) and margin.at_failed == pytest.approx(58_800)
    assert margin.interval == pytest.approx((49_000, 49_000))  # 3 equal values: an interval of no width


def test_a_client_bound_answer_says_so_before_anything_else() -> None:
    latency = {n: 9.8 * n for n in range(1, 20)}
    detail = capacity_run(latency, [1, 2, 4, 8, 6, 5, 5, 5])
    bound = verdicts.client_bound(98.0, 1)
    for m in detail.mixes:
        if m.clients == 5:
            m.verdicts = [verdicts.cores_shared(1), bound]
    result = capacity_result(detail)
    assert result.limited_by == (bound,)
    assert result.statement() == (
        "the load engine was client-bound at the answer, so it measures crest, not the target: give the engine"
        " more cores (a lower --cpus) or more load nodes (--cluster); 5 clients met p99<50ms in all 3 trials"
        " and 6 clients broke it; with 3 trials that means, with 95% confidence, a trial at 5 clients meets the"
        " rule at least 37% of the time (more trials, a higher --confirm, tighten that bound)"
    )


def test_two_trials_at_the_answer_give_a_looser_bound_and_no_margin_interval() -> None:
    latency = {n: 9.8 * n for n in range(1, 20)}
    two = capacity_result(capacity_run(latency, [1, 2, 4, 8, 6, 5, 5], confirm=1))
    assert two.trials == 2 and two.statement().endswith(
        "in all 2 trials and 6 clients broke it; with 2 trials that means, with 95% confidence, a trial at 5"
        " clients meets the rule at least 22% of the time (more trials, a higher --confirm, tighten that bound)"
    )
    (margin,) = two.margins
    assert margin.mean == pytest.approx(49_000) and margin.interval is None  # 2 trials: too few for one


def test_an_answer_at_the_ceiling_says_the_search_stopped_there() -> None:
    detail = capacity_run({n: 1.0 for n in range(1, 9)}, [1, 2, 4, 8, 8, 8], max_load=8)
    result = capacity_result(detail)
    assert result.answer == 8 and result.failed is None and result.at_ceiling
    assert result.statement().startswith(
        "the search stopped at its ceiling (--max 8), not at a load that broke the rule; 8 clients met p99<50ms"
    )


def test_an_unfinished_search_has_no_answer() -> None:
    detail = capacity_run({1: 1.0, 2: 1.0}, [1, 2])
    result = capacity_result(detail)
    assert not result.complete and result.answer is None
    assert result.statement() == "the search did not finish (2 probes stored): no answer"


def test_when_even_one_client_breaks_the_rule_there_is_no_answer() -> None:
    detail = capacity_run({1: 80.0}, [1])
    result = capacity_result(detail)
    assert result.complete and result.answer is None
    assert result.statement() == "no load met p99<50ms: even 1 clients broke it"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--rule", "p99<50"], "a latency needs a unit"),
        (["--rule", "p99<50ms", "--axis", "threads"], "invalid --axis 'threads'"),
        (["--rule", "p99<50ms", "--precision", "150%"], "invalid --precision '150%'"),
        (["--rule", "p99<50ms", "--factor", "1"], "grows by a factor above 1"),
        (["--rule", "p99<50ms", "--server", "nginx"], "a URL is its own target"),
        (["--rule", "conforming>=95%"], "search it with crest specweb99 --connections N --search"),
        (["--rule", "p99<50ms", "--start", "64", "--max", "40"], "--start 64 > --max 40"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], message: str) -> None:
    result = run_cli_in_process("capacity", "http://127.0.0.1:9/", *args)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


@pytest.mark.parametrize(("option", "value"), [("--cpus", "1,2"), ("--server", "nginx,lighttpd")])
@pytest.mark.parametrize("command", [["capacity", "veritest-static", "--rule", "errors<1%"], ["specweb99", "-c", "4"]])
def test_a_search_measures_one_configuration(command: list[str], option: str, value: str) -> None:
    """--cpus and --server take what `crest run` takes, and a list is refused in one line saying why."""
    given = {"--server": "nginx", "--cpus": "1", option: value}
    result = run_cli_in_process(*command, *(word for pair in given.items() for word in pair))
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert f"{option} {value}: crest {command[0]} measures one configuration, so give one value" in result.stderr


def test_a_suite_needs_its_target() -> None:
    result = run_cli_in_process("capacity", "veritest-static", "--rule", "errors<1%")
    assert result.returncode == 2 and "--server NAME (crest starts it) or --target URL" in result.stderr


@pytest.mark.integration
@pytest.mark.timeout(120)
def test_every_probe_is_a_stored_mix_and_the_report_marks_the_answer(builtin_target: str, tmp_path: Path) -> None:
    db = tmp_path / "lab.db"
    result = run_cli(
        "capacity", f"{builtin_target}/1k.html", "--rule", "errors<1%", "--max", "4", "--confirm", "1",
        "--length", "2s", "--db", str(db), "--no-nap", timeout_s=100,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    said = " ".join(result.stdout.split())  # the statement is folded to the terminal's width
    assert "errors<1%: 0.00% at 4, too few trials for an interval (n=2; a higher --confirm)" in said
    with Store(db) as store:
        (summary,) = store.runs()
        detail = store.run(summary.id)
    assert [m.connections for m in detail.mixes] == [1, 2, 4, 4]
    # Whatever the host did at the answer (stored with its trials: a noisy or shared host on a busy machine)
    # leads the statement, each in its rank; then the ceiling; then the answer. Nothing else, nothing left out.
    seen = {v.kind: v for m in detail.mixes if m.connections == 4 for v in m.verdicts if v.kind in verdicts.DECIDING}
    lead = [verdicts.decided_by(k, "at the answer", figures=seen[k].figures) or seen[k].message
            for k in verdicts.DECIDING if k in seen]  # fmt: skip
    ceiling = "the search stopped at its ceiling (--max 4), not at a load that broke the rule"
    answer = "4 connections met errors<1% in all 2 trials and no higher load was tried;"
    assert "capacity: " + " ".join("; ".join([*lead, ceiling, answer]).split()) in said, said
    assert detail.meta.config["options"]["nap"] is False and all(m.naps == 0 for m in detail.mixes)  # --no-nap
    doc = build_report([detail])
    (search,) = doc["capacity"]
    assert search["answer"] == 4 and [p["phase"] for p in search["probes"]] == ["grow", "grow", "grow", "confirm"]
    # The stored search reads as one in `crest runs`, with its answer, not as a ladder's peak.
    (listed,) = json.loads(run_cli_in_process("runs", "--db", str(db), "--json").stdout)
    assert (listed["kind"], listed["capacity"]["answer"]) == ("capacity", 4)
    assert listed["result"].startswith("4 connections") and listed["configuration"] == f"{builtin_target}/1k.html"


@pytest.mark.integration
@pytest.mark.timeout(180)
def test_the_search_finds_the_capacity_of_a_queue_whose_capacity_is_known(docroot: Path, tmp_path: Path) -> None:
    # One request at a time, 20 ms each: c connections wait c × 20 ms on average, so mean<90ms holds
    # up to 4 connections (80 ms) and breaks at 5 (100 ms): the answer is 4, exactly (whole loads).
    from crest.servers import BuiltinServer, ServeSpec

    db = tmp_path / "lab.db"
    with BuiltinServer(ServeSpec(docroot=docroot, service_time_s=0.02)) as server:
        result = run_cli(
            "capacity", f"{server.url}/1k.html", "--rule", "mean<90ms", "--length", "2s", "--confirm", "1",
            "--db", str(db), timeout_s=150,
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    with Store(db) as store:
        (summary,) = store.runs()
        outcome = capacity_result(store.run(summary.id))
    assert outcome.complete and outcome.answer == 4 and outcome.failed == 5
    assert [p.load for p in outcome.probes] == [1, 2, 4, 8, 6, 5, 4]
    (margin,) = outcome.margins
    assert margin.mean is not None and 75_000 < margin.mean < 90_000 and (margin.at_failed or 0) >= 90_000


@pytest.mark.integration
@pytest.mark.timeout(180)
def test_an_open_loop_rate_is_searched_and_stored_as_asked(docroot: Path, tmp_path: Path) -> None:
    # The same queue takes 50 req/s; offered more, its queue grows for as long as the probe lasts.
    from crest.servers import BuiltinServer, ServeSpec

    db = tmp_path / "lab.db"
    with BuiltinServer(ServeSpec(docroot=docroot, service_time_s=0.02)) as server:
        result = run_cli(
            "capacity", f"{server.url}/1k.html", "--axis", "rate", "--start", "8", "-c", "16", "--rule", "mean<100ms",
            "--precision", "10%", "--confirm", "1", "--length", "2s", "--db", str(db), timeout_s=150,
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    with Store(db) as store:
        (summary,) = store.runs()
        detail = store.run(summary.id)
    outcome = capacity_result(detail)
    assert outcome.complete and outcome.answer is not None and 16 <= outcome.answer < 64
    assert [m.rate_rps for m in detail.mixes][:4] == [8.0, 16.0, 32.0, 64.0]  # the rates asked for, stored
    assert "requests/s met mean<100ms" in result.stdout


@pytest.mark.integration
@pytest.mark.timeout(120)
def test_a_search_of_nginx_takes_its_settings_memory_and_access_log(tmp_path: Path) -> None:
    """capacity takes the target options crest run takes (crest.cli.target_options), one value each: the
    server runs with them, and the run stores them as crest run would."""
    if shutil.which("nginx") is None:
        pytest.skip("nginx is not installed: apt-get install -y nginx-light")
    suite = tmp_path / "small.toml"
    suite.write_text(static_suite("small", "a small static suite", [1], length_s=2, ramp_s=0))
    db = tmp_path / "lab.db"
    # --profile full: the suite's own 2 s probes with no ramp, so the access log counts exactly what crest did.
    result = run_cli(
        "capacity", str(suite), "--server", "nginx", "--server-opt", "workers=2", "--memory", "256M", "--access-log",
        "--rule", "errors<1%", "--max", "2", "--confirm", "1", "--profile", "full", "--db", str(db), timeout_s=100,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    with Store(db) as store:
        (summary,) = store.runs()
        detail = store.run(summary.id)
    server = detail.meta.config["server"]
    assert server["options"] == {"workers": "2"} and server["memory_bytes"] == 256 * 2**20
    assert server["access_log"] and "worker_processes 2;" in server["config_text"]
    assert detail.meta.config["options"]["factors"] == {"workers": "2"}
    assert [m.access_log_requests for m in detail.mixes] == [m.requests for m in detail.mixes]  # each probe logged


def test_without_max_an_answer_at_the_ceiling_names_the_default() -> None:
    detail = capacity_run({n: 1.0 for n in range(1, 1025)}, [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 1024, 1024])
    result = capacity_result(detail)
    assert result.answer == 1024 and result.at_ceiling and not result.exhausted
    assert result.statement().startswith(
        "the search stopped at its ceiling (1024, the start × 1024), not at a load that broke the rule: raise --max"
        " to look higher; 1024 clients met p99<50ms"
    )
