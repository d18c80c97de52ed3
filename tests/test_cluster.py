"""Cluster mode's pure parts, without Ray: --cluster addresses, dealing clients, choosing and naming
nodes, clock offsets, each node's share of a spec, the option rules and the per-node table."""

from __future__ import annotations

import stat
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from crest.cli.render import render_nodes
from crest.cluster import auth
from crest.cluster.address import parse_cluster
from crest.cluster.clock import measure
from crest.cluster.placement import Node, check_clients, choose_nodes, find_node
from crest.errors import ConfigError
from crest.host.monitor import nodes_engine_summary
from crest.load.fanout import budgets, deal, share_specs
from crest.load.runspec import RunSpec
from crest.runner.request import RunRequest, _check_cluster_options
from crest.suite import load_suite
from support import run_cli_in_process

NODES = [
    Node("aa11bb22cc33" + "0" * 44, "10.0.0.1", 4, ("node1",)),
    Node("dd44ee55ff66" + "0" * 44, "10.0.0.2", 4, ("node2",)),
    Node("112233445566" + "0" * 44, "10.0.0.2", 2, ("server1",)),
]


@pytest.mark.parametrize(
    "text,kind,address",
    [
        ("auto", "auto", "auto"),
        ("ray://head:10001", "client", "ray://head:10001"),
        ("10.0.0.5:6379", "gcs", "10.0.0.5:6379"),
        ("local:3", "local", "auto"),
        ("machines:3", "machines", "ray://198.19.240.2:10001"),
    ],
)
def test_cluster_addresses(text: str, kind: str, address: str) -> None:
    parsed = parse_cluster(text)
    assert parsed.kind == kind
    if kind != "local":
        assert parsed.ray_address() == address
    assert parse_cluster("local:2").loopback and parse_cluster("127.0.0.1:6379").loopback
    assert not parse_cluster("10.0.0.5:6379").loopback


@pytest.mark.parametrize("text", ["", "local:0", "local:x", "local:99", "http://h:1", "head", "ray://head", "h:99999",
                                  "machines:17"])  # fmt: skip
def test_a_bad_cluster_address_names_the_forms(text: str) -> None:
    with pytest.raises(ConfigError, match="--cluster"):
        parse_cluster(text)


def test_machines_n_carries_its_lab_and_is_not_loopback() -> None:
    parsed = parse_cluster("machines:4,segments=2,cpus=0.5,skew=50ms")
    assert parsed.lab is not None and [m.name for m in parsed.lab.nodes] == ["node1", "node2", "node3", "node4"]
    assert not parsed.loopback and parsed.host == "198.19.240.2"
    with pytest.raises(ConfigError, match="invalid machines spec 'x'"):
        parse_cluster("machines:x")


@pytest.mark.parametrize("clients,nodes", [(7, 3), (6, 3), (60, 4), (2, 3), (1, 2), (61, 2)])
def test_clients_are_dealt_whole_evenly_and_in_order(clients: int, nodes: int) -> None:
    shares = deal(clients, nodes)
    assert sum(s.clients for s in shares) == clients
    assert max(s.clients for s in shares) - min(s.clients for s in shares) <= 1
    assert all(s.clients >= 1 for s in shares)
    assert [s.first_client for s in shares] == [sum(x.clients for x in shares[:i]) for i in range(len(shares))]
    assert len(shares) == min(clients, nodes)  # a ladder's first rungs use fewer nodes, never an empty one


def test_a_suite_too_small_for_the_nodes_is_refused() -> None:
    check_clients(2, NODES[:2])
    with pytest.raises(ConfigError, match="largest mix has 1 clients.*--nodes 1"):
        check_clients(1, NODES[:2])


def test_load_nodes_leave_out_the_targets_node_and_count_is_checked() -> None:
    assert choose_nodes(NODES, None, {NODES[2].node_id}) == NODES[:2]
    assert choose_nodes(NODES, 1, set()) == NODES[:1]
    with pytest.raises(ConfigError, match="--nodes 3 needs 3 load nodes but the cluster has 2 .1 kept for the target"):
        choose_nodes(NODES, 3, {NODES[2].node_id})
    with pytest.raises(ConfigError, match="no node left for load"):
        choose_nodes(NODES[:1], None, {NODES[0].node_id})


def test_nodes_are_named_by_id_ip_or_resource() -> None:
    assert find_node(NODES, "aa11bb", "--target-node") is NODES[0]
    assert find_node(NODES, "10.0.0.1", "--target-node") is NODES[0]
    assert find_node(NODES, "server1", "--target-node") is NODES[2]
    with pytest.raises(ConfigError, match="--target-node 'nosuch' names no alive node.*server1"):
        find_node(NODES, "nosuch", "--target-node")
    with pytest.raises(ConfigError, match="names 2 nodes .shared IP.*node id"):
        find_node(NODES, "10.0.0.2", "--target-node")
    with pytest.raises(ConfigError, match="names no alive node"):
        find_node(NODES, "aa1", "--target-node")  # too short a prefix to be an id


def test_the_round_with_the_shortest_round_trip_gives_the_offset() -> None:
    # The driver's clock reads t; the node's runs 2.5 s ahead; round trips of 40, 4 and 20 ms.
    reads = iter([100.0, 100.040, 200.0, 200.004, 300.0, 300.020])
    node_reads = iter([100.030 + 2.5, 200.002 + 2.5, 300.001 + 2.5])
    offset = measure(lambda: next(node_reads), rounds=3, now=lambda: next(reads))
    assert offset.round_trip_s == pytest.approx(0.004)
    assert offset.offset_s == pytest.approx(2.5)
    assert offset.uncertainty_s == pytest.approx(0.002)


def test_each_node_runs_its_clients_and_its_share_of_rate_and_budget() -> None:
    spec = RunSpec(url="http://127.0.0.1:1/", connections=28, connections_per_client=4, rate_rps=700.0,
                   max_requests=1000, seed=5)  # fmt: skip
    specs = share_specs(spec, deal(7, len(NODES)), "load nodes", "fewer --nodes")
    assert [s.connections for s in specs] == [12, 8, 8]
    assert sum(s.rate_rps or 0 for s in specs) == pytest.approx(700.0)
    assert sum(s.max_requests or 0 for s in specs) == 1000
    assert len({s.seed for s in specs}) == 3  # each node draws its own requests


def test_a_specweb99_node_numbers_its_connections_from_its_first_global_one() -> None:
    spec = RunSpec(url="http://127.0.0.1:1/", connections=7, specweb99={"base_url": "http://127.0.0.1:1", "dirs": 30})
    specs = share_specs(spec, deal(7, len(NODES)), "load nodes", "fewer --nodes")  # clients 3, 2, 2
    assert [s.specweb99["first_connection"] for s in specs if s.specweb99] == [0, 3, 5]
    assert all(s.specweb99 and s.specweb99["dirs"] == 30 for s in specs)


def test_a_node_split_again_over_its_subnets_numbers_from_its_own_first_connection() -> None:
    """Nested placement: a node's share, dealt again over its subnets, keeps the global numbering."""
    spec = RunSpec(url="http://127.0.0.1:1/", connections=7, specweb99={"base_url": "http://127.0.0.1:1", "dirs": 30})
    node = share_specs(spec, deal(7, len(NODES)), "load nodes", "fewer --nodes")[1]  # clients 3-4
    subnets = share_specs(node, deal(2, 2), "subnets", "fewer subnets")
    assert [s.specweb99["first_connection"] for s in subnets if s.specweb99] == [3, 4]


def test_a_table_sent_once_is_dealt_so_every_entry_goes_exactly_once() -> None:
    """Zeus' non-cached test over nodes (and a node's subnets): disjoint tables that together are the whole,
    each node's holding small and large files alike."""
    table = tuple({"url": f"http://127.0.0.1:1/{i}", "weight": 1, "class": 0} for i in range(20))
    spec = RunSpec(url="http://127.0.0.1:1/", connections=7, requests=table, selection="once")
    specs = share_specs(spec, deal(7, len(NODES)), "load nodes", "fewer --nodes")
    urls = [e["url"] for s in specs for e in s.requests]
    assert sorted(urls) == sorted(e["url"] for e in table)
    assert [len(s.requests) for s in specs] == [9, 6, 5] and {"http://127.0.0.1:1/0", "http://127.0.0.1:1/19"} & {
        e["url"] for e in specs[2].requests
    } == {"http://127.0.0.1:1/19"}
    again = share_specs(specs[0], deal(3, 2), "subnets", "fewer subnets")
    assert sorted(e["url"] for s in again for e in s.requests) == sorted(e["url"] for e in specs[0].requests)
    with pytest.raises(ConfigError, match="sends each of its 2 requests once, too few to deal over 7 clients"):
        share_specs(replace(spec, requests=table[:2]), deal(7, len(NODES)), "load nodes", "fewer --nodes")


def test_a_request_budget_gives_every_node_at_least_one() -> None:
    shares = deal(4, len(NODES))  # clients 2, 1, 1
    assert budgets(3, shares, "load nodes", "fewer --nodes") == [1, 1, 1]
    assert budgets(5, shares, "load nodes", "fewer --nodes") == [2, 1, 2]
    assert sum(budgets(1001, shares, "load nodes", "fewer --nodes")) == 1001  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="-n 2 is fewer requests than the 3 load nodes"):
        budgets(2, shares, "load nodes", "fewer --nodes")


def _request(**kwargs: object) -> RunRequest:
    fields: dict[str, object] = {"target": "http://127.0.0.1:1", **kwargs}
    return RunRequest(suite=load_suite("mindcraft-webbench"), **fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"nodes": 2}, "--nodes places work on a cluster's nodes: add --cluster"),
        ({"target_node": "n"}, "--target-node places work"),
        ({"cluster": "local:2", "target": None, "server": "nginx"}, "needs its node: add --target-node"),
        ({"cluster": "local:2", "target_node": "n"}, "--target-node runs a target crest starts"),
        ({"cluster": "local:2", "monitor_node": "n"}, "--monitor-pid PID or --monitor-name NAME"),
        ({"cluster": "local:2", "monitor_node": "n", "monitor_pid": 1, "monitor_name": "x"}, "--monitor-pid PID or"),
        ({"cluster": "local:2", "monitor_pid": 1}, "need --monitor-node"),
        ({"cluster": "bogus"}, "invalid --cluster"),
    ],
)
def test_cluster_options_that_do_not_fit_together(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        _check_cluster_options(_request(**kwargs))


def test_the_busiest_node_speaks_for_the_mix() -> None:
    nodes = [
        {"node_id": "a", "engine_cores": 4, "engine_cpu_util_pct": 40.0, "client_bound": False},
        {"node_id": "b", "engine_cores": 2, "engine_cpu_util_pct": 95.0, "client_bound": True},
    ]
    summary = nodes_engine_summary(nodes)
    assert summary["engine"] == {"cores": 6, "cpu_util_pct": 95.0, "busiest_node": "b"}
    assert summary["client_bound"] is True


def test_the_node_table_shows_clients_requests_cpu_and_offset() -> None:
    text = render_nodes({"nodes": [
        {"node_id": "aa11bb22cc", "ip": "127.0.0.1", "first_client": 0, "clients": 3, "requests": 1200, "rps": 400.0,
         "engine_cpu_util_pct": 35.0, "client_bound": False, "clock_offset_s": 0.00012, "clock_uncertainty_s": 0.0003},
        {"node_id": "dd44ee55ff", "ip": "127.0.0.1", "first_client": 3, "clients": 1, "requests": 300, "rps": 100.0,
         "engine_cpu_util_pct": 97.0, "client_bound": True, "clock_offset_s": -0.001, "clock_uncertainty_s": 0.0002},
    ]}, width=200)  # fmt: skip
    (first,) = [line for line in text.splitlines() if "aa11bb22" in line]  # below the title, header and rule
    (second,) = [line for line in text.splitlines() if "dd44ee55" in line]
    assert " 3 clients (0-2) " in first and "+0.120±0.300 ms" in first
    assert "97% bound" in second and " 1 client (3) " in second


def test_without_ray_the_error_names_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from crest.cluster.session import import_ray

    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now raises ImportError
    with pytest.raises(ConfigError, match=r"needs Ray, which is not installed: pip install 'crest\[cluster\]'"):
        import_ray()


def test_cluster_flags_without_cluster_are_one_line_exit_2(tmp_path: Path) -> None:
    out = run_cli_in_process("run", "mindcraft-webbench", "--target", "http://127.0.0.1:1", "--target-node", "n1",
                             "--db", str(tmp_path / "r.db"))  # fmt: skip
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "crest: error: --target-node places work on a cluster's nodes: add --cluster ADDRESS (e.g. local:3)"
    ]
    assert not (tmp_path / "r.db").exists()


def test_local_nodes_share_a_token_only_the_user_can_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    path = auth.ensure_local_token()
    assert path == tmp_path / "state" / "crest" / "ray-auth-token"
    token = path.read_text()
    assert len(token) == 64 and int(token, 16) >= 0  # 256 random bits, as hex
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert auth.ensure_local_token().read_text() == token  # kept from one invocation to the next
    path.chmod(0o644)  # others could have read it: it is worth nothing now
    fresh = auth.ensure_local_token().read_text()
    assert fresh != token and len(fresh) == 64 and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sorted(p.name for p in path.parent.iterdir()) == ["ray-auth-token"]


def test_the_users_token_is_found_where_ray_looks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in (auth.TOKEN_ENV, auth.TOKEN_PATH_ENV):
        monkeypatch.delenv(name, raising=False)
    assert auth.user_token() is None
    (tmp_path / ".ray").mkdir()
    (tmp_path / ".ray" / "auth_token").write_text("default-token\n")
    assert auth.user_token() == ("default-token", "~/.ray/auth_token")
    named = tmp_path / "cluster-token"
    named.write_text("named-token")
    monkeypatch.setenv(auth.TOKEN_PATH_ENV, str(named))
    assert auth.user_token() == ("named-token", f"RAY_AUTH_TOKEN_PATH={named}")
    monkeypatch.setenv(auth.TOKEN_PATH_ENV, str(tmp_path / "missing"))
    assert auth.user_token() is None  # Ray reads no further once the variable names a file
    monkeypatch.setenv(auth.TOKEN_ENV, "env-token")
    assert auth.user_token() == ("env-token", "RAY_AUTH_TOKEN")


@pytest.mark.parametrize("host", ["127.0.0.1", "127.3.0.1", "localhost", "[::1]"])
def test_a_loopback_cluster_without_authentication_is_used(host: str) -> None:
    auth.check_authentication(f"{host}:6379", host, required=False, token=None)
    assert not auth.is_loopback("10.0.0.5") and not auth.is_loopback("head.example")


def test_a_reachable_cluster_without_authentication_is_refused_unless_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(auth.MODE_ENV, raising=False)
    with pytest.raises(ConfigError) as refused:
        auth.check_authentication("10.0.0.5:6379", "10.0.0.5", required=False, token=None)
    message = str(refused.value)
    assert "does not require authentication" in message and "RAY_AUTH_MODE=token" in message
    assert message.endswith("or pass --allow-unauthenticated-cluster") and "\n" not in message
    monkeypatch.setattr(auth, "_allow_unauthenticated", False)  # put back whatever the option below sets
    auth.allow_unauthenticated_clusters()
    auth.check_authentication("10.0.0.5:6379", "10.0.0.5", required=False, token=None)
    auth.check_authentication("10.0.0.5:6379", "10.0.0.5", required=None, token=None)  # TLS or no answer: Ray's call


def test_a_cluster_that_requires_a_token_names_the_missing_or_wrong_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(auth.MODE_ENV, raising=False)
    with pytest.raises(
        ConfigError, match="requires a Ray authentication token and none was found: set RAY_AUTH_TOKEN_PATH"
    ):
        auth.check_authentication("head:6379", "head", required=True, token=None)
    with pytest.raises(ConfigError, match=r"refused the Ray token from ~/.ray/auth_token: use the token its nodes"):
        auth.check_authentication("head:6379", "head", required=True, token=("secret-x", "~/.ray/auth_token"),
                                  token_refused=True)  # fmt: skip
    with pytest.raises(ConfigError) as refused:
        auth.check_authentication("head:6379", "head", required=True, token=("secret-x", "RAY_AUTH_TOKEN"),
                                  token_refused=True)  # fmt: skip
    assert "from RAY_AUTH_TOKEN:" in str(refused.value) and "secret-x" not in str(refused.value)  # never the token
    auth.check_authentication("head:6379", "head", required=True, token=("secret-x", "RAY_AUTH_TOKEN"))
    monkeypatch.setenv(auth.MODE_ENV, "disabled")
    with pytest.raises(ConfigError, match="RAY_AUTH_MODE=disabled here sends none: unset RAY_AUTH_MODE"):
        auth.check_authentication("head:6379", "head", required=True, token=("secret-x", "RAY_AUTH_TOKEN"))


@pytest.mark.parametrize("command", ["run", "bench", "doe"])
def test_every_command_with_cluster_takes_allow_unauthenticated_cluster(command: str) -> None:
    out = run_cli_in_process(command, "--help")
    assert out.returncode == 0 and "--allow-unauthenticated-cluster" in out.stdout


def test_a_password_never_goes_to_a_cluster_that_checks_no_token() -> None:
    """A file run's SMB password travels to the nodes only over token-authenticated connections: a cluster
    joined with --allow-unauthenticated-cluster is refused it, in one line, before any node gets a spec."""
    from crest.cluster.driver import ClusterLoad
    from crest.cluster.session import ClusterSession
    from crest.secrets import Secret

    session = ClusterSession(parse_cluster("198.18.0.9:6379"))  # never opened: only its authentication state
    spec = RunSpec(url="smb://bob@198.18.0.9/share", connections=2, duration_s=1.0,
                   loadfile={"path": "/usr/share/dbench/client.txt", "password": Secret("marker-77")})  # fmt: skip
    with pytest.raises(ConfigError, match="the SMB password would travel to nodes of a cluster that does not check"):
        ClusterLoad(session, [], spec)
    session.authenticated = True
    assert ClusterLoad(session, [], replace(spec, loadfile={"path": "/x"})).spec.connections == 2


def test_nested_networks_on_a_real_cluster_route_each_nodes_blocks_back() -> None:
    """Nodes on other machines than the target's: node i's blocks (slot i+1) routed back via its address; a
    --target crest has no node on is refused with the routes it needs, a loopback one needs none."""
    from crest.cluster.driver import check_routed, routes_back

    load = NODES[:2]  # 10.0.0.1 and 10.0.0.2
    assert routes_back(load, 2, "10.0.0.9") == [
        ("198.18.16.0/20", "10.0.0.1"), ("198.18.32.0/20", "10.0.0.1"),
        ("198.18.48.0/20", "10.0.0.2"), ("198.18.64.0/20", "10.0.0.2"),
    ]  # fmt: skip
    assert routes_back(load, 1, "10.0.0.2") == [("198.18.16.0/20", "10.0.0.1")]  # node2 reaches it locally
    check_routed(load, 2, ("http://127.0.0.1:8080/",))
    with pytest.raises(ConfigError, match=r"10\.0\.0\.9 must route .* ip route add 198\.18\.16\.0/20 via 10\.0\.0\.1;"):
        check_routed(load, 2, ("http://10.0.0.9:8080/",))


def test_the_harness_requests_go_where_the_placement_sends_them() -> None:
    """crest.load.vantage: within `at(sender)` the SPECweb99 harness's requests are shipped (a module-level
    function and its arguments) to the sender, e.g. a cluster's load node; outside it they run here."""
    from crest.load import vantage
    from crest.specweb99 import wire

    sent: list[tuple[object, tuple[object, ...], dict[str, object]]] = []

    def sender(fn: object, *args: object, **kwargs: object) -> wire.Reply:
        sent.append((fn, args, kwargs))
        return wire.Reply(200, None, b"ok")

    with vantage.at(sender):
        assert wire.request("http://127.0.0.1:1/x", cookie="c") == wire.Reply(200, None, b"ok")
    assert sent == [(wire.send, ("http://127.0.0.1:1/x",), {"cookie": "c", "body": None, "insecure": True})]
    assert vantage.call(len, "abc") == 3  # no sender: here
