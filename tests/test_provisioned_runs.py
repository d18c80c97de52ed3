"""`crest run --server …`: crest starts, pins, limits, monitors and stops the target itself.

Every combination of --server/--cpus/--memory becomes its own run tagged with
its factors; each mix stores the monitoring figures; the target's processes
are pinned (checked in /proc) and none is left after the run, after Ctrl-C
and after SIGTERM; with --access-log the target's own count of requests
equals crest's for every mix.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import sqlite3
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from crest.filesets import generate
from crest.servers import cpus as cpu_split
from crest.servers.base import ServerSettings, Target
from crest.servers.registry import adapter
from support import run_cli, start_cli, targets_left, wait_until

pytestmark = pytest.mark.integration

SUITE = """
name = "provisioned"
description = "small mixes against a target crest starts"
source = "crest tests"
[workload]
fileset = "webcat-large-filemix"
http_version = "{http}"
keepalive = {keepalive}
[[workload.classes]]
name = "static"
kind = "static"
weight = 1
[ladder]
clients = [1, 3]
threads_per_client = 2
[timing]
length_s = {length}
ramp_up_s = {ramp}
ramp_down_s = {ramp}
"""
WAIT_S = 60.0


@pytest.fixture(scope="module")
def shared_dir() -> Iterator[Path]:
    """A directory servers that drop to www-data can read (pytest's tmp dirs are private to root)."""
    root = Path(tempfile.mkdtemp(prefix="crest-test-"))
    root.chmod(0o755)
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def fileset(shared_dir: Path) -> Path:
    root = shared_dir / "fileset"
    generate("webcat-large-filemix", root)
    return root


def _suite(tmp_path: Path, *, length: int = 3, ramp: int = 1, http: str = "1.1", keepalive: bool = True) -> Path:
    path = tmp_path / "suite.toml"
    path.write_text(SUITE.format(length=length, ramp=ramp, http=http, keepalive=str(keepalive).lower()))
    return path


def _rows(db: Path, sql: str, *args: object) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql, args).fetchall()


def _run_stored(db: Path) -> bool:
    """Whether crest has stored a run in `db` yet: the file appears before its schema, which a clean clone's
    poll once read between the two ("no such table: runs")."""
    try:
        return db.exists() and bool(_rows(db, "SELECT 1 FROM runs"))
    except sqlite3.OperationalError:
        return False


@pytest.fixture
def no_leftovers() -> Iterator[None]:
    before = set(targets_left())
    yield
    deadline = time.monotonic() + 10
    while set(targets_left()) - before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert set(targets_left()) - before == set(), "a target process outlived the run"


def test_builtin_combinations_are_separate_runs_with_factors_and_monitoring(
    tmp_path: Path, fileset: Path, no_leftovers: None
) -> None:
    db = tmp_path / "r.db"
    out = run_cli("run", str(_suite(tmp_path)), "--server", "builtin", "--cpus", "1", "--repeat", "2",
                  "--fileset", str(fileset), "--db", str(db), timeout_s=WAIT_S * 2)  # fmt: skip
    assert out.returncode == 0, out.stderr
    runs = _rows(db, "SELECT id, factors_json, config_json, status FROM runs ORDER BY started_at")
    assert len(runs) == 2
    # What runs is said before it runs, and each run says which configuration and trial it is (stderr is
    # not a terminal here: the headers stay, the live line does not).
    said = out.stderr.splitlines()
    assert said[0].startswith("crest: 2 runs, 4 mixes, ")
    assert said[1:3] == [f"run {i}/2 · server=builtin cpus=1 · trial {i} of 2 · 2 mixes ({runs[i - 1][0]})"
                         for i in (1, 2)]  # fmt: skip
    experiments = set()
    for _, factors, config, status in runs:
        assert status == "complete"
        assert json.loads(factors) == {"server": "builtin", "cpus": 1}
        cfg = json.loads(config)
        experiments.add(cfg["experiment"])
        assert cfg["server"]["name"] == "builtin" and cfg["server"]["version"].startswith("crest-target/")
        assert cfg["cpus"]["target"] == [0]
    assert len(experiments) == 1 and None not in experiments
    (monitor_json, requests, naps), *_ = _rows(
        db, "SELECT monitor_json, requests, naps FROM mixes WHERE run_id = ? ORDER BY idx", runs[0][0]
    )
    monitor = json.loads(monitor_json)
    assert requests > 0
    assert naps is not None and json.loads(runs[0][2])["options"]["nap"] is True  # counted, whether or not it napped
    target = monitor["target"]
    assert target["cpu_user_s"] + target["cpu_system_s"] > 0
    assert target["rss_bytes_max"] > 0 and target["threads_max"] >= 1 and target["open_files_max"] > 0
    assert target["cores"] == 1 and 0 <= target["cpu_util_pct"]
    assert monitor["engine"]["cpu_user_s"] + monitor["engine"]["cpu_system_s"] > 0
    assert monitor["system"]["loopback_sent_bytes"] > 0
    # At least one sample a second over the 3 s mix.
    times = [s["t"] for s in monitor["samples"]]
    assert len(times) >= 3 and max(b - a for a, b in zip(times, times[1:])) <= 1.0
    # The experiment id names both runs.
    shown = run_cli("runs", "--db", str(db), "--json")
    assert shown.returncode == 0


def test_server_opt_values_are_configurations_and_equal_settings_are_trials(
    tmp_path: Path, fileset: Path, no_leftovers: None
) -> None:
    a = adapter("nginx")
    if not a.installed():
        pytest.skip(f"{a.title} is not installed: {a.install_hint()}")
    db = tmp_path / "r.db"
    out = run_cli("run", str(_suite(tmp_path, length=1, ramp=0)), "--server", "nginx", "--cpus", "1",
                  "--server-opt", "worker_connections=512,1024", "--server-opt", "keepalive_requests=100",
                  "--repeat", "2", "--fileset", str(fileset), "--db", str(db), "-q", timeout_s=WAIT_S * 3)  # fmt: skip
    assert out.returncode == 0, out.stderr
    runs = _rows(db, "SELECT id, factors_json, config_json, repeat_index FROM runs ORDER BY started_at")
    factors = [json.loads(f) for _, f, _, _ in runs]
    # Trials interleaved: both configurations' first trials, then both second ones.
    assert [(f["worker_connections"], r) for f, (_, _, _, r) in zip(factors, runs)] == [
        ("512", 0), ("1024", 0), ("512", 1), ("1024", 1)
    ]  # fmt: skip
    assert factors[0] == {"server": "nginx", "cpus": 1, "worker_connections": "512", "keepalive_requests": "100"}
    servers = [json.loads(c)["server"] for _, _, c, _ in runs]
    assert all("worker_connections 1024;" in s["config_text"] for s in servers[1::2])
    # Each trial has its own site directory and ports, yet equal settings give equal digests.
    assert servers[0]["config_text"] != servers[2]["config_text"]
    assert servers[0]["config_sha256"] == servers[2]["config_sha256"] != servers[1]["config_sha256"]
    experiment = json.loads(runs[0][2])["experiment"]
    report = run_cli("report", experiment, "--db", str(db), "-o", str(tmp_path / "r.json"))
    assert report.returncode == 0, report.stderr
    doc = json.loads((tmp_path / "r.json").read_text())
    configs = {c["label"]: c["run_ids"] for c in doc["configurations"]}
    assert configs == {
        "worker_connections=512": [runs[0][0], runs[2][0]],
        "worker_connections=1024": [runs[1][0], runs[3][0]],
    }


def test_target_and_engine_are_pinned_to_their_cores(fileset: Path, no_leftovers: None) -> None:
    cores = cpu_split.available()
    split = cpu_split.split(1)
    with Target(adapter("builtin"), ServerSettings(docroot=fileset, cpus=split.target, workers=1)) as target:
        pids = target.pids()
        assert pids
        for pid in pids:
            assert cpu_split.parse_list(cpu_split.allowed_list(pid)) == set(split.target)
        with cpu_split.pinned(split.engine):
            assert os.sched_getaffinity(0) == set(split.engine)
    assert os.sched_getaffinity(0) == set(cores)
    for pid in pids:
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_memory_limit_puts_the_target_in_a_limited_cgroup(fileset: Path, no_leftovers: None) -> None:
    settings = ServerSettings(docroot=fileset, workers=1, memory_bytes=256 << 20)
    try:
        target = Target(adapter("builtin"), settings)
        target.start()
    except Exception as exc:  # not permitted here: the error says so in one line
        assert "cgroup" in str(exc)
        pytest.skip(f"no writable cgroup here: {exc}")
    try:
        assert target.memory is not None
        limit_file = "memory.max" if target.memory.version == 2 else "memory.limit_in_bytes"
        assert int((target.memory.path / limit_file).read_text()) == 256 << 20
        members = {int(p) for p in (target.memory.path / "cgroup.procs").read_text().split()}
        assert set(target.pids()) <= members
        cgroup_dir = target.memory.path
    finally:
        target.stop()
    assert not cgroup_dir.exists()


def test_a_target_killed_for_going_over_its_memory_gets_a_target_oom_verdict(
    tmp_path: Path, shared_dir: Path, no_leftovers: None
) -> None:
    # The built-in target keeps each small file it served in memory: touching most of the webbench
    # fileset's ~60 MB of small files outgrows a 64 MB limit (it starts in ~35 MB), so the kernel kills it.
    # Every file is requested once (selection "once"), so the target touches them all however slowly a busy
    # host serves them; a weighted draw for a fixed time touched too few on a slow clean clone (no kill).
    wb = shared_dir / "webbench"
    if not wb.exists():
        generate("webbench", wb)
    suite = tmp_path / "oom.toml"
    suite.write_text(SUITE.replace('fileset = "webcat-large-filemix"', 'fileset = "webbench"\nselection = "once"')
                     .replace("clients = [1, 3]", "clients = [8]")
                     .format(length=30, ramp=1, http="1.1", keepalive="true"))  # fmt: skip
    db = tmp_path / "r.db"
    out = run_cli("run", str(suite), "--server", "builtin", "--memory", "64M", "--fileset", str(wb),
                  "--db", str(db), "-q", timeout_s=WAIT_S)  # fmt: skip
    if out.returncode == 2 and "cgroup" in out.stderr:
        pytest.skip(f"no writable cgroup here: {out.stderr.strip()}")
    assert out.returncode == 1 and "the target stopped answering during mix 1" in out.stderr
    ((verdicts_json, monitor_json),) = _rows(db, "SELECT verdicts_json, monitor_json FROM mixes")
    oom = [v for v in json.loads(verdicts_json) if v["kind"] == "target_oom"]
    assert len(oom) == 1 and oom[0]["oom_kills"] >= 1 and oom[0]["memory_limit_bytes"] == 64 << 20
    assert "--memory limit" in oom[0]["message"]
    memory = json.loads(monitor_json)["target_memory"]
    assert memory["oom_kills"] == oom[0]["oom_kills"] and memory["limit_bytes"] == 64 << 20


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_run_leaves_no_target_behind(
    tmp_path: Path, fileset: Path, sig: signal.Signals, no_leftovers: None
) -> None:
    db = tmp_path / "r.db"
    proc = start_cli("run", str(_suite(tmp_path, length=30)), "--server", "builtin", "--fileset", str(fileset),
                     "--db", str(db), "-q")  # fmt: skip
    try:
        deadline = time.monotonic() + WAIT_S
        while not _run_stored(db):
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.1)
        wait_until(lambda: _started_a_target(proc.pid), WAIT_S, "crest starting its target")
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=WAIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert _rows(db, "SELECT status FROM runs") == [("interrupted",)]


def _started_a_target(pid: int) -> bool:
    """Whether crest PID has a target among its children yet (a run directory, or `crest serve`)."""
    for child in psutil.Process(pid).children(recursive=True):
        try:
            line = " ".join(child.cmdline())
        except psutil.NoSuchProcess:
            continue
        if "crest-target-" in line or "crest serve" in line.replace("-m crest serve", "crest serve"):
            return True
    return False


def _has_adapter(name: str) -> bool:
    module = {"nginx": "crest.servers.nginx", "apache-event": "crest.servers.apache"}[name]
    return importlib.util.find_spec(module) is not None


@pytest.mark.parametrize("server", ["nginx", "apache-event"])
@pytest.mark.parametrize("http,keepalive", [("1.1", True), ("1.0", False)])
def test_access_log_count_equals_crest_count_per_mix(
    tmp_path: Path, fileset: Path, server: str, http: str, keepalive: bool, no_leftovers: None
) -> None:
    if not _has_adapter(server):
        pytest.skip(f"the {server} adapter is not built yet")
    a = adapter(server)
    if not a.installed():
        pytest.skip(f"{a.title} is not installed: {a.install_hint()}")
    db = tmp_path / "r.db"
    suite = _suite(tmp_path, length=2, ramp=0, http=http, keepalive=keepalive)
    out = run_cli("run", str(suite), "--server", server, "--cpus", "1", "--access-log", "--fileset", str(fileset),
                  "--db", str(db), "-q", timeout_s=WAIT_S * 2)  # fmt: skip
    assert out.returncode == 0, out.stderr
    mixes = _rows(db, "SELECT idx, requests, errors_json, access_log_requests FROM mixes ORDER BY idx")
    assert len(mixes) == 2
    for idx, requests, errors, logged in mixes:
        assert sum(json.loads(errors).values()) == 0, (idx, errors)
        assert requests > 0
        assert logged == requests, f"mix {idx}"
    logs = db.parent / "logs"
    (kept,) = logs.rglob("access.log")  # the server's logs are kept with the results, and the run says where
    assert f"crest: the target's access log of run {kept.parent.name}: {kept}" in out.stderr


def test_bad_server_input_is_one_line_and_nothing_starts(tmp_path: Path, fileset: Path, no_leftovers: None) -> None:
    suite = str(_suite(tmp_path))
    cases = [
        (["--server", "nosuch"], "unknown server"),
        (["--server", "builtin", "--cpus", "99"], "--cpus 99"),
        (["--server", "builtin", "--cpus", "0"], "--cpus"),
        (["--server", "builtin", "--memory", "lots"], "--memory"),
        (["--server", "builtin", "--server-opt", "novalue"], "KEY=VALUE"),
        (["--server", "builtin", "--server-opt", "foo=1"], "not a setting of builtin"),
        (["--server", "builtin,builtin"], "repeats"),
        (["--target", "http://127.0.0.1:1", "--cpus", "1"], "--server"),
        (["--server", "external"], "--target"),
    ]
    for args, needle in cases:
        out = run_cli("run", suite, *args, "--fileset", str(fileset), "--db", str(tmp_path / "r.db"))
        assert out.returncode == 2, (args, out.stderr)
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("crest: error:") and needle in lines[0], (args, out.stderr)
    assert not (tmp_path / "r.db").exists() or _rows(tmp_path / "r.db", "SELECT COUNT(*) FROM runs") == [(0,)]


def test_servers_lists_every_adapter_with_install_hints() -> None:
    out = run_cli("servers", "--json")
    assert out.returncode == 0, out.stderr
    rows = {r["name"]: r for r in json.loads(out.stdout)}
    assert set(rows) == {"builtin", "nginx", "apache-prefork", "apache-worker", "apache-event", "lighttpd", "caddy",
                         "h2o", "samba", "external"}  # fmt: skip
    for row in rows.values():
        if row["installed"]:
            assert row["name"] == "external" or row["version"]
        else:
            assert row["install"].startswith("apt-get install -y ")
    text = run_cli("servers")
    assert text.returncode == 0 and "builtin" in text.stdout
