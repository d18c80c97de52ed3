"""`crest doe DESIGN.toml`: a 2^k design becomes one run per row (replications as trials), each
tagged with its levels under one experiment id, then analysed like `--analyze` would."""

from __future__ import annotations

import csv
import json
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

import pytest

from crest.filesets import generate
from crest.network import netns
from support import run_cli

pytestmark = pytest.mark.integration

SUITE = """
name = "doe-tiny"
description = "one short mix"
source = "crest tests"
[workload]
fileset = "webcat-large-filemix"
http_version = "1.0"
[[workload.classes]]
name = "static"
kind = "static"
weight = 1
[ladder]
clients = [2]
[timing]
length_s = 1
ramp_up_s = 0
ramp_down_s = 0
"""

DESIGN = """
suite = "{suite}"
profile = "full"
server = "builtin"
replications = {reps}
response = "peak_rps"
[factors]
keepalive = [false, true]
clients = [1, 4]
"""


def _write(tmp_path: Path, reps: int = 1, extra: str = "") -> Path:
    suite = tmp_path / "suite.toml"
    suite.write_text(SUITE)
    design = tmp_path / "design.toml"
    design.write_text(DESIGN.format(suite=suite, reps=reps) + extra)
    return design


def test_design_runs_every_combination_and_reports_effects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("CREST_CACHE_DIR", str(cache))
    generate("webcat-large-filemix", cache / "filesets" / "webcat-large-filemix")
    db = tmp_path / "r.db"
    out = run_cli("doe", str(_write(tmp_path, reps=2)), "--db", str(db), "--json", "-q", timeout_s=240)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert set(result["effects"]) == {"mean", "keepalive", "clients", "keepalive:clients"}
    assert set(result["variation_pct"]) == {"keepalive", "clients", "keepalive:clients", "error"}
    assert abs(sum(result["variation_pct"].values()) - 100.0) < 1e-6
    assert result["replications"] == 2 and result["ci95"] is not None
    with open(result["data"], newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 8
    assert {(r["keepalive"], r["clients"]) for r in rows} == {(k, c) for k in ("False", "True") for c in ("1", "4")}
    with sqlite3.connect(db) as conn:
        runs = conn.execute("SELECT factors_json, repeat_index, config_json FROM runs").fetchall()
    assert len(runs) == 8
    assert {json.loads(c)["experiment"] for _, _, c in runs} == {result["experiment"]}
    assert sorted(r for _, r, _ in runs) == [0, 0, 0, 0, 1, 1, 1, 1]
    assert all(set(json.loads(f)) == {"keepalive", "clients"} for f, _, _ in runs)
    # The same data analysed offline gives the same effects.
    again = run_cli(
        "doe", "--analyze", result["data"], "--response", "peak_rps", "--factors", "keepalive,clients", "--json"
    )
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["effects"] == pytest.approx(result["effects"])


@pytest.mark.parametrize(
    "extra,needle",
    [
        ("nosuch = [1, 2]\n", "unknown factor"),
        ("threads = [1, 1]\n", "two different levels"),
    ],
)
def test_bad_design_is_one_line_and_runs_nothing(tmp_path: Path, extra: str, needle: str) -> None:
    db = tmp_path / "r.db"
    out = run_cli("doe", str(_write(tmp_path, extra=extra)), "--db", str(db))
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("crest: error:") and needle in lines[0], out.stderr
    assert not db.exists()


def test_server_options_are_design_factors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    from crest.servers.registry import adapter

    nginx = adapter("nginx")
    if not nginx.installed():
        pytest.skip(f"{nginx.title} is not installed: {nginx.install_hint()}")
    # nginx's workers drop root: the cache must not sit under pytest's private (0700) tmp_path, or every
    # request is a 403 and the run, having no success, fails.
    cache = Path(tempfile.mkdtemp(prefix="crest-doe-cache-"))
    request.addfinalizer(lambda: shutil.rmtree(cache, ignore_errors=True))
    cache.chmod(0o755)
    monkeypatch.setenv("CREST_CACHE_DIR", str(cache))
    generate("webcat-large-filemix", cache / "filesets" / "webcat-large-filemix")
    suite = tmp_path / "suite.toml"
    suite.write_text(SUITE)
    design = tmp_path / "design.toml"
    design.write_text(
        f'suite = "{suite}"\nprofile = "full"\nserver = "nginx"\n[server_opt]\nkeepalive_requests = 100\n'
        "[factors]\nserver_opt.worker_connections = [512, 1024]\n"
    )
    db = tmp_path / "r.db"
    out = run_cli("doe", str(design), "--db", str(db), "--json", "-q", timeout_s=120)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert set(result["effects"]) == {"mean", "worker_connections"}
    with open(result["data"], newline="") as f:
        assert [r["worker_connections"] for r in csv.DictReader(f)] == ["512", "1024"]
    with sqlite3.connect(db) as conn:
        runs = conn.execute("SELECT factors_json, config_json FROM runs ORDER BY started_at").fetchall()
    assert [json.loads(f) for f, _ in runs] == [
        {"keepalive_requests": "100", "worker_connections": level} for level in ("512", "1024")
    ]
    assert [json.loads(c)["server"]["options"]["worker_connections"] for _, c in runs] == ["512", "1024"]
    assert "worker_connections 1024;" in json.loads(runs[1][1])["server"]["config_text"]
    with sqlite3.connect(db) as conn:  # and it measured nginx serving the files, not refusing them
        statuses = [json.loads(s) for (s,) in conn.execute("SELECT status_json FROM mixes")]
    assert statuses and all(set(s) == {"200"} for s in statuses)


@pytest.mark.netns
def test_a_design_compares_no_network_with_client_subnets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`network = ["none", "subnets=2"]`: does the client network matter? One run over loopback, one from
    two client subnets, each stored with its level (crest doe takes --network and --cluster as crest run)."""
    if os.geteuid() != 0 or not netns.has_net_admin():
        pytest.skip("--network needs root with CAP_NET_ADMIN: run as root")
    cache = tmp_path / "cache"
    monkeypatch.setenv("CREST_CACHE_DIR", str(cache))
    generate("webcat-large-filemix", cache / "filesets" / "webcat-large-filemix")
    design = _write(tmp_path).read_text().split("[factors]")[0] + '[factors]\nnetwork = ["none", "subnets=2"]\n'
    (tmp_path / "net.toml").write_text(design)
    db = tmp_path / "r.db"
    out = run_cli("doe", str(tmp_path / "net.toml"), "--db", str(db), "--json", "-q", timeout_s=120)
    assert out.returncode == 0, out.stderr
    assert set(json.loads(out.stdout)["effects"]) == {"mean", "network"}
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT r.factors_json, m.network_json, m.requests FROM runs r JOIN mixes m ON m.run_id = r.id"
            " ORDER BY r.started_at"
        ).fetchall()
    assert [json.loads(f)["network"] for f, _, _ in rows] == ["none", "subnets=2"] and all(r for _, _, r in rows)
    assert rows[0][1] is None  # over loopback: no network figures
    links = {x["link"] for x in json.loads(rows[1][1])["links"]}
    assert {"subnet 1", "subnet 2"} <= links


def test_a_table_sent_once_is_a_design_and_a_capacity_search(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Zeus' non-cached selection (every file once) through crest doe and crest capacity: each run or probe
    sends the whole table exactly once."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("CREST_CACHE_DIR", str(cache))
    generate("webcat-large-filemix", cache / "filesets" / "webcat-large-filemix")
    suite = tmp_path / "once.toml"
    suite.write_text(SUITE.replace("[workload]\n", '[workload]\nselection = "once"\n'))
    design = tmp_path / "design.toml"
    design.write_text(f'suite = "{suite}"\nprofile = "full"\nserver = "builtin"\nresponse = "peak_rps"\n'
                      "[factors]\nkeepalive = [false, true]\n")  # fmt: skip
    db = tmp_path / "r.db"
    out = run_cli("doe", str(design), "--db", str(db), "--json", "-q", timeout_s=120)
    assert out.returncode == 0, out.stderr
    files = 14  # webcat-large-filemix
    with sqlite3.connect(db) as conn:
        assert [r for (r,) in conn.execute("SELECT requests FROM mixes")] == [files, files]
    db2 = tmp_path / "c.db"
    out = run_cli("capacity", str(suite), "--server", "builtin", "--rule", "errors<1%", "--max", "2", "--confirm", "1",
                  "--db", str(db2), "-q", timeout_s=120)  # fmt: skip
    assert out.returncode == 0, out.stderr
    with sqlite3.connect(db2) as conn:
        assert [r for (r,) in conn.execute("SELECT requests FROM mixes ORDER BY idx")] == [files] * 3
