"""H2O through crest's adapter: static, CGI via fastcgi-cgi, FastCGI, TLS, pinning, logs, clean stops."""

from __future__ import annotations

from pathlib import Path

import pytest

from crest.errors import ConfigError
from crest.servers import h2o
from crest.servers.base import ServerSettings, Target
from servers_support import ServerContract, render_config

pytestmark = pytest.mark.integration


class TestH2o(ServerContract):
    name = "h2o"
    bad_option = ("http1-request-timeout", "never")
    no_keepalive_switch = "H2O 2.2 has no switch to turn keep-alive off (the client's Connection: close still works)"

    def test_cgi_without_fastcgi_cgi_names_the_fix(self, www: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(h2o, "FASTCGI_CGI", Path("/nonexistent/fastcgi-cgi"))
        refusal = r"^h2o runs CGI through /nonexistent/fastcgi-cgi, .*: apt-get install -y h2o$"
        with pytest.raises(ConfigError, match=refusal):
            Target(h2o.H2oAdapter(), ServerSettings(docroot=www, kinds=frozenset({"cgi"})))


def test_config_follows_settings_and_options(tmp_path: Path) -> None:
    text = render_config(h2o.H2oAdapter(), tmp_path, workers=3, kinds=frozenset({"cgi"}))
    assert "num-threads: 3" in text and "compress: OFF" in text
    assert "/cgi-bin/crest-env:" in text and "/cgi-bin/crest-bytes:" in text
    text = render_config(h2o.H2oAdapter(), tmp_path, options={"num-threads": "5", "max-connections": "99"})
    assert "num-threads: 5" in text and "max-connections: 99" in text and "/cgi-bin" not in text
