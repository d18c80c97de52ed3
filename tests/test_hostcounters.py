"""Host counters: the /proc parsers on this machine's real files, the window figures between two real
snapshots, the verdict rules on figures (listen_overflow, noisy_host, cache_cold), and a real listen-queue
overflow (a backlog-1 server that accepts slowly) stored as a mix's listen_overflow verdict."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from crest.host import counters as hostcounters
from crest.host.monitor import Monitor, host_cpu_bound_verdict, host_verdicts
from crest.report import build_report
from crest.report.html import render_html
from crest.verdicts import CACHE_COLD, HOST_CPU_BOUND, LISTEN_OVERFLOW, NOISY_HOST
from support import run_cli
from test_report_build import check_schema, select

PROC = Path("/proc")


def test_parsers_read_this_machines_proc() -> None:
    interrupts = hostcounters.parse_interrupts((PROC / "interrupts").read_text())
    assert interrupts and all(n >= 0 for n in interrupts.values())
    assert "LOC" in interrupts  # every x86 and arm64 kernel counts local timer interrupts by that name
    softirqs = hostcounters.parse_softirqs((PROC / "softirqs").read_text())
    assert {"TIMER", "NET_RX", "SCHED"} <= set(softirqs)
    rows = hostcounters.parse_named_rows((PROC / "net/snmp").read_text())
    assert rows[("Tcp", "ActiveOpens")] >= 0 and ("Tcp", "RetransSegs") in rows
    ext = hostcounters.parse_named_rows((PROC / "net/netstat").read_text())
    assert ("TcpExt", "ListenOverflows") in ext and ("TcpExt", "ListenDrops") in ext
    assert hostcounters.parse_time_wait((PROC / "net/sockstat").read_text()) >= 0
    vm = hostcounters.parse_vmstat((PROC / "vmstat").read_text())
    assert set(hostcounters.VM_COUNTERS) <= set(vm)
    memory = hostcounters.parse_meminfo((PROC / "meminfo").read_text())
    assert 0 < memory["available_bytes"] <= psutil.virtual_memory().total


def test_a_window_between_two_snapshots() -> None:
    a = hostcounters.snapshot()
    time.sleep(0.3)
    b = hostcounters.snapshot()
    w = hostcounters.window(a, b)
    assert w["cpus"] == len(psutil.cpu_times(percpu=True)) == len(w["per_cpu_pct"])
    assert set(w["cpu_pct"]) == set(hostcounters.CPU_KINDS)
    assert sum(w["cpu_pct"].values()) == pytest.approx(100.0, abs=0.1)
    assert set(w["tcp"]) == set(hostcounters.TCP_COUNTERS.values())  # this kernel has every one
    assert all(n >= 0 for n in w["tcp"].values())  # counters, never going back
    assert len(w["interrupts_per_s"]) <= hostcounters.TOP_KINDS + 1
    assert w["memory"]["available_bytes_min"] > 0 and w["time_wait_max"] >= 0
    assert w["steal_cores"] >= 0 and set(w["paging"]) == set(hostcounters.VM_COUNTERS)


def test_the_monitor_stores_host_counters_and_the_engines_run_queue_wait() -> None:
    monitor = Monitor(None, target_cores=0, engine_cores=1, interval_s=0.1)
    monitor.start()
    time.sleep(0.35)
    monitor.stop()
    summary = monitor.summary(0, time.time() + 1)
    assert summary["host"]["cpus"] >= 1 and "listen_overflows" in summary["host"]["tcp"]
    assert summary["engine"]["runq_wait_pct"] >= 0
    assert all("cpu_pct" in row["host"] for row in summary["samples"])
    json.dumps(summary)  # stored as JSON


def _summary(*, overflows: int = 0, drops: int = 0, steal_cores: float = 0.0, runq_wait_pct: float = 0.0,
             read_bytes: int | None = None) -> dict[str, object]:  # fmt: skip
    summary: dict[str, object] = {
        "engine": {"cpu_util_pct": 40.0, "cores": 1, "runq_wait_pct": runq_wait_pct},
        "host": {"steal_cores": steal_cores, "tcp": {"listen_overflows": overflows, "listen_drops": drops}},
    }
    if read_bytes is not None:
        summary["target"] = {"storage_read_bytes": read_bytes}
    return summary


def test_listen_overflow_when_the_accept_queue_overflowed() -> None:
    assert host_verdicts(_summary(), cached=True) == []
    (v,) = host_verdicts(_summary(overflows=3, drops=3), cached=True)
    assert v.kind == LISTEN_OVERFLOW and v.figures == {"listen_overflows": 3, "listen_drops": 3}
    assert [v.kind for v in host_verdicts(_summary(drops=1), cached=True)] == [LISTEN_OVERFLOW]


def test_noisy_host_from_steal_or_an_engine_waiting_for_a_cpu() -> None:
    assert host_verdicts(_summary(steal_cores=0.04), cached=False) == []
    (v,) = host_verdicts(_summary(steal_cores=0.12), cached=False)
    assert v.kind == NOISY_HOST and v.figures["steal_cores"] == 0.12
    # Waiting for a CPU counts only when the engine has cores of its own.
    assert host_verdicts(_summary(runq_wait_pct=45.0), cached=False) == []
    (v,) = host_verdicts(_summary(runq_wait_pct=45.0), cached=False, engine_own_cores=True)
    assert v.kind == NOISY_HOST and v.figures["engine_runq_wait_pct"] == 45.0
    assert host_verdicts(_summary(runq_wait_pct=5.0), cached=False, engine_own_cores=True) == []


def test_host_cpu_bound_when_target_and_engine_share_the_cores_and_use_them_all() -> None:
    """The README walk: no --cpus, target 42% + engine 56% of the 2 CPUs: the host's CPUs, not the target's, ran out."""
    shared = {"target": {"cpu_util_pct": 42.0, "cores": 2}, "engine": {"cpu_util_pct": 56.0, "cores": 2}}
    v = host_cpu_bound_verdict(shared, cores_shared=True)
    assert v is not None and v.kind == HOST_CPU_BOUND
    assert v.figures == {"host_cpu_util_pct": 98.0, "host_cores": 2, "target_cpu_util_pct": 42.0,
                         "engine_cpu_util_pct": 56.0}  # fmt: skip
    assert v.message.startswith("host-bound: the target (42%) and the load engine (56%) shared the host's 2 CPU(s),"
                                " 98% busy in the window, so")  # fmt: skip
    # A second walk (others' tests beside it): target 30% + engine 34%, and the host's counters 0% idle (the
    # kernel's loopback softirqs, other processes): the target's idle CPU was not its to use either.
    crowded = {"target": {"cpu_util_pct": 30.0, "cores": 2}, "engine": {"cpu_util_pct": 34.0, "cores": 2},
               "host": {"cpu_pct": {"idle": 0.0, "iowait": 0.0, "softirq": 15.5}}}  # fmt: skip
    v = host_cpu_bound_verdict(crowded, cores_shared=True)
    assert v is not None and v.figures["host_cpu_util_pct"] == 100.0
    assert "100% busy in the window, the other 36% the kernel's network work and other processes" in v.message
    assert host_cpu_bound_verdict(shared, cores_shared=False) is None  # pinned apart (--cpus): each has its own
    quiet = {"target": {"cpu_util_pct": 30.0, "cores": 2}, "engine": {"cpu_util_pct": 40.0, "cores": 2}}
    assert host_cpu_bound_verdict(quiet, cores_shared=True) is None  # 70%: the host had CPU to spare
    busy = {"target": {"cpu_util_pct": 85.0, "cores": 2}, "engine": {"cpu_util_pct": 12.0, "cores": 2}}
    assert host_cpu_bound_verdict(busy, cores_shared=True) is None  # the target itself was busy: it decided
    assert host_cpu_bound_verdict({"engine": {"cpu_util_pct": 99.0, "cores": 2}}, cores_shared=True) is None


def test_cache_cold_only_for_a_cached_test_whose_target_read_from_storage() -> None:
    cold = _summary(read_bytes=8 << 20)
    (v,) = host_verdicts(cold, cached=True)
    assert v.kind == CACHE_COLD and v.figures == {"target_storage_read_bytes": 8 << 20}
    assert host_verdicts(cold, cached=False) == []  # drop_caches on: reading from disk is the test
    assert host_verdicts(_summary(read_bytes=64 << 10), cached=True) == []  # below a megabyte
    assert host_verdicts(_summary(), cached=True) == []  # no target watched (an external URL)


@pytest.fixture
def slow_server() -> Iterator[str]:
    """A server with an accept queue of one that takes 0.4 s per connection: more clients than that overflow."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            with conn:
                stop.wait(0.4)
                conn.settimeout(0.5)
                try:
                    conn.recv(4096)
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    stop.set()
    thread.join(5)
    listener.close()


@pytest.mark.integration
@pytest.mark.timeout(90)
def test_a_listen_queue_overflow_is_a_verdict_of_the_mix(tmp_path: Path, slow_server: str) -> None:
    suite = tmp_path / "suite.toml"
    suite.write_text("""
name = "overflow"
description = "eight connections against a backlog of one"
source = "crest tests"
[workload]
fileset = "webcat-large-filemix"
http_version = "1.0"
keepalive = false
[[workload.classes]]
name = "static"
kind = "static"
weight = 1
[ladder]
clients = [8]
threads_per_client = 1
[timing]
length_s = 2
ramp_up_s = 0
ramp_down_s = 0
""")
    db = tmp_path / "crest.db"
    result = run_cli("run", str(suite), "--target", slow_server, "--db", str(db), "-q", "--timeout", "1s")  # fmt: skip
    # No request succeeds (the server is that slow, and its "ok" is not the file asked for): the run is
    # failed, exit 1, naming what decided it; the mix and its verdict are stored all the same.
    assert result.returncode == 1, result.stderr
    error = result.stderr.strip().splitlines()[-1]
    assert error.startswith("crest: error: no request succeeded in any of its 1 mixes (")
    assert error.endswith("the target host's accept queues overflowed in them (connections were dropped)")
    (run,) = json.loads(run_cli("runs", "--db", str(db), "--json").stdout)
    assert run["status"] == "failed"
    shown = json.loads(run_cli("show", run["id"], "--db", str(db), "--json").stdout)
    (mix,) = shown["mixes"]
    tcp = mix["monitor"]["host"]["tcp"]
    assert tcp["listen_overflows"] > 0 or tcp["listen_drops"] > 0
    (v,) = [v for v in mix["verdicts"] if v["kind"] == LISTEN_OVERFLOW]
    assert v["listen_overflows"] == tcp["listen_overflows"] and v["listen_drops"] == tcp["listen_drops"]
    assert "listen queue overflowed" in run_cli("show", run["id"], "--db", str(db)).stdout
    # The report carries the mix's host counters and draws them beside the target's CPU.
    doc = build_report(select(db, run["id"]))
    check_schema(doc)
    (section,) = doc["host_counters"]
    (point,) = section["points"]
    assert point["load"] == 8 and point["tcp_per_s"]["listen_drops"] > 0
    page = render_html(doc)
    for chart in ("cpu", "tcp", "timewait", "irq", "paging"):
        assert f'id="chart-host-{chart}-0"' in page
