"""Placements: where a run's load runs (this machine, client subnets on it, Ray nodes), chosen once per
run by `choose`; the runner then asks the placement and never branches on a mode."""

from __future__ import annotations

from crest.load.runspec import RunSpec
from crest.network.lines import lines_needed
from crest.network.spec import NetworkSpec
from crest.placement.base import Placement


def choose(
    *, cpus: float | None, network: NetworkSpec | None, largest: RunSpec, target_urls: tuple[str, ...],
    cluster: str | None, nodes: int | None, target_node: str | None, monitor_node: str | None,
    monitor_pid: int | None, monitor_name: str | None, most_clients: int,
) -> Placement:  # fmt: skip
    """The placement of one run.

    Args:
        cpus: --cpus; on this machine it splits the cores between target and engine (a node splits its own).
        largest: the run's largest load (its connections and clients), which sizes a client network.
        target_urls: the --target URLs (none when crest starts the target): a client network's target is then
            on this machine, in its namespace.
        most_clients: the clients of the run's largest mix (every load node must get one).
    """
    lines = lines_needed(largest, network.subnets, network.link_per) if network is not None else 0
    if cluster is not None:  # with a network: each load node its own (nested)
        from crest.placement.nodes import NodesPlacement

        return NodesPlacement(
            cluster,
            nodes,
            target_node,
            monitor_node,
            monitor_pid,
            monitor_name,
            most_clients,
            network,
            lines,
            target_urls,
        )
    if network is not None:
        from crest.placement.subnets import SubnetsPlacement

        return SubnetsPlacement(cpus, network, lines, target_urls)
    from crest.placement.local import LocalPlacement

    return LocalPlacement(cpus)
