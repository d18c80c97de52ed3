"""Which nodes a run uses: naming a node, choosing the load nodes, and checking the suite fits them.

Pure: works on node descriptions, never on Ray. Dealing clients to the chosen nodes is the fan-out's
(crest.load.fanout), whole clients each, so WebBench's per-client scores stay per client.
"""

from __future__ import annotations

from dataclasses import dataclass

from crest.errors import ConfigError


@dataclass(frozen=True)
class Node:
    """One alive Ray node as crest names it."""

    node_id: str  # Ray's hex node id
    ip: str
    cpus: float
    resources: tuple[str, ...] = ()  # custom resource names (e.g. server1), the ways a user may name it

    @property
    def name(self) -> str:
        """The node as the user names it: its first custom resource (node3 of --cluster local:3), else its
        id's first 8 digits."""
        return self.resources[0] if self.resources else self.node_id[:8]

    @property
    def short(self) -> str:
        """How messages name the node: its name, then its address."""
        return f"{self.name} ({self.ip})"

    def named(self, name: str) -> bool:
        """Whether `name` (a node id or its prefix of at least 6 digits, an IP, or a custom resource) is this node."""
        return name == self.ip or name in self.resources or (len(name) >= 6 and self.node_id.startswith(name.lower()))


def find_node(nodes: list[Node], name: str, option: str) -> Node:
    """The one node `name` names.

    Raises:
        ConfigError: no node or several nodes match, with the alive nodes listed.
    """
    found = [n for n in nodes if n.named(name)]
    if len(found) == 1:
        return found[0]
    alive = ", ".join(
        f"{n.node_id[:12]} {n.ip}" + (f" [{' '.join(n.resources)}]" if n.resources else "") for n in nodes
    )
    if not found:
        raise ConfigError(
            f"{option} {name!r} names no alive node of the cluster:"
            f" use a node id, IP or custom resource of one of: {alive}"
        )
    raise ConfigError(
        f"{option} {name!r} names {len(found)} nodes (shared IP): use a node id or a custom resource of one of: {alive}"
    )


def choose_nodes(nodes: list[Node], count: int | None, exclude: set[str]) -> list[Node]:
    """The load nodes: the first `count` alive nodes not in `exclude` (node ids), all of them by default.

    Raises:
        ConfigError: fewer nodes than asked for, or none at all.
    """
    # A node with no CPU in Ray's books (a head started with --num-cpus 0) cannot hold a load actor's bundle.
    free = [n for n in nodes if n.node_id not in exclude and n.cpus >= 1]
    held = f" ({len(exclude)} kept for the target)" if exclude else ""
    zero = sum(1 for n in nodes if n.cpus < 1 and n.node_id not in exclude)
    held += f" ({zero} with no CPU for load)" if zero else ""
    if count is None:
        if not free:
            raise ConfigError(f"the cluster has no node left for load{held}: add a node (ray start --address ...)")
        return free
    if count > len(free):
        raise ConfigError(
            f"--nodes {count} needs {count} load nodes but the cluster has {len(free)}{held}:"
            " lower --nodes or add nodes (ray start --address ...)"
        )
    return free[:count]


def check_clients(most_clients: int, nodes: list[Node]) -> None:
    """A suite whose largest mix has fewer clients than there are load nodes would leave a node idle
    in every mix while it is counted as load.

    Raises:
        ConfigError: with the --nodes that fits.
    """
    if most_clients < len(nodes):
        raise ConfigError(
            f"the suite's largest mix has {most_clients} clients, fewer than the {len(nodes)} load nodes"
            f" (each node runs whole clients): use --nodes {most_clients} or fewer"
        )
