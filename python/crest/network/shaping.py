"""tc commands that shape one direction of a link: an HTB tree with the link's rate at its top and,
when each client has its own line, one class per client address under it, found by a u32 hash on
the address's last byte. Pure: writes `tc -batch` lines, never runs them.

Why HTB: it is the shaper this kernel has (no netem, fq or cake here) and it nests, so a subnet's
shared uplink and its clients' own lines are one tree. Why a hash: with thousands of clients a
linear list of filters would cost each packet a walk over all of them; 256 buckets keep it to ≤ 16.
"""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Network

MTU_FRAME_BYTES = 1514
# Far above any line crest emulates: the top class of a link that only its clients' lines limit.
UNLIMITED_BPS = 100e9
DEFAULT_MINOR = 2  # a leaf for what matches no client (the link's own address, ARP): the link's rate
FIRST_CLIENT_MINOR = 16
HASH_TABLE = "100"
LINE_QUEUE_S = 0.1
LINE_QUEUE_MIN_PACKETS = 8


@dataclass(frozen=True)
class Shape:
    """One direction of a link: its device, its own rate (None: unlimited), and per-client lines:
    the clients' addresses (matched as source or destination), their block and each line's rate."""

    dev: str
    rate_bps: float | None
    client_bps: float | None = None
    clients: tuple[IPv4Address, ...] = ()
    block: IPv4Network | None = None
    match: str = "src"  # "src": packets from the clients (up); "dst": packets to them (down)

    def client_minor(self, index: int) -> int:
        """The class minor of the `index`-th client's line (what counters read back)."""
        return FIRST_CLIENT_MINOR + index


def _burst(bps: float) -> int:
    # 5 ms of the line, and at least two frames: below that HTB cannot reach its rate on a VM's timer;
    # much above it a slow line would let a client burst faster than its modem ever could.
    return max(2 * MTU_FRAME_BYTES, int(bps / 8 * 0.005))


def _queue_packets(bps: float) -> int:
    # A client's own line queues about LINE_QUEUE_S of its rate (at least LINE_QUEUE_MIN_PACKETS frames),
    # as a modem or DSL line's buffer does: left to the device's 1,000 packets, a 400 kbit/s line would
    # hold 30 s of data, and one TCP flow would fill it and wait behind itself (bufferbloat).
    return max(LINE_QUEUE_MIN_PACKETS, int(bps / 8 * LINE_QUEUE_S / MTU_FRAME_BYTES))


def _quantum(bps: float) -> int:
    return min(200_000, max(MTU_FRAME_BYTES, int(bps / 8 / 10)))


def _class(dev: str, parent: str, minor: int, rate_bps: float, ceil_bps: float | None = None) -> str:
    ceil = ceil_bps or rate_bps
    return (
        f"class add dev {dev} parent {parent} classid 1:{minor:x} htb rate {int(rate_bps)}bit ceil {int(ceil)}bit"
        f" burst {_burst(ceil)} cburst {_burst(ceil)} quantum {_quantum(rate_bps)}"
    )


def tc_lines(shape: Shape) -> list[str]:
    """The `tc -batch` lines that install `shape` on its device (run in the device's namespace)."""
    dev = shape.dev
    top = shape.rate_bps or UNLIMITED_BPS
    lines = [
        f"qdisc add dev {dev} root handle 1: htb default {DEFAULT_MINOR:x}",
        _class(dev, "1:", 1, top),
        _class(dev, "1:1", DEFAULT_MINOR, min(top, 1e6), top),
    ]
    if shape.client_bps is None or not shape.clients:
        return lines
    assert shape.block is not None
    offset = 12 if shape.match == "src" else 16  # the IPv4 header's source / destination address
    lines += [
        f"filter add dev {dev} parent 1: prio 1 handle {HASH_TABLE}: protocol ip u32 divisor 256",
        f"filter add dev {dev} parent 1: prio 1 protocol ip u32 ht 800:: match ip {shape.match} {shape.block}"
        f" hashkey mask 0x000000ff at {offset} link {HASH_TABLE}:",
    ]
    for i, address in enumerate(shape.clients):
        minor = shape.client_minor(i)
        rate = min(shape.client_bps, top)
        lines.append(_class(dev, "1:1", minor, rate))
        lines.append(f"qdisc add dev {dev} parent 1:{minor:x} handle {minor:x}: pfifo limit {_queue_packets(rate)}")
        bucket = int(address) & 0xFF
        lines.append(
            f"filter add dev {dev} parent 1: prio 1 protocol ip u32 ht {HASH_TABLE}:{bucket:x}:"
            f" match ip {shape.match} {address}/32 flowid 1:{minor:x}"
        )
    return lines
