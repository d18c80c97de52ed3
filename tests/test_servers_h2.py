"""HTTP/2 on the real servers (ServerSettings.http2): h2 by ALPN on the TLS port, h2c with prior knowledge
on Target.h2c_url, HTTP/1.1 as before on the main port; and nothing of it when http2 is not asked.

curl (with nghttp2, as Debian's is) is the first client, so the servers are checked against an HTTP/2
implementation that is not crest's own; then crest's engine loads both endpoints with several streams per
connection. Without servers: the refusals and the configuration text.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from crest.errors import ConfigError
from crest.servers.apache import ApachePreforkAdapter
from crest.servers.base import Adapter, ServerSettings, Target, _settings_digest
from crest.servers.builtin_adapter import BuiltinAdapter
from crest.servers.registry import adapter as make_adapter
from crest.servers.samba import SambaAdapter
from crest.servers.site import Site
from servers_support import FILES, LOG_WAIT_S, installed, render_config, wait_for
from support import run_cli

CURL_TIMEOUT_S = 15
# The servers that serve HTTP/2 (the built-in target's is hyper's).
HTTP2_SERVERS = ("nginx", "h2o", "caddy", "apache-event", "apache-worker", "lighttpd", "builtin")
# What curl prints with -w '%{http_version} %{http_code} %{size_download}' for 1k.html over each protocol.
OVER_H2 = f"2 200 {len(FILES['1k.html'])}"
OVER_H1 = f"1.1 200 {len(FILES['1k.html'])}"


def curl_with_http2() -> str:
    """curl's path; skips the test when curl is missing or was built without HTTP/2."""
    curl = shutil.which("curl")
    if curl is None:
        pytest.skip("curl is not installed: apt-get install -y curl")
    features = subprocess.run([curl, "-V"], capture_output=True, text=True, timeout=CURL_TIMEOUT_S).stdout
    if "HTTP2" not in features:
        pytest.skip("this curl has no HTTP/2 (nghttp2): apt-get install -y curl")
    return curl


def get(curl: str, url: str, *how: str) -> str:
    """'HTTP-VERSION STATUS BYTES' of one GET of `url` with curl options `how`."""
    out = subprocess.run([curl, "-s", "-o", "/dev/null", "-w", "%{http_version} %{http_code} %{size_download}",
                          "--max-time", str(CURL_TIMEOUT_S - 5), *how, url],
                         capture_output=True, text=True, timeout=CURL_TIMEOUT_S)  # fmt: skip
    return out.stdout


def trust(name: str, target: Target) -> tuple[str, ...]:
    """curl's options to trust the target's certificate: the site's, but the built-in target makes its own."""
    assert target.site is not None
    return ("-k",) if name == "builtin" else ("--cacert", str(target.site.cert))


# -- on the real servers ------------------------------------------------------------------------


@pytest.mark.integration
@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", HTTP2_SERVERS)
def test_http2_over_tls_and_h2c(name: str, www: Path) -> None:
    curl = curl_with_http2()
    adapter = installed(name, tls=True)
    settings = ServerSettings(docroot=www, cpus=(0,), tls=True, http2=True, access_log=True)
    with Target(adapter, settings) as target:
        assert target.site is not None and target.h2c_url is not None and target.tls_url is not None
        assert (target.site.h2c_port is not None) == adapter.h2c_own_port
        assert get(curl, f"{target.h2c_url}/1k.html", "--http2-prior-knowledge") == OVER_H2
        assert get(curl, f"{target.tls_url}/1k.html", "--http2", *trust(name, target)) == OVER_H2
        assert get(curl, f"{target.url}/1k.html", "--http1.1") == OVER_H1  # the main port still speaks HTTP/1.1
        assert target.metadata()["http2"] is True
        if name != "builtin":  # it logs nothing by itself; the engine's checks follow
            wait_for(lambda: target.access_log_lines() >= 3, LOG_WAIT_S)
            assert target.access_log_lines() == 3
            log = target.site.access_log.read_bytes()
            connection = adapter.h2_connection_log_line
            requests = [line for line in log.splitlines() if connection is None or connection not in line]
            assert len(requests) == 3 and sum(b"HTTP/2" in line for line in requests) == 2, log
        # crest's engine over both endpoints: every request answered, several streams at once.
        for url, extra in ((target.h2c_url, ()), (target.tls_url, ("--insecure",))):
            result = run_cli("bench", "--json", "-q", "--http", "2", "--streams", "4", "-c", "2", "-t", "1",
                             "-n", "400", *extra, f"{url}/1k.html")  # fmt: skip
            assert result.returncode == 0, result.stderr
            report = json.loads(result.stdout)
            assert report["requests"] == 400 and sum(report["errors"].values()) == 0, (url, report["errors"])
            assert report["h2"]["streams_in_use_max"] >= 2
            assert report["classes"]["all"]["bytes"] >= 400 * len(FILES["1k.html"])


@pytest.mark.integration
@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", HTTP2_SERVERS)
def test_without_http2_nothing_changes(name: str, www: Path) -> None:
    curl = curl_with_http2()
    adapter = installed(name, tls=True)
    with Target(adapter, ServerSettings(docroot=www, cpus=(0,), tls=True)) as target:
        assert target.site is not None and target.site.h2c_port is None
        assert target.h2c_url is None and target.metadata()["http2"] is False
        assert get(curl, f"{target.url}/1k.html", "--http1.1") == OVER_H1
        assert get(curl, f"{target.tls_url}/1k.html", "--http1.1", *trust(name, target)) == OVER_H1


# -- without servers -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("adapter", "refusal"),
    [
        (ApachePreforkAdapter(), r"^apache-prefork cannot serve HTTP/2: mod_http2 needs a threaded MPM: use --server "
                                 r"apache-event"),
        (SambaAdapter(), r"^samba cannot serve HTTP/2: it is a file server"),
    ],
)  # fmt: skip
def test_http2_is_refused_where_it_cannot_be_served(
    adapter: Adapter, refusal: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(type(adapter), "installed", lambda self: True)  # the refusal needs no server
    kinds = adapter.kinds & {"loadfile"}  # a file server's own suite, so only HTTP/2 is refused
    with pytest.raises(ConfigError, match=refusal) as refused:
        adapter.check(ServerSettings(docroot=tmp_path, http2=True, kinds=kinds))
    assert "\n" not in str(refused.value)


def test_stock_profile_refuses_http2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    adapter = make_adapter("nginx")
    monkeypatch.setattr(type(adapter), "installed", lambda self: True)
    monkeypatch.setattr(type(adapter), "stock_config", tmp_path / "nginx.conf")
    (tmp_path / "nginx.conf").write_text("")
    with pytest.raises(ConfigError, match=r"^nginx's stock configuration is not set up for HTTP/2 .*profile=tuned"):
        adapter.check(ServerSettings(docroot=tmp_path, http2=True, options={"profile": "stock"}))


def test_h2c_url_is_the_h2c_port_or_the_main_port(tmp_path: Path) -> None:
    site = Site(root=tmp_path, docroot=tmp_path, port=18080, tls_port=18443, user=None, group=None)
    target = Target(BuiltinAdapter(), ServerSettings(docroot=tmp_path, tls=True, http2=True))
    target.site = site
    assert target.h2c_url == "http://127.0.0.1:18080" and target.tls_url == "https://127.0.0.1:18443"
    site.h2c_port = 18082
    assert target.h2c_url == "http://127.0.0.1:18082"
    assert site.ports == [18080, 18443, 18082]
    target = Target(BuiltinAdapter(), ServerSettings(docroot=tmp_path, tls=True))
    target.site = site
    assert target.h2c_url is None


def test_lighttpd_connection_lines_are_not_requests(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """lighttpd logs each HTTP/2 connection as a request with status 100; crest does not count it."""
    adapter = make_adapter("lighttpd")
    monkeypatch.setattr(type(adapter), "installed", lambda self: True)
    site = Site(root=tmp_path, docroot=tmp_path, port=18080, tls_port=None, user=None, group=None)
    site.logs.mkdir()
    # Two requests over HTTP/2 (their connection's line between them), one over HTTP/1.1, one line being written.
    site.access_log.write_bytes(b'127.0.0.1 [1] "GET /1k.html HTTP/2.0" 200 1024\n'
                                b'127.0.0.1 [2] "PRI * HTTP/2.0" 100 1214\n'
                                b'127.0.0.1 [3] "GET /1k.html HTTP/1.1" 200 1024\n'
                                b'127.0.0.1 [4] "GET /1k.html HTTP/2.0" 200 10')  # fmt: skip
    for http2, lines in ((True, 2), (False, 3)):
        target = Target(adapter, ServerSettings(docroot=tmp_path, access_log=True, http2=http2))
        target.site = site
        assert target.access_log_lines() == lines


def test_settings_digest_ignores_the_h2c_port(tmp_path: Path) -> None:
    def digest(h2c_port: int) -> str:
        site = Site(root=tmp_path, docroot=tmp_path, port=18080, tls_port=None, user=None, group=None,
                    h2c_port=h2c_port)  # fmt: skip
        return _settings_digest(site, f"listen 127.0.0.1:{h2c_port} http2;", ["nginx"], None, [])

    assert digest(18082) == digest(18099)


def test_adapters_that_serve_http2() -> None:
    serving = {name for name in (*HTTP2_SERVERS, "builtin", "apache-prefork", "samba")
               if make_adapter(name).serves_http2}  # fmt: skip
    assert serving == {*HTTP2_SERVERS, "builtin"}
    assert {name for name in serving if make_adapter(name).h2c_own_port} == {"nginx"}


@pytest.mark.integration  # nginx's configuration asks `nginx -V` which modules it has
@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("name", "with_http2", "without"),
    [
        ("nginx", [r"listen 127\.0\.0\.1:18443 ssl http2;", r"listen 127\.0\.0\.1:18082 http2;",
                   r"http2_max_concurrent_streams 128;"], r" http2[; ]|^\s*http2_"),
        ("apache-event", [r"LoadModule http2_module \S+/mod_http2\.so", r"Protocols h2 h2c http/1\.1",
                          r"H2Direct on", r"H2MaxSessionStreams 128"], r"http2_module|^Protocols|^H2"),
        ("caddy", [r"protocols h1 h2 h2c\n"], r"protocols .*h2c"),
        ("lighttpd", [r'server\.feature-flags = \( "server\.h2proto" => "enable", "server\.h2c" => "enable" \)'],
         r"feature-flags"),
    ],
)  # fmt: skip
def test_config_turns_http2_on_only_when_asked(name: str, with_http2: list[str], without: str, tmp_path: Path) -> None:
    adapter = make_adapter(name)
    text = render_config(adapter, tmp_path, tls=True, http2=True, h2c_port=18082 if adapter.h2c_own_port else None)
    for pattern in with_http2:
        assert re.search(pattern, text), pattern
    assert not re.search(without, render_config(adapter, tmp_path, tls=True), re.MULTILINE)


@pytest.mark.integration  # rendering asks `nginx -V` which temp paths it has
@pytest.mark.timeout(30)
def test_nginx_serves_h2c_without_sendfile_and_the_rest_as_asked(tmp_path: Path) -> None:
    """nginx leaves Nagle on for cleartext HTTP/2 (TCP_NODELAY only on TLS and keep-alive HTTP/1), so a
    sendfile response waits for the client's delayed ACK: its h2c listener gets a server without sendfile,
    with the same site, while the HTTP/1 and TLS listeners keep the setting asked for."""
    nginx = make_adapter("nginx")
    if not nginx.installed():
        pytest.skip(f"nginx is not installed: {nginx.install_hint()}")
    text = render_config(nginx, tmp_path, h2c_port=18082, http2=True,
                         kinds=frozenset({"cgi", "fastcgi"}))  # fmt: skip
    main, h2c = text.split("    server {")[1:]
    assert "listen 127.0.0.1:18082 http2" in h2c and "18082" not in main
    assert "sendfile off;" in h2c and "sendfile on;" in text.split("    server {")[0]
    for line in ("root ", "location /cgi-bin/", "location /fcgi/", "location = /dyn/env"):
        assert line in main and line in h2c
    assert "18082" not in render_config(nginx, tmp_path, http2=True)
