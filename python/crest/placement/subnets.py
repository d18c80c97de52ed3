"""Client subnets on this machine: the clients send from network namespaces over shaped links to the
target in its own namespace (crest starts it there) or in this one (a --target URL).

A mix's load is crest.network.load's SubnetLoad (the subnets' shares started at one instant and merged
exactly). Owns the network's life for one run and the link counters beside each mix (also what a
cluster node's networks report, see link_verdicts); the network itself is crest.network's. Never prints.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from crest.load.runspec import RunSpec
from crest.network import netns
from crest.network.addresses import TARGET_ADDRESS
from crest.network.counters import LinkSampler
from crest.network.load import SubnetLoad
from crest.network.spec import NetworkSpec
from crest.network.topology import Network, check_capability
from crest.network.url import loopback_port, on_network
from crest.placement.base import Load, Probe
from crest.placement.local import LocalPlacement
from crest.servers.base import ServerSettings
from crest.store import MixRecord
from crest.verdicts import LINK_BOUND_UTILISATION, Verdict, delay_line_bound, delay_line_limited, link_bound

T = TypeVar("T")


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

    def live(self) -> dict[str, Any]:
        return self.sampler.latest()


def link_verdicts(figures: dict[str, Any]) -> list[Verdict]:
    """link_bound for each shaped link that ran at LINK_BOUND_UTILISATION of its rate or more in the window, and
    delay_line_bound when the delay line ran at its limit (late or at a full core: verdicts.delay_line_limited)."""
    line = figures.get("delay_line") or {}
    late = (
        [delay_line_bound(line.get("cpu_cores"), line.get("late_mean_us"), line.get("late_p99_us"))]
        if delay_line_limited(line)
        else []
    )
    return late + [
        link_bound(
            str(link["link"]),
            str(link["direction"]),
            float(link["utilisation"]),
            float(link["rate_bps"]),
            link.get("subnet"),
            link.get("scope") == "client",
            link.get("node"),
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
