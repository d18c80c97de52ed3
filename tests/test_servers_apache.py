"""Apache httpd through crest's adapters, one class per MPM: static, mod_cgid, mod_proxy_fcgi, mod_ssl, ..."""

from __future__ import annotations

from pathlib import Path

import pytest

from crest.errors import ConfigError
from crest.servers import apache
from crest.servers.base import ServerSettings, Target
from servers_support import ServerContract, render_config

pytestmark = pytest.mark.integration


class TestApachePrefork(ServerContract):
    name = "apache-prefork"
    bad_option = ("KeepAliveTimeout", "never")


class TestApacheWorker(ServerContract):
    name = "apache-worker"
    bad_option = ("keepalive_timeout", "never")


class TestApacheEvent(ServerContract):
    name = "apache-event"
    bad_option = ("KeepAliveTimeout", "never")


def test_threaded_mpms_hold_512_connections_by_default(tmp_path: Path) -> None:
    for adapter in (apache.ApacheWorkerAdapter(), apache.ApacheEventAdapter()):
        text = render_config(adapter, tmp_path, workers=2)
        assert f"LoadModule mpm_{adapter.mpm}_module" in text
        for line in ("ThreadsPerChild 64", "ServerLimit 8", "MaxRequestWorkers 512", "StartServers 2"):
            assert f"\n{line}\n" in text
        assert "MaxKeepAliveRequests 0" in text and "KeepAlive On" in text


def test_prefork_holds_512_connections_by_default(tmp_path: Path) -> None:
    text = render_config(apache.ApachePreforkAdapter(), tmp_path, workers=2, keepalive=False)
    for line in ("ServerLimit 512", "MaxRequestWorkers 512", "StartServers 5", "KeepAlive Off"):
        assert f"\n{line}\n" in text
    assert "ThreadsPerChild" not in text and "mpm_prefork_module" in text


def test_options_resize_the_mpm(tmp_path: Path) -> None:
    text = render_config(apache.ApacheEventAdapter(), tmp_path,
                         options={"ThreadsPerChild": "25", "MaxRequestWorkers": "1000"})  # fmt: skip
    # Apache wants a whole number of processes' worth of threads: 40 × 25.
    for line in ("ThreadsPerChild 25", "ThreadLimit 25", "ServerLimit 40", "MaxRequestWorkers 1000"):
        assert f"\n{line}\n" in text


def test_only_the_modules_a_workload_needs_are_loaded(tmp_path: Path) -> None:
    bare = render_config(apache.ApacheEventAdapter(), tmp_path, tls=False)
    assert bare.count("LoadModule") == 2  # the MPM and authz_core
    full = render_config(apache.ApacheEventAdapter(), tmp_path, kinds=frozenset({"cgi", "fastcgi"}))
    for module in ("cgid", "alias", "proxy", "proxy_fcgi", "ssl", "socache_shmcb"):
        assert f"LoadModule {module}_module" in full


@pytest.mark.parametrize(
    ("adapter", "option"),
    [(apache.ApachePreforkAdapter(), "ThreadsPerChild"), (apache.ApacheEventAdapter(), "MinSpareServers")],
)
def test_options_of_another_mpm_are_refused(adapter: apache.ApacheAdapter, option: str) -> None:
    with pytest.raises(ConfigError, match=rf"^--server-opt {option} is not a setting of {adapter.name}: "):
        adapter.check(ServerSettings(docroot=Path("/tmp"), options={option: "4"}))


def test_sizes_must_be_whole_numbers() -> None:
    if not apache.ApacheEventAdapter().installed():
        pytest.skip("apt-get install -y apache2")
    refusal = r"^--server-opt MaxRequestWorkers='many': give a whole number of at least 1$"
    with pytest.raises(ConfigError, match=refusal):
        Target(apache.ApacheEventAdapter(), ServerSettings(docroot=Path("/tmp"), options={"MaxRequestWorkers": "many"}))
