"""Test helpers: run the real `crest` CLI in-process (main(argv)) or as a subprocess (python -m crest);
wait for a condition with a deadline (an event: a stored row, a live frame, a process); a silent listening
socket; a witness of how late the host let a sleeping thread wake."""

from __future__ import annotations

import contextlib
import io
import itertools
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

# Generous: a CLI run is ~1 s of load plus interpreter start-up; this only stops a hang.
CLI_TIMEOUT_S = 60.0


def run_cli(*args: str, timeout_s: float = CLI_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    """Run `python -m crest ARGS` to completion with captured text output and no stdin."""
    return subprocess.run(
        [sys.executable, "-m", "crest", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        env={**os.environ, "COLUMNS": "120"},
        check=False,
    )


def run_cli_in_process(*args: str) -> subprocess.CompletedProcess[str]:
    """Run `crest ARGS` through crest.cli.main.main in this process, like run_cli but without a new interpreter.

    For commands that need no process of their own (errors, help, listings, commands on a store). The
    terminal width is pinned as run_cli pins it, and every global the CLI touches (stdout, stderr, the
    SIGTERM handler, COLUMNS) is put back, so that nothing leaks into the next test.
    """
    from crest.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    sigterm = signal.getsignal(signal.SIGTERM)
    columns = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "120"
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    finally:
        signal.signal(signal.SIGTERM, sigterm)
        if columns is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = columns
    return subprocess.CompletedProcess(["crest", *args], code, out.getvalue(), err.getvalue())


def wait_until(check: Callable[[], bool], timeout_s: float, what: str) -> None:
    """Poll `check` until it holds; fail the test naming `what` if `timeout_s` passes first."""
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() >= deadline:
            raise AssertionError(f"{what}: not within {timeout_s} s")
        time.sleep(0.02)  # the poll interval, not a guess at how long anything takes


def live_frames(path: Path) -> list[dict[str, Any]]:
    """The frames a `--jsonl PATH` watcher has written so far; a line still being written is not one yet."""
    import json

    frames = []
    try:
        text = path.read_text()
    except FileNotFoundError:
        return []
    for line in text.splitlines(keepends=True):
        if line.endswith("\n"):
            frames.append(json.loads(line))
    return frames


def load_running(path: Path, mix: int = 1) -> bool:
    """Whether a `--jsonl PATH` watcher has seen mix `mix` under load: a live sample of it with requests
    answered. The event a test waits on to act inside a mix, instead of a guess at how long the start takes."""
    return any(
        f["type"] == "sample" and f.get("mix") == mix and (f.get("requests") or 0) > 0 for f in live_frames(path)
    )


def connected_to(pid: int, url: str) -> bool:
    """Whether process PID holds an established TCP connection to URL's port: its load has reached the target."""
    import psutil

    port = urlsplit(url).port
    try:
        connections = psutil.Process(pid).net_connections("tcp")
    except psutil.NoSuchProcess:
        return False
    return any(c.raddr and c.raddr.port == port and c.status == psutil.CONN_ESTABLISHED for c in connections)


def targets_left() -> dict[int, str]:
    """Target processes (a run directory `crest-target-PID-*` on their command line, or `crest serve`) whose
    owner is gone or is this process: what a run left. The owner is the PID in the run directory (the crest
    that made it), or a `crest serve`'s parent. Another test's targets, running beside this one under
    pytest-xdist, have a live owner of their own and do not count. Maps each PID to its command line."""
    import psutil

    from crest.servers.reap import alive

    me = os.getpid()
    found = {}
    for proc in psutil.process_iter(["pid", "ppid", "cmdline"]):
        line = " ".join(proc.info["cmdline"] or [])
        made = re.search(r"crest-target-(\d+)-", line)
        if made:
            owner = int(made[1])
        elif " crest serve " in f" {line} ".replace("-m crest serve", "crest serve"):
            owner = proc.info["ppid"]
        else:
            continue
        if owner == me or owner <= 1 or not alive(owner):
            found[proc.info["pid"]] = line
    return found


def default_sigint() -> None:
    """In a child: SIGINT back to its default, so Python raises KeyboardInterrupt.

    A shell that starts a job in the background (`cmd &`, nohup) ignores SIGINT
    in it, and children inherit that; tests that send SIGINT must not depend on
    how the test run itself was started.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_cli(*args: str) -> subprocess.Popen[str]:
    """Start `python -m crest ARGS` in the background with piped text stdout/stderr."""
    return subprocess.Popen(
        [sys.executable, "-m", "crest", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,
    )


@dataclass
class SilentListener:
    """A listening socket that never answers: proves whether anything connected."""

    sock: socket.socket

    @property
    def url(self) -> str:
        host, port = self.sock.getsockname()[:2]
        return f"http://{host}:{port}/1k.html"

    def connections(self) -> int:
        """How many connections reached the socket (accepted now, then closed)."""
        count = 0
        while True:
            try:
                conn, _ = self.sock.accept()
            except BlockingIOError:
                return count
            conn.close()
            count += 1


def static_suite(
    name: str,
    description: str,
    clients: list[int],
    *,
    threads_per_client: int = 1,
    length_s: int = 3,
    ramp_s: int = 1,
    think_time_s: float = 0,
) -> str:
    """A small suite's TOML: HTTP/1.1 keep-alive GETs of the webcat-large-filemix fileset over a ladder
    of `clients`, each mix `length_s` long with `ramp_s` of ramp-up and of ramp-down, each thread
    pausing `think_time_s` between requests."""
    return f"""
name = "{name}"
description = "{description}"
source = "crest tests"
[workload]
fileset = "webcat-large-filemix"
http_version = "1.1"
keepalive = true
[[workload.classes]]
name = "static"
kind = "static"
weight = 1
[ladder]
clients = {clients}
threads_per_client = {threads_per_client}
[timing]
length_s = {length_s}
ramp_up_s = {ramp_s}
ramp_down_s = {ramp_s}
think_time_s = {think_time_s}
"""


# The threads whose waits a Witness counts: the engine's workers and the built-in target's, by name.
CREST_THREADS = ("crest-worker", "crest-target")


@dataclass
class Witness:
    """What the host did while a test's work ran (a `with` block), in the clock targets stamp their logs with
    (Unix seconds): a thread of this process sleeping 1 ms at a time, each sleep kept as (start, end), so a
    stall of the host (a busy CI machine, a vCPU the hypervisor held back) shows as an oversleep; and the
    time crest's own threads (CREST_THREADS, in this process and every process under it) sat runnable
    waiting for a CPU, from the kernel's /proc/PID/task/TID/schedstat, as a running total. A timing
    assertion allows its own bound plus what the host took from crest's threads, and no more."""

    sleeps: list[tuple[float, float]] = field(default_factory=list)
    waits: list[tuple[float, float]] = field(default_factory=list)  # (Unix s, crest's threads' waits so far, s)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __enter__(self) -> Witness:
        self._thread = threading.Thread(target=self._watch, name="witness", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        assert self._thread is not None
        self._thread.join()

    def _watch(self) -> None:
        import psutil

        last: dict[str, int] = {}  # each crest thread's run-queue wait (ns) when last read: an ended one keeps it
        before: dict[str, int] = {}
        tasks: list[str] = []
        for n in itertools.count():
            if self._stop.is_set():
                break
            if n % 50 == 0:  # new processes and threads, every ~50 ms
                pids = [os.getpid()] + [c.pid for c in psutil.Process().children(recursive=True)]
                tasks = _named_tasks(pids, CREST_THREADS)
            if n % 5 == 0:
                for task in tasks:
                    try:
                        last[task] = int(Path(task, "schedstat").read_text().split()[1])
                    except (OSError, IndexError, ValueError):
                        pass  # ended meanwhile
                if n == 0:
                    before = dict(last)  # threads older than the work: only what they wait from now counts
                self.waits.append((time.time(), sum(w - before.get(t, 0) for t, w in last.items()) / 1e9))
            start, mono = time.time(), time.monotonic()
            time.sleep(0.001)
            # The length from the monotonic clock: a step of the wall clock is no oversleep.
            self.sleeps.append((start, start + time.monotonic() - mono))

    def oversleep_s(self, start: float = 0.0, end: float = float("inf")) -> float:
        """The worst oversleep of the sleeps overlapping [start, end] (Unix seconds); 0 if none did."""
        return max((max(0.0, e - s - 0.001) for s, e in self.sleeps if s <= end and e >= start), default=0.0)

    def waited_s(self, until: float = float("inf")) -> float:
        """How long crest's threads had waited for a CPU in all, from the start to the first reading at or
        after `until` (a stall just before it counts in full)."""
        return next((w for t, w in self.waits if t >= until), self.waits[-1][1] if self.waits else 0.0)

    def host_s(self, due: float, done: float) -> float:
        """What the host may have added to something due at `due` and done at `done`: the witness's worst
        oversleep meanwhile, plus every wait crest's threads had for a CPU until then (an earlier wait
        delays what queued behind it)."""
        return self.oversleep_s(due, done) + self.waited_s(done)


def _named_tasks(pids: list[int], prefixes: tuple[str, ...]) -> list[str]:
    """/proc/PID/task/TID of the threads of `pids` whose name starts with one of `prefixes`."""
    found = []
    for pid in pids:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            task = f"/proc/{pid}/task/{tid}"
            try:
                if Path(task, "comm").read_text().startswith(prefixes):
                    found.append(task)
            except OSError:
                pass
    return found
