"""One RunSpec sent from a network's subnets: its whole clients dealt over the subnets by the fan-out,
each subnet's share run by an engine started inside its namespace (so its sockets are there) with its
clients' own source addresses, all starting at one instant; the shares merge exactly.

Used by the subnets placement on this machine and by a cluster node's load actor (each node its own
network: nested placement), which is why it lives beside the network and not in a placement. Also
moves a spec's URLs onto a network (spec_on_network). Never prints.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any, TypeVar
from urllib.parse import urlsplit

from crest.errors import ConfigError, EngineError
from crest.load import fanout
from crest.load.client import CANCEL_GRACE_S, OVERRUN_GRACE_S, POLL_INTERVAL_S, LoadClient, ProgressCallback, RunResult
from crest.load.fanout import Share
from crest.load.runspec import Origin, RunSpec
from crest.network import netns
from crest.network.topology import Network
from crest.network.url import is_local, loopback_port, on_network

START_LEAD_S = 0.3  # every subnet's engine is built before the common start

T = TypeVar("T")


class SubnetLoad:
    """Runs one RunSpec from a network's subnets (the face of crest.load.client.LoadClient)."""

    def __init__(self, spec: RunSpec, network: Network, origin: Origin = "suite") -> None:
        self.spec = spec
        self.network = network
        self.origin: Origin = origin
        self.shares = fanout.deal(spec.connections // spec.connections_per_client, network.spec.subnets)
        parts = fanout.share_specs(spec, self.shares, "subnets", "fewer subnets")
        self.specs = [self._on_subnet(s, p) for s, p in zip(self.shares, parts)]
        self.clients = [LoadClient(s, origin) for s in self.specs]  # validates every share before anything runs
        self.config: dict[str, Any] = {**spec.to_config(), "subnets": len(self.shares)}
        self.config.pop("source_addrs", None)

    def _on_subnet(self, share: Share, part: RunSpec) -> RunSpec:
        """A share's spec with its subnet's client addresses and its part of the engine threads."""
        k, subnet = self.spec.connections_per_client, share.index + 1
        if self.network.spec.link_per == "connection":
            sources = self.network.client_addresses(subnet, part.connections)
        else:
            sources = [a for a in self.network.client_addresses(subnet, share.clients) for _ in range(k)]
        threads = max(1, min(part.connections, -(-self.spec.threads // len(self.shares))))
        return replace(part, threads=threads, source_addrs=tuple(sources))

    def preflight(self) -> None:
        """Each subnet checks its addresses and the target from inside its namespace."""
        for share, client in zip(self.shares, self.clients):
            netns.call_in(self.network.subnet_ns(share.index + 1), client.preflight)

    def from_clients(self, fn: Callable[[], T]) -> T:
        """`fn` called from the first subnet's namespace, where the clients stand."""
        return netns.call_in(self.network.subnet_ns(self.shares[0].index + 1), fn)

    def start(self, start_at: float) -> SubnetRuns:
        """Every subnet's engine, started to begin at `start_at` (unix seconds)."""
        runs: list[Any] = []
        try:
            for share, client in zip(self.shares, self.clients):
                ns = self.network.subnet_ns(share.index + 1)
                runs.append(netns.call_in(ns, _starter(client.config, start_at, self.origin)))
        except BaseException:
            for run in runs:
                run.cancel()
            raise
        return SubnetRuns(runs)

    def run(self, on_progress: ProgressCallback | None = None) -> RunResult:
        """Start every subnet's engine at one instant, poll them, merge their parts."""
        start_at = time.time() + START_LEAD_S
        runs = self.start(start_at)
        with fanout.engine_failures():
            try:
                self._poll(runs, start_at, on_progress)
            except KeyboardInterrupt:
                runs.cancel()
                runs.wait(self.spec.timeout_s + CANCEL_GRACE_S)
                return RunResult(self.merge(runs.texts, start_at)[0], self.config, interrupted=True)
        return RunResult(self.merge(runs.texts, start_at)[0], self.config, interrupted=False)

    def _poll(self, runs: SubnetRuns, start_at: float, on_progress: ProgressCallback | None) -> None:
        deadline = None
        if self.spec.duration_s is not None:
            deadline = start_at + self.spec.duration_s + self.spec.timeout_s + OVERRUN_GRACE_S
        while not runs.wait(POLL_INTERVAL_S):
            if on_progress is not None:
                on_progress(runs.live())
            if deadline is not None and time.time() > deadline:
                runs.cancel()
                raise EngineError(
                    f"the subnets' engines overran a {self.spec.duration_s:g}s run and were cancelled: please report this"
                )

    def merge(self, texts: list[str | None], start_at: float) -> tuple[dict[str, Any], list[tuple[str, int]]]:
        """The merged report (with each subnet's share under "subnets"), and each subnet's part as its
        engine wrote it with its first client: a cluster node hands those on, to be merged with every
        other node's in one exact merge."""
        if any(t is None for t in texts):
            raise EngineError("a subnet's engine did not stop after being cancelled: please report this")
        parts = [(t, s.first_client) for t, s in zip(texts, self.shares) if t is not None]
        reports = [json.loads(t) for t, _ in parts]
        merged = fanout.merge(reports, self.shares, "the subnets' results")
        merged["subnets"] = {
            "start_at_unix_s": start_at,
            "shares": [
                {"subnet": s.index + 1, "first_client": s.first_client, "clients": s.clients,
                 "requests": r.get("requests", 0), "errors": sum(r.get("errors", {}).values()),
                 "rps": r.get("rps", 0.0)}
                for s, r in zip(self.shares, reports)
            ],
        }  # fmt: skip
        return merged, parts


class SubnetRuns:
    """The subnets' started engines, polled as one (the face of an engine run: wait, live, cancel)."""

    def __init__(self, runs: list[Any]) -> None:
        self.runs = runs
        self.texts: list[str | None] = [None] * len(runs)

    def wait(self, timeout_s: float) -> bool:
        """Wait up to `timeout_s` in all for the engines still running; whether every one has ended."""
        waiting = [i for i, t in enumerate(self.texts) if t is None]
        for i in waiting:
            self.texts[i] = self.runs[i].wait(timeout_s / len(waiting))
        return all(t is not None for t in self.texts)

    def live(self) -> dict[str, Any]:
        return fanout.sum_live(run.live() for run in self.runs)

    def cancel(self) -> None:
        for run in self.runs:
            run.cancel()


def _starter(config: dict[str, Any], start_at: float, origin: Origin) -> Callable[[], Any]:
    return lambda: fanout.start_part(config, start_at, origin)


def spec_on_network(spec: RunSpec, network: Network, *, node: bool = False) -> RunSpec:
    """`spec` with every target URL (its URL, its request table's, SPECweb99's) reached at the network's
    target address, and each port of a server that listens on loopback only forwarded to it; on a cluster
    node (`node`), a target on another machine is kept as given and routed out through the node's NIC.

    Raises:
        ConfigError: a target that is not on this machine (on_network's words).
        MachineError: the forward could not be set up.
    """
    urls = [spec.url, *(str(r["url"]) for r in spec.requests if "url" in r)]
    if spec.specweb99:
        urls += [str(spec.specweb99[k]) for k in ("base_url", "dynamic_url", "cgi_url") if spec.specweb99.get(k)]
    moved: dict[str, str] = {}
    for url in urls:
        origin = _origin(url)
        if origin in moved:
            continue
        host = urlsplit(url).hostname or ""
        if node and host and not is_local(host):  # a real cluster: out through this node's NIC, as given
            network.route_out(_address(host))
            moved[origin] = origin
            continue
        moved[origin] = _origin(on_network(url, network.target_address))
        port = loopback_port(url)
        if port is not None:
            network.forward_to_loopback(port)

    def move(url: str) -> str:
        origin = _origin(url)
        return moved[origin] + url[len(origin) :] if origin in moved else url

    requests = tuple({**r, "url": move(str(r["url"]))} if "url" in r else r for r in spec.requests)
    specweb99 = spec.specweb99
    if specweb99:
        specweb99 = {
            k: move(v) if k in ("base_url", "dynamic_url", "cgi_url") and v else v for k, v in specweb99.items()
        }
    return replace(spec, url=move(spec.url), requests=requests, specweb99=specweb99)


def _address(host: str) -> str:
    """The IPv4 address of a target's host.

    Raises:
        ConfigError: it does not resolve.
    """
    try:
        return str(socket.getaddrinfo(host, None, socket.AF_INET)[0][4][0])
    except (socket.gaierror, IndexError):
        raise ConfigError(f"cannot resolve the target's host {host!r} from this node: check the URL") from None


def _origin(url: str) -> str:
    """scheme://[user@]host:port of a URL, as it is written."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"
