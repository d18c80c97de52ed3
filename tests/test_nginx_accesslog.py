"""crest's counts against a real nginx's own records: the requests crest
reports equal the access-log lines, and the bytes crest received equal the
sum of nginx's $bytes_sent (headers + body)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from support import run_cli

pytestmark = pytest.mark.integration  # starts nginx and runs crest against it

NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)


@dataclass
class Nginx:
    url: str
    log: Path
    proc: subprocess.Popen[bytes]

    def stop(self) -> None:
        """Graceful stop (SIGQUIT) so every log line is written, then reap."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def log_lines(self) -> list[tuple[int, int]]:
        """(status, bytes_sent) per logged request."""
        return [tuple(map(int, line.split())) for line in self.log.read_text().splitlines() if line.strip()]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def nginx(docroot: Path, tmp_path: Path) -> Iterator[Nginx]:
    if NGINX is None:
        pytest.skip("nginx is not installed: apt-get install -y nginx-light")
    port = _free_port()
    work = tmp_path / "nginx"
    work.mkdir()
    log = work / "access.log"
    # As root, nginx workers would drop to `nobody`, who cannot read pytest's tmp dirs.
    user = "user root;" if os.geteuid() == 0 else ""
    (work / "nginx.conf").write_text(f"""
{user}
worker_processes 1;
daemon off;
pid {work}/nginx.pid;
error_log {work}/error.log;
events {{ worker_connections 1024; }}
http {{
  log_format counts '$status $bytes_sent';
  access_log {log} counts;
  server {{ listen 127.0.0.1:{port}; root {docroot}; }}
}}
""")
    proc = subprocess.Popen([NGINX, "-c", str(work / "nginx.conf"), "-p", str(work)], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                pytest.fail(
                    f"nginx did not start: {(work / 'error.log').read_text() if (work / 'error.log').exists() else ''}"
                )
            time.sleep(0.05)
    server = Nginx(f"http://127.0.0.1:{port}", log, proc)
    yield server
    server.stop()


@pytest.mark.parametrize(
    "flags",
    [
        ["-c", "8", "-t", "2", "-n", "2000"],
        ["-c", "4", "-t", "1", "-n", "300", "--http", "1.0", "--no-keepalive"],
        ["-c", "4", "-t", "2", "-d", "1s"],
    ],
    ids=["keepalive-count", "http10-close", "keepalive-duration"],
)
def test_requests_and_bytes_match_nginx_access_log(nginx: Nginx, flags: list[str]) -> None:
    result = run_cli("bench", "--json", "-q", *flags, f"{nginx.url}/1k.html")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    nginx.stop()
    logged = nginx.log_lines()
    assert report["errors"] == {k: 0 for k in report["errors"]}
    # A duration-bounded run drops requests in flight at the deadline, which
    # nginx may still log; a count-bounded run has none in flight.
    in_flight = 0 if "-n" in flags else report["connections"]
    assert report["requests"] <= len(logged) <= report["requests"] + in_flight
    assert all(status == 200 for status, _ in logged)
    if in_flight == 0:
        assert report["bytes"] == sum(sent for _, sent in logged)
    else:
        sizes = sorted({sent for _, sent in logged})
        assert report["bytes"] >= report["requests"] * sizes[0], (
            sizes,
            report["bytes"],
            report["requests"],
            len(logged),
        )
