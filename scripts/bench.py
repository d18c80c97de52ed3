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
        {
            "engine_cpu_s": report["client_cpu_s"],
            "errors": errors or "none",
            "cipher": next((t["cipher"] for t in report.get("tls_negotiated") or []), None),
            "naps": report.get("naps", 0),
            "latency_mean_us": report["latency_us"]["mean"],
            "throughput_Bps": report.get("throughput_Bps", 0.0),
            "delay_line": (report.get("network") or {}).get("delay_line") or {},
        },
    )


H2_CONNS, H2_STREAMS = 32, 10
H2_MEMORY_CONNS, H2_MEMORY_STREAMS = 1000, 100
OHA = shutil.which("oha") or str(Path.home() / ".cargo" / "bin" / "oha")


def h2load(url: str) -> Sample:
    out, cpu, rss = timed(["h2load", "-c", str(H2_CONNS), "-m", str(H2_STREAMS), "-t", "1", "-D", str(SECONDS), url])
    protocol = re.search(r"Application protocol: (\S+)", out)
    if protocol is None or protocol.group(1) not in ("h2", "h2c"):
        raise SystemExit(f"bench: h2load did not speak HTTP/2 to {url}: {out[-300:]}")
    rps = float(re.search(r"finished in [\d.]+\w*, ([\d.]+) req/s", out).group(1))
    counts = re.search(r"requests: .*?(\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout", out)
    failed = {k: int(v) for k, v in zip(("failed", "errored", "timeout"), counts.groups()[1:]) if int(v)}
    cipher = re.search(r"Cipher: (\S+)", out)
    return Sample(
        rps, int(counts.group(1)), cpu, rss, {"errors": failed or "none", "cipher": cipher and cipher.group(1)}
    )


def oha(url: str, version: str = "2") -> Sample:
    """oha's HTTP/2 mode (h2c by prior knowledge on http://), or its HTTP/3 mode (`version` "3"):
    requests/s of successful responses over its whole run, as crest counts them."""
    cmd = [OHA, "--http-version", version, "-c", str(H2_CONNS), "-p", str(H2_STREAMS), "-z", f"{SECONDS}s",
           "--no-tui", "--output-format", "json", "--insecure", url]  # fmt: skip
    out, cpu, rss = timed(cmd)
    report = json.loads(out)
    ok = sum(n for code, n in report["statusCodeDistribution"].items() if code.startswith(("2", "3")))
    # Requests in flight at -z's deadline are cut off and listed as errors; crest and h2load leave them out.
    errors = {k: v for k, v in (report.get("errorDistribution") or {}).items() if k != "aborted due to deadline"}
    return Sample(ok / report["summary"]["total"], ok, cpu, rss, {"errors": errors or "none"})


def oha_speaks_h3() -> bool:
    """Whether the installed oha was built with its http3 feature (crates.io's default build is not)."""
    if not os.access(OHA, os.X_OK):
        return False
    probe = subprocess.run([OHA, "--http-version", "3", "-n", "1", "--no-tui", "https://127.0.0.1:9/"],
                           capture_output=True, text=True, timeout=30)  # fmt: skip
    return "not been built with HTTP/3" not in probe.stdout + probe.stderr


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


@dataclass
class Nginx:
    """The pinned nginx and its three listeners: HTTP/1.x, h2c (prior knowledge only: nginx 1.22 makes an
    `http2` port h2-only without TLS) and TLS with h2 offered by ALPN."""

    proc: Process
    port: int
    h2c_port: int
    h2_port: int

    def worker_pid(self) -> int:
        """The one worker process (worker_processes 1), a child of the master `taskset` became."""
        pid = self.proc.proc.pid
        deadline = time.monotonic() + 5
        while not (children := Path(f"/proc/{pid}/task/{pid}/children").read_text().split()):
            if time.monotonic() > deadline:
                raise SystemExit("bench: nginx started no worker")
            time.sleep(0.05)  # the master listens before it forks the worker
        return int(children[0])

    def stop(self) -> None:
        self.proc.stop()


def self_signed_cert(work: Path) -> tuple[Path, Path]:
    cert, key = work / "cert.pem", work / "key.pem"
    if not cert.exists():
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-days", "2", "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)],
            check=True, capture_output=True,
        )  # fmt: skip
    return cert, key


def start_nginx(work: Path, docroot: Path) -> Nginx:
    port, h2c_port, h2_port = free_port(), free_port(), free_port()
    cert, key = self_signed_cert(work)
    conf = work / "nginx.conf"
    # As root, workers would drop to `nobody`, who cannot read the private temp dir.
    user = "user root;" if os.geteuid() == 0 else ""
    # keepalive_requests also bounds requests per HTTP/2 connection (nginx >= 1.19.7): h2load does not
    # reconnect after a GOAWAY, so none may come mid-run.
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
  ssl_certificate {cert};
  ssl_certificate_key {key};
  ssl_session_cache shared:x:10m;
  server {{
    listen 127.0.0.1:{port} backlog=4096;
    listen 127.0.0.1:{h2c_port} http2 backlog=4096;
    listen 127.0.0.1:{h2_port} ssl http2 backlog=4096;
    root {docroot};
  }}
}}
""")
    return Nginx(Process(["nginx", "-c", str(conf), "-p", str(work)], port), port, h2c_port, h2_port)


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


def alternate(*runs, rounds: int = ROUNDS) -> tuple[list[Sample], ...]:
    """Each run once per round, in the order given: the rounds interleave the tools, so slow drifts of
    this host's speed fall on all of them alike."""
    samples: tuple[list[Sample], ...] = tuple([] for _ in runs)
    for _ in range(rounds):
        for run, out in zip(runs, samples):
            out.append(run())
    return samples


def med(samples: list[Sample], attr: str) -> float:
    return statistics.median(getattr(s, attr) for s in samples)


def spread(samples: list[Sample]) -> str:
    """Median requests/s with the rounds' range: this host's noise is part of the figure."""
    rates = [s.rps for s in samples]
    return f"{statistics.median(rates):,.0f} ({min(rates):,.0f}–{max(rates):,.0f})"


def with_target_cpu(run, pid: int):
    """`run` with the CPU the target process `pid` spent meanwhile put in the sample's extra."""

    def measured() -> Sample:
        before = process_cpu_s(pid)
        sample = run()
        sample.extra["target_cpu_s"] = process_cpu_s(pid) - before
        return sample

    return measured


def target_us(samples: list[Sample]) -> float:
    """Median CPU per successful response of the target while the tool ran."""
    return statistics.median(s.extra["target_cpu_s"] / s.requests * 1e6 for s in samples)


def engine_us(samples: list[Sample]) -> float:
    """Median CPU per request of crest's engine threads alone (the report's client_cpu_s)."""
    return statistics.median(s.extra["engine_cpu_s"] / s.requests * 1e6 for s in samples)


def bench_http2(work: Path, docroot: Path) -> tuple[list[tuple[str, str, str, str, str]], list[str], dict]:
    """HTTP/2 rows: crest beside h2load (and oha where it is installed) on nginx's h2c and TLS h2
    listeners, then crest's peak RSS at 1,000 connections × 100 streams."""
    rows: list[tuple[str, str, str, str, str]] = []
    commands: list[str] = []
    notes: dict[str, str] = {}
    have_h2load = shutil.which("h2load") is not None
    have_oha = os.access(OHA, os.X_OK)
    if not have_h2load:
        print("bench: h2load is missing, HTTP/2 rows against it skipped: apt-get install -y nghttp2-client")
    if not have_oha:
        print(f"bench: oha is missing ({OHA}), HTTP/2 rows against it skipped: cargo install oha --locked")
    load_before = os.getloadavg()[0]
    shape = f"{H2_CONNS} connections × {H2_STREAMS} streams"
    nginx = start_nginx(work, docroot)
    worker = nginx.worker_pid()
    try:
        for name, url, tls_flags in (
            ("h2c", f"http://127.0.0.1:{nginx.h2c_port}/1k.html", []),
            ("TLS h2", f"https://127.0.0.1:{nginx.h2_port}/1k.html", ["--insecure"]),
        ):
            if not (have_h2load or have_oha):
                break  # nothing to compare crest with
            flags = ["--http", "2", "--streams", str(H2_STREAMS), *tls_flags]
            # crest as it runs by default (napping under load), and crest always blocking on its sockets
            # (--no-nap), which shows what the naps are for (docs/bench.md, "How crest waits").
            tools = {
                "crest": lambda u=url, f=flags: crest(u, H2_CONNS, *f),
                "crest --no-nap": lambda u=url, f=flags: crest(u, H2_CONNS, *f, "--no-nap"),
            }
            if have_h2load:
                tools["h2load"] = lambda u=url: h2load(u)
            if have_oha:
                tools["oha"] = lambda u=url: oha(u)
            # The references first in each round, as the HTTP/1 rows run wrk before crest.
            order = [t for t in ("h2load", "oha", "crest", "crest --no-nap") if t in tools]
            results = dict(zip(order, alternate(*(with_target_cpu(tools[t], worker) for t in order))))
            c, b = results["crest"], results["crest --no-nap"]
            naps = statistics.median(s.extra["naps"] / s.requests * 1000 for s in c)
            print(f"{name}: crest napped {naps:.0f} times per 1,000 responses; with --no-nap, never")
            ciphers = {t: s[0].extra.get("cipher") for t, s in results.items() if s[0].extra.get("cipher")}
            if ciphers:
                notes["ciphers"] = ", ".join(f"{t} {v}" for t, v in ciphers.items())
                print(f"{name}: negotiated {notes['ciphers']}")
            print(
                f"{name}: nginx CPU per response " + ", ".join(f"{t} {target_us(s):.2f} µs" for t, s in results.items())
            )
            for ref, goal_rps, goal_cpu in (("h2load", 1.0, 0.8), ("oha", None, None)):
                if ref not in results:
                    continue
                r = results[ref]
                ratio_rps = med(c, "rps") / med(r, "rps")
                ratio_cpu = med(c, "cpu_us_per_request") / med(r, "cpu_us_per_request")
                print(
                    f"{name} 1 KB, {shape}: {ref} {med(r, 'rps'):,.0f} req/s, crest {med(c, 'rps'):,.0f} req/s"
                    f" → {ratio_rps:.2f}×; CPU/request {ref} {med(r, 'cpu_us_per_request'):.2f} µs,"
                    f" crest {med(c, 'cpu_us_per_request'):.2f} µs (engine threads {engine_us(c):.2f} µs)"
                    f" → {ratio_cpu:.2f}×; errors {ref} {r[-1].extra['errors']}, crest {c[-1].extra['errors']}"
                )
                rows.append(
                    (
                        f"{name} GET 1 KB, {shape}: requests/s crest ÷ {ref}",
                        f"{spread(c)} / {spread(r)}",
                        f"{ratio_rps:.2f}",
                        f"≥ {goal_rps}" if goal_rps else "(as measured)",
                        verdict(ratio_rps >= goal_rps) if goal_rps else "",
                    )
                )
                rows.append(
                    (
                        f"same, client CPU per request crest ÷ {ref} (whole process; engine threads alone"
                        f" {engine_us(c):.2f} µs)",
                        f"{med(c, 'cpu_us_per_request'):.2f} µs / {med(r, 'cpu_us_per_request'):.2f} µs",
                        f"{ratio_cpu:.2f}",
                        f"≤ {goal_cpu}" if goal_cpu else "(as measured)",
                        verdict(ratio_cpu <= goal_cpu) if goal_cpu else "",
                    )
                )
                rows.append(
                    (
                        f"same, the target's CPU per response with crest ÷ with {ref} (nginx worker)",
                        f"{target_us(c):.2f} µs / {target_us(r):.2f} µs",
                        f"{target_us(c) / target_us(r):.2f}",
                        "",
                        "",
                    )
                )
                if ref != "h2load":
                    continue
                ratio_b = med(b, "rps") / med(r, "rps")
                print(
                    f"{name}: crest --no-nap {med(b, 'rps'):,.0f} req/s → {ratio_b:.2f}× h2load; CPU/request"
                    f" {med(b, 'cpu_us_per_request'):.2f} µs; nginx {target_us(b):.2f} µs per response"
                )
                rows.append(
                    (
                        f"same, crest --no-nap (always blocking on its sockets; crest napped {naps:.0f} times per"
                        " 1,000 responses by default) ÷ h2load: requests/s; client CPU per request; the target's"
                        " CPU per response",
                        f"{spread(b)}; {med(b, 'cpu_us_per_request'):.2f} µs; {target_us(b):.2f} µs",
                        f"{ratio_b:.2f}; {med(b, 'cpu_us_per_request') / med(r, 'cpu_us_per_request'):.2f};"
                        f" {target_us(b) / target_us(r):.2f}",
                        "(as measured)",
                        "",
                    )
                )
            url_name = "H2C_URL" if name == "h2c" else "H2_URL"
            if have_h2load:
                commands.append(
                    f"taskset -c {CLIENT_CPU} h2load -c {H2_CONNS} -m {H2_STREAMS} -t 1 -D {SECONDS} {url_name}"
                )
            if have_oha:
                commands.append(
                    f"taskset -c {CLIENT_CPU} oha --http2 -c {H2_CONNS} -p {H2_STREAMS} -z {SECONDS}s --no-tui"
                    f" --output-format json --insecure {url_name}"
                )
            commands.append(
                f"taskset -c {CLIENT_CPU} crest bench --json -q -t 1 -c {H2_CONNS} -d {SECONDS}s {' '.join(flags)}"
                f" [--no-nap] {url_name}"
            )
        flags = ["--http", "2", "--streams", str(H2_MEMORY_STREAMS)]
        big = crest(f"http://127.0.0.1:{nginx.h2c_port}/1k.html", H2_MEMORY_CONNS, *flags)
    finally:
        nginx.stop()
    base = timed([CREST, "version"])[2]
    print(
        f"h2c {H2_MEMORY_CONNS:,} connections × {H2_MEMORY_STREAMS} streams: crest peak RSS"
        f" {big.max_rss_kb / 1024:.1f} MiB (Python alone {base / 1024:.1f} MiB), {big.rps:,.0f} req/s,"
        f" errors {big.extra['errors']}"
    )
    rows.append(
        (
            f"h2c, {H2_MEMORY_CONNS:,} connections × {H2_MEMORY_STREAMS} streams: crest peak RSS (whole process;"
            f" {big.rps:,.0f} req/s, errors {big.extra['errors']})",
            f"{big.max_rss_kb / 1024:.1f} MiB (interpreter alone {base / 1024:.1f} MiB)",
            "",
            "≤ 150 MB",
            verdict(big.max_rss_kb * 1024 <= 150e6),
        )
    )
    commands.append(
        f"taskset -c {CLIENT_CPU} crest bench --json -q -t 1 -c {H2_MEMORY_CONNS} -d {SECONDS}s {' '.join(flags)} H2C_URL"
    )
    notes["load"] = f"{load_before:.1f}, {os.getloadavg()[0]:.1f}"
    print(f"load average (1 min) before, after the HTTP/2 section: {notes['load']}")
    return rows, commands, notes


def start_caddy_h3(work: Path, docroot: Path) -> tuple[Process, int] | None:
    """Caddy (GOMAXPROCS=1) pinned to the target core, HTTPS with HTTP/1.1, h2 and h3 on one port
    (TCP and its UDP twin); None when Caddy is not installed."""
    if not shutil.which("caddy"):
        print("bench: caddy is missing, its HTTP/3 rows skipped: apt-get install -y caddy")
        return None
    cert, key = self_signed_cert(work)
    port = free_port()
    conf = work / "Caddyfile"
    conf.write_text(
        f"{{\n\tadmin off\n\tauto_https off\n\tstorage file_system {work}/caddy\n"
        f"\tservers {{\n\t\tprotocols h1 h2 h3\n\t}}\n}}\n"
        f"https://127.0.0.1:{port} {{\n\tbind 127.0.0.1\n\ttls {cert} {key}\n\troot * {docroot}\n\tfile_server\n}}\n"
    )
    os.environ["GOMAXPROCS"] = "1"
    try:
        return Process(["caddy", "run", "--config", str(conf), "--adapter", "caddyfile"], port), port
    finally:
        del os.environ["GOMAXPROCS"]


def bench_http3(work: Path, docroot: Path) -> tuple[list[tuple[str, str, str, str, str]], list[str], dict]:
    """HTTP/3 rows: crest over TLS HTTP/1.1, TLS h2 and h3 against the same target, for each target that
    serves HTTP/3 (the built-in target, Caddy), and crest beside oha over HTTP/3 where oha was built with
    its http3 feature (crates.io's default build is not; Debian's h2load is built without QUIC)."""
    rows: list[tuple[str, str, str, str, str]] = []
    commands: list[str] = []
    notes = {"load_before": f"{os.getloadavg()[0]:.1f}"}
    shape = f"{H2_CONNS} connections × {H2_STREAMS} streams"
    have_oha_h3 = oha_speaks_h3()
    notes["oha_h3"] = (
        subprocess.run([OHA, "--version"], capture_output=True, text=True).stdout.strip() + " with http3"
        if have_oha_h3
        else "not run here: this oha has no HTTP/3"
    )
    if not have_oha_h3:
        print(f"bench: oha ({OHA}) has no HTTP/3, its rows skipped: cargo install oha --locked --features http3")
    tls_port = free_port()
    builtin = Process([CREST, "serve", "--docroot", str(docroot), "--port", str(free_port()), "--tls-port",
                       str(tls_port), "--http3", "--threads", "1"], tls_port)  # fmt: skip
    targets: list[tuple[str, Process, int]] = [("built-in target", builtin, tls_port)]
    caddy = start_caddy_h3(work, docroot)
    if caddy is not None:
        targets.append(("Caddy", *caddy))
    try:
        for target, proc, port in targets:
            url = f"https://127.0.0.1:{port}/1k.html"
            flags = {
                "HTTP/1.1 (TLS, keep-alive)": ["--insecure"],
                "HTTP/2 (TLS)": ["--http", "2", "--streams", str(H2_STREAMS), "--insecure"],
                "HTTP/3": ["--http", "3", "--streams", str(H2_STREAMS), "--insecure"],
            }
            runs = {
                name: with_target_cpu(lambda f=f, u=url: crest(u, H2_CONNS, *f), proc.proc.pid)
                for name, f in flags.items()
            }
            if have_oha_h3:
                runs["oha HTTP/3"] = with_target_cpu(lambda u=url: oha(u, "3"), proc.proc.pid)
            results = dict(zip(runs, alternate(*runs.values())))
            by_oha = results.pop("oha HTTP/3", None)
            h2, h3 = results["HTTP/2 (TLS)"], results["HTTP/3"]
            if by_oha is not None:
                ratio_rps = med(h3, "rps") / med(by_oha, "rps")
                ratio_cpu = med(h3, "cpu_us_per_request") / med(by_oha, "cpu_us_per_request")
                print(
                    f"{target}, HTTP/3 1 KB, {shape}: oha {med(by_oha, 'rps'):,.0f} req/s, crest {med(h3, 'rps'):,.0f}"
                    f" → {ratio_rps:.2f}×; CPU/request oha {med(by_oha, 'cpu_us_per_request'):.2f} µs, crest"
                    f" {med(h3, 'cpu_us_per_request'):.2f} µs → {ratio_cpu:.2f}×; target per response oha"
                    f" {target_us(by_oha):.2f} µs, crest {target_us(h3):.2f} µs; errors oha {by_oha[-1].extra['errors']}"
                )
                # Issue 33's goal is against the built-in target (Caddy's rows are as measured: it bounds both).
                goal = target == "built-in target"
                rows.append(
                    (
                        f"{target}, HTTP/3 GET 1 KB, {shape}: requests/s crest ÷ oha; client CPU per request crest ÷ oha",
                        f"{spread(h3)} / {spread(by_oha)}; {med(h3, 'cpu_us_per_request'):.2f} µs /"
                        f" {med(by_oha, 'cpu_us_per_request'):.2f} µs",
                        f"{ratio_rps:.2f}; {ratio_cpu:.2f}",
                        "≥ 1.0; ≤ 0.7" if goal else "(as measured)",
                        verdict(ratio_rps >= 1.0 and ratio_cpu <= 0.7) if goal else "",
                    )
                )
            for name, samples in results.items():
                conns = f"{H2_CONNS} connections" + ("" if name.startswith("HTTP/1") else f" × {H2_STREAMS} streams")
                print(
                    f"{target}, {name}, {conns}: crest {med(samples, 'rps'):,.0f} req/s, client CPU/request"
                    f" {med(samples, 'cpu_us_per_request'):.2f} µs (engine {engine_us(samples):.2f} µs),"
                    f" target {target_us(samples):.2f} µs/response; errors {samples[-1].extra['errors']}"
                )
                rows.append(
                    (
                        f"{target}, GET 1 KB over {name}, {conns}: requests/s; client (engine) and target CPU per request",
                        f"{spread(samples)}; {med(samples, 'cpu_us_per_request'):.2f} ({engine_us(samples):.2f}) µs;"
                        f" {target_us(samples):.2f} µs",
                        "",
                        "(as measured)",
                        "",
                    )
                )
            cpu_h3_h2 = engine_us(h3) / engine_us(h2)
            goal = target == "built-in target"
            rows.append(
                (
                    f"{target}, {shape}: HTTP/3 ÷ HTTP/2 requests/s; engine CPU per request",
                    "",
                    f"{med(h3, 'rps') / med(h2, 'rps'):.2f}; {cpu_h3_h2:.2f}",
                    "engine CPU ≤ 1.2" if goal else "(as measured)",
                    verdict(cpu_h3_h2 <= 1.2) if goal else "",
                )
            )
        if have_oha_h3:
            commands.append(
                f"taskset -c {CLIENT_CPU} oha --http-version 3 -c {H2_CONNS} -p {H2_STREAMS} -z {SECONDS}s --no-tui"
                " --output-format json --insecure URL"
            )
        for f in flags.values():
            commands.append(
                f"taskset -c {CLIENT_CPU} crest bench --json -q -t 1 -c {H2_CONNS} -d {SECONDS}s {' '.join(f)} URL"
            )
        commands.append(f"taskset -c {TARGET_CPU} crest serve --docroot DIR --tls-port PORT --http3 --threads 1")
        if caddy is not None:
            commands.append(f"GOMAXPROCS=1 taskset -c {TARGET_CPU} caddy run   # protocols h1 h2 h3, file_server")
        # Memory at HTTP/2's goal shape (1,000 connections × 100 streams) over HTTP/3, on the built-in target.
        flags3 = ["--http", "3", "--streams", str(H2_MEMORY_STREAMS), "--insecure", "--timeout", "10s"]
        big = crest(f"https://127.0.0.1:{tls_port}/1k.html", H2_MEMORY_CONNS, *flags3)
        base = timed([CREST, "version"])[2]
        print(
            f"h3 {H2_MEMORY_CONNS:,} connections × {H2_MEMORY_STREAMS} streams: crest peak RSS"
            f" {big.max_rss_kb / 1024:.1f} MiB (Python alone {base / 1024:.1f} MiB), {big.rps:,.0f} req/s,"
            f" errors {big.extra['errors']}"
        )
        rows.append(
            (
                f"built-in target, HTTP/3, {H2_MEMORY_CONNS:,} connections × {H2_MEMORY_STREAMS} streams: crest peak RSS"
                f" (whole process; {big.rps:,.0f} req/s, errors {big.extra['errors']})",
                f"{big.max_rss_kb / 1024:.1f} MiB (interpreter alone {base / 1024:.1f} MiB)",
                "",
                "≤ 150 MB",
                verdict(big.max_rss_kb * 1024 <= 150e6),
            )
        )
        commands.append(
            f"taskset -c {CLIENT_CPU} crest bench --json -q -t 1 -c {H2_MEMORY_CONNS} -d {SECONDS}s {' '.join(flags3)} URL"
        )
    finally:
        for _, proc, _ in targets:
            proc.stop()
    notes["load"] = f"{notes['load_before']}, {os.getloadavg()[0]:.1f}"
    return rows, commands, notes


def write_h3_section(rows, commands, notes) -> None:
    """The "HTTP/3" section of docs/benchmarks.md, so that BENCH_ONLY=h3 refreshes it alone."""
    caddy = (
        subprocess.run(["caddy", "version"], capture_output=True, text=True).stdout.strip()
        if shutil.which("caddy")
        else "not installed"
    )
    section = "\n".join(
        [
            "## HTTP/3",
            "",
            " ".join(
                [
                    "Measured by `make bench` (scripts/bench.py; `BENCH_ONLY=h3` runs this section alone) on",
                    f"{os.cpu_count()} cores: the target pinned to core {TARGET_CPU} (the built-in target with one",
                    "thread for HTTP/1 and HTTP/2 and one for HTTP/3; Caddy with GOMAXPROCS=1), crest to core",
                    f"{CLIENT_CPU}, each protocol once per round in turn ({ROUNDS} rounds of {SECONDS} s; medians, the",
                    "rounds' range in brackets). The rows set crest's HTTP/3 beside its HTTP/1.1 and HTTP/2 over",
                    "TLS against the same target and, when oha was built with its http3 feature (`cargo install",
                    "oha --locked --features http3`; crates.io's default build has none, and Debian's h2load 1.52",
                    f"is built without QUIC), beside oha's HTTP/3 ({notes.get('oha_h3', 'not run')}). Client CPU is",
                    "the whole process's (engine threads alone in brackets); the target's is its process's.",
                ]
            ),
            "",
            f"Last run: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {cpu_model()}, {os.cpu_count()} cores,"
            f" Linux {platform.release()}; 1-minute load average {notes.get('load', 'n/a')} before and after."
            f" Versions: caddy {caddy}.",
            "",
            "| measurement | figures | ratio | goal | verdict |",
            "|---|---|---|---|---|",
            *[f"| {a} | {b} | {c} | {d} | {e} |" for a, b, c, d, e in rows],
            "",
            "Commands (URL: the 1 KB file on the target's TLS port, QUIC on its UDP twin):",
            "",
            "```sh",  # tests/test_docs_examples.py checks the commands of sh blocks
            *commands,
            "```",
            "",
        ]
    )
    replace_section("HTTP/3", section)


DELAY_RTT_S, DELAY_CONNS, BULK_CONNS = 0.002, 1000, 4
BULK_FILE_BYTES = 100_000_000


def bench_delay_line(work: Path, docroot: Path) -> tuple[list[tuple[str, str, str, str, str]], list[str], dict]:
    """crest's delay line (crates/delayline) at rtt=2ms: 1 KB keep-alive over 1,000 connections against
    the rate the round trip allows, min(the undelayed rate, connections ÷ (rtt + the undelayed mean
    latency)), the undelayed run crossing the same kind of network without delay (veth, no delay line);
    and a bulk transfer's Gbit/s through the line. Needs root (network namespaces)."""
    if os.geteuid() != 0:
        return [("delay line at rtt=2ms", "not measured: --network needs root", "", "", "")], [], {}
    (docroot / "bulk.bin").write_bytes(b"z" * BULK_FILE_BYTES)
    nginx = start_nginx(work, docroot)
    url = f"http://127.0.0.1:{nginx.port}/1k.html"
    bulk_url = f"http://127.0.0.1:{nginx.port}/bulk.bin"
    rtt = f"rtt={DELAY_RTT_S * 1e3:g}ms"
    load = [os.getloadavg()[0]]
    try:
        plain, delayed, bulk = alternate(
            lambda: crest(url, DELAY_CONNS, "--network", "subnets=1"),
            lambda: crest(url, DELAY_CONNS, "--network", rtt),
            lambda: crest(bulk_url, BULK_CONNS, "--network", rtt),
        )
    finally:
        nginx.stop()
    load.append(os.getloadavg()[0])
    service_s = statistics.median(s.extra["latency_mean_us"] for s in plain) / 1e6
    allowed = min(med(plain, "rps"), DELAY_CONNS / (DELAY_RTT_S + service_s))
    ratio = med(delayed, "rps") / allowed
    gbps = [s.extra["throughput_Bps"] * 8 / 1e9 for s in bulk]
    line = [s.extra["delay_line"] for s in (*delayed, *bulk)]

    def figure(key: str, runs: list[dict], form: str = ".2f") -> str:
        values = [d[key] for d in runs if d.get(key) is not None]
        if not values:
            return "n/a"
        # median_low: a p99 is a bucket's bound, and the mean of two bounds would be none
        return f"{statistics.median_low(values):{form}} ({min(values):{form}}–{max(values):{form}})"

    print(
        f"delay line, {rtt}, {DELAY_CONNS} conns: {med(delayed, 'rps'):,.0f} req/s of {allowed:,.0f} allowed → {ratio:.2f};"
        f" bulk {statistics.median(gbps):.2f} Gbit/s"
    )
    rows = [
        (
            f"keep-alive GET 1 KB, {DELAY_CONNS:,} connections at {rtt} through the delay line: requests/s ÷ the rate"
            f" the round trip allows (min(undelayed {spread(plain)} req/s, {DELAY_CONNS:,} ÷ ({DELAY_RTT_S * 1e3:g} ms +"
            f" undelayed mean latency {service_s * 1e3:.1f} ms)))",
            f"{spread(delayed)} / {allowed:,.0f}",
            f"{ratio:.2f}",
            "≥ 0.9",
            verdict(ratio >= 0.9),
        ),
        (
            f"bulk transfer ({BULK_CONNS} connections, {BULK_FILE_BYTES // 10**6} MB file) at {rtt} through the delay line",
            f"{statistics.median(gbps):.2f} Gbit/s ({min(gbps):.2f}–{max(gbps):.2f})",
            "",
            "≥ 1 Gbit/s",
            verdict(statistics.median(gbps) >= 1.0),
        ),
        (
            "the delay line itself in those runs (keep-alive, then bulk): CPU in cores; packets' lateness past their due"
            " time, mean and p99 (µs; the p99 is the upper bound of a power-of-two bucket); peak RSS",
            f"keep-alive {figure('cpu_cores', line[:ROUNDS])} cores, late {figure('late_mean_us', line[:ROUNDS], ',.0f')} µs,"
            f" p99 {figure('late_p99_us', line[:ROUNDS], ',')} µs; bulk {figure('cpu_cores', line[ROUNDS:])} cores,"
            f" late {figure('late_mean_us', line[ROUNDS:], ',.0f')} µs, p99 {figure('late_p99_us', line[ROUNDS:], ',')} µs;"
            f" RSS {max((d.get('max_rss_bytes', 0) for d in line), default=0) / 2**20:.1f} MiB",
            "",
            "",
            "",
        ),
    ]
    commands = [
        f"taskset -c {CLIENT_CPU} crest bench --json -q -t 1 -c {DELAY_CONNS} -d {SECONDS}s --network subnets=1 URL",
        f"taskset -c {CLIENT_CPU} crest bench --json -q -t 1 -c {DELAY_CONNS} -d {SECONDS}s --network {rtt} URL",
        f"taskset -c {CLIENT_CPU} crest bench --json -q -t 1 -c {BULK_CONNS} -d {SECONDS}s --network {rtt} BULK_URL",
    ]
    return rows, commands, {"load": " → ".join(f"{x:.2f}" for x in load)}


def write_delay_section(rows, commands, notes) -> None:
    """The "Delay line" section of docs/benchmarks.md, so that BENCH_ONLY=delay refreshes it alone."""
    section = "\n".join(
        [
            "## Delay line",
            "",
            " ".join(
                [
                    "Measured by `make bench` (scripts/bench.py; `BENCH_ONLY=delay` runs this section alone):",
                    f"nginx (one worker) pinned to core {TARGET_CPU}, crest to core {CLIENT_CPU}; crest's delay line",
                    "(crest-delayline, a child of crest) inherits crest's core, so the line and the load engine share",
                    f"it. Each round runs the three in turn ({ROUNDS} rounds of {SECONDS} s; medians, the rounds'",
                    "range in brackets). The undelayed run crosses the same client network without delay (a veth",
                    "pair, no delay line); its mean latency is the target's service time at that load. The ratio",
                    "can pass 1: through a veth pair nginx's core also runs the clients' side of the network stack",
                    "(the receiver's work is done in the sender's softirq), while the delay line takes that work to",
                    "its own process on crest's core. The line's CPU is mostly the kernel's (writing a packet into a",
                    "TUN device runs the receiving stack); a bulk transfer crosses it as GSO packets (no loss, no",
                    "line speed: docs/networks.md).",
                ]
            ),
            "",
            f"Last run: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {cpu_model()}, {os.cpu_count()} cores,"
            f" Linux {platform.release()}; 1-minute load average {notes.get('load', 'n/a')} before and after"
            " (the section's own target, client and line add up to about 2; more means other work shared these cores).",
            "",
            "| measurement | crest / reference | ratio | goal | verdict |",
            "|---|---|---|---|---|",
            *[f"| {a} | {b} | {c} | {d} | {e} |" for a, b, c, d, e in rows],
            "",
            "Commands (URL: the 1 KB file on the pinned nginx; BULK_URL: a 100 MB file on it):",
            "",
            "```sh",  # tests/test_docs_examples.py checks the commands of sh blocks
            *commands,
            "```",
            "",
        ]
    )
    replace_section("Delay line", section)


def make_docroot(work: Path) -> tuple[Path, Path]:
    docroot = work / "html"
    docroot.mkdir()
    (docroot / "1k.html").write_bytes(b"x" * 1023 + b"\n")
    return work, docroot


def main() -> None:
    only = os.environ.get("BENCH_ONLY", "")
    if only not in ("", "h2", "h3", "delay"):
        raise SystemExit(
            f"bench: BENCH_ONLY={only!r}: 'h2', 'h3' or 'delay' (the HTTP/2, HTTP/3 or delay line section alone)"
        )
    for tool in ("nginx", "taskset", "openssl") if only else ("nginx", "wrk", "ab", "taskset", "openssl"):
        if not shutil.which(tool):
            raise SystemExit(
                f"bench: {tool} is missing: apt-get install -y nginx-light wrk apache2-utils util-linux openssl"
            )
    if os.cpu_count() < 2:
        raise SystemExit("bench: needs 2 cores (target on one, load generator on the other)")
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 30000), hard))
    if only == "h2":
        with tempfile.TemporaryDirectory(prefix="crest-bench-") as tmp:
            write_h2_section(*bench_http2(*make_docroot(Path(tmp))))
        return
    if only == "h3":
        with tempfile.TemporaryDirectory(prefix="crest-bench-") as tmp:
            write_h3_section(*bench_http3(*make_docroot(Path(tmp))))
        return
    if only == "delay":
        with tempfile.TemporaryDirectory(prefix="crest-bench-") as tmp:
            write_delay_section(*bench_delay_line(*make_docroot(Path(tmp))))
        return
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
        "   # URL: a socket that accepts and never answers",
    ]
    with tempfile.TemporaryDirectory(prefix="crest-bench-") as tmp:
        work, docroot = make_docroot(Path(tmp))
        nginx = start_nginx(work, docroot)
        port = nginx.port
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
            ratio_cpu = med(c, "cpu_us_per_request") / med(a, "cpu_us_per_request")
            print(
                f"HTTP/1.0 no keep-alive, 32 conns: CPU/request ab {med(a, 'cpu_us_per_request'):.2f} µs,"
                f" crest {med(c, 'cpu_us_per_request'):.2f} µs → {ratio_cpu:.2f}×"
            )
            rows.append(
                (
                    # Most of it is the kernel's work for each connection, the same for both tools: docs/benchmarks.md,
                    # "Connection per request", splits it into user and kernel time and system calls.
                    "same, client CPU per request crest ÷ ab (whole process; about 40 µs of each is the kernel's"
                    " per connection)",
                    f"{med(c, 'cpu_us_per_request'):.2f} µs / {med(a, 'cpu_us_per_request'):.2f} µs",
                    f"{ratio_cpu:.2f}",
                    "≤ 0.77",
                    verdict(ratio_cpu <= 0.77),
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
            nginx = start_nginx(work, docroot)
            port = nginx.port
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
            f"taskset -c {TARGET_CPU} nginx   # worker_processes 1, access_log off",
        ]
        h2 = bench_http2(work, docroot)
        h3 = bench_http3(work, docroot)
        delay = bench_delay_line(work, docroot)
    write_doc(rows, commands)
    write_h2_section(*h2)
    write_h3_section(*h3)
    write_delay_section(*delay)


def verdict(ok: bool) -> str:
    return "met" if ok else "**not met**"


def cpu_model() -> str:
    return next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        "unknown",
    )


def write_doc(rows, commands) -> None:
    cpu = cpu_model()
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
        "```sh",  # tests/test_docs_examples.py checks the commands of sh blocks
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
    doc = ROOT / "docs" / "benchmarks.md"
    # The head alone: the sections after it (the other BENCH_ONLY parts' and those measured by hand) stay.
    old = doc.read_text() if doc.exists() else ""
    _, sep, rest = old.partition("\n## ")
    doc.write_text("\n".join(lines) + (sep + rest if sep else ""))
    print(f"wrote the head of {doc}")


def write_h2_section(rows, commands, notes) -> None:
    """The "HTTP/2" section of docs/benchmarks.md, so that BENCH_ONLY=h2 refreshes it alone."""
    version = (
        subprocess.run(["h2load", "--version"], capture_output=True, text=True).stdout.strip()
        if shutil.which("h2load")
        else "not installed"
    )
    oha_version = (
        subprocess.run([OHA, "--version"], capture_output=True, text=True).stdout.strip()
        if os.access(OHA, os.X_OK)
        else "not installed (`cargo install oha --locked`)"
    )
    section = "\n".join(
        [
            "## HTTP/2",
            "",
            " ".join(
                [
                    "Measured by `make bench` (scripts/bench.py; `BENCH_ONLY=h2` runs this section alone) on",
                    f"{os.cpu_count()} cores: nginx (one worker) pinned to core {TARGET_CPU}, the load generators to",
                    f"core {CLIENT_CPU}; each round runs every tool once, in turn ({ROUNDS} rounds of {SECONDS} s;",
                    "medians, the rounds' range in brackets). Client CPU is the whole process's user+system time",
                    "from `wait4` per successful response; crest's includes its Python front end, its engine",
                    "threads' own CPU is shown beside it. The target's CPU is its worker's, read from",
                    "/proc/PID/task/*/schedstat around each run. nginx listens for h2c on a port of its own",
                    "(prior knowledge only) and for TLS with h2 by ALPN (self-signed ECDSA P-256 certificate,",
                    "nginx 1.22's default protocols, so TLS 1.2; each client picks its cipher:",
                    f"{notes.get('ciphers', 'n/a')}), with `keepalive_requests 1000000` so that no GOAWAY",
                    "comes mid-run.",
                ]
            ),
            "",
            f"Last run: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {cpu_model()}, {os.cpu_count()} cores,"
            f" Linux {platform.release()}; 1-minute load average {notes.get('load', 'n/a')} before and after"
            " (the section's own target and client add up to about 2; more means other work shared these cores)."
            f" Versions: {version}; oha: {oha_version}.",
            "",
            "| measurement | crest / reference | ratio | goal | verdict |",
            "|---|---|---|---|---|",
            *[f"| {a} | {b} | {c} | {d} | {e} |" for a, b, c, d, e in rows],
            "",
            "Commands (H2C_URL and H2_URL: the 1 KB file on nginx's h2c and TLS h2 ports):",
            "",
            "```sh",  # tests/test_docs_examples.py checks the commands of sh blocks
            *commands,
            "```",
            "",
        ]
    )
    replace_section("HTTP/2", section)


def replace_section(title: str, section: str) -> None:
    """Rewrites the section `title` of docs/benchmarks.md in place, or puts it before "File servers"
    (whose script appends that section last) when it is new: each BENCH_ONLY run refreshes its own."""
    doc = ROOT / "docs" / "benchmarks.md"
    text = doc.read_text() if doc.exists() else "# Benchmarks\n"
    pattern = re.compile(rf"\n## {re.escape(title)}\n.*?(?=\n## |\Z)", re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _: "\n" + section, text, count=1)
    else:
        head, sep, tail = text.partition("\n## File servers\n")
        text = head.rstrip() + "\n\n" + section + (sep + tail if sep else "")
    doc.write_text(text)
    print(f"wrote the {title} section of {doc}")


if __name__ == "__main__":
    main()
