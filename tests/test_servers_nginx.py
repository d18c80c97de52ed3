"""nginx through crest's adapter: static, CGI via fcgiwrap, FastCGI, TLS, pinning, logs, clean stops."""

from __future__ import annotations

from pathlib import Path

import pytest

from crest.errors import ConfigError
from crest.servers import base, nginx
from crest.servers.base import ServerSettings, Target
from servers_support import ServerContract, render_config

pytestmark = pytest.mark.integration


class TestNginx(ServerContract):
    name = "nginx"
    bad_option = ("keepalive_requests", "lots")

    def test_cgi_without_fcgiwrap_names_the_fix(self, www: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        real_which = base.which
        monkeypatch.setattr(base, "which", lambda *names: None if "fcgiwrap" in names else real_which(*names))
        with pytest.raises(ConfigError, match=r"^nginx runs CGI through fcgiwrap, .*: apt-get install -y fcgiwrap$"):
            Target(nginx.NginxAdapter(), ServerSettings(docroot=www, kinds=frozenset({"cgi"})))


def test_config_follows_settings_and_options(tmp_path: Path) -> None:
    """No server needed: what the settings and --server-opt values turn into."""
    text = render_config(nginx.NginxAdapter(), tmp_path, workers=3, keepalive=False,
                         options={"worker_connections": "2048", "open_file_cache": "max=100 inactive=5s"})  # fmt: skip
    assert "worker_processes 3;" in text and "worker_connections 2048;" in text
    assert "keepalive_timeout 0;" in text and "open_file_cache max=100 inactive=5s;" in text
    assert "access_log off;" in text and "gzip off;" in text and "sendfile on;" in text
    text = render_config(nginx.NginxAdapter(), tmp_path)
    assert "keepalive_requests 1000000;" in text
