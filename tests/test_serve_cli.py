"""`crest serve` as a real subprocess: prints its URL first, serves, exits 0 on SIGTERM, leaves nothing behind."""

from __future__ import annotations

import os
import selectors
import signal
import socket
import subprocess
import urllib.request
from pathlib import Path

import pytest

from support import start_cli

pytestmark = pytest.mark.integration

READY_TIMEOUT_S = 20.0


def read_first_line(proc: subprocess.Popen[str], timeout_s: float) -> str:
    assert proc.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ)
        if not selector.select(timeout_s):
            raise AssertionError(f"crest serve printed nothing within {timeout_s}s")
    return proc.stdout.readline().strip()


def stop(proc: subprocess.Popen[str]) -> None:
    """Kill the process if a failed assertion left it running (the test then fails anyway)."""
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue  # the process ended while we looked
            # Field 4 is the parent pid; the command name in field 2 may contain spaces.
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def test_serve_prints_url_serves_and_stops_on_sigterm(docroot: Path) -> None:
    with start_cli("serve", "--docroot", str(docroot), "--port", "0") as proc:
        try:
            url = read_first_line(proc, READY_TIMEOUT_S)
            assert url.startswith("http://127.0.0.1:") and url.endswith("/")
            with urllib.request.urlopen(url + "1k.html", timeout=10) as response:
                assert response.status == 200
                assert response.read() == (docroot / "1k.html").read_bytes()
            assert children_of(proc.pid) == []  # the target runs in-process: no child to leak
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=10)
        finally:
            stop(proc)
    assert proc.returncode == 0
    port = int(url.rstrip("/").rsplit(":", 1)[1])
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port), timeout=2):
        pass


def test_serve_stops_on_sigint(docroot: Path) -> None:
    with start_cli("serve", "--docroot", str(docroot)) as proc:
        try:
            assert read_first_line(proc, READY_TIMEOUT_S).startswith("http://")
            os.kill(proc.pid, signal.SIGINT)
            proc.wait(timeout=10)
        finally:
            stop(proc)
    assert proc.returncode == 0
