"""The address plan of a client network inside 198.18.0.0/15 (RFC 2544's range for benchmarking
network devices). Pure: computes addresses, never assigns them.

    198.18.0.0/24        the target's segment: the router is .1, the target .2
    198.18.1.0/24        a cluster node's network (slot n, from 1): its router 198.18.1.(4n+1) ↔ the
                         node's own end (4n+2), which stands for the target there (nested placement)
    block k (1..30)      198.18.0.0 + k·4096, a /20: subnet k's client addresses (.1 … .4094 of it)
    198.19.255.0/24      point-to-point links, router ↔ subnet k: 198.19.255.(4k+1) ↔ (4k+2)

The 30 blocks are shared by every network of one machine's cluster: node slot n with S subnets uses
blocks (n-1)·S+1 … n·S, so the target sees each node's clients at addresses of their own.

A client binds its own address of its subnet's block (the subnet's namespace routes the whole block
to itself), so the target sees distinct clients and each client's link can be shaped by its address.
"""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Network

BASE = IPv4Address("198.18.0.0")
RANGE = IPv4Network("198.18.0.0/15")
ROUTER_ADDRESS = IPv4Address("198.18.0.1")
TARGET_ADDRESS = IPv4Address("198.18.0.2")
TARGET_SEGMENT = IPv4Network("198.18.0.0/24")
BLOCK_SIZE = 4096
ADDRESSES_PER_SUBNET = BLOCK_SIZE - 2  # the block's first and last addresses are left out
_LINKS = IPv4Address("198.19.255.0")
_SLOTS = IPv4Address("198.18.1.0")
BLOCKS = 30  # 198.18.0.0/15 holds 32 /20s: the first holds the target segments, the last the links


def block(subnet: int) -> IPv4Network:
    """Subnet k's client addresses (k from 1)."""
    return IPv4Network(f"{BASE + subnet * BLOCK_SIZE}/20")


def client_address(subnet: int, index: int) -> IPv4Address:
    """The address of the subnet's `index`-th client link (from 0), wrapping past ADDRESSES_PER_SUBNET."""
    return BASE + subnet * BLOCK_SIZE + 1 + index % ADDRESSES_PER_SUBNET


def router_link(subnet: int) -> IPv4Address:
    """The router's end of its link to subnet k."""
    return _LINKS + 4 * subnet + 1


def subnet_link(subnet: int) -> IPv4Address:
    """Subnet k's end of its link to the router (its namespace's own address)."""
    return _LINKS + 4 * subnet + 2


def first_block(slot: int, subnets: int) -> int:
    """The block before a network's first: 0 on one machine (slot 0), (slot-1)·subnets for a cluster node."""
    return (slot - 1) * subnets if slot else 0


def slot_blocks(slot: int, subnets: int) -> list[IPv4Network]:
    """The client blocks of a network of `subnets` subnets in `slot` (its subnet 1 first)."""
    return [block(first_block(slot, subnets) + k) for k in range(1, subnets + 1)]


def slot_link(slot: int) -> tuple[IPv4Address, IPv4Address, int]:
    """A network's router address, its target address and their prefix length: the target segment for
    slot 0, a /30 of 198.18.1.0/24 for cluster node slot n."""
    if not slot:
        return ROUTER_ADDRESS, TARGET_ADDRESS, TARGET_SEGMENT.prefixlen
    return _SLOTS + 4 * slot + 1, _SLOTS + 4 * slot + 2, 30
