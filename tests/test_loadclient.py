"""The library API without the CLI: LoadClient and BuiltinServer against the real engine."""

from __future__ import annotations

from pathlib import Path

import pytest

from crest.errors import ConfigError, TargetError
from crest.load.client import LoadClient, engine_version
from crest.load.runspec import RunSpec
from crest.servers import BuiltinServer, ServeSpec

pytestmark = pytest.mark.integration


def test_run_returns_a_parsed_report(builtin_target: str) -> None:
    samples: list[dict[str, object]] = []
    client = LoadClient(RunSpec(url=builtin_target + "1k.html", connections=2, threads=1, duration_s=1.0))
    result = client.run(on_progress=samples.append)
    assert not result.interrupted
    assert result.report["requests"] > 0
    assert result.config["url"] == builtin_target + "1k.html"
    assert samples, "on_progress is called while the run goes on"
    assert {"elapsed_s", "requests", "errors", "bytes", "connections_opened"} <= set(samples[-1])


def test_invalid_spec_fails_at_construction() -> None:
    with pytest.raises(ConfigError, match=r"^-c/--connections \(1\) must be >= -t/--threads \(2\)"):
        LoadClient(RunSpec(url="http://127.0.0.1:9/", connections=1, threads=2), origin="bench")
    with pytest.raises(ConfigError, match=r"^the ladder's connections \(clients x threads_per_client\) \(1\)"):
        LoadClient(RunSpec(url="http://127.0.0.1:9/", connections=1, threads=2))  # a suite run's words


def test_preflight_refuses_a_closed_port(closed_port: int) -> None:
    client = LoadClient(RunSpec(url=f"http://127.0.0.1:{closed_port}/", duration_s=1.0))
    with pytest.raises(TargetError, match="connection refused"):
        client.run()


def test_builtin_server_lifecycle(docroot: Path) -> None:
    server = BuiltinServer(ServeSpec(docroot=docroot))
    with pytest.raises(TargetError, match="not running"):
        _ = server.urls
    with server:
        assert server.url.startswith("http://127.0.0.1:")
    server.stop()  # a second stop is harmless


def test_serve_spec_validation(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"is not a directory: give an existing one"):
        BuiltinServer(ServeSpec(docroot=tmp_path / "missing"))
    with pytest.raises(
        ConfigError, match=r"host .localhost.example. is not an IP address: listen on one, e.g. 127.0.0.1"
    ):
        BuiltinServer(ServeSpec(docroot=tmp_path, host="localhost.example"))
    with pytest.raises(ConfigError, match=r"port 70000 is out of range"):
        BuiltinServer(ServeSpec(docroot=tmp_path, port=70000))
    assert ServeSpec(docroot=tmp_path).is_loopback
    assert not ServeSpec(docroot=tmp_path, host="0.0.0.0").is_loopback


def test_engine_version() -> None:
    assert engine_version()
