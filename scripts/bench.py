"""`make bench`: crest's load engine and built-in target measured side by side
with wrk and ab in one invocation, the target pinned to one core and the load
generator to the other, each pair run alternately. Prints ratios and rewrites
docs/benchmarks.md with the figures and the exact command lines.

This script owns the benchmark method only; it starts nginx and the targets
itself and leaves no process behind.
"""

from __future__ import annotations

import json
import os
import platform
import re
import resource
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CREST = str(Path(sys.executable).parent / "crest")
TARGET_CPU, CLIENT_CPU = "0", "1"
SECONDS = int(os.environ.get("BENCH_SECONDS", "8"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))


@dataclass
class Sample:
    rps: float
    requests: int
    cpu_s: float
    max_rss_kb: int
    extra: dict = field(default_factory=dict)

    @property
    def cpu_us_per_request(self) -> float:
        return self.cpu_s / self.requests * 1e6 if self.requests else float("nan")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(port: int, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"bench: target on port {port} did not start")


def timed(cmd: list[str]) -> tuple[str, float, int]:
    """Runs `cmd` on the client core; returns (stdout, cpu_s, max_rss_kb) from wait4."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(["taskset", "-c", CLIENT_CPU, *cmd], stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            raise SystemExit(f"bench: {' '.join(cmd)} failed ({proc.returncode}): {err.read().strip()[:300]}")
        return out.read(), usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def wrk(url: str, connections: int) -> Sample:
    out, cpu, rss = timed(["wrk", "-t1", f"-c{connections}", f"-d{SECONDS}s", url])
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    errors = re.search(r"Socket errors: (.*)", out)
    return Sample(rps, requests, cpu, rss, {"errors": errors.group(1) if errors else "none"})


def ab(url: str, connections: int) -> Sample:
    out, cpu, rss = timed(["ab", "-q", "-c", str(connections), "-t", str(SECONDS), "-n", "100000000", url])
    requests = int(re.search(r"Complete requests:\s+(\d+)", out).group(1))
    rps = float(re.search(r"Requests per second:\s+([\d.]+)", out).group(1))
    return Sample(rps, requests, cpu, rss)


def crest(url: str, connections: int, *flags: str) -> Sample:
    out, cpu, rss = timed(
        [CREST, "bench", "--json", "-q", "-t", "1", "-c", str(connections), "-d", f"{SECONDS}s", *flags, url]
    )
    report = json.loads(out)
    errors = {k: v for k, v in report["errors"].items() if v}
    if not report["requests"]:
        raise SystemExit(
            f"bench: crest got no successful responses from {url}: errors {errors}, notes {report['error_notes']}"
        )
    return Sample(
        report["rps"],
        report["requests"],
        cpu,
        rss,
        {"engine_cpu_s": report["client_cpu_s"], "errors": errors or "none"},
    )


class Process:
    """A target process pinned to the target core, stopped on exit."""

    def __init__(self, cmd: list[str], port: int) -> None:
        self.proc = subprocess.Popen(
            ["taskset", "-c", TARGET_CPU, *cmd],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        wait_ready(port)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


def start_nginx(work: Path, docroot: Path) -> tuple[Process, int]:
    port = free_port()
    conf = work / "nginx.conf"
    # As root, workers would drop to `nobody`, who cannot read the private temp dir.
    user = "user root;" if os.geteuid() == 0 else ""
    conf.write_text(f"""
{user}
worker_processes 1;
worker_rlimit_nofile 30000;
daemon off;
pid {work}/nginx.pid;
error_log {work}/error.log;
events {{ worker_connections 20000; }}
http {{
  access_log off;
  keepalive_requests 1000000;
  server {{ listen 127.0.0.1:{port} backlog=4096; root {docroot}; }}
}}
""")
    return Process(["nginx", "-c", str(conf), "-p", str(work)], port), port


def start_builtin(docroot: Path) -> tuple[Process, int]:
    port = free_port()
    return Process([CREST, "serve", "--docroot", str(docroot), "--port", str(port), "--threads", "1"], port), port


OVERHEAD_MIX_S = 3
OVERHEAD_SUITE = f"""
name = "bench-overhead"
description = "five short mixes to time the harness"
source = "crest make bench"
[workload]
fileset = "webcat-large-filemix"
[[workload.classes]]
name = "static"
kind = "static"
weight = 1
[ladder]
clients = [1, 2, 4, 8, 16]
[timing]
length_s = {OVERHEAD_MIX_S}
"""


def harness_overhead(work: Path, docroot: Path, port: int) -> tuple[float, int, float]:
    """Seconds per mix that `crest run` spends beyond the mixes' own length (from the stored start of each
    mix to the start of the next), and the once-per-run cost around them (checks before the first mix,
    the report after the last), interpreter start-up excluded."""
    subprocess.run(
        [CREST, "fileset", "generate", "webcat-large-filemix", str(docroot)], check=True, capture_output=True
    )
    suite = work / "overhead.toml"
    suite.write_text(OVERHEAD_SUITE)
    started = time.monotonic()
    timed([CREST, "version"])
    startup = time.monotonic() - started
    db = work / "bench.db"
    started = time.monotonic()
    timed(
        [
            CREST,
            "run",
            str(suite),
            "--target",
            f"http://127.0.0.1:{port}",
            "--fileset",
            str(docroot),
            "--db",
            str(db),
            "-q",
        ]
    )
    wall = time.monotonic() - started
    with sqlite3.connect(db) as conn:
        spans = conn.execute("SELECT started_at, ended_at FROM mixes ORDER BY started_at").fetchall()
    gaps = [b[0] - a[0] - OVERHEAD_MIX_S for a, b in zip(spans, spans[1:])] + [
        spans[-1][1] - spans[-1][0] - OVERHEAD_MIX_S
    ]
    per_run = wall - startup - (spans[-1][1] - spans[0][0])
    return statistics.mean(gaps), len(spans), per_run


def cluster_overhead(work: Path, docroot: Path, port: int) -> tuple[float, int, float, float]:
    """The same five mixes with their clients spread over `--cluster local:3` (three Ray nodes on this
    machine): seconds per mix beyond its length (stored start of each mix, the nodes' common start, to
    the next: ready barrier, clock offsets, start lead, merge, store), the largest and the median
    clock-offset uncertainty of any node in any mix."""
    suite = work / "overhead.toml"
    db = work / "cluster.db"
    timed([CREST, "run", str(suite), "--target", f"http://127.0.0.1:{port}", "--fileset", str(docroot),
           "--cluster", "local:3", "--db", str(db), "-q"])  # fmt: skip
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT started_at, ended_at, cluster_json FROM mixes ORDER BY started_at").fetchall()
    gaps = [b[0] - a[0] - OVERHEAD_MIX_S for a, b in zip(rows, rows[1:])]
    uncertainty = [n["clock_uncertainty_s"] for r in rows for n in json.loads(r[2])["nodes"]]
    return statistics.mean(gaps), len(rows), max(uncertainty), statistics.median(uncertainty)


MERGE_COST = ["cargo", "run", "--quiet", "--release", "--example", "merge_cost", "--features", "pyo3/extension-module"]


def merge_cost() -> float:
    """Milliseconds the engine's merge_parts takes over 100 synthetic nodes' parts (the example's median)."""
    out = subprocess.run(MERGE_COST, cwd=ROOT, check=True, capture_output=True, text=True).stdout
    match = re.search(r"100 parts in ([0-9.]+) ms", out)
    if match is None:
        raise SystemExit(f"bench: merge_cost printed no figure: {out!r}")
    return float(match.group(1))


STARTUP_ROUNDS = 7
STARTUP_HELP = [CREST, "--help"]
STARTUP_BENCH = [CREST, "bench", "-q", "--json", "-t", "1", "-c", "1", "-n", "1", "--timeout", "5s"]


def process_cpu_s(pid: int) -> float:
    """CPU time of every thread of a live process so far, from /proc/PID/task/*/schedstat (nanoseconds)."""
    total_ns = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total_ns += int((task / "schedstat").read_text().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass  # the thread ended between listing and reading
    return total_ns / 1e9


def startup_help() -> tuple[float, float]:
    """`crest --help`: wall time from spawn to exit and the process's CPU (wait4), medians over the rounds."""
    walls, cpus = [], []
    for _ in range(STARTUP_ROUNDS):
        started = time.perf_counter()
        proc = subprocess.Popen(
            ["taskset", "-c", CLIENT_CPU, *STARTUP_HELP], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        _, status, usage = os.wait4(proc.pid, 0)
        walls.append(time.perf_counter() - started)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise SystemExit(f"bench: crest --help failed ({proc.returncode})")
        cpus.append(usage.ru_utime + usage.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def startup_bench() -> tuple[float, float]:
    """`crest bench`: from spawn to the first bytes of its first request on a listening socket, and the CPU
    the process had used by then (all its threads, read while it waits for the answer); medians.

    The socket accepts but never answers: the preflight's bare connection is skipped, the first
    connection that carries bytes marks the first request sent."""
    walls, cpus = [], []
    for _ in range(STARTUP_ROUNDS):
        with socket.socket() as listener:
            listener.bind(("127.0.0.1", 0))
            listener.listen(16)
            listener.settimeout(10)
            url = f"http://127.0.0.1:{listener.getsockname()[1]}/1k.html"
            started = time.perf_counter()
            proc = subprocess.Popen(
                ["taskset", "-c", CLIENT_CPU, *STARTUP_BENCH, url], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            try:
                while True:
                    conn, _ = listener.accept()
                    with conn:
                        conn.settimeout(10)
                        if conn.recv(1):
                            walls.append(time.perf_counter() - started)
                            cpus.append(process_cpu_s(proc.pid))
                            break
            finally:
                proc.kill()
                proc.wait()
    return statistics.median(walls), statistics.median(cpus)


def alternate(a, b, rounds: int = ROUNDS) -> tuple[list[Sample], list[Sample]]:
    xs, ys = [], []
    for _ in range(rounds):
        xs.append(a())
        ys.append(b())
    return xs, ys


def med(samples: list[Sample], attr: str) -> float:
    return statistics.median(getattr(s, attr) for s in samples)


def spread(samples: list[Sample]) -> str:
    """Median requests/s with the rounds' range: this host's noise is part of the figure."""
    rates = [s.rps for s in samples]
    return f"{statistics.median(rates):,.0f} ({min(rates):,.0f}–{max(rates):,.0f})"


def main() -> None:
    for tool in ("nginx", "wrk", "ab", "taskset"):
        if not shutil.which(tool):
            raise SystemExit(f"bench: {tool} is missing: apt-get install -y nginx-light wrk apache2-utils util-linux")
    if os.cpu_count() < 2:
        raise SystemExit("bench: needs 2 cores (target on one, load generator on the other)")
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 30000), hard))
    rows: list[tuple[str, str, str, str, str]] = []
    commands: list[str] = []
    for what, (wall_s, cpu_s) in (
        ("`crest --help`: spawn to exit", startup_help()),
        ("`crest bench`: spawn to its first request's first byte (CPU: all its threads by then)", startup_bench()),
    ):
        print(f"start-up, {what}: {wall_s:.3f} s wall, {cpu_s:.3f} s CPU")
        rows.append(
            (
                f"start-up, {what} (medians of {STARTUP_ROUNDS})",
                f"{wall_s:.3f} s wall, {cpu_s:.3f} s CPU",
                "",
                "≤ 0.25 s wall, ≤ 0.2 s CPU",
                verdict(wall_s <= 0.25 and cpu_s <= 0.2),
            )
        )
    commands += [
        f"taskset -c {CLIENT_CPU} {' '.join(Path(a).name if a == CREST else a for a in STARTUP_HELP)}",
        f"taskset -c {CLIENT_CPU} {' '.join(Path(a).name if a == CREST else a for a in STARTUP_BENCH)} URL"
        "  (URL: a socket that accepts and never answers)",
    ]
    with tempfile.TemporaryDirectory(prefix="crest-bench-") as tmp:
        work = Path(tmp)
        docroot = work / "html"
        docroot.mkdir()
        (docroot / "1k.html").write_bytes(b"x" * 1023 + b"\n")
        nginx, port = start_nginx(work, docroot)
        url = f"http://127.0.0.1:{port}/1k.html"
        try:
            for conns in (32, 256):
                w, c = alternate(lambda n=conns: wrk(url, n), lambda n=conns: crest(url, n))
                ratio_rps = med(c, "rps") / med(w, "rps")
                ratio_cpu = med(c, "cpu_us_per_request") / med(w, "cpu_us_per_request")
                engine_cpu = statistics.median(s.extra["engine_cpu_s"] / s.requests * 1e6 for s in c)
                print(
                    f"keep-alive 1 KB, {conns} conns: wrk {med(w, 'rps'):,.0f} req/s, crest {med(c, 'rps'):,.0f} req/s → {ratio_rps:.2f}×; "
                    f"CPU/request wrk {med(w, 'cpu_us_per_request'):.2f} µs, crest {med(c, 'cpu_us_per_request'):.2f} µs "
                    f"(engine threads {engine_cpu:.2f} µs) → {ratio_cpu:.2f}×"
                )
                rows.append(
                    (
                        f"keep-alive GET 1 KB, {conns} connections: requests/s crest ÷ wrk",
                        f"{spread(c)} / {spread(w)}",
                        f"{ratio_rps:.2f}",
                        "≥ 1.0",
                        verdict(ratio_rps >= 1.0),
                    )
                )
                rows.append(
                    (
                        f"same, client CPU per request crest ÷ wrk (whole process; engine threads alone {engine_cpu:.2f} µs)",
                        f"{med(c, 'cpu_us_per_request'):.2f} µs / {med(w, 'cpu_us_per_request'):.2f} µs",
                        f"{ratio_cpu:.2f}",
                        "≤ 1.0",
                        verdict(ratio_cpu <= 1.0),
                    )
                )
                commands += [
                    f"taskset -c {CLIENT_CPU} wrk -t1 -c{conns} -d{SECONDS}s URL",
                    f"taskset -c {CLIENT_CPU} crest bench --json -q -t 1 -c {conns} -d {SECONDS}s URL",
                ]
            a, c = alternate(lambda: ab(url, 32), lambda: crest(url, 32, "--http", "1.0", "--no-keepalive"))
            ratio = med(c, "rps") / med(a, "rps")
            print(
                f"HTTP/1.0 no keep-alive, 32 conns: ab {med(a, 'rps'):,.0f} req/s, crest {med(c, 'rps'):,.0f} req/s → {ratio:.2f}×"
            )
            rows.append(
                (
                    "HTTP/1.0 without keep-alive, 32 connections: requests/s crest ÷ ab",
                    f"{spread(c)} / {spread(a)}",
                    f"{ratio:.2f}",
                    "≥ 1.3",
                    verdict(ratio >= 1.3),
                )
            )
            commands += [
                f"taskset -c {CLIENT_CPU} ab -q -c 32 -t {SECONDS} -n 100000000 URL",
                f"taskset -c {CLIENT_CPU} crest bench --json -q -t 1 -c 32 -d {SECONDS}s --http 1.0 --no-keepalive URL",
            ]
            big = crest(url, 10000)
            base = timed([CREST, "version"])[2]
            print(
                f"10,000 keep-alive connections: crest peak RSS {big.max_rss_kb / 1024:.1f} MiB (Python alone {base / 1024:.1f} MiB), {big.rps:,.0f} req/s, errors {big.extra['errors']}"
            )
            rows.append(
                (
                    "10,000 concurrent keep-alive connections: crest peak RSS (whole process)",
                    f"{big.max_rss_kb / 1024:.1f} MiB (interpreter alone {base / 1024:.1f} MiB)",
                    "",
                    "≤ 100 MB",
                    verdict(big.max_rss_kb * 1024 <= 100e6),
                )
            )
            commands.append(f"taskset -c {CLIENT_CPU} crest bench --json -q -t 1 -c 10000 -d {SECONDS}s URL")
            per_mix, mixes, per_run = harness_overhead(work, docroot, port)
            print(
                f"harness overhead: {per_mix:.3f} s per mix beyond its length ({mixes} mixes of {OVERHEAD_MIX_S} s);"
                f" {per_run:.2f} s once per run (checks, report)"
            )
            rows.append(
                (
                    f"harness overhead per mix beyond its length (crest run, {mixes} mixes of {OVERHEAD_MIX_S} s: stored start of each mix to the next)",
                    f"{per_mix:.3f} s",
                    "",
                    "≤ 1 s",
                    verdict(per_mix <= 1.0),
                )
            )
            rows.append(
                (
                    "once per run, besides the mixes (checks before the first, the report after the last; interpreter start excluded)",
                    f"{per_run:.2f} s",
                    "",
                    "",
                    "",
                )
            )
            commands.append(f"taskset -c {CLIENT_CPU} crest run SUITE.toml --target URL --fileset DIR -q")
            per_mix, mixes, worst, typical = cluster_overhead(work, docroot, port)
            print(
                f"cluster harness overhead (local:3): {per_mix:.3f} s per mix beyond its length;"
                f" clock offset uncertainty median {typical * 1e3:.3f} ms, largest {worst * 1e3:.3f} ms"
            )
            rows.append(
                (
                    f"cluster mode harness overhead per mix beyond its length (--cluster local:3, {mixes} mixes of"
                    f" {OVERHEAD_MIX_S} s: barrier, clock offsets, start lead, merge, store)",
                    f"{per_mix:.3f} s",
                    "",
                    "≤ 1 s",
                    verdict(per_mix <= 1.0),
                )
            )
            rows.append(
                (
                    "cluster mode clock-offset uncertainty on one machine (half the best of 8 round trips;"
                    " every node of every mix)",
                    f"median {typical * 1e3:.3f} ms, largest {worst * 1e3:.3f} ms",
                    "",
                    "",
                    "",
                )
            )
            commands.append("crest run SUITE.toml --target URL --fileset DIR --cluster local:3 -q")
        finally:
            nginx.stop()
        merge_ms = merge_cost()
        print(f"merge of 100 nodes' results (engine's merge_parts): {merge_ms:.1f} ms")
        rows.append(
            (
                "merging 100 nodes' results in the engine (synthetic parts: 10 classes, 100 clients, 300-s timeline,"
                " 1e5 latencies each; median)",
                f"{merge_ms:.1f} ms",
                "",
                "≤ 50 ms",
                verdict(merge_ms <= 50.0),
            )
        )
        commands.append(" ".join(MERGE_COST))
        builtin, bport = start_builtin(docroot)
        try:
            nginx, port = start_nginx(work, docroot)
            try:
                b, n = alternate(
                    lambda: wrk(f"http://127.0.0.1:{bport}/1k.html", 32),
                    lambda: wrk(f"http://127.0.0.1:{port}/1k.html", 32),
                )
            finally:
                nginx.stop()
        finally:
            builtin.stop()
        ratio = med(b, "rps") / med(n, "rps")
        print(
            f"built-in target vs nginx (wrk, 32 conns): {med(b, 'rps'):,.0f} vs {med(n, 'rps'):,.0f} req/s → {ratio:.2f}×"
        )
        rows.append(
            (
                "built-in target ÷ nginx, 1 KB keep-alive, both measured by wrk -c32",
                f"{spread(b)} / {spread(n)}",
                f"{ratio:.2f}",
                "same league (≥ 0.8)",
                verdict(ratio >= 0.8),
            )
        )
        commands += [
            f"taskset -c {TARGET_CPU} crest serve --docroot DIR --threads 1",
            f"taskset -c {TARGET_CPU} nginx (worker_processes 1, access_log off)",
        ]
    write_doc(rows, commands)


def verdict(ok: bool) -> str:
    return "met" if ok else "**not met**"


def write_doc(rows, commands) -> None:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        "unknown",
    )
    versions = {
        "nginx": subprocess.run(["nginx", "-v"], capture_output=True, text=True).stderr.strip(),
        "wrk": (subprocess.run(["wrk", "-v"], capture_output=True, text=True).stdout.splitlines() or ["?"])[0],
        "ab": (subprocess.run(["ab", "-V"], capture_output=True, text=True).stdout.splitlines() or ["?"])[0],
        "crest": subprocess.run([CREST, "version"], capture_output=True, text=True).stdout.strip(),
    }
    lines = [
        "# Benchmarks",
        "",
        "Measured by `make bench` (scripts/bench.py). Every pair runs alternately in the same invocation",
        f"({ROUNDS} rounds of {SECONDS} s each; medians, with the rounds' range in brackets), the target pinned to core {TARGET_CPU} and the load",
        f"generator to core {CLIENT_CPU} with `taskset`. Client CPU is user+system time of the whole process",
        "(from `wait4`), so crest's figure includes its Python front end; the engine threads' own CPU is shown beside it.",
        "The target is nginx (one worker, access log off) serving a 1 KB file unless the row says otherwise.",
        "",
        f"Last run: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {cpu}, {os.cpu_count()} cores, Linux {platform.release()}.",
        "Versions: " + "; ".join(f"{k}: {v}" for k, v in versions.items()) + ".",
        "",
        "| measurement | crest / reference | ratio | goal | verdict |",
        "|---|---|---|---|---|",
        *[f"| {a} | {b} | {c} | {d} | {e} |" for a, b, c, d, e in rows],
        "",
        "Commands (URL is the 1 KB file on the pinned target):",
        "",
        "```",
        *commands,
        "```",
        "",
        "On this 2-core machine a single nginx worker on one core is the bottleneck of the keep-alive",
        "and HTTP/1.0 rows, so their requests/s ratios say whether crest keeps up with the target, and",
        "the virtual machine's noise (often ±20% between consecutive 8 s runs of the same tool) is larger",
        "than the difference between the tools: read the ranges, not only the ratios. Client CPU per",
        "request is the steadier figure of the load generator's own efficiency.",
        "",
    ]
    (ROOT / "docs").mkdir(exist_ok=True)
    (ROOT / "docs" / "benchmarks.md").write_text("\n".join(lines))
    print(f"wrote {ROOT / 'docs' / 'benchmarks.md'}")


if __name__ == "__main__":
    main()
