"""How many client lines (addresses) a subnet needs for a load, and whether its address block holds them.

Clients are dealt over the subnets as the fan-out deals them (crest.load.fanout.deal), so the counts
here are the ones the subnets placement runs. Pure; never prints.
"""

from __future__ import annotations

from crest.errors import ConfigError
from crest.load.fanout import deal
from crest.load.runspec import RunSpec
from crest.network import addresses
from crest.network.spec import NetworkSpec


def lines_needed(spec: RunSpec, subnets: int, link_per: str) -> int:
    """The most client lines (addresses) one subnet needs for `spec`: its clients, or its connections."""
    k = spec.connections_per_client
    most = max(s.clients for s in deal(spec.connections // k, subnets))
    return most * k if link_per == "connection" else most


def check_fits(spec: RunSpec, net: NetworkSpec) -> None:
    """Raises ConfigError when a subnet would need more client lines than its address block holds."""
    lines = lines_needed(spec, net.subnets, net.link_per)
    if net.client_link_bps is not None and lines > addresses.ADDRESSES_PER_SUBNET:
        enough = -(-lines * net.subnets // addresses.ADDRESSES_PER_SUBNET)
        raise ConfigError(
            f"{lines} {net.link_per}s in one subnet need their own shaped lines but a subnet has"
            f" {addresses.ADDRESSES_PER_SUBNET} addresses: use subnets={enough} or more"
        )
