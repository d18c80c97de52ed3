"""Test helpers: run the real `crest` CLI in-process (main(argv)) or as a subprocess (python -m crest);
wait for a condition with a deadline; a silent listening socket."""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
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
