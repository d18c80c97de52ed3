"""Cluster mode on a real multi-node Ray cluster on this machine (ray.cluster_utils.Cluster: 3 nodes of
1 CPU, every address 127.0.0.1), driven through the CLI as a user drives it: an exact merge checked
against nginx's access log and the nodes' own histograms, whole clients dealt evenly, clock offsets
stored, a node lost mid-mix and the run resumed, the target on a named node, Ctrl-C, bad input, and
nothing left running afterwards. The nodes require Ray's token authentication: crest with the token runs
every test here, and a client without it is refused."""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import sqlite3
import struct
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.resources import files
from ipaddress import IPv4Address
from pathlib import Path
from typing import Any

import jsonschema
import psutil
import pytest

from crest.cluster import auth
from crest.filesets import build_manifest
from crest.filesets.cache import cached_fileset
from crest.network import addresses
from crest.servers.registry import adapter
from support import (
    load_running,
    run_cli,
    run_cli_in_process,
    start_cli,
    static_suite,
    targets_left,
    wait_until,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'crest[cluster]' (the dev extras have it)")

NODE = {"num_cpus": 1, "object_store_memory": 100 * 1024 * 1024, "node_ip_address": "127.0.0.1",
        "include_dashboard": False}  # fmt: skip
WAIT_S = 120


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The nodes require Ray's token authentication, as an operator's should: the token is a file only the
    user can read, named by RAY_AUTH_TOKEN_PATH for the nodes, this process and each crest it starts."""
    from ray.cluster_utils import Cluster

    token = auth.ensure_local_token(tmp_path_factory.mktemp("ray-auth") / "token")
    env = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", auth.MODE_ENV: "token",
           auth.TOKEN_PATH_ENV: str(token)}  # fmt: skip
    saved = {k: os.environ.get(k) for k in [*env, auth.TOKEN_ENV]}
    os.environ.pop(auth.TOKEN_ENV, None)
    os.environ.update(env)
    auth.refresh_ray()  # Ray is imported already (above): have it read the mode and the token again
    c = Cluster(initialize_head=True, head_node_args={**NODE, "resources": {"node1": 1}})
    c.nodes_by_name = {"node1": c.head_node}  # type: ignore[attr-defined]
    for name in ("node2", "node3"):
        c.nodes_by_name[name] = c.add_node(**NODE, resources={name: 1})  # type: ignore[attr-defined]
    c.wait_for_nodes()
    try:
        yield c
    finally:
        c.shutdown()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        auth.refresh_ray()


@pytest.fixture
def nginx() -> None:
    a = adapter("nginx")
    if not a.installed():
        pytest.skip(f"{a.title} is not installed: {a.install_hint()}")


def _suite(tmp_path: Path, clients: list[int], length_s: int = 3, ramp_s: int = 0, drop_caches: bool = False) -> Path:
    path = tmp_path / "suite.toml"
    text = static_suite("cluster-test", "cluster mode", clients, threads_per_client=2, length_s=length_s, ramp_s=ramp_s)
    if drop_caches:
        text = text.replace("[workload]\n", "[workload]\ndrop_caches = true\n")
    path.write_text(text)
    return path


def _rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()


def _crest_namespaces() -> set[str]:
    """The network namespaces crest's networks have on this machine now."""
    names = os.listdir("/run/netns") if os.path.isdir("/run/netns") else []
    return {n for n in names if n.startswith("crest-")}


def _mixes_stored(db: Path) -> int:
    """Mixes stored so far; 0 before the run has made the file and its tables (a reader may come first)."""
    try:
        return int(_rows(db, "SELECT COUNT(*) FROM mixes")[0][0]) if db.exists() else 0
    except sqlite3.Error:
        return 0


def _leftovers() -> list[str]:
    """What crest's runs left anywhere: targets in run directories whose crest is gone (support.targets_left;
    another test's, beside this one, have a live crest; this module's own `crest serve` targets are not
    crest's to stop), and Ray workers still holding crest's actors."""
    found = [line[:120] for line in targets_left().values() if "crest-target-" in line]
    for proc in psutil.process_iter(["cmdline"]):
        line = " ".join(proc.info["cmdline"] or [])
        if "ray::LoadNode" in line or "ray::TargetNode" in line:
            found.append(line[:120])
    return found


def _no_leftovers() -> None:
    deadline = time.monotonic() + 15
    while _leftovers() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _leftovers() == []


@contextmanager
def _running(*args: str) -> Iterator[subprocess.Popen[str]]:
    """`crest ARGS` in the background, killed if the test leaves it running."""
    proc = start_cli(*args)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def _histogram_counts(b64: str) -> dict[int, int]:
    """Counts by bucket index of an HdrHistogram V2 + deflate blob (the engine's serialization): a check
    of the merge that does not use the engine's own decoder."""
    raw = base64.b64decode(b64)
    _cookie, length = struct.unpack(">ii", raw[:8])
    body = zlib.decompress(raw[8 : 8 + length])
    payload_len = struct.unpack(">i", body[4:8])[0]
    payload = body[40 : 40 + payload_len]
    counts: dict[int, int] = {}
    index, pos = 0, 0
    while pos < len(payload):
        value, shift = 0, 0
        while True:
            byte = payload[pos]
            pos += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80 or shift >= 63:
                break
        value = (value >> 1) ^ -(value & 1)  # zigzag
        if value < 0:
            index += -value  # a run of empty buckets
        else:
            if value:
                counts[index] = value
            index += 1
    return counts


@pytest.mark.netns
def test_a_cluster_mix_is_the_exact_union_of_its_nodes_each_with_its_own_subnets(
    cluster: Any, nginx: None, tmp_path: Path
) -> None:
    """Nested placement: two load nodes each send from two client subnets of their own (blocks 1-2 and
    3-4 of 198.18.0.0/15) to nginx on the third node; nginx's log, brought back from its node, shows all
    four subnets, and the merged counts equal it."""
    db = tmp_path / "r.db"
    before = _crest_namespaces()
    frames = tmp_path / "frames.jsonl"
    out = run_cli("run", str(_suite(tmp_path, [2, 5])), "--cluster", cluster.address, "--server", "nginx",
                  "--target-node", "node3", "--access-log", "--network", "subnets=2,subnet-link=200mbit",
                  "--db", str(db), "-q", "--jsonl", str(frames), timeout_s=WAIT_S)  # fmt: skip
    assert out.returncode == 0, out.stderr
    # A watcher (--jsonl) saw each load node's own rate while the mixes ran, and each mix end.
    seen = [json.loads(line) for line in frames.read_text().splitlines()]
    assert [f["mix"] for f in seen if f["type"] == "mix-finished"] == [1, 2]
    by_node = [f["by_node"] for f in seen if f["type"] == "sample" and "by_node" in f]
    assert any(set(b) == {"node1", "node2"} and all(n["requests"] > 0 for n in b.values()) for b in by_node), by_node
    runs = _rows(db, "SELECT status, config_json FROM runs")
    assert [r[0] for r in runs] == ["complete"]
    server = json.loads(runs[0][1])["server"]
    node3 = cluster.nodes_by_name["node3"].node_id
    assert server["node_id"] == node3  # provisioned on the node asked for
    mixes = _rows(db, "SELECT idx, clients, requests, errors_json, access_log_requests, histogram_b64, cluster_json,"
                      " monitor_json FROM mixes ORDER BY idx")  # fmt: skip
    assert [m[1] for m in mixes] == [2, 5]
    for idx, clients, requests, errors, logged, histogram, cluster_json, monitor_json in mixes:
        assert sum(json.loads(errors).values()) == 0
        assert requests > 0 and logged == requests, f"mix {idx}: merged count equals nginx's access log"
        nodes = json.loads(cluster_json)["nodes"]
        # Dealt whole and evenly over the two load nodes (the target's node runs no load).
        assert node3 not in {n["node_id"] for n in nodes}
        assert sorted(n["clients"] for n in nodes) == ([1, 1] if clients == 2 else [2, 3])
        assert [n["first_client"] for n in nodes] == [0, nodes[0]["clients"]]
        assert sum(n["requests"] for n in nodes) == requests
        for n in nodes:
            assert abs(n["clock_offset_s"]) < 0.05 and 0 <= n["clock_uncertainty_s"] < 0.05
            assert n["engine_cores"] >= 1 and n["threads"] >= 1
        merged = _histogram_counts(histogram)
        assert sum(merged.values()) == requests
        monitor = json.loads(monitor_json)
        assert monitor["target"]["cpu_user_s"] + monitor["target"]["cpu_system_s"] > 0  # sampled on node3
        assert "busiest_node" in monitor["engine"]
        assert {n["names"][0] for n in nodes} == {"node1", "node2"}  # as the user names them
        for n in nodes:  # each node's clients dealt over its own subnets
            assert sum(s["clients"] for s in n["subnets"]) == n["clients"]
            assert sum(s["requests"] for s in n["subnets"]) == n["requests"]
    # Mix 2 (5 clients: 2 and 3 per node) has clients on every subnet. In mix 1 each node's one client sends
    # from its first subnet alone, so its second subnet carries only what the kernel sends by itself, if anything.
    network = json.loads(_rows(db, "SELECT network_json FROM mixes WHERE idx = 2")[0][0])
    up = {x["link"]: x["bytes"] for x in network["links"] if x["scope"] == "subnet" and x["direction"] == "up"}
    assert set(up) == {f"node{i} subnet {k}" for i in (1, 2) for k in (1, 2)} and all(up.values()), up
    assert network["tcp"]["clients"]["out_segs"] > 0
    assert server["node_names"] == ["node3"]
    (run_id, host_json) = _rows(db, "SELECT id, host_json FROM runs")[0]
    disclosed = json.loads(host_json)["disclosure"]
    assert disclosed["read_on"] == "the target's node node3 (127.0.0.1)"  # not the driver's
    assert disclosed["docroot"]["path"].endswith("/webcat-large-filemix") and disclosed["network"]["subnets"] == 2
    logs = list((db.parent / "logs" / run_id).rglob("access*.log"))
    seen = {m.group(1) for log in logs for m in re.finditer(r"^(\S+) ", log.read_text(), re.M)}
    blocks = {k for k in range(1, 5) for ip in seen if IPv4Address(ip) in addresses.block(k)}
    assert blocks == {1, 2, 3, 4} and all(IPv4Address(ip) in addresses.RANGE for ip in seen), seen
    assert sum(len(log.read_text().splitlines()) for log in logs) == sum(m[2] for m in mixes)
    shown = run_cli_in_process("show", run_id, "--db", str(db)).stdout
    assert "on node node3 (" in shown and node3[:8] not in shown
    assert "  setup     nginx on node3 network=subnets=2,subnet-link=200mbit\n" in shown
    assert "node1 subnet 1" in shown and re.search(r"limit +node[12]'s subnet [12]'s link \(200 Mbit/s", shown)
    _no_leftovers()
    assert _crest_namespaces() <= before, "each node removed its network"


@pytest.fixture(scope="module")
def builtin_url() -> Iterator[tuple[str, int]]:
    """The built-in target serving the tests' fileset, as a target crest did not start: (URL, pid)."""
    docroot = cached_fileset("webcat-large-filemix")
    server = subprocess.Popen([sys.executable, "-m", "crest", "serve", "--docroot", str(docroot), "--threads", "1"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)  # fmt: skip
    try:
        assert server.stdout is not None
        yield server.stdout.readline().strip().rstrip("/"), server.pid
    finally:
        server.send_signal(signal.SIGINT)
        server.communicate(timeout=10)


def test_a_client_without_the_token_is_refused(cluster: Any, builtin_url: tuple[str, int], tmp_path: Path) -> None:
    import grpc
    from ray.core.generated import gcs_service_pb2, gcs_service_pb2_grpc

    # Ray itself: the head refuses a call that carries no token.
    with grpc.insecure_channel(cluster.address) as channel, pytest.raises(grpc.RpcError) as refused:
        gcs_service_pb2_grpc.NodeInfoGcsServiceStub(channel).GetAllNodeInfo(
            gcs_service_pb2.GetAllNodeInfoRequest(), timeout=30
        )
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    # crest without the token (none in the environment, none in ~/.ray), then with another: one line, exit 2.
    bare = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH_")} | {"HOME": str(tmp_path)}
    wrong = tmp_path / "wrong-token"
    wrong.write_text("0" * 64)
    expected = {
        "none was found: set RAY_AUTH_TOKEN_PATH to a file holding the token its nodes were started with": bare,
        f"refused the Ray token from RAY_AUTH_TOKEN_PATH={wrong}: use the token": {
            **bare,
            auth.TOKEN_PATH_ENV: str(wrong),
        },
    }
    for message, env in expected.items():
        out = subprocess.run([sys.executable, "-m", "crest", "bench", builtin_url[0] + "/", "-d", "1s", "--cluster",
                              cluster.address], capture_output=True, text=True, env=env, timeout=WAIT_S, check=False)  # fmt: skip
        lines = out.stderr.strip().splitlines()
        assert out.returncode == 2 and len(lines) == 1, out.stderr
        assert lines[0].startswith(f"crest: error: --cluster {cluster.address}: the cluster ") and message in lines[0]
        assert "0" * 64 not in out.stderr + out.stdout


@pytest.mark.netns
def test_merged_histogram_is_the_sum_of_the_nodes_histograms(cluster: Any, builtin_url: tuple[str, int]) -> None:
    """`crest bench --cluster --json` keeps each node's own histogram: bucket by bucket, the merge is their sum;
    with each node sending from two subnets of its own through its own delay line (nested placement)."""
    url = builtin_url[0] + "/webcat/6K.html"
    out = run_cli("bench", url, "-c", "4", "-d", "2s", "--cluster", cluster.address, "--nodes", "2",
                  "--network", "subnets=2,rtt=20ms", "--json", timeout_s=WAIT_S)  # fmt: skip
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    jsonschema.validate(report, json.loads(files("crest").joinpath("schemas/bench.schema.json").read_text()))
    nodes = report["cluster"]["nodes"]
    assert [n["clients"] for n in nodes] == [2, 2]
    total: dict[int, int] = {}
    for n in nodes:
        for index, count in _histogram_counts(n["histogram_b64"]).items():
            total[index] = total.get(index, 0) + count
    assert _histogram_counts(report["histogram_b64"]) == total
    assert sum(total.values()) == report["requests"] == sum(n["requests"] for n in nodes) > 0
    assert report["latency_us"]["p50"] >= 20_000  # each node's delay line added its round trip
    up = {
        x["link"]: x["bytes"] for x in report["network"]["links"] if x["scope"] == "subnet" and x["direction"] == "up"
    }
    assert len(up) == 4 and all(up.values()) and {link.split()[0] for link in up} == {n["names"][0] for n in nodes}
    assert all(sum(s["clients"] for s in n["subnets"]) == 2 for n in nodes)
    _no_leftovers()


@pytest.fixture(scope="module")
def builtin_h3_url() -> Iterator[str]:
    """The built-in target serving HTTP/3 (QUIC on its HTTPS port), as a target crest did not start: its https URL."""
    docroot = cached_fileset("webcat-large-filemix")
    server = subprocess.Popen([sys.executable, "-m", "crest", "serve", "--docroot", str(docroot), "--threads", "1",
                               "--tls-port", "0", "--http3"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)  # fmt: skip
    try:
        assert server.stdout is not None
        server.stdout.readline()  # the plain listener's URL
        yield server.stdout.readline().strip().rstrip("/")
    finally:
        server.send_signal(signal.SIGINT)
        server.communicate(timeout=10)


def test_http3_load_from_two_nodes_merges_exactly(cluster: Any, builtin_h3_url: str) -> None:
    """HTTP/3 from two nodes, each with its own QUIC connections: the merge adds up their requests, their
    histograms bucket by bucket, their handshakes and the HTTP/3 counters, as for HTTP/1."""
    out = run_cli("bench", builtin_h3_url + "/webcat/6K.html", "--http", "3", "--streams", "4", "-c", "4", "-d", "2s",
                  "--insecure", "--cluster", cluster.address, "--nodes", "2", "--json", timeout_s=WAIT_S)  # fmt: skip
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    jsonschema.validate(report, json.loads(files("crest").joinpath("schemas/bench.schema.json").read_text()))
    assert report["config"]["http_version"] == "3" and sum(report["errors"].values()) == 0
    nodes = report["cluster"]["nodes"]
    assert [n["clients"] for n in nodes] == [2, 2] and all(n["requests"] > 0 for n in nodes)
    total: dict[int, int] = {}
    for n in nodes:
        for index, count in _histogram_counts(n["histogram_b64"]).items():
            total[index] = total.get(index, 0) + count
    assert _histogram_counts(report["histogram_b64"]) == total
    assert sum(total.values()) == report["requests"] == sum(n["requests"] for n in nodes)
    # One QUIC connection per client, each its own TLS 1.3 handshake; every request a stream of its own.
    assert report["connections_opened"] == report["tls_handshakes"] == 4
    assert report["h2"]["streams_opened"] >= report["requests"]
    _no_leftovers()


@pytest.mark.alone
def test_a_lost_node_fails_the_mix_and_resume_completes_the_run(cluster: Any, nginx: None, tmp_path: Path) -> None:
    db, frames = tmp_path / "r.db", tmp_path / "frames.jsonl"
    args = ["run", str(_suite(tmp_path, [2, 3], length_s=4)), "--cluster", cluster.address, "--server", "nginx",
            "--target-node", "node3", "--db", str(db), "-q", "--jsonl", str(frames)]  # fmt: skip
    with _running(*args) as proc:
        inside = lambda: load_running(frames, mix=2)  # noqa: E731
        wait_until(lambda: proc.poll() is not None or inside(), timeout_s=WAIT_S, what="the second mix's load")
        assert proc.poll() is None, proc.communicate()[1]
        assert _mixes_stored(db) == 1
        cluster.remove_node(cluster.nodes_by_name["node2"])
        lost_at = time.monotonic()
        _, err = proc.communicate(timeout=60)
        took = time.monotonic() - lost_at
    assert proc.returncode == 1, err
    assert took < 10, f"the lost node failed the mix after {took:.1f}s"  # the issue: within 10 s, teardown included
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("crest: error: node ") and "--resume" in lines[0], err
    ((run_id, status, reason),) = _rows(db, "SELECT id, status, reason FROM runs")
    assert status == "failed" and "during mix 2" in reason
    assert [m[0] for m in _rows(db, "SELECT idx FROM mixes")] == [1]  # the finished mix is kept
    _no_leftovers()
    cluster.nodes_by_name["node2"] = cluster.add_node(**NODE, resources={"node2": 1})
    cluster.wait_for_nodes()
    out = run_cli("run", "--resume", run_id, "--db", str(db), "-q", timeout_s=WAIT_S)
    assert out.returncode == 0, out.stderr
    assert _rows(db, "SELECT status FROM runs") == [("complete",)]
    assert [m[0] for m in _rows(db, "SELECT idx FROM mixes ORDER BY idx")] == [1, 2]
    _no_leftovers()


def test_file_clients_dealt_over_nodes_against_samba_keep_the_password_secret(cluster: Any, tmp_path: Path) -> None:
    """A NetBench-style file ladder from two load nodes: against a Samba crest did not start (its password from
    a 0600 file) and against one crest starts on node3 (its login read there); every operation met as the
    loadfile expects (trees numbered globally, so no two clients share one), one pass per client from both
    nodes leaving on the share exactly the bytes crest counted, and the password in no output,
    the results file or Ray's logs: it crossed the cluster only as a Secret, over token authentication."""
    from crest.filesets.cache import empty_docroot
    from crest.servers.base import ServerSettings, Target
    from test_fileops import LINES, LOADFILE, SUITE

    samba = adapter("samba")
    if not samba.installed():
        pytest.skip("apt-get install samba smbclient")
    loadfile = tmp_path / "tiny.txt"
    loadfile.write_text(LOADFILE)
    suite = tmp_path / "tiny.toml"
    suite.write_text(SUITE.format(loadfile=loadfile).replace("clients = [1, 3]", "clients = [4]"))
    db = tmp_path / "r.db"
    with Target(samba, ServerSettings(docroot=empty_docroot(), kinds=frozenset({"loadfile"}))) as target:
        assert target.secret_file is not None
        password = Path(target.secret_file).read_text().strip()
        pw = tmp_path / "pw"
        pw.write_text(password + "\n")
        pw.chmod(0o600)
        given = run_cli("run", str(suite), "--target", target.url, "--password-file", str(pw), "--cluster",
                        cluster.address, "--nodes", "2", "--db", str(db), "-q", timeout_s=WAIT_S)  # fmt: skip
        # One pass per client from the two nodes, trees left in place: what is on the share is what crest counted.
        once = run_cli("bench", target.url, "-c", "4", "-n", str(4 * LINES), "--loadfile", str(loadfile),
                       "--password-file", str(pw), "--skip-cleanup", "--cluster", cluster.address, "--nodes", "2",
                       "--json", timeout_s=WAIT_S)  # fmt: skip
        assert once.returncode == 0, once.stderr
        report = json.loads(once.stdout)
        assert [n["clients"] for n in report["cluster"]["nodes"]] == [2, 2] and report["requests"] == 4 * LINES
        trees = sorted((target.site.share_dir / "clients").glob("client*"))
        assert [t.name for t in trees] == ["client0", "client1", "client2", "client3"]  # numbered globally
        on_share = sum(f.stat().st_size for t in trees for f in t.iterdir())
        assert on_share == report["classes"]["WriteX"]["bytes"] == 4 * 150
    started = run_cli("run", str(suite), "--server", "samba", "--cluster", cluster.address, "--target-node", "node3",
                      "--db", str(db), "-q", timeout_s=WAIT_S)  # fmt: skip
    for out in (given, started):
        assert out.returncode == 0, out.stderr
    for errors_json, cluster_json in _rows(db, "SELECT errors_json, cluster_json FROM mixes"):
        assert not any(json.loads(errors_json).values()), errors_json
        assert [n["clients"] for n in json.loads(cluster_json)["nodes"]] == [2, 2]
    logs = Path(cluster.head_node.get_session_dir_path()) / "logs"
    assert logs.is_dir()
    for where in [db, *sorted(p for p in logs.rglob("*") if p.is_file())]:
        assert password.encode() not in where.read_bytes(), where
    assert password not in given.stdout + given.stderr + started.stdout + started.stderr + once.stdout + once.stderr
    _no_leftovers()


def test_a_directory_bench_deals_its_clients_over_the_nodes(cluster: Any, tmp_path: Path) -> None:
    """`crest bench file:///DIR --cluster`: each node's clients replay the loadfile in DIR on its own machine
    (here one machine: one directory, each client its own tree by its global number), merged exactly."""
    from test_fileops import LOADFILE

    loadfile = tmp_path / "tiny.txt"
    loadfile.write_text(LOADFILE)
    target = tmp_path / "target"
    target.mkdir()
    out = run_cli("bench", f"file://{target}", "-c", "4", "-d", "1s", "--loadfile", str(loadfile), "--cluster",
                  cluster.address, "--nodes", "2", "--json", timeout_s=WAIT_S)  # fmt: skip
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    nodes = report["cluster"]["nodes"]
    assert [(n["first_client"], n["clients"]) for n in nodes] == [(0, 2), (2, 2)]
    assert report["requests"] == sum(n["requests"] for n in nodes) > 0 and all(n["requests"] for n in nodes)
    assert report["classes"]["WriteX"]["requests"] > 0
    assert not list(target.glob("clients/client*"))  # every client removed its own tree
    _no_leftovers()


def test_a_specweb99_smoke_test_deals_its_users_over_the_nodes(cluster: Any, tmp_path: Path) -> None:
    """`crest specweb99 --cluster`, two iterations (the loop): the kit's harness validates the built-in target
    on node3, resets it before each iteration and checks its POST log after each; the connections are dealt
    over two nodes with their user ids numbered globally, and each POST log holds the POSTs the nodes sent."""
    db = tmp_path / "sw.db"
    out = run_cli("specweb99", "--connections", "4", "--server", "builtin", "--target-node", "node3", "--cluster",
                  cluster.address, "--profile", "smoke", "--iterations", "2", "--db", str(db), timeout_s=WAIT_S)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "SPECweb99: " in out.stdout and "conforming connections" in out.stdout
    assert "  iteration 1 of 2: " in out.stderr and "  iteration 2 of 2: " in out.stderr  # said as each starts
    iterations = _rows(db, "SELECT cluster_json, specweb99_json FROM mixes ORDER BY idx")
    assert len(iterations) == 2
    for cluster_json, specweb99_json in iterations:
        nodes = json.loads(cluster_json)["nodes"]
        assert [(n["first_client"], n["clients"]) for n in nodes] == [(0, 2), (2, 2)] and all(
            n["requests"] for n in nodes
        )
        post_log = json.loads(specweb99_json)["post_log"]  # each iteration's own log: Reset emptied it
        assert post_log["sent"] > 0 and post_log["sent"] - 1 <= post_log["records"] <= post_log["sent"]
    (listed,) = json.loads(run_cli_in_process("runs", "--db", str(db), "--json").stdout)
    assert listed["kind"] == "specweb99" and listed["result"].startswith("4 conn ")
    _no_leftovers()


@pytest.mark.netns
def test_a_design_runs_on_the_nodes_with_and_without_their_own_subnets(cluster: Any, tmp_path: Path) -> None:
    """`crest doe --cluster`: each run of the design is dealt over the load nodes against the built-in target
    on node3; the network factor's levels run over the nodes' loopback and from each node's own subnets."""
    suite = _suite(tmp_path, [2], length_s=1)
    design = tmp_path / "design.toml"
    design.write_text(f'suite = "{suite}"\nprofile = "full"\nserver = "builtin"\nresponse = "peak_rps"\n'
                      '[factors]\nnetwork = ["none", "subnets=2"]\n')  # fmt: skip
    db = tmp_path / "r.db"
    out = run_cli("doe", str(design), "--cluster", cluster.address, "--target-node", "node3", "--db", str(db),
                  "--json", "-q", timeout_s=WAIT_S)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert set(json.loads(out.stdout)["effects"]) == {"mean", "network"}
    rows = _rows(db, "SELECT r.factors_json, m.cluster_json, m.network_json FROM runs r JOIN mixes m ON m.run_id = r.id"
                     " ORDER BY r.started_at")  # fmt: skip
    assert [json.loads(f)["network"] for f, _, _ in rows] == ["none", "subnets=2"]
    assert all(len(json.loads(c)["nodes"]) == 2 for _, c, _ in rows)
    assert rows[0][2] is None and {x["node"] for x in json.loads(rows[1][2])["links"]} == {"node1", "node2"}
    _no_leftovers()


@pytest.mark.parametrize("network", [None, "subnets=2"])
@pytest.mark.netns
def test_a_capacity_search_probes_from_the_nodes(
    cluster: Any, builtin_url: tuple[str, int], tmp_path: Path, network: str | None
) -> None:
    """crest capacity takes --cluster like crest run: every probe is a mix dealt over the load nodes (and with
    --network, from each node's own subnets)."""
    db = tmp_path / "c.db"
    out = run_cli("capacity", builtin_url[0] + "/webcat/6K.html", "--rule", "errors<1%", "--max", "2", "--confirm", "1", "--length",
                  "2s", "--cluster", cluster.address, "--nodes", "2", "--db", str(db), "-q",
                  *(["--network", network] if network else []), timeout_s=WAIT_S)  # fmt: skip
    assert out.returncode == 0, out.stderr
    probes = _rows(db, "SELECT connections, requests, cluster_json, network_json FROM mixes ORDER BY idx")
    assert [p[0] for p in probes] == [1, 2, 2] and all(p[1] > 0 for p in probes)
    assert [len(json.loads(p[2])["nodes"]) for p in probes] == [1, 2, 2]  # one connection: one node
    # The preflight's one GET, sent from a load node before the first probe, is accounted for there.
    labs = [json.loads(r[0] or "{}") for r in _rows(db, "SELECT lab_json FROM mixes ORDER BY idx")]
    assert [lab.get("preflight_requests") for lab in labs] == [1, None, None]
    if network is not None:  # each probe's links are its nodes' own
        for p in probes:
            ran = {n["names"][0] for n in json.loads(p[2])["nodes"]}
            assert {x["node"] for x in json.loads(p[3])["links"]} == ran, p


def test_a_target_on_its_node_restarts_and_warms_up_between_mixes(cluster: Any, nginx: None, tmp_path: Path) -> None:
    """restart_target and warm-up passes work on a cluster as on one machine: the server on node3 gets new
    processes before mix 2, and each mix's warm-up pass requests every file once before its count begins."""
    suite = _suite(tmp_path, [2, 3], length_s=2)
    suite.write_text(suite.read_text().replace("[ladder]\n", '[ladder]\nrestart_target = true\nwarmup = "each"\n'))
    db = tmp_path / "r.db"
    out = run_cli("run", str(suite), "--cluster", cluster.address, "--server", "nginx", "--target-node", "node3",
                  "--access-log", "--db", str(db), "-q", timeout_s=WAIT_S)  # fmt: skip
    assert out.returncode == 0, out.stderr
    (lab1, logged1, req1), (lab2, logged2, req2) = [
        (json.loads(lab or "{}"), logged, requests)
        for lab, logged, requests in _rows(db, "SELECT lab_json, access_log_requests, requests FROM mixes ORDER BY idx")
    ]
    files = len(build_manifest("webcat-large-filemix", seed=0).files)
    assert lab1["warmup"]["requests"] == lab2["warmup"]["requests"] == files and not lab1["warmup"]["errors"]
    assert (logged1, logged2) == (req1, req2)  # the pass was logged before each mix's count began
    assert "restart" not in lab1
    before, after = lab2["restart"]["pids_before"], lab2["restart"]["pids_after"]
    assert before and after and not set(before) & set(after), "the restart started new processes on the node"
    _no_leftovers()


def test_a_table_sent_once_is_dealt_over_the_nodes_so_each_file_is_requested_once(
    cluster: Any, nginx: None, tmp_path: Path
) -> None:
    """Zeus' non-cached selection on a cluster: the nodes' tables are disjoint, so nginx's log (brought back
    from node3) holds every file of the fileset exactly once."""
    suite = _suite(tmp_path, [4], length_s=2)
    suite.write_text(suite.read_text().replace("[workload]\n", '[workload]\nselection = "once"\n'))
    db = tmp_path / "r.db"
    out = run_cli("run", str(suite), "--cluster", cluster.address, "--server", "nginx", "--target-node", "node3",
                  "--access-log", "--db", str(db), "-q", timeout_s=WAIT_S)  # fmt: skip
    assert out.returncode == 0, out.stderr
    ((requests, logged, cluster_json),) = _rows(db, "SELECT requests, access_log_requests, cluster_json FROM mixes")
    files = build_manifest("webcat-large-filemix", seed=0).files
    assert requests == logged == len(files) and [n["requests"] > 0 for n in json.loads(cluster_json)["nodes"]] == [
        True, True,
    ]  # fmt: skip
    (run_id,) = _rows(db, "SELECT id FROM runs")[0]
    paths = [m.group(1) for log in (db.parent / "logs" / run_id).rglob("access*.log")
             for m in re.finditer(r'"GET (\S+) ', log.read_text())]  # fmt: skip
    assert sorted(paths) == sorted(f"/{f.path}" for f in files)
    _no_leftovers()


def test_a_role_map_runs_side_by_side_on_the_target_node(cluster: Any, tmp_path: Path) -> None:
    """VeriTest's TUX-and-Apache on a cluster: nginx serves the static class and lighttpd the FastCGI one,
    both started on node3; each server's log (brought back) holds only its own classes."""
    for name in ("nginx", "lighttpd"):
        if not adapter(name).installed():
            pytest.skip(f"{adapter(name).title} is not installed: {adapter(name).install_hint()}")
    suite = tmp_path / "roles.toml"
    suite.write_text(
        static_suite("roles", "role map", [2], length_s=2, ramp_s=0).replace(
            "weight = 1\n", 'weight = 80\n[[workload.classes]]\nname = "dyn"\nkind = "fastcgi"\nweight = 20\n'
        )
    )
    db = tmp_path / "r.db"
    out = run_cli("run", str(suite), "--cluster", cluster.address, "--server", "static=nginx,dynamic=lighttpd",
                  "--target-node", "node3", "--access-log", "--db", str(db), "-q", timeout_s=WAIT_S)  # fmt: skip
    assert out.returncode == 0, out.stderr
    ((requests, logged, lab_json),) = _rows(db, "SELECT requests, access_log_requests, lab_json FROM mixes")
    by_role = json.loads(lab_json)["access_log_requests_by_role"]
    assert by_role["static"] > 0 and by_role["dynamic"] > 0 and logged == requests == sum(by_role.values())
    (run_id, config_json) = _rows(db, "SELECT id, config_json FROM runs")[0]
    server = json.loads(config_json)["server"]
    assert set(server["roles"]) == {"static", "dynamic"} and server["node_names"] == ["node3"]
    logs = db.parent / "logs" / run_id
    paths = {
        name: re.findall(r'"GET (\S+) ', (logs / name / "access.log").read_text()) for name in ("nginx", "lighttpd")
    }
    assert paths["nginx"] and not any(p.startswith("/fcgi/") for p in paths["nginx"])
    assert paths["lighttpd"] and all(p.startswith("/fcgi/") for p in paths["lighttpd"])
    _no_leftovers()


def _node_processes(node: Any) -> list[psutil.Process]:
    """A node's raylet and every process it started (its workers, the actors' processes among them)."""
    from ray._private import ray_constants

    (raylet,) = node.all_processes[ray_constants.PROCESS_TYPE_RAYLET]
    root = psutil.Process(raylet.process.pid)
    return [root, *root.children(recursive=True)]


@pytest.mark.alone
def test_a_paused_node_fails_the_mix_within_10_s_naming_it(cluster: Any, nginx: None, tmp_path: Path) -> None:
    """A node that stops answering without dying (SIGSTOP on its raylet and workers: what a hung machine or a
    cut network looks like from the driver) fails the mix through the heartbeat, and nothing is left behind
    once it wakes."""
    db, frames = tmp_path / "r.db", tmp_path / "frames.jsonl"
    args = ["run", str(_suite(tmp_path, [2, 3], length_s=4)), "--cluster", cluster.address, "--server", "nginx",
            "--target-node", "node3", "--db", str(db), "-q", "--jsonl", str(frames)]  # fmt: skip
    paused: list[psutil.Process] = []
    try:
        with _running(*args) as proc:
            inside = lambda: load_running(frames, mix=2)  # noqa: E731
            wait_until(lambda: proc.poll() is not None or inside(), timeout_s=WAIT_S, what="the second mix's load")
            assert proc.poll() is None, proc.communicate()[1]
            assert _mixes_stored(db) == 1
            paused = _node_processes(cluster.nodes_by_name["node2"])
            for p in paused:
                p.send_signal(signal.SIGSTOP)
            paused_at = time.monotonic()
            _, err = proc.communicate(timeout=60)
            took = time.monotonic() - paused_at
    finally:
        for p in paused:
            try:
                p.send_signal(signal.SIGCONT)
            except psutil.NoSuchProcess:
                pass
    assert proc.returncode == 1, err
    assert took < 10, f"the paused node failed the mix after {took:.1f}s"
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("crest: error: node node2 ") and "--resume" in lines[0], err
    assert "stopped answering" in lines[0], err
    ((status, reason),) = _rows(db, "SELECT status, reason FROM runs")
    assert status == "failed" and "during mix 2" in reason
    assert [m[0] for m in _rows(db, "SELECT idx FROM mixes")] == [1]
    _no_leftovers()


def test_ctrl_c_stops_every_node_and_the_target(cluster: Any, nginx: None, tmp_path: Path) -> None:
    db, frames = tmp_path / "r.db", tmp_path / "frames.jsonl"
    args = ["run", str(_suite(tmp_path, [2], length_s=30)), "--cluster", cluster.address, "--server", "nginx",
            "--target-node", "node3", "--db", str(db), "-q", "--jsonl", str(frames)]  # fmt: skip
    with _running(*args) as proc:
        wait_until(lambda: proc.poll() is not None or load_running(frames), timeout_s=WAIT_S,
                   what="the cluster mix's load")  # fmt: skip
        assert proc.poll() is None, proc.communicate()[1]
        assert any("ray::LoadNode" in line for line in _leftovers())
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert [r[0] for r in _rows(db, "SELECT status FROM runs")] == ["interrupted"]
    _no_leftovers()


def test_an_external_target_is_monitored_on_its_node(
    cluster: Any, builtin_url: tuple[str, int], tmp_path: Path
) -> None:
    url, pid = builtin_url
    db = tmp_path / "r.db"
    suite = _suite(tmp_path, [2], length_s=2, drop_caches=True)
    out = run_cli("run", str(suite), "--cluster", cluster.address, "--target", url, "--monitor-node", "node3",
                  "--monitor-pid", str(pid), "--repeat", "2", "--db", str(db), "-q", timeout_s=WAIT_S)  # fmt: skip
    assert out.returncode == 0, out.stderr
    # Two runs in one process: the first run's load nodes give their CPUs back for the second's.
    assert _rows(db, "SELECT status FROM runs") == [("complete",), ("complete",)]
    rows = _rows(db, "SELECT monitor_json, cluster_json, verdicts_json FROM mixes ORDER BY started_at")
    monitor_json, cluster_json, verdicts_json = rows[1]
    assert [v for v in json.loads(verdicts_json) if v["kind"] == "page_cache"] == []  # dropped on node3
    target = json.loads(monitor_json)["target"]
    assert target["cpu_user_s"] + target["cpu_system_s"] > 0 and target["rss_bytes_max"] > 0
    assert target["ctx_switches_voluntary"] + target["ctx_switches_involuntary"] > 0
    node3 = cluster.nodes_by_name["node3"].node_id
    assert node3 not in {n["node_id"] for n in json.loads(cluster_json)["nodes"]}  # the monitor's node runs no load
    _no_leftovers()


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--cluster", "127.0.0.1:1"], "--cluster 127.0.0.1:1: nothing answers there"),
        (["--nodes", "5"], "--nodes 5 needs 5 load nodes but the cluster has 2"),
        (["--target-node", "nosuch"], "--target-node 'nosuch' names no alive node"),
        (["--nodes", "3", "--target-node", "node3"], "--nodes 3 needs 3 load nodes"),
    ],
)
def test_bad_cluster_input_is_one_line_exit_2_before_any_run(
    cluster: Any, nginx: None, tmp_path: Path, extra: list[str], message: str
) -> None:
    db = tmp_path / "r.db"
    args = ["run", str(_suite(tmp_path, [2])), "--server", "nginx", "--db", str(db), "-q"]
    if "--cluster" not in extra:
        args += ["--cluster", cluster.address]
    if "--target-node" not in extra:
        args += ["--target-node", "node3"]
    out = run_cli(*args, *extra, timeout_s=WAIT_S)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], out.stderr
    assert not db.exists() or _rows(db, "SELECT COUNT(*) FROM runs") == [(0,)]


def test_a_suite_with_fewer_clients_than_nodes_is_refused(cluster: Any, nginx: None, tmp_path: Path) -> None:
    out = run_cli("run", str(_suite(tmp_path, [1])), "--cluster", cluster.address, "--server", "nginx",
                  "--target-node", "node3", "--db", str(tmp_path / "r.db"), "-q", timeout_s=WAIT_S)  # fmt: skip
    assert out.returncode == 2
    assert "largest mix has 1 clients, fewer than the 2 load nodes" in out.stderr


def test_without_ray_the_cli_names_the_install(tmp_path: Path) -> None:
    shim = tmp_path / "shim" / "ray"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text("raise ImportError('no ray here')\n")
    env = {**os.environ, "PYTHONPATH": f"{shim.parent}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    out = subprocess.run([sys.executable, "-m", "crest", "run", str(_suite(tmp_path, [2])), "--target",
                          "http://127.0.0.1:1", "--cluster", "local:2", "--db", str(tmp_path / "r.db")],
                         capture_output=True, text=True, env=env, timeout=60, check=False)  # fmt: skip
    assert out.returncode == 2
    assert (
        out.stderr.strip() == "crest: error: --cluster needs Ray, which is not installed: pip install 'crest[cluster]'"
    )


@pytest.mark.parametrize("command", ["capacity", "bench"])
def test_a_path_that_answers_404_stops_a_cluster_command_before_any_load(
    cluster: Any, builtin_url: tuple[str, int], tmp_path: Path, command: str
) -> None:
    """The preflight runs from where the load runs: a load node sends the one GET, and its 404 stops the
    command in one line before the first mix, as it does on this machine and from subnets."""
    db = tmp_path / "c.db"
    url = builtin_url[0] + "/no-such-file.html"
    args = (["capacity", url, "--rule", "errors<1%", "--max", "2", "--length", "2s", "--db", str(db), "-q"]
            if command == "capacity" else ["bench", url, "-c", "2", "-d", "2s"])  # fmt: skip
    out = run_cli(*args, "--cluster", cluster.address, "--nodes", "2", timeout_s=WAIT_S)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "answered 404" in lines[0] and "before any load was sent" in lines[0], lines
    if command == "capacity":
        assert _rows(db, "SELECT idx FROM mixes") == []
