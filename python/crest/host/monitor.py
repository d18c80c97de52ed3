"""Resource sampling during a mix: the target's process tree, the load engine, loopback and disk.

Owns sampling (a background thread, at least once a second) and turning the
samples into the figures stored with a mix: CPU user/system seconds and
utilisation per core, RSS, threads, context switches, open files, storage reads,
loopback and disk bytes, the host's counters (crest.host.counters reads them) and the
engine's run-queue wait; and the verdicts judged from them (client_bound, host_cpu_bound, listen_overflow,
noisy_host, cache_cold: crest.verdicts words them). Never prints, never starts or
stops processes; knows a target only as a function returning its pids.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import psutil

from crest import verdicts
from crest.host import counters as hostcounters
from crest.verdicts import Verdict

# Sampling period; the issue asks for at least one sample a second.
INTERVAL_S = 0.5
# The engine counts as the bottleneck when it used this share of its cores in the window.
CLIENT_BOUND_PCT = 90.0
# host_cpu_bound: target and engine on the same cores (not pinned apart), with the host's CPUs this busy in
# the window (by the host's own counters when sampled: the kernel's network work and other processes count
# too; else target and engine together), ran the host out of CPU, as client_bound does the engine's own
# cores; judged only while the target used less than BUSY_AT_PEAK_PCT of them (a busier target was its
# own limit, sharing or not).
HOST_CPU_BOUND_PCT = CLIENT_BOUND_PCT
# noisy_host: steal above this share of one core means the hypervisor took CPU from this host's
# guests while we measured (5% of a core is far above the noise of an idle VM: ~0.1%), and the figures
# of every process here lose that time at random.
STEAL_CORES_NOISY = 0.05
# noisy_host: the engine's threads ready to run but waiting for a CPU more than this share of the
# engine's core-time in the window: its requests left late, so latencies and rates read worse than the
# target made them. Judged only when the engine has cores of its own (when it shares the target's,
# waiting is the cpu_split verdict's story, not noise).
ENGINE_RUNQ_WAIT_NOISY_PCT = 20.0
# cache_cold: a cached test (no drop_caches) whose target read more than this from storage in the
# window served files that were not in memory: a megabyte is far above what a warm server reads (a
# lazily mapped library page, a log rotation check) and below any fileset worth measuring.
CACHE_COLD_READ_BYTES = 1 << 20


@dataclass
class Sample:
    """Cumulative counters at one moment (unix seconds); deltas between samples give rates."""

    t: float
    target_user_s: float
    target_system_s: float
    target_rss_bytes: int
    target_threads: int
    target_processes: int
    target_ctx_voluntary: int
    target_ctx_involuntary: int
    target_open_files: int
    engine_user_s: float
    engine_system_s: float
    lo_sent_bytes: int
    lo_recv_bytes: int
    disk_read_bytes: int
    disk_write_bytes: int
    target_read_bytes: int = 0  # the target's reads from storage (/proc/PID/io read_bytes)
    engine_runq_wait_ns: int = 0  # this process's threads' time ready to run but waiting for a CPU
    host: hostcounters.Snapshot | None = None


@dataclass
class _Seen:
    """The last counters of one target process; kept after it exits so totals never go backwards."""

    user_s: float = 0.0
    system_s: float = 0.0
    ctx_voluntary: int = 0
    ctx_involuntary: int = 0
    read_bytes: int = 0


@dataclass
class Monitor:
    """Samples while running: `monitor.start()`, the mix, `monitor.stop()`, then `monitor.summary(...)`."""

    target_pids: Callable[[], list[int]] | None  # None: nothing to watch on the target side (external URL)
    target_cores: float  # a fraction under a CPU quota (--cpus 0.5)
    engine_cores: int
    interval_s: float = INTERVAL_S
    samples: list[Sample] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._procs: dict[int, psutil.Process] = {}
        self._seen: dict[int, _Seen] = {}
        self._me = psutil.Process()
        self._waited: dict[int, int] = {}  # run-queue wait by thread id, kept after a thread exits
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self.samples.append(self.sample())
        self._thread = threading.Thread(target=self._loop, name="crest-monitor", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self.samples.append(self.sample())

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.samples.append(self.sample())

    def sample(self) -> Sample:
        """Read every counter now."""
        user = system = 0.0
        rss = threads = nprocs = vol = invol = files = read = 0
        live = set(self.target_pids()) if self.target_pids else set()
        for pid in live:
            try:
                proc = self._procs.get(pid) or self._procs.setdefault(pid, psutil.Process(pid))
                with proc.oneshot():
                    cpu = proc.cpu_times()
                    seen = self._seen.setdefault(pid, _Seen())
                    # Reaped children's CPU counts too: CGI programs live for milliseconds.
                    seen.user_s = cpu.user + cpu.children_user
                    seen.system_s = cpu.system + cpu.children_system
                    seen.ctx_voluntary, seen.ctx_involuntary = _ctx_switches(pid)
                    seen.read_bytes = _read_bytes(proc)
                    rss += proc.memory_info().rss
                    threads += proc.num_threads()
                    files += proc.num_fds()
                    nprocs += 1
            except psutil.Error:
                continue
        for seen in self._seen.values():
            user += seen.user_s
            system += seen.system_s
            vol += seen.ctx_voluntary
            invol += seen.ctx_involuntary
            read += seen.read_bytes
        me = self._me.cpu_times()
        lo = psutil.net_io_counters(pernic=True).get("lo")
        disk = psutil.disk_io_counters()
        return Sample(
            t=time.time(), target_user_s=user, target_system_s=system, target_rss_bytes=rss, target_threads=threads,
            target_processes=nprocs, target_ctx_voluntary=vol, target_ctx_involuntary=invol, target_open_files=files,
            engine_user_s=me.user, engine_system_s=me.system,
            lo_sent_bytes=lo.bytes_sent if lo else 0, lo_recv_bytes=lo.bytes_recv if lo else 0,
            disk_read_bytes=disk.read_bytes if disk else 0, disk_write_bytes=disk.write_bytes if disk else 0,
            target_read_bytes=read, engine_runq_wait_ns=self._runq_wait_ns(),
            host=hostcounters.snapshot(min(live) if live else None),
        )  # fmt: skip

    def latest(self) -> dict[str, Any]:
        """The last sampling interval: the target's and the engine's CPU (% of one core), the target's RSS."""
        samples = self.samples[-2:]
        if len(samples) < 2:
            return {}
        row = _row(samples[0], samples[1])
        row.pop("host", None)
        return {**row, "target_cores": self.target_cores, "engine_cores": self.engine_cores}

    def _runq_wait_ns(self) -> int:
        """The run-queue wait of every thread of this process (the engine's workers run here), in ns."""
        for tid in _tids(os.getpid()):
            waited = _runq_wait(os.getpid(), tid)
            if waited is not None:
                self._waited[tid] = waited
        return sum(self._waited.values())

    def summary(self, window_start: float, window_end: float) -> dict[str, Any]:
        """The stored figures for the window [start, end) (unix seconds): deltas between the first and
        last samples inside it (the whole mix when fewer than two fall inside), plus every sample."""
        inside = [s for s in self.samples if window_start <= s.t <= window_end]
        if len(inside) < 2:
            inside = self.samples
        a, b = inside[0], inside[-1]
        span = max(b.t - a.t, 1e-9)
        out: dict[str, Any] = {
            "interval_s": self.interval_s,
            "span_s": round(span, 3),
            "engine": {
                **_cpu(
                    b.engine_user_s - a.engine_user_s, b.engine_system_s - a.engine_system_s, span, self.engine_cores
                ),
                "runq_wait_pct": round(
                    100.0 * (b.engine_runq_wait_ns - a.engine_runq_wait_ns) / 1e9 / (span * max(self.engine_cores, 1)),
                    1,
                ),
            },
            "system": {
                "loopback_sent_bytes": b.lo_sent_bytes - a.lo_sent_bytes,
                "loopback_recv_bytes": b.lo_recv_bytes - a.lo_recv_bytes,
                "disk_read_bytes": b.disk_read_bytes - a.disk_read_bytes,
                "disk_write_bytes": b.disk_write_bytes - a.disk_write_bytes,
            },
            "samples": [_row(prev, s) for prev, s in zip(self.samples, self.samples[1:])],
        }
        if self.target_pids is not None:
            target = _cpu(b.target_user_s - a.target_user_s, b.target_system_s - a.target_system_s, span,
                          self.target_cores)  # fmt: skip
            target.update(
                rss_bytes_max=max(s.target_rss_bytes for s in inside),
                threads_max=max(s.target_threads for s in inside),
                processes_max=max(s.target_processes for s in inside),
                open_files_max=max(s.target_open_files for s in inside),
                ctx_switches_voluntary=b.target_ctx_voluntary - a.target_ctx_voluntary,
                ctx_switches_involuntary=b.target_ctx_involuntary - a.target_ctx_involuntary,
                storage_read_bytes=b.target_read_bytes - a.target_read_bytes,
            )
            out["target"] = target
            out["target_idle_pct"] = round(max(0.0, 100.0 - target["cpu_util_pct"]), 1)
        if a.host is not None and b.host is not None:
            out["host"] = hostcounters.window(a.host, b.host, [s.host for s in inside[1:-1] if s.host is not None])
        out["client_bound"] = out["engine"]["cpu_util_pct"] >= CLIENT_BOUND_PCT
        return out


def client_bound_verdict(summary: dict[str, Any]) -> Verdict | None:
    """The verdict stored with a mix whose load engine was the bottleneck (summary: Monitor.summary's)."""
    if not summary.get("client_bound"):
        return None
    engine = summary["engine"]
    return verdicts.client_bound(engine_cpu_util_pct=engine["cpu_util_pct"], engine_cores=engine["cores"])


def host_cpu_bound_verdict(summary: dict[str, Any], *, cores_shared: bool) -> Verdict | None:
    """The verdict stored with a mix whose target and engine shared cores (`cores_shared`: not pinned apart)
    and used them all together (summary: Monitor.summary's); None when they had CPU to spare, when the
    target was busy enough to be its own limit, or when no target was watched (an external URL)."""
    target, engine = summary.get("target"), summary.get("engine")
    if not cores_shared or not isinstance(target, dict) or not isinstance(engine, dict):
        return None
    host_cores = max(target.get("cores") or 0, engine.get("cores") or 0)
    if host_cores <= 0 or target.get("cpu_util_pct") is None or engine.get("cpu_util_pct") is None:
        return None
    # Each side's utilisation is of its own cores: as shares of the cores they shared, they add up.
    target_pct = round(float(target["cpu_util_pct"]) * (target.get("cores") or 0) / host_cores, 1)
    engine_pct = round(float(engine["cpu_util_pct"]) * (engine.get("cores") or 0) / host_cores, 1)
    busy = round(min(100.0, max(target_pct + engine_pct, _host_busy_pct(summary) or 0.0)), 1)
    if busy < HOST_CPU_BOUND_PCT or target_pct >= verdicts.BUSY_AT_PEAK_PCT:
        return None
    return verdicts.host_cpu_bound(busy, host_cores, target_pct, engine_pct)


def _host_busy_pct(summary: dict[str, Any]) -> float | None:
    """How busy the host's CPUs were in the window by its own counters (100 − idle − iowait); None unsampled."""
    host = summary.get("host")
    pct = host.get("cpu_pct") if isinstance(host, dict) else None
    if not isinstance(pct, dict) or pct.get("idle") is None:
        return None
    return 100.0 - float(pct["idle"]) - float(pct.get("iowait") or 0.0)


def host_verdicts(summary: dict[str, Any], *, cached: bool, engine_own_cores: bool = False) -> list[Verdict]:
    """The verdicts of a mix's host counters (summary: Monitor.summary's, as stored): listen_overflow,
    noisy_host and, for a cached test (`cached`: the workload does not drop caches), cache_cold.
    `engine_own_cores`: the engine has cores the target does not use, so its run-queue wait is judged
    (else waiting for a CPU is the target's doing: the cpu_split verdict, or no split at all)."""
    found: list[Verdict] = []
    host = summary.get("host") or {}
    tcp = host.get("tcp") or {}
    overflows, drops = int(tcp.get("listen_overflows") or 0), int(tcp.get("listen_drops") or 0)
    if overflows > 0 or drops > 0:
        found.append(verdicts.listen_overflow(listen_overflows=overflows, listen_drops=drops))
    steal = float(host.get("steal_cores") or 0.0)
    waited = summary.get("engine", {}).get("runq_wait_pct")
    stalled = engine_own_cores and waited is not None and float(waited) > ENGINE_RUNQ_WAIT_NOISY_PCT
    if steal > STEAL_CORES_NOISY or stalled:
        found.append(verdicts.noisy_host(steal_cores=steal, engine_runq_wait_pct=float(waited or 0.0)))
    read = (summary.get("target") or {}).get("storage_read_bytes")
    if cached and read is not None and int(read) > CACHE_COLD_READ_BYTES:
        found.append(verdicts.cache_cold(target_storage_read_bytes=int(read)))
    return found


def nodes_engine_summary(nodes: list[dict[str, Any]]) -> dict[str, Any]:
    """A cluster mix's engine figures from its nodes' own monitors: the cores of every node, the busiest
    node's utilisation (the mix is client-bound when any node was)."""
    busiest = max(nodes, key=lambda n: float(n.get("engine_cpu_util_pct") or 0.0))
    return {
        "engine": {
            "cores": sum(int(n.get("engine_cores") or 0) for n in nodes),
            "cpu_util_pct": float(busiest.get("engine_cpu_util_pct") or 0.0),
            "busiest_node": busiest.get("node_id"),
        },
        "client_bound": any(bool(n.get("client_bound")) for n in nodes),
    }


def _ctx_switches(pid: int) -> tuple[int, int]:
    """Voluntary and involuntary context switches of every thread of a process (the process's own
    /proc status counts only its first thread, and servers switch in their worker threads)."""
    vol = invol = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0, 0
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/status", "rb") as f:
                for line in f:
                    if line.startswith(b"voluntary_ctxt_switches:"):
                        vol += int(line.split()[1])
                    elif line.startswith(b"nonvoluntary_ctxt_switches:"):
                        invol += int(line.split()[1])
        except (OSError, ValueError, IndexError):
            continue
    return vol, invol


def _read_bytes(proc: psutil.Process) -> int:
    """What a process read from storage (not the page cache); 0 where /proc/PID/io is not readable."""
    try:
        return int(proc.io_counters().read_bytes)
    except (psutil.Error, AttributeError):
        return 0


def _tids(pid: int) -> list[int]:
    try:
        return [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return []


def _runq_wait(pid: int, tid: int) -> int | None:
    """A thread's time waiting on a run queue, ns (/proc/PID/task/TID/schedstat's second field)."""
    try:
        with open(f"/proc/{pid}/task/{tid}/schedstat", "rb") as f:
            return int(f.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _cpu(user_s: float, system_s: float, span_s: float, cores: float) -> dict[str, Any]:
    return {
        "cpu_user_s": round(user_s, 4),
        "cpu_system_s": round(system_s, 4),
        "cores": cores,
        "cpu_util_pct": round(100.0 * (user_s + system_s) / (span_s * (cores if cores > 0 else 1)), 1),
    }


def _row(prev: Sample, s: Sample) -> dict[str, Any]:
    """One sampling interval as stored: CPU as % of one core, so 200 means two busy cores."""
    dt = max(s.t - prev.t, 1e-9)
    return {
        "t": round(s.t, 3),
        "target_cpu_pct": round(
            100 * ((s.target_user_s + s.target_system_s) - (prev.target_user_s + prev.target_system_s)) / dt, 1
        ),
        "target_rss_bytes": s.target_rss_bytes,
        "engine_cpu_pct": round(
            100 * ((s.engine_user_s + s.engine_system_s) - (prev.engine_user_s + prev.engine_system_s)) / dt, 1
        ),
        **({"host": hostcounters.interval(prev.host, s.host)} if prev.host and s.host else {}),
    }
