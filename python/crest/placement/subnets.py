"""Client subnets on this machine: the clients send from network namespaces over shaped links to the
target in its own namespace (crest starts it there) or in this one (a --target URL).

A mix's whole clients are dealt over the subnets by the fan-out; each subnet's share runs in an engine
started from inside its namespace (so its sockets are there) with its clients' own source addresses,
all starting at one instant, and the shares merge exactly. Owns the network's life for one run and the
link counters beside each mix; the network itself is crest.network's. Never prints.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from crest.errors import EngineError
from crest.load import fanout
from crest.load.client import CANCEL_GRACE_S, OVERRUN_GRACE_S, POLL_INTERVAL_S, LoadClient, ProgressCallback, RunResult
from crest.load.fanout import Share
from crest.load.runspec import Origin, RunSpec
from crest.network import netns
from crest.network.addresses import TARGET_ADDRESS
from crest.network.counters import LinkSampler
from crest.network.spec import NetworkSpec
from crest.network.topology import Network, check_capability
from crest.network.url import loopback_port, on_network
from crest.placement.base import Load, Probe
from crest.placement.local import LocalPlacement
from crest.servers.base import ServerSettings
from crest.store import MixRecord
from crest.verdicts import LINK_BOUND_UTILISATION, Verdict, link_bound

T = TypeVar("T")

START_LEAD_S = 0.3  # every subnet's engine is built before the common start


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

    def run(self, on_progress: ProgressCallback | None = None) -> RunResult:
        """Start every subnet's engine at one instant, poll them, merge their parts."""
        start_at = time.time() + START_LEAD_S
        runs: list[Any] = []
        try:
            for share, client in zip(self.shares, self.clients):
                ns = self.network.subnet_ns(share.index + 1)
                runs.append(netns.call_in(ns, _starter(client.config, start_at, self.origin)))
        except BaseException:
            self._cancel(runs)
            raise
        with fanout.engine_failures():
            try:
                texts = self._poll(runs, start_at, on_progress)
            except KeyboardInterrupt:
                self._cancel(runs)
                texts = [r.wait(self.spec.timeout_s + CANCEL_GRACE_S) for r in runs]
                return RunResult(self._merge(texts, start_at), self.config, interrupted=True)
        return RunResult(self._merge(texts, start_at), self.config, interrupted=False)

    def _poll(self, runs: list[Any], start_at: float, on_progress: ProgressCallback | None) -> list[str | None]:
        deadline = None
        if self.spec.duration_s is not None:
            deadline = start_at + self.spec.duration_s + self.spec.timeout_s + OVERRUN_GRACE_S
        texts: list[str | None] = [None] * len(runs)
        while any(t is None for t in texts):
            for i, run in enumerate(runs):
                if texts[i] is None:
                    texts[i] = run.wait(POLL_INTERVAL_S / len(runs))
            if on_progress is not None:
                on_progress(fanout.sum_live(run.live() for run in runs))
            if deadline is not None and time.time() > deadline:
                self._cancel(runs)
                raise EngineError(
                    f"the subnets' engines overran a {self.spec.duration_s:g}s run and were cancelled: please report this"
                )
        return texts

    @staticmethod
    def _cancel(runs: list[Any]) -> None:
        for run in runs:
            run.cancel()

    def _merge(self, texts: list[str | None], start_at: float) -> dict[str, Any]:
        if any(t is None for t in texts):
            raise EngineError("a subnet's engine did not stop after being cancelled: please report this")
        reports = [json.loads(t) for t in texts if t is not None]
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
        return merged


def _starter(config: dict[str, Any], start_at: float, origin: Origin) -> Callable[[], Any]:
    return lambda: fanout.start_part(config, start_at, origin)


@dataclass
class LinkProbe:
    """The network's link counters beside a mix: the links' figures over the window, and link_bound
    for each link that ran at its rate."""

    sampler: LinkSampler

    def start(self) -> None:
        self.sampler.start()

    def stop(self) -> None:
        self.sampler.stop()

    def apply(self, record: MixRecord, window: tuple[float, float]) -> None:
        record.network = self.sampler.figures(*window)
        record.verdicts += link_verdicts(record.network)


def link_verdicts(figures: dict[str, Any]) -> list[Verdict]:
    """link_bound for each shaped link that ran at LINK_BOUND_UTILISATION of its rate or more in the window."""
    return [
        link_bound(
            str(link["link"]),
            str(link["direction"]),
            float(link["utilisation"]),
            float(link["rate_bps"]),
            link.get("subnet"),
            link.get("scope") == "client",
        )
        for link in figures.get("links", [])
        if link.get("utilisation") is not None and link["utilisation"] >= LINK_BOUND_UTILISATION
    ]


class SubnetsPlacement(LocalPlacement):
    """This machine's placement with the clients in a client network: the network is built before each
    run and removed after it; a target crest starts runs in the network's target namespace."""

    def __init__(self, cpus: float | None, spec: NetworkSpec, lines: int, target_urls: tuple[str, ...]) -> None:
        super().__init__(cpus)
        self.spec = spec
        self.lines = lines  # the most client lines (addresses) a subnet needs
        self.target_urls = target_urls  # a --target on this machine; none: crest starts it in the target namespace
        self.network: Network | None = None

    def check(self) -> None:
        check_capability()

    @contextmanager
    def around_run(self) -> Iterator[None]:
        with Network(self.spec, self.lines, target_in_root=bool(self.target_urls)) as network:
            for url in self.target_urls:
                port = loopback_port(url)
                if port is not None:
                    network.forward_to_loopback(port)  # a server on 127.0.0.1 only: the network forwards to it
            self.network = network
            try:
                yield
            finally:
                self.network = None

    def _net(self) -> Network:
        assert self.network is not None, "the subnets placement is used inside around_run()"
        return self.network

    def reach(self, url: str | None) -> str | None:
        return on_network(url) if url else None

    def server_settings(self, settings: ServerSettings) -> ServerSettings:
        local = super().server_settings(settings)
        if self.network is None:  # checked before the network exists: as this machine would run it
            return local
        return replace(local, bind_host=str(TARGET_ADDRESS), netns=self.network.target_ns)

    def load(self, spec: RunSpec, clients: int, mix_index: int, target: Any) -> Load:
        return SubnetLoad(spec, self._net())

    def probes(self, target: Any) -> list[Probe]:
        return [*super().probes(target), LinkProbe(LinkSampler(self._net()))]

    def annotate(self, record: MixRecord, report: dict[str, Any]) -> None:
        # The subnets' engines started together a moment after the record's start.
        record.started_at = float(report["subnets"]["start_at_unix_s"])

    def from_clients(self, fn: Callable[[], T]) -> T:
        return netns.call_in(self._net().subnet_ns(1), fn)

    def network_facts(self) -> dict[str, Any]:
        return self._net().describe()
