"""lighttpd through crest's adapter: static, mod_cgi, mod_fastcgi, mod_openssl, pinning, logs, clean stops."""

from __future__ import annotations

from pathlib import Path

import pytest

from crest.servers import lighttpd
from servers_support import ServerContract, render_config

pytestmark = pytest.mark.integration


class TestLighttpd(ServerContract):
    name = "lighttpd"
    bad_option = ("server.network-backend", "carrier-pigeon")


def test_config_follows_settings_and_options(tmp_path: Path) -> None:
    text = render_config(lighttpd.LighttpdAdapter(), tmp_path, workers=1)
    assert "server.max-worker" not in text  # one process: lighttpd's own model
    assert "server.max-keep-alive-requests = 1000000" in text
    text = render_config(lighttpd.LighttpdAdapter(), tmp_path, workers=4, keepalive=False,
                         options={"server.max-connections": "100"})  # fmt: skip
    assert "server.max-worker = 4" in text and "server.max-connections = 100" in text
    assert "server.max-keep-alive-requests = 0" in text
    assert "mod_deflate" not in text
