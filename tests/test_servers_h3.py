"""HTTP/3 on the servers that serve it (ServerSettings.http3): Caddy (quic-go) and the built-in target (quinn
and hyperium's h3), on the UDP twin of the TLS port. crest's engine loads each with several streams per
connection and the server's access log counts what crest counts, every line over HTTP/3; without http3 no
QUIC is served; a `crest run` over HTTP/3 is stored and shown. Without servers: the refusals and the
configuration text.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from crest.errors import ConfigError
from crest.servers.base import ServerSettings, Target
from crest.servers.registry import adapter as make_adapter
from crest.servers.site import Site
from servers_support import FILES, LOG_WAIT_S, installed, wait_for
from support import run_cli, static_suite

HTTP3_SERVERS = ("caddy", "builtin")
REQUESTS = 400


def bench_h3(url: str, *flags: str, succeeds: bool = True) -> dict[str, object]:
    result = run_cli("bench", "--json", "-q", "--http", "3", "--insecure", *flags, url)
    if succeeds:
        assert result.returncode == 0, result.stderr
    else:  # no request succeeded: the report, then one line naming the first error, and exit 1
        assert result.returncode == 1, result.stderr
        (line,) = result.stderr.strip().splitlines()
        assert line.startswith("crest: error: no request succeeded"), line
    report: dict[str, object] = json.loads(result.stdout)
    return report


@pytest.mark.integration
@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", HTTP3_SERVERS)
def test_http3_is_served_and_logged_as_crest_counts(name: str, www: Path) -> None:
    adapter = installed(name, tls=True)
    settings = ServerSettings(docroot=www, cpus=(0,), tls=True, http3=True, access_log=True)
    with Target(adapter, settings) as target:
        assert target.site is not None and target.tls_url is not None
        assert target.metadata()["http3"] is True
        report = bench_h3(f"{target.tls_url}/1k.html", "--streams", "4", "-c", "2", "-t", "1", "-n", str(REQUESTS))
        errors = report["errors"]
        assert isinstance(errors, dict) and sum(errors.values()) == 0, errors
        assert report["requests"] == REQUESTS
        h3 = report["h2"]
        assert isinstance(h3, dict) and h3["streams_in_use_max"] >= 2
        assert report["body_bytes"] == REQUESTS * len(FILES["1k.html"])
        wait_for(lambda: target.access_log_lines() >= REQUESTS, LOG_WAIT_S)
        assert target.access_log_lines() == REQUESTS
        lines = target.site.access_log.read_bytes().splitlines()
        assert all(b"HTTP/3.0" in line for line in lines), lines[:3]


@pytest.mark.integration
@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", HTTP3_SERVERS)
def test_without_http3_no_quic_is_served(name: str, www: Path) -> None:
    adapter = installed(name, tls=True)
    with Target(adapter, ServerSettings(docroot=www, cpus=(0,), tls=True)) as target:
        assert target.tls_url is not None and target.metadata()["http3"] is False
        # Nothing listens on the UDP port: every attempt is refused (ICMP), and the run ends on time.
        report = bench_h3(
            f"{target.tls_url}/1k.html", "-c", "1", "-t", "1", "-d", "1s", "--timeout", "300ms", succeeds=False
        )
        errors = report["errors"]
        assert report["requests"] == 0
        # Refused attempts: nobody answers QUIC there, so every failure is a connect error, whether the ICMP
        # port-unreachable came before the timeout or not (a handshake nothing answered is a connect failure).
        assert isinstance(errors, dict) and errors["connect"] > 0
        assert {kind for kind, n in errors.items() if n} == {"connect"}, errors


@pytest.mark.integration
@pytest.mark.timeout(120)
def test_a_run_over_http3_is_stored_and_shown(tmp_path: Path) -> None:
    installed("builtin")
    suite = tmp_path / "h3.toml"
    text = static_suite("h3", "HTTP/3 GETs", [2], length_s=2, ramp_s=0)
    suite.write_text(text.replace('http_version = "1.1"', 'http_version = "3"\nstreams = 4'))
    db = tmp_path / "r.db"
    out = run_cli("run", str(suite), "--server", "builtin", "--repeat", "1", "--db", str(db), "-q", timeout_s=100)
    assert out.returncode == 0, out.stderr
    with sqlite3.connect(db) as conn:
        run_id, config = conn.execute("SELECT id, config_json FROM runs").fetchone()
        requests, errors, h2 = conn.execute("SELECT requests, errors_json, h2_json FROM mixes").fetchone()
    assert requests > 0 and sum(json.loads(errors).values()) == 0, errors
    assert json.loads(h2)["streams_in_use_max"] >= 2
    assert json.loads(config)["server"]["http3"] is True
    shown = run_cli("show", run_id, "--db", str(db))
    assert shown.returncode == 0, shown.stderr
    assert "HTTP/3" in shown.stdout


# -- without servers -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["nginx", "apache-event", "h2o", "lighttpd", "samba"])
def test_http3_is_refused_where_it_cannot_be_served(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    adapter = make_adapter(name)
    monkeypatch.setattr(type(adapter), "installed", lambda self: True)  # the refusal needs no server
    kinds = adapter.kinds & {"loadfile"}  # a file server's own suite, so only HTTP/3 is refused
    with pytest.raises(ConfigError, match=rf"^{name} cannot serve HTTP/3: use --server caddy or --server builtin"):
        adapter.check(ServerSettings(docroot=tmp_path, tls=True, http3=True, kinds=kinds))


def test_caddy_serves_h3_only_when_asked(tmp_path: Path) -> None:
    adapter = make_adapter("caddy")
    site = Site(root=tmp_path, docroot=tmp_path, port=18080, tls_port=18443, user=None, group=None)
    for http3, protocols in ((True, "protocols h1 h2 h3"), (False, "protocols h1 h2\n")):
        settings = ServerSettings(docroot=tmp_path, tls=True, http3=http3)
        text = next(iter(adapter.config_files(site, settings).values()))
        assert protocols in text
        assert ("protocols h1 h2 h3" in text) == http3


def test_builtin_target_is_asked_for_http3_on_its_command_line(tmp_path: Path) -> None:
    adapter = make_adapter("builtin")
    site = Site(root=tmp_path, docroot=tmp_path, port=18080, tls_port=18443, user=None, group=None)
    assert "--http3" in adapter.command(site, ServerSettings(docroot=tmp_path, tls=True, http3=True))
    assert "--http3" not in adapter.command(site, ServerSettings(docroot=tmp_path, tls=True))
    assert {
        n for n in ("caddy", "builtin", "nginx", "h2o", "lighttpd", "apache-event") if make_adapter(n).serves_http3
    } == {"caddy", "builtin"}


@pytest.mark.integration
@pytest.mark.timeout(60)
def test_crest_servers_lists_the_protocols_each_serves() -> None:
    listed = run_cli("servers", "--json")
    assert listed.returncode == 0, listed.stderr
    http3 = {r["name"] for r in json.loads(listed.stdout) if r.get("http3")}
    assert http3 == {"caddy", "builtin"}
    text = run_cli("servers").stdout
    assert "Caddy; HTTP/1.1, HTTP/2, HTTP/3; dynamic:" in text
    assert "Apache httpd (prefork MPM); HTTP/1.1; dynamic:" in text
