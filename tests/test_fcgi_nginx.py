"""crest's FastCGI responder (crates/fcgi) behind a real nginx: `fastcgi_pass` over a unix
socket, once with nginx's default (a new connection per request) and once with
`fastcgi_keep_conn on` through an upstream keepalive pool."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from crest import _engine
from crest.dynamic import install_cgi, responder_path

pytestmark = pytest.mark.integration  # starts nginx and crest's FastCGI/target processes

NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
STOP_TIMEOUT_S = 10.0
START_TIMEOUT_S = 10.0
HTTP_TIMEOUT_S = 10.0

FASTCGI = """include /etc/nginx/fastcgi_params;
      fastcgi_param SCRIPT_NAME $fastcgi_script_name;"""


@dataclass
class Site:
    url: str
    work: Path
    nginx: subprocess.Popen[bytes]
    fcgi: subprocess.Popen[bytes]

    def get(self, path: str, data: bytes | None = None) -> tuple[int, dict[str, str], bytes]:
        """(status, headers, body) of one request; error statuses are returned, not raised."""
        try:
            with urllib.request.urlopen(self.url + path, data=data, timeout=HTTP_TIMEOUT_S) as resp:
                return resp.status, dict(resp.headers), resp.read()
        except urllib.error.HTTPError as err:
            with err:
                return err.code, dict(err.headers), err.read()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for(ready: Callable[[], bool], what: str, procs: list[subprocess.Popen[bytes]], log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while not ready():
        dead = [p.args for p in procs if p.poll() is not None]
        if dead or time.monotonic() > deadline:
            detail = log.read_text(errors="replace") if log.exists() else ""
            pytest.fail(f"{what} did not start ({dead or 'timed out'}): {detail}")
        time.sleep(0.02)


def _connects(family: int, address: str | tuple[str, int]) -> bool:
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        try:
            s.connect(address)
        except OSError:
            return False
        return True


def _children(pid: int) -> list[int]:
    """Pids whose parent is `pid` (nginx's workers)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL if it has not exited within STOP_TIMEOUT_S; always reaped."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state == "Z"


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    if NGINX is None:
        pytest.skip("nginx is not installed: apt-get install -y nginx-light")
    work = tmp_path
    sock = work / "fcgi.sock"
    assert len(str(sock)) < 100, "unix socket paths are limited to 107 bytes"
    port = _free_port()
    # As root, nginx's workers would drop to `nobody`, who cannot reach pytest's tmp dirs.
    user = "user root;" if os.geteuid() == 0 else ""
    (work / "nginx.conf").write_text(f"""
{user}
daemon off;
master_process on;
worker_processes 1;
pid {work}/nginx.pid;
error_log {work}/error.log;
events {{ worker_connections 256; }}
http {{
  access_log {work}/access.log;
  upstream crest_fcgi {{ server unix:{sock}; keepalive 4; }}
  server {{
    listen 127.0.0.1:{port};
    location /fcgi/ {{
      fastcgi_pass unix:{sock};
      {FASTCGI}
    }}
    location /kept/ {{
      fastcgi_pass crest_fcgi;
      fastcgi_keep_conn on;
      {FASTCGI}
    }}
  }}
}}
""")
    fcgi_log = work / "crest-fcgi.log"
    procs: list[subprocess.Popen[bytes]] = []
    workers: list[int] = []
    try:
        with fcgi_log.open("wb") as log:
            fcgi = subprocess.Popen(
                [str(responder_path()), "--socket", str(sock), "--threads", "1"],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
            )
        procs.append(fcgi)
        _wait_for(lambda: _connects(socket.AF_UNIX, str(sock)), "crest-fcgi", procs, fcgi_log)
        nginx = subprocess.Popen(
            [NGINX, "-c", str(work / "nginx.conf"), "-p", str(work)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        procs.append(nginx)
        _wait_for(lambda: _connects(socket.AF_INET, ("127.0.0.1", port)), "nginx", procs, work / "error.log")
        site = Site(f"http://127.0.0.1:{port}", work, nginx, fcgi)
        status, _, _ = site.get("/fcgi/crest-env")
        assert status == 200
        workers = _children(nginx.pid)
        assert workers, "nginx has no worker processes"
        yield site
    finally:
        for proc in reversed(procs):
            _stop(proc)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while not all(_gone(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.02)
    assert all(p.returncode is not None for p in procs)
    assert all(_gone(pid) for pid in workers), f"nginx workers left: {workers}"
    assert fcgi.returncode == 0, fcgi_log.read_text(errors="replace")
    assert fcgi_log.read_text() == "", "crest-fcgi printed something"
    assert not sock.exists(), "crest-fcgi left its socket file"


def _row(name: str, value: str) -> bytes:
    return f"<tr><th>{name}</th><td>{value}</td></tr>".encode()


@pytest.mark.parametrize("prefix", ["/fcgi", "/kept"])
def test_env_page_through_nginx(site: Site, prefix: str) -> None:
    status, headers, body = site.get(f"{prefix}/crest-env?x=1&y=2")
    assert status == 200
    assert headers["Content-Type"] == "text/html"
    assert len(body) == 1024
    assert _row("REQUEST_METHOD", "GET") in body
    assert _row("QUERY_STRING", "x=1&amp;y=2") in body
    assert _row("SCRIPT_NAME", f"{prefix}/crest-env") in body
    assert b"<th>SERVER_SOFTWARE</th><td>nginx/" in body

    status, _, body = site.get(f"{prefix}/crest-env", data=b"a=" + b"b" * 50_000)
    assert status == 200 and len(body) == 1024
    assert _row("REQUEST_METHOD", "POST") in body
    assert _row("CONTENT_LENGTH", "50002") in body


def test_kept_connections_serve_many_requests(site: Site) -> None:
    for i in range(50):
        status, _, body = site.get(f"/kept/crest-env?n={i}")
        assert status == 200 and _row("QUERY_STRING", f"n={i}") in body
    status, _, body = site.get("/kept/crest-bytes?size=200000")
    assert status == 200 and len(body) == 200_000
    errors = [line for line in (site.work / "error.log").read_text().splitlines() if "[error]" in line]
    assert errors == []


def test_bytes_and_not_found_through_nginx(site: Site) -> None:
    status, headers, body = site.get("/fcgi/crest-bytes?size=70000")
    assert status == 200
    assert headers["Content-Type"] == "application/octet-stream"
    assert len(body) == 70_000
    status, _, body = site.get("/fcgi/crest-bytes?size=nope")
    assert status == 400 and body.startswith(b"bad size")
    status, _, body = site.get("/fcgi/index.php")
    assert status == 404 and body.startswith(b"not found: crest-fcgi answers")


def test_inproc_cgi_and_fastcgi_render_one_page(site: Site, docroot: Path) -> None:
    """The built-in target's in-process page, crest-env as CGI and crest-fcgi behind nginx are one
    page (crest-dynamic's): the same rows in the same order, the same 1024 bytes."""
    install_cgi(docroot / "cgi-bin")
    server = _engine.start_server(json.dumps({"docroot": str(docroot), "port": 0, "threads": 1}))
    try:
        base = server.urls[0].rstrip("/")
        pages = {}
        for kind, url in [
            ("inproc", f"{base}/dyn/env?x=1"),
            ("cgi", f"{base}/cgi-bin/crest-env?x=1"),
            ("fastcgi", f"{site.url}/fcgi/crest-env?x=1"),
        ]:
            with urllib.request.urlopen(url, timeout=HTTP_TIMEOUT_S) as resp:
                assert resp.status == 200, kind
                pages[kind] = resp.read()
    finally:
        server.stop()
    names = {kind: re.findall(rb"<tr><th>([A-Z_]+)</th>", page) for kind, page in pages.items()}
    assert len(names["inproc"]) == 16
    assert names["cgi"] == names["inproc"] and names["fastcgi"] == names["inproc"]
    assert {kind: len(page) for kind, page in pages.items()} == {"inproc": 1024, "cgi": 1024, "fastcgi": 1024}
    for page in pages.values():
        assert _row("QUERY_STRING", "x=1") in page and _row("GATEWAY_INTERFACE", "CGI/1.1") in page
