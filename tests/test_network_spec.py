"""--network SPEC, the address plan, the tc lines and the dealing of clients over subnets (pure parts)."""

from __future__ import annotations

import socket

import pytest

from crest.errors import ConfigError
from crest.load.fanout import deal
from crest.load.runspec import RunSpec
from crest.network import addresses, forward
from crest.network.lines import check_fits, lines_needed
from crest.network.shaping import Shape, tc_lines
from crest.network.spec import PRESETS, parse_network
from support import run_cli_in_process


def test_settings_and_units() -> None:
    s = parse_network("subnets=4, client-link=100mbit,target-link=1gbit,rtt=80ms,jitter=5ms,loss=0.5%")
    assert (s.subnets, s.client_link_bps, s.target_link_bps) == (4, 100e6, 1e9)
    assert (s.rtt_s, s.jitter_s, s.loss, s.subnet_link_bps) == (0.08, 0.005, 0.005, None)
    assert (
        s.delayed and s.canonical() == "subnets=4,client-link=100mbit,target-link=1gbit,rtt=80ms,jitter=5ms,loss=0.5%"
    )
    assert parse_network("client-link=400kbit").client_link_bps == 400e3
    assert parse_network("client-link=10Mbps").client_link_bps == 10e6
    assert not parse_network("subnets=2").delayed


def test_presets_are_the_seeds_beds_and_take_overrides() -> None:
    v = parse_network("veritest-4x100")
    assert (v.subnets, v.client_link_bps, v.subnet_link_bps) == (4, 100e6, 1e9) and v.label() == "veritest-4x100"
    assert parse_network("veritest-8x100").subnets == 8
    assert parse_network("zeus-100mbit").target_link_bps == 100e6
    assert parse_network("webcat-10mbit").subnet_link_bps == 10e6
    assert parse_network("webcat-100mbit,subnets=2").subnets == 2
    assert parse_network("webcat-100mbit,subnets=2").label() == "subnets=2,subnet-link=100mbit"
    sw = parse_network("specweb99-user")
    assert (sw.client_link_bps, sw.link_per) == (400e3, "connection")
    for name in PRESETS:
        assert parse_network(name).label() == name


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("subnets=0", "from 1 to 30"),
        ("subnets=31", "from 1 to 30"),
        ("client-link=10MB", "in bits"),
        ("client-link=fast", "line speed"),
        ("client-link=1kbit", "below 8 kbit/s"),
        ("rtt=20ms,jitter=15ms", "more than half"),
        ("loss=0.5", "percentage"),
        ("loss=100%", "percentage below 100"),
        ("colour=red", "unknown --network setting"),
        ("lan-party", "unknown network preset"),
        ("subnets=2,,rtt=1ms", "empty setting"),
        ("link-per=connection", "needs a client-link"),
        ("link-per=machine,client-link=1mbit", "link-per=client"),
    ],
)
def test_bad_specs_are_one_line_errors(text: str, words: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_network(text)
    assert words in str(err.value) and "\n" not in str(err.value)


def test_address_plan_stays_in_the_benchmarking_range_without_overlaps() -> None:
    blocks = [addresses.block(k) for k in range(1, 31)]
    assert all(b.subnet_of(addresses.RANGE) for b in blocks)
    assert not any(a.overlaps(b) for i, a in enumerate(blocks) for b in blocks[i + 1 :])
    links = {addresses.router_link(k) for k in range(1, 31)} | {addresses.subnet_link(k) for k in range(1, 31)}
    assert len(links) == 60 and all(ip in addresses.RANGE and not any(ip in b for b in blocks) for ip in links)
    assert not any(addresses.TARGET_SEGMENT.overlaps(b) for b in blocks)
    assert addresses.client_address(1, 0) == addresses.block(1)[1]
    assert addresses.client_address(1, addresses.ADDRESSES_PER_SUBNET - 1) == addresses.block(1)[-2]


def test_tc_lines_nest_client_lines_under_the_link_and_hash_them() -> None:
    clients = tuple(addresses.client_address(2, i) for i in range(300))
    lines = tc_lines(Shape("s2", 1e9, 400e3, clients, addresses.block(2), "dst"))
    assert lines[0] == "qdisc add dev s2 root handle 1: htb default 2"
    assert "rate 1000000000bit" in lines[1]
    client_classes = [line for line in lines if "parent 1:1 classid" in line and "rate 400000bit" in line]
    assert len(client_classes) == 300
    filters = [line for line in lines if "flowid" in line]
    assert len(filters) == 300 and all("match ip dst" in f for f in filters)
    # Each address sits in the bucket of its last byte: ≤ 16 filters walked per packet.
    assert f"ht 100:{int(clients[5]) & 0xFF:x}: match ip dst {clients[5]}/32 flowid 1:{16 + 5:x}" in "\n".join(filters)
    assert tc_lines(Shape("t", None)) == tc_lines(Shape("t", None))[:3]
    # Each line queues ~100 ms of its rate, never fewer than 8 frames (not the device's 1,000 packets).
    queues = [line for line in lines if " pfifo limit " in line]
    assert len(queues) == 300 and queues[5] == f"qdisc add dev s2 parent 1:{16 + 5:x} handle {16 + 5:x}: pfifo limit 8"
    fast = tc_lines(Shape("s1", None, 100e6, clients[:1], addresses.block(2), "dst"))
    assert fast[-2].endswith("pfifo limit 825")


def test_clients_are_dealt_whole_over_subnets() -> None:
    assert [(s.index + 1, s.first_client, s.clients) for s in deal(10, 4)] == [
        (1, 0, 3),
        (2, 3, 3),
        (3, 6, 2),
        (4, 8, 2),
    ]
    assert [(s.index + 1, s.clients) for s in deal(2, 4)] == [(1, 1), (2, 1)]
    spec = RunSpec(url="http://127.0.0.1:1/", connections=40, connections_per_client=4)
    assert lines_needed(spec, 4, "client") == 3 and lines_needed(spec, 4, "connection") == 12


def test_a_subnet_holds_at_most_its_block_of_shaped_lines() -> None:
    spec = RunSpec(url="http://127.0.0.1:1/", connections=5000)
    with pytest.raises(ConfigError, match="use subnets=2 or more"):
        check_fits(spec, parse_network("specweb99-user"))
    check_fits(spec, parse_network("specweb99-user,subnets=2"))
    check_fits(spec, parse_network("subnets=1"))  # unshaped clients may share addresses


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["bench", "--network", "lan-party", "http://127.0.0.1:1/"], "unknown network preset"),
        (["bench", "--network", "subnets=2", "http://192.0.2.1:80/"], "not one of its addresses"),
        (["bench", "--network", "subnets=2", "--source-addrs", "127.0.0.2", "http://127.0.0.1:1/"], "--source-addrs"),
        (
            ["run", "veritest-static", "--server", "nginx", "--network", "subnets=2", "--cluster", "local:2"],
            "--cluster",
        ),
        (
            ["run", "mindcraft-netbench", "--target", "file:///tmp", "--network", "subnets=2"],
            "this machine's directory",
        ),
    ],
)
def test_network_options_that_do_not_fit_are_one_line_errors(args: list[str], words: str) -> None:
    out = run_cli_in_process(*args)
    assert out.returncode == 2 and words in out.stderr and out.stderr.count("\n") == 1, out.stderr


@pytest.mark.integration
def test_without_nftables_a_loopback_only_server_is_named_not_the_url(monkeypatch: pytest.MonkeyPatch) -> None:
    """The subnets reach the target address, which a server bound to 127.0.0.1 never hears unless crest
    forwards it (nftables): without nft crest says so, and what to change, never blaming a URL the user
    did not write."""
    monkeypatch.setattr(forward, "available", lambda: False)
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        out = run_cli_in_process("bench", "--network", "subnets=2", "-d", "1s", f"http://127.0.0.1:{port}/")
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert f"the server on port {port} listens only on 127.0.0.1" in out.stderr
    assert "apt-get install -y nftables" in out.stderr and "listen on 0.0.0.0" in out.stderr
    assert "check the URL" not in out.stderr


def test_a_cluster_nodes_network_has_its_own_blocks_and_routes_out_only_the_target() -> None:
    from crest.network import routed

    assert addresses.first_block(0, 4) == 0 and addresses.first_block(3, 4) == 8
    assert [str(a) for a in addresses.slot_link(2)[:2]] == ["198.18.1.9", "198.18.1.10"]
    assert addresses.slot_link(0)[2] == 24 and addresses.slot_link(1)[2] == 30
    assert routed.out_lines("10.0.0.9", "198.18.1.6") == ["route replace 10.0.0.9/32 via 198.18.1.6"]
    assert routed.forwarding_keys("crestab12cd", "eth0") == [
        "net.ipv4.conf.crestab12cd.forwarding", "net.ipv4.conf.eth0.forwarding",
    ]  # fmt: skip
    back = [("198.18.16.0/20", "10.0.0.1")]
    assert routed.back_lines(back) == ["route replace 198.18.16.0/20 via 10.0.0.1"]
    assert routed.undo_back_lines(back) == ["route del 198.18.16.0/20 via 10.0.0.1"]
