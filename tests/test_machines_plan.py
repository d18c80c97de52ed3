"""A lab's plan: `machines:N` and its options parsed into machines with names, segments, addresses, limits
and clock offsets; bad specs refused in one line that says how to write them; the lab's range clear of the
client networks'; a machine's injected clock offset taken off again where the system clock is waited on."""

from __future__ import annotations

from ipaddress import IPv4Network

import pytest

from crest.cluster import clock
from crest.errors import ConfigError
from crest.machines.plan import CLOCK_OFFSET_ENV, LAB_RANGES, Names, driver_address, parse, router_address
from crest.network import addresses


def test_n_machines_are_node1_to_noden_dealt_over_segments_beside_a_control_machine() -> None:
    lab = parse("5,segments=2,cpus=0.5,memory=512M,line=100mbit,skew=40ms")
    assert [m.name for m in lab.machines] == ["control", "node1", "node2", "node3", "node4", "node5"]
    assert [m.segment for m in lab.nodes] == [1, 2, 1, 2, 1]
    assert [str(m.address) for m in lab.machines] == [
        "198.19.240.2", "198.19.241.1", "198.19.242.1", "198.19.241.2", "198.19.242.2", "198.19.241.3",
    ]  # fmt: skip
    assert {(m.cpus, m.memory_bytes) for m in lab.nodes} == {(0.5, 512 << 20)}
    assert (lab.control.cpus, lab.control.memory_bytes, lab.control.clock_offset_s) == (None, None, 0.0)
    assert lab.line_bps == 100e6
    # Offsets spread evenly over -skew … +skew, node1 the earliest.
    assert [m.clock_offset_s for m in lab.nodes] == pytest.approx([-0.04, -0.02, 0.0, 0.02, 0.04])
    assert parse("1,skew=40ms").nodes[0].clock_offset_s == 0.0
    assert lab.machine("node3").address == lab.nodes[2].address


def test_the_lab_range_is_clear_of_every_client_network_address() -> None:
    lab = parse("2750,segments=11")
    used = [addresses.block(k) for k in range(1, addresses.BLOCKS + 1)]
    used += [addresses.TARGET_SEGMENT, IPv4Network("198.18.1.0/24"), IPv4Network("198.19.255.0/24")]
    assert not any(r.overlaps(n) for r in LAB_RANGES for n in used)
    assert all(any(m.address in r for r in LAB_RANGES) for m in lab.machines)
    addresses_used = {m.address for m in lab.machines} | {driver_address()} | {router_address(s) for s in range(12)}
    assert len(addresses_used) == 2751 + 1 + 12
    assert all(addresses.RANGE.supernet_of(r) for r in LAB_RANGES)  # inside RFC 2544's benchmarking range


def test_kernel_names_fit_and_carry_the_labs_id() -> None:
    names = Names("a1b2c3")
    assert names.switch == "crestm-a1b2c3-sw" and names.machine("node12") == "crestm-a1b2c3-node12"
    assert len(names.root_link) <= 15 and len(Names.port(249)) <= 15
    assert not names.switch.startswith("crest-")  # `crest network clean` removes crest- namespaces it does not know


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "start with the number of machines"),
        ("0", "start with the number of machines"),
        ("4,nodes=2", "'nodes=2' is not one of segments=, cpus=, memory=, line=, skew="),
        ("4,segments=0", "segments='0' must be a whole number of at least 1"),
        ("4,segments=12", "at most 11 segments"),
        ("600,segments=2", "300 machines on a segment, at most 250: add segments="),
        ("4,cpus=x", "cpus='x' must be a share of cores"),
        ("4,memory=lots", "invalid memory= in the machines spec 'lots'"),
        ("4,line=100MB", "line='100MB' must be a line speed in bits"),
        ("4,skew=20s", "skew=20s is over 10s"),
    ],
)
def test_a_bad_spec_is_one_line_naming_the_fix(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse(text)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_machines_clock_is_the_systems_plus_its_offset_and_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CLOCK_OFFSET_ENV, raising=False)
    assert clock.injected_offset_s() == 0.0 and clock.to_system(100.0) == 100.0
    monkeypatch.setenv(CLOCK_OFFSET_ENV, "-0.05")
    assert clock.injected_offset_s() == -0.05 and clock.to_system(100.0) == pytest.approx(100.05)
    # The node's wall clock reads its offset; the driver's offset rounds measure it (clock.measure).
    assert clock.measure(clock.wall, rounds=3).offset_s == pytest.approx(-0.05, abs=0.01)
