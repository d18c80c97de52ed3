"""crest's CGI programs (crates/dynamic): run directly with a CGI environment, then through the built-in target."""

from __future__ import annotations

import json
import os
import subprocess
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path

import pytest

import crest.dynamic
from crest import _engine
from crest.dynamic import CGI_BYTES, CGI_ENV, PROGRAMS, install_cgi, program_path
from crest.errors import ConfigError

pytestmark = pytest.mark.integration

ENV_HEADER = b"Content-Type: text/html\r\nContent-Length: 1024\r\n\r\n"
MASK = (1 << 64) - 1

# What a server such as the built-in target passes for `GET /cgi-bin/crest-env/extra?x=1`.
CGI_ENVIRONMENT = {
    "GATEWAY_INTERFACE": "CGI/1.1",
    "SERVER_SOFTWARE": "crest-test/1.0",
    "SERVER_NAME": "127.0.0.1",
    "SERVER_PORT": "8080",
    "SERVER_PROTOCOL": "HTTP/1.1",
    "REQUEST_METHOD": "GET",
    "SCRIPT_NAME": "/cgi-bin/crest-env",
    "PATH_INFO": "/extra",
    "QUERY_STRING": "x=1",
    "REMOTE_ADDR": "127.0.0.1",
    "REMOTE_PORT": "54321",
    "HTTP_HOST": "127.0.0.1:8080",
    "HTTP_USER_AGENT": "pytest",
}


def run_cgi(name: str, env: Mapping[str, str], stdin: bytes = b"") -> tuple[bytes, bytes]:
    """Run one CGI program as a server would; returns (header block with its blank line, body)."""
    done = subprocess.run(
        [str(program_path(name))], input=stdin, env=dict(env), capture_output=True, timeout=30, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == b""
    head, sep, body = done.stdout.partition(b"\r\n\r\n")
    assert sep, done.stdout[:200]
    return head + sep, body


def reference_bytes(size: int) -> bytes:
    """crest-bytes' documented body: xorshift64 (13, 7, 17) seeded with splitmix64(size), words little-endian."""
    z = (size + 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    state = (z ^ (z >> 31)) or 0x9E3779B97F4A7C15
    words = []
    for _ in range((size + 7) // 8):
        state ^= (state << 13) & MASK
        state ^= state >> 7
        state ^= (state << 17) & MASK
        words.append(state.to_bytes(8, "little"))
    return b"".join(words)[:size]


def bytes_header(size: int) -> bytes:
    return f"Content-Type: application/octet-stream\r\nContent-Length: {size}\r\n\r\n".encode()


def test_programs_are_built_executables() -> None:
    for name in PROGRAMS:
        path = program_path(name)
        assert path.name == name and os.access(path, os.X_OK)
    with pytest.raises(ConfigError, match="unknown CGI program"):
        program_path("nope")


def test_missing_programs_are_a_config_error_naming_the_fix(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(crest.dynamic, "_BIN_DIR", tmp_path / "bin")
    with pytest.raises(ConfigError, match=r"^crest's CGI programs are not built: run `make build`$"):
        program_path(CGI_ENV)
    with pytest.raises(ConfigError, match="not built"):
        install_cgi(tmp_path / "cgi-bin")
    assert not (tmp_path / "cgi-bin").exists()


def test_env_page_lists_the_environment_in_exactly_1024_bytes() -> None:
    head, body = run_cgi(CGI_ENV, CGI_ENVIRONMENT)
    assert head == ENV_HEADER
    assert len(body) == 1024
    assert body.startswith(b"<!DOCTYPE html>") and body.endswith(b" </body></html>\n")
    page = body.decode()
    for name, value in CGI_ENVIRONMENT.items():
        assert f"<tr><th>{name}</th><td>{value}</td></tr>" in page, name
    assert "<tr><th>HTTPS</th><td></td></tr>" in page


def test_env_page_escapes_what_the_client_sent() -> None:
    env = {
        **CGI_ENVIRONMENT,
        "QUERY_STRING": "q=<script>alert('x')</script>&a=\"b\"",
        "HTTP_USER_AGENT": "<b>agent</b>",
    }
    head, body = run_cgi(CGI_ENV, env)
    assert head == ENV_HEADER and len(body) == 1024
    page = body.decode()
    assert "<script>" not in page and "<b>" not in page
    assert "q=&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;a=&quot;b&quot;" in page
    assert "&lt;b&gt;agent&lt;/b&gt;" in page


@pytest.mark.parametrize("length", [0, 1, 100, 251, 5000, 100_000])
def test_env_page_stays_1024_bytes_whatever_the_values(length: int) -> None:
    env = {name: ("<&" * length)[:length] for name in CGI_ENVIRONMENT}
    head, body = run_cgi(CGI_ENV, env)
    assert head == ENV_HEADER and len(body) == 1024
    assert body.endswith(b"</body></html>\n")
    for name in CGI_ENVIRONMENT:
        assert f"<th>{name}</th>".encode() in body


def test_env_reads_and_discards_a_post_body() -> None:
    body_in = b"x" * 300_000  # several pipe buffers: the program must drain stdin
    env = {
        **CGI_ENVIRONMENT,
        "REQUEST_METHOD": "POST",
        "CONTENT_LENGTH": str(len(body_in)),
        "CONTENT_TYPE": "application/x-www-form-urlencoded",
    }
    head, body = run_cgi(CGI_ENV, env, stdin=body_in)
    assert head == ENV_HEADER and len(body) == 1024
    assert b"<tr><th>CONTENT_LENGTH</th><td>300000</td></tr>" in body


@pytest.mark.parametrize(
    ("query", "size"),
    [("", 10240), ("x=1", 10240), ("size=0", 0), ("size=5000&nocache=7", 5000), ("size=1000000", 1_000_000)],
)
def test_bytes_sends_exactly_size_bytes_that_depend_only_on_size(query: str, size: int) -> None:
    head, body = run_cgi(CGI_BYTES, {"QUERY_STRING": query, "REQUEST_METHOD": "GET"})
    assert head == bytes_header(size)
    assert len(body) == size
    assert body == reference_bytes(size)


def test_bytes_is_deterministic_per_size() -> None:
    env = {"QUERY_STRING": "size=70000"}
    assert run_cgi(CGI_BYTES, env) == run_cgi(CGI_BYTES, env)
    assert run_cgi(CGI_BYTES, {"QUERY_STRING": "size=70001"})[1][:64] != run_cgi(CGI_BYTES, env)[1][:64]


@pytest.mark.parametrize(
    "query",
    ["size=", "size", "size=abc", "size=-1", "size=+5", "size=1e3", "size=100000001", "size=99999999999999999999999"],
)
def test_bytes_rejects_a_bad_size_with_400(query: str) -> None:
    head, body = run_cgi(CGI_BYTES, {"QUERY_STRING": query})
    assert head.startswith(b"Status: 400 Bad Request\r\n")
    assert b"Content-Type: text/plain\r\n" in head
    assert f"Content-Length: {len(body)}\r\n".encode() in head
    assert body.startswith(b"bad size") and len(body) < 200


def test_install_cgi_copies_with_mode_0755_and_is_idempotent(tmp_path: Path) -> None:
    cgi_dir = tmp_path / "site" / "cgi-bin"
    installed = install_cgi(cgi_dir)
    assert installed == [cgi_dir / name for name in PROGRAMS]
    for path in installed:
        assert not path.is_symlink() and path.is_file()
        assert path.stat().st_mode & 0o7777 == 0o755
        assert path.read_bytes() == program_path(path.name).read_bytes()
    inodes = [p.stat().st_ino for p in installed]
    installed[0].chmod(0o700)
    assert install_cgi(cgi_dir) == installed
    assert [p.stat().st_ino for p in installed] == inodes  # identical: left in place
    assert installed[0].stat().st_mode & 0o7777 == 0o755
    # A stale copy or a symlink is replaced by a real copy.
    installed[0].write_bytes(b"#!/bin/sh\necho old\n")
    installed[1].unlink()
    installed[1].symlink_to(program_path(CGI_BYTES))
    install_cgi(cgi_dir)
    for path in installed:
        assert not path.is_symlink()
        assert path.read_bytes() == program_path(path.name).read_bytes()
    assert sorted(p.name for p in cgi_dir.iterdir()) == sorted(PROGRAMS)  # no temporary files left


def test_install_cgi_into_a_file_is_a_config_error(tmp_path: Path) -> None:
    blocker = tmp_path / "cgi-bin"
    blocker.write_text("not a directory")
    with pytest.raises(ConfigError, match="cannot install CGI programs"):
        install_cgi(blocker)


def test_programs_run_as_cgi_under_the_builtin_target(docroot: Path) -> None:
    install_cgi(docroot / "cgi-bin")
    server = _engine.start_server(json.dumps({"docroot": str(docroot), "port": 0, "threads": 1}))
    try:
        base = server.urls[0].rstrip("/")
        with urllib.request.urlopen(f"{base}/cgi-bin/crest-env?x=1", timeout=10) as resp:
            assert resp.status == 200
            assert resp.headers["Content-Type"] == "text/html"
            page = resp.read()
        assert len(page) == 1024
        assert b"<tr><th>QUERY_STRING</th><td>x=1</td></tr>" in page
        assert b"<tr><th>GATEWAY_INTERFACE</th><td>CGI/1.1</td></tr>" in page
        assert b"<tr><th>SCRIPT_NAME</th><td>/cgi-bin/crest-env</td></tr>" in page

        with urllib.request.urlopen(f"{base}/cgi-bin/crest-bytes?size=5000", timeout=10) as resp:
            assert resp.status == 200
            assert resp.headers["Content-Type"] == "application/octet-stream"
            data = resp.read()
        assert len(data) == 5000 and data == reference_bytes(5000)

        post = urllib.request.Request(f"{base}/cgi-bin/crest-env", data=b"a=1&b=2", method="POST")
        with urllib.request.urlopen(post, timeout=10) as resp:
            page = resp.read()
        assert len(page) == 1024 and b"<tr><th>REQUEST_METHOD</th><td>POST</td></tr>" in page

        with pytest.raises(urllib.error.HTTPError) as bad:
            urllib.request.urlopen(f"{base}/cgi-bin/crest-bytes?size=lots", timeout=10)
        assert bad.value.code == 400
        bad.value.close()
    finally:
        server.stop()
