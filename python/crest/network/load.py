"""SubnetLoad: one mix's load from a client network. Whole clients are dealt over the subnets; each
subnet's share runs in an engine started from inside its namespace (so its sockets are there) with
its clients' own source addresses, all starting at one instant; the shares merge exactly
(crest._engine.merge_parts), as a cluster's nodes do. The face is LoadClient's: preflight(), run(),
config. Owns only that; the network itself is topology.py's.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from crest import _engine
from crest.errors import ConfigError, EngineError, MachineError
from crest.loadclient import CANCEL_GRACE_S, OVERRUN_GRACE_S, POLL_INTERVAL_S, LoadClient, ProgressCallback, RunResult
from crest.network import addresses, netns
from crest.network.spec import NetworkSpec
from crest.network.topology import Network
from crest.runspec import Origin, RunSpec

START_LEAD_S = 0.3  # every subnet's engine is built before the common start


@dataclass(frozen=True)
class SubnetShare:
    """The global clients [first_client, first_client + clients) that subnet `subnet` runs."""

    subnet: int
    first_client: int
    clients: int


def deal(clients: int, subnets: int) -> list[SubnetShare]:
    """Whole clients dealt over the subnets in order (the first ones get one more); a mix with fewer
    clients than subnets uses its first `clients` subnets."""
    used = max(1, min(clients, subnets))
    base, extra = divmod(clients, used)
    shares, first = [], 0
    for k in range(1, used + 1):
        n = base + (1 if k <= extra else 0)
        shares.append(SubnetShare(k, first, n))
        first += n
    return shares


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


class SubnetLoad:
    """Runs one RunSpec from a network's subnets."""

    def __init__(self, spec: RunSpec, network: Network, origin: Origin = "suite") -> None:
        self.spec = spec
        self.network = network
        self.origin: Origin = origin
        k = spec.connections_per_client
        self.shares = deal(spec.connections // k, network.spec.subnets)
        total = sum(s.clients for s in self.shares)
        budgets = _budgets(spec.max_requests, self.shares)
        self.specs = [self._share_spec(s, total, b) for s, b in zip(self.shares, budgets)]
        self.clients = [LoadClient(s, origin) for s in self.specs]  # validates every share before anything runs
        self.config: dict[str, Any] = {**spec.to_config(), "subnets": len(self.shares)}
        self.config.pop("source_addrs", None)

    def _share_spec(self, share: SubnetShare, total: int, budget: int | None) -> RunSpec:
        k = self.spec.connections_per_client
        connections = share.clients * k
        if self.network.spec.link_per == "connection":
            sources = self.network.client_addresses(share.subnet, connections)
        else:
            sources = [a for a in self.network.client_addresses(share.subnet, share.clients) for _ in range(k)]
        threads = max(1, min(connections, -(-self.spec.threads // len(self.shares))))
        return replace(
            self.spec,
            connections=connections,
            threads=threads,
            rate_rps=self.spec.rate_rps * share.clients / total if self.spec.rate_rps is not None else None,
            max_requests=budget,
            seed=self.spec.seed * 1_000_003 + share.first_client,
            source_addrs=tuple(sources),
        )

    def preflight(self) -> None:
        """Each subnet checks its addresses and the target from inside its namespace."""
        for share, client in zip(self.shares, self.clients):
            netns.call_in(self.network.subnet_ns(share.subnet), client.preflight)

    def run(self, on_progress: ProgressCallback | None = None) -> RunResult:
        """Start every subnet's engine at one instant, poll them, merge their parts."""
        start_at = time.time() + START_LEAD_S
        runs: list[Any] = []
        try:
            for share, client in zip(self.shares, self.clients):
                config = dict(client.config, start_at_unix_s=start_at, report_part=True)
                runs.append(netns.call_in(self.network.subnet_ns(share.subnet), _starter(config)))
        except _engine.ConfigError as exc:
            self._cancel(runs)
            raise ConfigError(str(exc)) from None
        except _engine.MachineError as exc:
            self._cancel(runs)
            raise MachineError(str(exc)) from None
        try:
            try:
                texts = self._poll(runs, start_at, on_progress)
            except KeyboardInterrupt:
                self._cancel(runs)
                texts = [r.wait(self.spec.timeout_s + CANCEL_GRACE_S) for r in runs]
                return RunResult(self._merge(texts, start_at), self.config, interrupted=True)
        except _engine.MachineError as exc:
            raise MachineError(str(exc)) from None
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
                live: dict[str, float] = {}
                for run in runs:
                    for key, value in run.live().items():
                        live[key] = live.get(key, 0) + value if key != "elapsed_s" else max(live.get(key, 0), value)
                on_progress(live)
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
        parts = [r.pop("part") for r in reports]
        try:
            merged: dict[str, Any] = json.loads(_engine.merge_parts(parts, [s.first_client for s in self.shares]))
        except (_engine.ConfigError, ValueError) as exc:
            raise EngineError(f"the subnets' results do not merge ({exc}): please report this") from None
        merged["subnets"] = {
            "start_at_unix_s": start_at,
            "shares": [
                {"subnet": s.subnet, "first_client": s.first_client, "clients": s.clients,
                 "requests": r.get("requests", 0), "errors": sum(r.get("errors", {}).values()),
                 "rps": r.get("rps", 0.0)}
                for s, r in zip(self.shares, reports)
            ],
        }  # fmt: skip
        return merged


def _starter(config: dict[str, Any]) -> Callable[[], Any]:
    return lambda: _engine.start_run(json.dumps(config))


def _budgets(max_requests: int | None, shares: list[SubnetShare]) -> list[int | None]:
    """A request budget split over the subnets in proportion to their clients, adding up exactly."""
    if max_requests is None:
        return [None] * len(shares)
    if max_requests < len(shares):
        raise ConfigError(
            f"-n {max_requests} is fewer requests than the {len(shares)} subnets (each sends at least one):"
            f" use -n {len(shares)} or more, or fewer subnets"
        )
    rest, total = max_requests - len(shares), sum(s.clients for s in shares)
    return [1 + rest * (s.first_client + s.clients) // total - rest * s.first_client // total for s in shares]
