"""One mix across the nodes: every node's plan built and its target checked (the ready barrier), each
node's clock offset measured, one absolute start, a heartbeat while it runs, and the exact merge of the
nodes' results; dealing, budgets, seeds and the merge are the fan-out's (crest.load.fanout).

The same face as crest.load.client.LoadClient (preflight, run), so the runner treats a cluster mix like
a local one. A node that dies or stops answering fails the mix with the node named (NodeLostError),
never a silent rebalance. Never prints.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from crest.cluster import clock
from crest.cluster.placement import Node
from crest.cluster.session import ClusterSession, close_all, ray_failure
from crest.errors import ConfigError, EngineError
from crest.host.monitor import CLIENT_BOUND_PCT
from crest.load import fanout
from crest.load.client import OVERRUN_GRACE_S, ProgressCallback, RunResult
from crest.load.fanout import Share
from crest.load.runspec import RunSpec
from crest.secrets import Secret

# A node that has not answered a poll for this long is lost (the bound for failing the mix is 10 s).
HEARTBEAT_S = 4.0
# How long each poll waits on a node's engine: the progress line's refresh, and the heartbeat's tick.
POLL_S = 0.25
# Building plans and checking the target from every node (each node opens one connection to it).
PREPARE_TIMEOUT_S = 30.0
# From the driver's go to the common start: time for the start call to reach every node.
START_LEAD_S = 0.3
START_LEAD_PER_NODE_S = 0.02
# Building (or removing) a node's client network: namespaces, links, shaping and its delay line.
NETWORK_TIMEOUT_S = 60.0
# A request sent from a load node for the driver (crest.specweb99.wire's own timeout is 30 s).
SEND_TIMEOUT_S = 40.0

T = TypeVar("T")


@dataclass
class Placed:
    """A node's load actor and the clients it runs (`share` numbers them globally)."""

    node: Node
    share: Share
    actor: Any


class ClusterLoad:
    """Runs one RunSpec over placed load actors; `preflight()` is the ready barrier, `run()` the mix."""

    def __init__(
        self, session: ClusterSession, placed: list[Placed], spec: RunSpec, mix_index: int = 0, side: Any = None
    ) -> None:
        self.session = session
        self.placed = placed
        # The target's (or monitor's) node, watched with the load nodes: losing it fails the mix too.
        self.side = Placed(side.node, Share(0, 0, 0), side.actor) if side is not None else None
        self.spec = spec
        self.mix_index = mix_index
        if isinstance((spec.loadfile or {}).get("password"), Secret) and not session.authenticated:
            raise ConfigError(
                f"--cluster {session.address.text}: the SMB password would travel to nodes of a cluster that does"
                " not check Ray's token: start its nodes with RAY_AUTH_MODE=token (docs/cluster.md)"
            )
        self.specs = fanout.share_specs(spec, [p.share for p in placed], "load nodes", "fewer --nodes")
        self.offsets: list[clock.Offset] = []
        self.threads: list[int] = []
        # The config as a local run reports it, for the whole mix: every node runs its share of it.
        self.config: dict[str, Any] = {**spec.to_config(), "nodes": len(placed)}

    def preflight(self) -> None:
        """Every node builds its plan and checks the target from where it stands (the ready barrier)."""
        refs = [p.actor.prepare.remote(s) for p, s in zip(self.placed, self.specs)]
        self.threads = [int(t) for t in self._gather(refs, PREPARE_TIMEOUT_S, "while preparing")]
        self.config["threads"] = sum(self.threads)

    def run(self, on_progress: ProgressCallback | None = None) -> RunResult:
        """Measure offsets, start every node at one instant, watch them, merge their results."""
        self.offsets = [self._offset(p) for p in self.placed]
        lead = START_LEAD_S + START_LEAD_PER_NODE_S * len(self.placed)
        start_at = time.time() + lead
        window = self.spec.window_s or (0.0, self.spec.duration_s or 0.0)
        refs = []
        for p, off in zip(self.placed, self.offsets):
            at = start_at + off.offset_s
            refs.append(p.actor.start.remote(at, (at + window[0], at + window[1])))
        self._gather(refs, HEARTBEAT_S + lead, "while starting")
        try:
            done = self._watch(start_at, on_progress)
        except KeyboardInterrupt:
            self._cancel_all()
            return RunResult({}, self.config, interrupted=True)
        return RunResult(self._merge(done, start_at), self.config, interrupted=False)

    def _offset(self, p: Placed) -> clock.Offset:
        def ask() -> float:
            return float(
                self._gather([p.actor.now_unix_s.remote()], HEARTBEAT_S, "while measuring its clock before", [p])[0]
            )

        return clock.measure(ask)

    def _watch(self, start_at: float, on_progress: ProgressCallback | None) -> list[dict[str, Any]]:
        """Poll every node until all have finished; a node silent for HEARTBEAT_S is lost."""
        deadline = None
        if self.spec.duration_s is not None:
            deadline = start_at + self.spec.duration_s + self.spec.timeout_s + OVERRUN_GRACE_S
        done: dict[int, dict[str, Any]] = {}
        while len(done) < len(self.placed):
            waiting = [i for i in range(len(self.placed)) if i not in done]
            refs = [self.placed[i].actor.poll.remote(POLL_S) for i in waiting]
            watched = [self.placed[i] for i in waiting]
            if self.side is not None:
                refs.append(self.side.actor.now_unix_s.remote())
                watched.append(self.side)
            answers = self._gather(refs, HEARTBEAT_S + POLL_S, "during", watched)[: len(waiting)]
            for i, answer in zip(waiting, answers):
                if "done" in answer:
                    done[i] = answer["done"]
            by_node = {p.node.name: a["live"] for p, a in zip(watched, answers) if isinstance(a, dict) and "live" in a}
            live = fanout.sum_live(by_node.values())
            if on_progress is not None and live:
                on_progress({**live, "by_node": by_node})
            if deadline is not None and time.time() > deadline:
                self._cancel_all()
                raise EngineError(f"the nodes overran mix {self.mix_index} and were cancelled: please report this")
        return [done[i] for i in range(len(self.placed))]

    def _merge(self, done: list[dict[str, Any]], start_at: float) -> dict[str, Any]:
        reports = [json.loads(d["report"]) for d in done]
        # One exact merge of every engine's part: a node with subnets of its own hands on each subnet's.
        parts: list[dict[str, Any]] = []
        firsts: list[Share] = []
        for p, d, report in zip(self.placed, done, reports):
            for text, first in d.get("parts") or [(None, 0)]:
                parts.append(report if text is None else json.loads(text))
                firsts.append(Share(len(firsts), p.share.first_client + int(first), 0))
        merged = fanout.merge(parts, firsts, f"the nodes' results of mix {self.mix_index}")
        nodes = []
        for p, off, threads, report, d in zip(self.placed, self.offsets, self.threads, reports, done):
            engine = d.get("monitor", {}).get("engine", {})
            util = float(engine.get("cpu_util_pct", 0.0))
            nodes.append({
                "node_id": p.node.node_id,
                "names": list(p.node.resources),  # how the user names it (node1 … of --cluster local:N)
                "ip": p.node.ip,
                "first_client": p.share.first_client,
                "clients": p.share.clients,
                "connections": report.get("connections"),
                "threads": threads,
                "requests": report.get("requests", 0),
                "errors": sum(report.get("errors", {}).values()),
                "rps": report.get("rps", 0.0),
                "client_cpu_s": report.get("client_cpu_s"),
                "engine_cores": engine.get("cores"),
                "engine_cpu_util_pct": util,
                "client_bound": util >= CLIENT_BOUND_PCT,
                "latency_us": report.get("latency_us"),
                "histogram_b64": report.get("histogram_b64"),
                "clock_offset_s": off.offset_s,
                "clock_uncertainty_s": off.uncertainty_s,
                **({"subnets": d["subnets"], "network": d["network"]} if "network" in d else {}),
            })  # fmt: skip
        merged["cluster"] = {"start_at_unix_s": start_at, "nodes": nodes}
        return merged

    def _cancel_all(self) -> None:
        """Stop every node's engine; a node that does not answer is killed with its actor."""
        ray = self.session.ray
        refs = [p.actor.cancel.remote() for p in self.placed]
        try:
            ray.get(refs, timeout=2.0)
        except Exception:
            self.session.release([p.actor for p in self.placed])

    def _gather(self, refs: list[Any], timeout_s: float, when: str, placed: list[Placed] | None = None) -> list[Any]:
        """ray.get of one call per node, with every Ray failure turned into crest's words (see ray_failure);
        a node lost or Ray failing stops every node's engine."""
        placed = self.placed if placed is None else placed
        ray = self.session.ray
        try:
            return list(ray.get(refs, timeout=timeout_s))
        except ray.exceptions.RayError as exc:
            if isinstance(exc, ray.exceptions.GetTimeoutError):
                who = next((p for p, r in zip(placed, refs) if not ray.wait([r], timeout=0)[0]), placed[0])
                when += f" mix {self.mix_index} (no reply in {timeout_s:g}s)"
            else:
                who = next((p for p, r in zip(placed, refs) if _failed(ray, r)), placed[0])
                when += f" mix {self.mix_index}"
            if not isinstance(exc, ray.exceptions.RayTaskError):  # the node's own error started nothing
                self._cancel_all()
            raise ray_failure(ray, exc, who.node, when) from None


def _failed(ray: Any, ref: Any) -> bool:
    try:
        ray.get(ref, timeout=0)
    except Exception:
        return True
    return False


class LoadNodes:
    """The load actors of one run, one per load node, kept across its mixes; `load()` deals a mix. With a
    network spec each node builds its own client network for the run (slot i+1: blocks of its own) and
    removes it at close()."""

    def __init__(self, session: ClusterSession, nodes: list[Node], network: Any = None, lines: int = 0) -> None:
        self.session = session
        self.nodes = nodes
        self.actors, self.group = session.place_load(nodes)
        self.network = network
        if network is not None:
            try:
                refs = [a.open_network.remote(network, lines, i + 1) for i, a in enumerate(self.actors)]
                self._gather(refs, NETWORK_TIMEOUT_S, "while building its client network")
            except BaseException:
                self.close()
                raise

    def _gather(self, refs: list[Any], timeout_s: float, when: str) -> list[Any]:
        ray = self.session.ray
        try:
            return list(ray.get(refs, timeout=timeout_s))
        except ray.exceptions.RayError as exc:
            who = next((n for n, r in zip(self.nodes, refs) if _failed(ray, r)), self.nodes[0])
            raise ray_failure(ray, exc, who, when) from None

    def send(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """fn(*args, **kwargs) on the first load node (crest.load.vantage's sender), with its errors in crest's
        words (a crest error raised there is raised here)."""
        ref = self.actors[0].call.remote(fn, *args, **kwargs)
        return self._gather([ref], SEND_TIMEOUT_S, "while sending the harness's request")[0]

    def load(self, spec: RunSpec, clients: int, mix_index: int, side: Any = None) -> ClusterLoad:
        """A ClusterLoad of one mix: its clients dealt whole over the nodes; `side` (a NodeActor: the
        target's or the monitor's node) is watched beside them."""
        shares = fanout.deal(clients, len(self.nodes))
        placed = [Placed(self.nodes[s.index], s, self.actors[s.index]) for s in shares]
        return ClusterLoad(self.session, placed, spec, mix_index, side)

    def close(self) -> None:
        if self.network is not None:
            try:
                # Each node removes its own network; one that cannot leaves it to the next clean on its
                # machine (its owner, the actor's process, is then gone) or `crest network clean`.
                self.session.ray.get([a.close_network.remote() for a in self.actors], timeout=NETWORK_TIMEOUT_S)
            except Exception:
                pass
        self.session.release(self.actors)
        self.session.remove_group(self.group)


def check_blocks(load_nodes: int, subnets: int) -> None:
    """Raises ConfigError when every load node's own subnets do not fit 198.18.0.0/15's address blocks."""
    from crest.network import addresses

    if load_nodes * subnets > addresses.BLOCKS:
        raise ConfigError(
            f"--network subnets={subnets} on each of {load_nodes} load nodes needs {load_nodes * subnets} address"
            f" blocks, and 198.18.0.0/15 holds {addresses.BLOCKS}: use fewer subnets or --nodes"
        )


def routes_back(nodes: list[Node], subnets: int, target_ip: str) -> list[tuple[str, str]]:
    """(block, node address) for each load node's client blocks (node i is slot i+1) whose node is on
    another machine than the target's: the routes the target's machine needs back to them."""
    from crest.network import addresses

    return [
        (str(b), n.ip) for i, n in enumerate(nodes) if n.ip != target_ip for b in addresses.slot_blocks(i + 1, subnets)
    ]


def check_routed(nodes: list[Node], subnets: int, urls: tuple[str, ...]) -> None:
    """Raises ConfigError when a target crest has no node on (a --target URL) is on another machine than
    some load nodes: it cannot answer their subnets unless it routes their blocks back, which crest does
    only where it has a node (--target-node, --monitor-node)."""
    from urllib.parse import urlsplit

    for url in urls:
        host = urlsplit(url).hostname or ""
        try:
            address = socket.gethostbyname(host)
        except OSError:
            address = host  # the nodes resolve it (or say they cannot) at the ready barrier
        if address.startswith("127."):
            continue
        routes = routes_back(nodes, subnets, address)
        if routes:
            lines = "; ".join(f"ip route add {block} via {via}" for block, via in routes)
            raise ConfigError(
                f"--network on a cluster: {host} must route the load nodes' client blocks back: run its target on"
                f" a node (--target-node, or --monitor-node for one crest did not start: crest adds the routes"
                f" there), or run on {host}: {lines}"
            )


class OneMix:
    """`crest bench --cluster`: one mix of `spec` over the cluster, each connection its own client,
    with the session opened before and closed after (the same face as LoadClient)."""

    def __init__(self, address: str, nodes: int | None, spec: RunSpec, network: Any = None) -> None:
        from crest.cluster import placement
        from crest.cluster.session import session

        self.spec = replace(spec, connections_per_client=1)
        cluster = session(address)
        try:
            load = placement.choose_nodes(cluster.nodes(), nodes, set())
            placement.check_clients(spec.connections, load)
            lines = 0
            if network is not None:  # each node its own subnets (nested): as crest run's placement checks it
                from crest.network.lines import lines_needed

                check_blocks(len(load), network.subnets)
                check_routed(load, network.subnets, (spec.url,))
                lines = lines_needed(self.spec, network.subnets, network.link_per)
            self.nodes = LoadNodes(cluster, load, network, lines)
            self.load = self.nodes.load(self.spec, spec.connections, 0)
            self.load.preflight()
        except BaseException:
            close_all()
            raise

    def from_clients(self, fn: Callable[[], T]) -> T:
        """`fn` here, with its requests to the target (crest.load.vantage) sent from the first load node."""
        from crest.load import vantage

        try:
            with vantage.at(self.nodes.send):
                return fn()
        except BaseException:
            self.nodes.close()
            close_all()
            raise

    def run(self, on_progress: ProgressCallback | None = None) -> RunResult:
        try:
            return self.load.run(on_progress)
        finally:
            self.nodes.close()
            close_all()
