"""Test helpers: run the real `crest` CLI as a subprocess (python -m crest); a silent listening socket."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from dataclasses import dataclass

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
