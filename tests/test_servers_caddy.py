"""Caddy through crest's adapter: static, CGI via fcgiwrap, FastCGI transport, TLS, pinning, logs, clean stops."""

from __future__ import annotations

from pathlib import Path

import pytest

from crest.errors import ConfigError
from crest.servers import base, caddy
from crest.servers.base import ServerSettings, Target
from crest.servers.site import Site
from servers_support import ServerContract, render_config

pytestmark = pytest.mark.integration


class TestCaddy(ServerContract):
    name = "caddy"
    bad_option = ("max_header_size", "huge")

    def test_cgi_without_fcgiwrap_names_the_fix(self, www: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        real_which = base.which
        monkeypatch.setattr(base, "which", lambda *names: None if "fcgiwrap" in names else real_which(*names))
        with pytest.raises(ConfigError, match=r"^caddy runs CGI through fcgiwrap, .*: apt-get install -y fcgiwrap$"):
            Target(caddy.CaddyAdapter(), ServerSettings(docroot=www, kinds=frozenset({"webstone-cgi"})))


def test_workers_become_gomaxprocs_and_nothing_lives_outside_the_site(tmp_path: Path) -> None:
    site = Site(root=tmp_path, docroot=tmp_path, port=1, tls_port=None, user=None, group=None)
    env = caddy.CaddyAdapter().env(site, ServerSettings(docroot=tmp_path, workers=3, options={"GOGC": "400"}))
    assert env is not None
    assert env["GOMAXPROCS"] == "3" and env["GOGC"] == "400"
    assert all(env[key].startswith(str(tmp_path)) for key in ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"))
    text = render_config(caddy.CaddyAdapter(), tmp_path)
    assert "admin off" in text and "auto_https off" in text and "encode" not in text


def test_durations_are_checked() -> None:
    with pytest.raises(ConfigError, match=r"^--server-opt idle_timeout='soon': give a duration such as"):
        caddy.CaddyAdapter().check(ServerSettings(docroot=Path("/tmp"), options={"idle_timeout": "soon"}))
