"""Parts Debian packages apart from a server (Recommends): a workload that needs a missing one is refused
before anything starts, with the package to install, and `crest servers` lists what is missing."""

from __future__ import annotations

from pathlib import Path

import pytest

from crest.errors import ConfigError
from crest.servers import lighttpd
from crest.servers.base import ServerSettings
from crest.servers.registry import adapter


@pytest.fixture
def no_tls_module(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """lighttpd as installed with --no-install-recommends: its module directory lacks mod_openssl."""
    monkeypatch.setattr(lighttpd, "MODULE_DIRS", (tmp_path,))


def _installed(name: str) -> None:
    if not adapter(name).installed():
        pytest.skip(f"{name} is not installed: {adapter(name).install_hint()}")


def test_lighttpd_without_its_tls_module_refuses_tls_workloads_only(no_tls_module: None, tmp_path: Path) -> None:
    _installed("lighttpd")
    server = adapter("lighttpd")
    server.check(ServerSettings(docroot=tmp_path, tls=False))  # plain workloads still run
    with pytest.raises(ConfigError) as exc:
        server.check(ServerSettings(docroot=tmp_path, tls=True))
    message = str(exc.value)
    assert "\n" not in message
    assert "mod_openssl" in message and "apt-get install -y lighttpd-mod-openssl" in message


@pytest.mark.integration  # describe() asks the server binary its version
def test_crest_servers_lists_the_missing_part(no_tls_module: None) -> None:
    _installed("lighttpd")
    row = adapter("lighttpd").describe()
    assert row["installed"] is True
    assert row["missing"] == [
        {
            "part": "serves HTTPS through its module mod_openssl",
            "needed_for": "tls",
            "install": "apt-get install -y lighttpd-mod-openssl",
        }
    ]


@pytest.mark.parametrize("name", ["lighttpd", "h2o", "caddy", "nginx"])
def test_ci_installs_every_part(name: str) -> None:
    """`.ci/run` installs each part explicitly, so a fresh CI machine misses none of them."""
    _installed(name)
    assert [p.package for p in adapter(name).parts() if not p.present] == []
    ci = (Path(__file__).resolve().parent.parent / ".ci" / "run").read_text()
    for part in adapter(name).parts():
        assert part.package in ci.split(), f".ci/run does not install {part.package}"
