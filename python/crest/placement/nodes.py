"""Ray nodes: each mix's whole clients dealt over the cluster's load nodes (crest.cluster.driver runs and
merges them), the target started on its own node (--target-node) or watched there (--monitor-node).

Owns the choice of nodes for one run and what lives for its length (the load actors, the watch, each
node's client network); the Ray mechanics are crest.cluster's and the dealing the fan-out's. With
--network the placement nests: each load node builds the network of the spec on its own machine (its own
address blocks and namespaces) and sends its share from its subnets, as the subnets placement does here;
their links come back per node and are named with it. Imports Ray only through crest.cluster, and only
when used.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from crest.load.runspec import RunSpec
from crest.network import addresses
from crest.network.counters import take_nodes
from crest.network.spec import NetworkSpec
from crest.placement.base import Load, MonitorProbe, Placement, Probe, TargetPlan
from crest.placement.subnets import link_verdicts
from crest.servers import cpus as cpu_split
from crest.store import MixRecord
from crest.verdicts import Verdict, page_cache_elsewhere

T = TypeVar("T")


class NodesPlacement(Placement):
    """The load on a Ray cluster's nodes (`address` as --cluster gives it)."""

    def __init__(
        self, address: str, nodes: int | None, target_node: str | None, monitor_node: str | None,
        monitor_pid: int | None, monitor_name: str | None, most_clients: int,
        network: NetworkSpec | None = None, lines: int = 0, target_urls: tuple[str, ...] = (),
    ) -> None:  # fmt: skip
        self.network = network  # each load node's own client network (nested placement)
        self.lines = lines  # the most client lines a subnet needs
        self.target_urls = target_urls  # a --target's URLs (none: crest starts the target on its node)
        self._routed = False  # the target's node routes back to the load nodes' networks (a real cluster)
        self.address = address
        self.nodes = nodes
        self.target_node = target_node
        self.monitor_node = monitor_node
        self.monitor_pid = monitor_pid
        self.monitor_name = monitor_name
        self.most_clients = most_clients
        self._load_nodes: Any = None  # crest.cluster.driver.LoadNodes for the length of a run
        self._watch: Any = None  # crest.cluster.target.NodeWatch during a run with --monitor-node
        self._check_target: Callable[[], None] | None = None  # a --target's preflight, run from a load node

    def _cluster(self) -> tuple[Any, list[Any], Any]:
        """The cluster session, its load nodes and the target's (or monitor's) node, checked against the
        suite: ConfigError before anything is recorded."""
        from crest.cluster import placement
        from crest.cluster.session import session

        cluster = session(self.address)
        alive = cluster.nodes()
        where = self.target_node or self.monitor_node
        option = "--target-node" if self.target_node else "--monitor-node"
        side = placement.find_node(alive, where, option) if where else None
        load = placement.choose_nodes(alive, self.nodes, {side.node_id} if side else set())
        placement.check_clients(self.most_clients, load)
        if self.network is not None:
            from crest.cluster.driver import check_blocks, check_routed

            check_blocks(len(load), self.network.subnets)
            if side is None:  # a --target crest did not start, and no node of it to route back from
                check_routed(load, self.network.subnets, self.target_urls)
        return cluster, load, side

    def check(self) -> None:
        self._cluster()  # the cluster answers and has the nodes asked for

    def preflight_target(self, check: Callable[[], None]) -> None:
        """Nothing from here (this machine may not reach the target at all): `check` runs from the first load
        node once the load nodes are placed, before the first mix (`loading`); each load node also checks
        the target's reachability from where it stands at the ready barrier before each mix."""
        self._check_target = check

    def check_server(self, plan: TargetPlan) -> None:
        from crest.cluster.actors import NODE_DOCROOT
        from crest.cluster.target import NodeActor

        cluster, _, node = self._cluster()
        remote = NodeActor(cluster, node)
        by_server = plan.by_server(NODE_DOCROOT) if plan.roles is not None else None
        try:
            remote.call("check", plan.server, plan.settings(NODE_DOCROOT), plan.roles, by_server)
        finally:
            remote.release()

    @contextmanager
    def loading(self) -> Iterator[None]:
        from crest.cluster.driver import LoadNodes
        from crest.cluster.target import NodeWatch

        cluster, nodes, side = self._cluster()
        try:
            if self.monitor_node is not None:
                self._watch = NodeWatch(cluster, side, self.monitor_pid, self.monitor_name)
            self._load_nodes = LoadNodes(cluster, nodes, self.network, self.lines)
            if self._check_target is not None:  # once per run request: a 404 stops it before any load
                check, self._check_target = self._check_target, None
                self.from_clients(check)
            yield
        finally:
            self._routed = False  # the target's node removes its routes back when it stops
            if self._load_nodes is not None:
                self._load_nodes.close()
                self._load_nodes = None
            if self._watch is not None:
                self._watch.stop()
                self._watch = None

    def from_clients(self, fn: Callable[[], T]) -> T:
        """`fn` here, with its requests to the target (crest.load.vantage) sent from the first load node: the
        SPECweb99 harness asks from where the clients stand, which may reach a target the driver cannot."""
        if self._load_nodes is None:
            return fn()
        from crest.load import vantage

        with vantage.at(self._load_nodes.send):
            return fn()

    def start_target(self, plan: TargetPlan) -> Any:
        from crest.cluster.actors import NODE_DOCROOT
        from crest.cluster.target import NodeTarget

        cluster, _, node = self._cluster()
        # Provisioned on its node as it is made (a role map's servers side by side there); it has the face
        # of Target the runner uses.
        roles = dict(plan.roles) if plan.roles is not None else None
        by_server = plan.by_server(NODE_DOCROOT) if roles is not None else None
        return NodeTarget(cluster, node, plan.server, plan.settings(NODE_DOCROOT), plan.cpus, plan.fileset, roles,
                          by_server)  # fmt: skip

    def engine_cores(self) -> int:
        return len(cpu_split.available())  # each node then uses its own (crest.cluster.actors)

    def load(self, spec: RunSpec, clients: int, mix_index: int, target: Any) -> Load:
        assert self._load_nodes is not None, "the nodes placement loads inside loading()"
        side = getattr(target, "remote", None) or getattr(self._watch, "remote", None)  # NodeTarget / NodeWatch
        if self.network is not None and side is not None and not self._routed:
            from crest.cluster.driver import routes_back

            routes = routes_back(self._load_nodes.nodes, self.network.subnets, side.node.ip)
            if routes:  # load nodes on other machines: the target's node answers their subnets
                side.call("route_back", routes)
            self._routed = True
        load: Load = self._load_nodes.load(spec, clients, mix_index, side)
        return load

    def probes(self, target: Any) -> list[Probe]:
        side = target if target is not None else self._watch
        return [MonitorProbe(side.monitor())] if side is not None else []

    def annotate(self, record: MixRecord, report: dict[str, Any]) -> None:
        from crest.host.monitor import nodes_engine_summary

        # The engine ran on the nodes: the mix starts at their common start, and each node's own monitor
        # judged its engine (the busiest node speaks for the mix).
        record.started_at = float(report["cluster"]["start_at_unix_s"])
        record.cluster = report["cluster"]
        record.monitor.update(nodes_engine_summary(record.cluster["nodes"]))
        network = take_nodes(record.cluster["nodes"])  # each node's own links, named with the node
        if network is not None:
            record.network = network
            record.verdicts += link_verdicts(network)

    def drop_page_cache(self, target: Any) -> list[Verdict]:
        side: Any = target if target is not None else self._watch  # a NodeTarget or NodeWatch
        return list(side.drop_page_cache()) if side is not None else [page_cache_elsewhere()]

    def describe(self, target: Any) -> dict[str, Any]:
        return {"cluster": {"address": self.address, "nodes": self.nodes}}

    def network_facts(self) -> dict[str, Any]:
        if self.network is None:
            return super().network_facts()
        _, load, _ = self._cluster()
        s = self.network.subnets
        by_node = [[str(b) for b in addresses.slot_blocks(i + 1, s)] for i in range(len(load))]
        return {
            **self.network.describe(),
            "delay_by": "crest delay line on each load node (crest-delayline)" if self.network.delayed else "none",
            "placement": f"on each of {len(load)} load nodes, its own {s} subnet(s)",
            "target_address": "each load node's own end of its network, forwarded to the target's node",
            "target_namespace": "the target's node (its own machine's network)",
            "subnet_ranges": [r for ranges in by_node for r in ranges],
            "nodes": [{"node": n.name, "subnet_ranges": ranges} for n, ranges in zip(load, by_node)],
        }

    def disclosure(self, target: Any, url: str | None, tls_url: str | None) -> dict[str, Any]:
        """Read on the target's node (or the monitor's), as a local run's is read here."""
        side: Any = target if target is not None else self._watch  # a NodeTarget or NodeWatch
        if side is None:
            from crest.host import disclosure

            facts = disclosure.collect(None, url, tls_url)
            return {
                **facts,
                "read_on": "the driver: the target runs where crest cannot look (--monitor-node names its node)",
            }
        facts = dict(side.remote.call("disclosure", url, tls_url))
        return {**facts, "read_on": f"the target's node {side.remote.node.short}"}


def close_clusters() -> None:
    """End every cluster session this process opened (no Ray import when none was)."""
    session = sys.modules.get("crest.cluster.session")
    if session is not None:
        session.close_all()
