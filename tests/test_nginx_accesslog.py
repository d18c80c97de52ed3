"""crest's counts against a real nginx's own records: the requests crest
reports equal the access-log lines, and the bytes crest received equal the
sum of nginx's $bytes_sent (headers + body); over HTTP/2 too, where nginx
logs each request with $server_protocol HTTP/2.0 and ends connections with
GOAWAY every 100 requests."""

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
    h2c_url: str
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
        return [(int(status), int(sent)) for status, sent, _ in self.logged()]

    def logged(self) -> list[list[str]]:
        """(status, bytes_sent, protocol) per logged request, as text."""
        return [line.split() for line in self.log.read_text().splitlines() if line.strip()]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def nginx(docroot: Path, tmp_path: Path) -> Iterator[Nginx]:
    if NGINX is None:
        pytest.skip("nginx is not installed: apt-get install -y nginx-light")
    port, h2c_port = _free_port(), _free_port()
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
  log_format counts '$status $bytes_sent $server_protocol';
  access_log {log} counts;
  # HTTP/2 connections end with GOAWAY after 100 requests: crest must finish, re-send and reconnect.
  keepalive_requests 100;
  server {{ listen 127.0.0.1:{port}; listen 127.0.0.1:{h2c_port} http2; root {docroot}; }}
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
    server = Nginx(f"http://127.0.0.1:{port}", f"http://127.0.0.1:{h2c_port}", log, proc)
    yield server
    server.stop()


@pytest.mark.parametrize(
    "flags",
    [
        ["-c", "8", "-t", "2", "-n", "2000"],
        ["-c", "4", "-t", "1", "-n", "300", "--http", "1.0", "--no-keepalive"],
        ["-c", "4", "-t", "2", "-d", "1s"],
        ["-c", "4", "-t", "1", "-n", "300", "--no-preflight"],
    ],
    ids=["keepalive-count", "http10-close", "keepalive-duration", "no-preflight"],
)
def test_requests_and_bytes_match_nginx_access_log(nginx: Nginx, flags: list[str]) -> None:
    result = run_cli("bench", "--json", "-q", *flags, f"{nginx.url}/1k.html")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    nginx.stop()
    # The preflight's GET comes first, sent and answered before the engine opened a connection; the result
    # says how many it sent (none with --no-preflight), so the log adds up to what crest reports.
    assert report["preflight_requests"] == (0 if "--no-preflight" in flags else 1)
    lines = nginx.log_lines()
    preflight, logged = lines[: report["preflight_requests"]], lines[report["preflight_requests"] :]
    assert all(status == 200 for status, _ in preflight)
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


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "flags",
    [["-c", "4", "-t", "1", "--streams", "10", "-n", "3000"], ["-c", "3", "-t", "2", "--streams", "1", "-n", "500"]],
    ids=["10-streams", "1-stream"],
)
def test_http2_requests_match_nginx_access_log(nginx: Nginx, flags: list[str]) -> None:
    result = run_cli("bench", "--json", "-q", "--http", "2", *flags, f"{nginx.h2c_url}/1k.html")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    nginx.stop()
    logged = nginx.logged()
    assert report["errors"] == {k: 0 for k in report["errors"]}
    # Count-bounded: nothing in flight at the end. Streams nginx refused at a GOAWAY were sent again and
    # are logged once, when served.
    assert len(logged) == report["requests"] == int(flags[flags.index("-n") + 1])
    assert {(status, protocol) for status, _, protocol in logged} == {("200", "HTTP/2.0")}
    h2 = report["h2"]
    assert h2["goaways"] >= report["requests"] // 100 - int(flags[1])  # one per 100 requests per connection
    assert report["connections_opened"] > int(flags[1])
    assert h2["streams_opened"] == report["requests"] + h2["refused"]
    assert h2["streams_in_use_max"] <= int(flags[flags.index("--streams") + 1])
