"""Server presets: a seed's printed configuration as a --server-opt profile (Mindcraft's Apache 1.3.4).

What the adapter makes of profile=mindcraft, without starting Apache; tests/test_servers_knobs.py
starts it and reads the values back from the running server.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from crest.errors import ConfigError
from crest.servers import apache
from crest.servers.base import ServerSettings
from servers_support import render_config

PREFORK = apache.ApachePreforkAdapter()
# The seed's "Apache 1.3.4 Configuration", as Apache 2.4's prefork directives.
MINDCRAFT_LINES = ("ServerLimit 500", "MaxRequestWorkers 290", "StartServers 10", "MinSpareServers 1",
                   "MaxSpareServers 290", "MaxConnectionsPerChild 10000")  # fmt: skip


def _needs_apache() -> None:
    if not PREFORK.installed():
        pytest.skip(f"{PREFORK.title} is not installed: {PREFORK.install_hint()}")


def test_mindcraft_writes_the_seeds_values_and_its_log_format(tmp_path: Path) -> None:
    text = render_config(PREFORK, tmp_path, tls=False, keepalive=False, options={"profile": "Mindcraft"})
    for line in (*MINDCRAFT_LINES, "KeepAlive Off"):
        assert f"\n{line}\n" in text, line
    # Logging on, in the common format Mindcraft printed.
    assert '\nLogFormat "%h %l %u %t \\"%r\\" %>s %b" crest\n' in text
    assert re.search(r'\nCustomLog "\S+/access\.log" crest\n', text)


def test_the_profile_is_stored_with_every_value_it_set_and_a_given_knob_wins() -> None:
    asked = ServerSettings(docroot=Path("/tmp"), options={"profile": "mindcraft", "MaxRequestWorkers": "150"})
    effective = PREFORK.effective(asked)
    assert effective.options == {
        "profile": "mindcraft",
        "max_request_workers": "150",
        "server_limit": "500",
        "start_servers": "10",
        "min_spare_servers": "1",
        "max_spare_servers": "290",
        "requests_per_child": "10000",
        "access_log": "on",
    }
    assert effective.access_log  # counted like --access-log
    plain = PREFORK.effective(ServerSettings(docroot=Path("/tmp")))
    assert plain.options == {} and not plain.access_log


def test_the_presets_values_are_valid_knob_values() -> None:
    _needs_apache()
    values = dict(apache.MINDCRAFT.options)
    PREFORK.check(ServerSettings(docroot=Path("/tmp"), options=values))  # raises on any value a knob refuses
    assert set(values) <= set(PREFORK.knobs)


def test_an_unknown_profile_is_refused_listing_the_valid_ones() -> None:
    _needs_apache()
    with pytest.raises(ConfigError, match=r"^--server-opt profile='webbench': give one of tuned, stock, mindcraft$"):
        PREFORK.check(ServerSettings(docroot=Path("/tmp"), options={"profile": "webbench"}))


@pytest.mark.parametrize("adapter", [apache.ApacheEventAdapter(), apache.ApacheWorkerAdapter()])
def test_threaded_mpms_refuse_mindcrafts_process_per_connection_configuration(adapter: apache.ApacheAdapter) -> None:
    with pytest.raises(
        ConfigError, match=r"^--server-opt profile=mindcraft is Apache 1\.3's .*--server apache-prefork$"
    ):
        adapter.check(ServerSettings(docroot=Path("/tmp"), options={"profile": "MINDCRAFT"}))


def test_crest_servers_lists_the_preset_and_its_source() -> None:
    """What `crest servers --json` shows of it (Adapter.describe without running apache2 -v)."""
    ((name, preset),) = PREFORK.presets.items()
    assert name == "mindcraft" and preset.describe()["options"]["max_request_workers"] == "290"
    assert "Mindcraft 1999 (seed 001)" in preset.describe()["source"]
    profile = PREFORK.knobs["profile"].describe()
    assert profile["choices"] == ["tuned", "stock", "mindcraft"] and "mindcraft (Mindcraft 1999" in profile["meaning"]
    assert apache.ApacheEventAdapter.presets == {}
