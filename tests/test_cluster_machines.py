"""Cluster mode on a lab of simulated machines (`--cluster machines:N`, root and namespaces): the head on the
control machine, a Ray node on each machine at its own address, token authentication checked for real
(the addresses are not loopback), the driver reaching them through the head's client server. One run of
nginx on node3 with the load from node1 and node2: the exact merge against nginx's access log, each
request from its machine's own address, the clocks' injected offsets measured, the fileset made on the
target machine (whose cache is its own), and nothing left of the lab afterwards."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import psutil
import pytest

from crest.cluster import auth
from crest.cluster.address import parse_cluster
from crest.cluster.session import ClusterSession
from crest.network import netns
from crest.servers.registry import adapter
from support import run_cli, static_suite

pytestmark = [
    pytest.mark.integration,
    pytest.mark.netns,  # a lab makes namespaces
    pytest.mark.timeout(300),
    pytest.mark.skipif(
        os.geteuid() != 0 or not netns.has_net_admin() or shutil.which("ip") is None,
        reason="needs root with CAP_NET_ADMIN and iproute2: run as root; apt-get install -y iproute2",
    ),
]

ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'crest[cluster]' (the dev extras have it)")

WAIT_S = 240


def _lab_namespaces() -> set[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.startswith("crestm-")}


def _rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()


def _raylets() -> list[int]:
    """Ray nodes running on this host (a killed one may stay a zombie until init reaps it: it has ended)."""
    return [p.pid for p in psutil.process_iter(["name", "status"])
            if p.info["name"] == "raylet" and p.info["status"] != psutil.STATUS_ZOMBIE]  # fmt: skip


def test_a_run_on_machines_merges_exactly_from_each_machines_own_address(tmp_path: Path) -> None:
    nginx = adapter("nginx")
    if not nginx.installed():
        pytest.skip(f"{nginx.title} is not installed: {nginx.install_hint()}")
    before, raylets = _lab_namespaces(), set(_raylets())
    suite = tmp_path / "suite.toml"
    suite.write_text(static_suite("machines-test", "cluster mode on machines", [2, 4], threads_per_client=2,
                                  length_s=2, ramp_s=0))  # fmt: skip
    db = tmp_path / "r.db"
    out = run_cli("run", str(suite), "--cluster", "machines:3,skew=50ms", "--server", "nginx", "--target-node",
                  "node3", "--access-log", "--db", str(db), "-q", timeout_s=WAIT_S)  # fmt: skip
    assert out.returncode == 0, out.stderr
    address = {"node1": "198.19.241.1", "node2": "198.19.241.2", "node3": "198.19.241.3"}
    injected = {"node1": -0.05, "node2": 0.0, "node3": 0.05}
    ((run_id, status, config_json, host_json),) = _rows(db, "SELECT id, status, config_json, host_json FROM runs")
    assert status == "complete"
    server = json.loads(config_json)["server"]
    assert server["node_names"] == ["node3"] and server["node_ip"] == address["node3"]
    disclosed = json.loads(host_json)["disclosure"]
    assert disclosed["read_on"] == f"the target's node node3 ({address['node3']})"
    mixes = _rows(db, "SELECT idx, clients, requests, errors_json, access_log_requests, cluster_json FROM mixes"
                      " ORDER BY idx")  # fmt: skip
    assert [m[1] for m in mixes] == [2, 4]
    for idx, _clients, requests, errors, logged, cluster_json in mixes:
        assert sum(json.loads(errors).values()) == 0 and requests > 0
        assert logged == requests, f"mix {idx}: the merged count equals nginx's access log"
        nodes = json.loads(cluster_json)["nodes"]
        assert {n["names"][0] for n in nodes} == {"node1", "node2"}
        for n in nodes:
            name = n["names"][0]
            assert n["ip"] == address[name]
            # The driver's offset rounds find each machine's injected clock offset (the target's node's too,
            # relative to it), within their own uncertainty and a millisecond of scheduling.
            assert abs(n["clock_offset_s"] - injected[name]) <= n["clock_uncertainty_s"] + 0.001, n
    logs = list((db.parent / "logs" / run_id).rglob("access*.log"))
    seen = {m.group(1) for log in logs for m in re.finditer(r"^(\S+) ", log.read_text(), re.M)}
    assert seen == {address["node1"], address["node2"]}, seen  # each request from its machine's own address
    assert sum(len(log.read_text().splitlines()) for log in logs) == sum(m[2] for m in mixes)
    # The docroot was made on node3, in its own cache: the driver's is not mounted there.
    assert disclosed["docroot"]["path"].startswith("/var/cache/crest/filesets/"), disclosed["docroot"]
    assert _lab_namespaces() == before, "the lab left namespaces behind"
    assert set(_raylets()) <= raylets, "a machine's Ray node outlived the lab"


def test_a_client_without_the_token_is_refused_by_the_machines_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    before = _lab_namespaces()
    for name in (auth.MODE_ENV, auth.TOKEN_PATH_ENV, auth.TOKEN_ENV):  # the session sets them: restored after
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")
    session = ClusterSession(parse_cluster("machines:1")).open()
    try:
        assert session.authenticated and [n.ip for n in session.nodes()] == ["198.19.241.1"]
        host, port = "198.19.240.2", 10001
        assert auth.requires_token("client", host, port) is True  # a call without a token is refused
        assert auth.requires_token("gcs", host, 6379) is True
    finally:
        session.close()
        monkeypatch.undo()
        auth.refresh_ray()
    assert _lab_namespaces() == before
