"""The fan-out: splitting one mix's load over several engines and merging their parts exactly.

Owns, for every placement (this machine, client subnets, Ray nodes): dealing whole clients, splitting a
request budget (-n) and an open-loop rate, each share's seed and first connection, starting an engine
run (the only code that calls `_engine.start_run`, with the one mapping of its errors), summing live
progress, and merging the shares' parts with the engine's own code (`_engine.merge_parts`). It does not
decide where a share runs (a namespace, a node): that is the placement's. Never prints.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from crest import _engine
from crest.errors import ConfigError, EngineError, MachineError
from crest.load.runspec import Origin, RunSpec, engine_config_error, engine_json

# Salt between a run's seed and a share's first client: every client draws its own requests, so a
# share's seed depends on where its clients start, never on how many shares there are.
SHARE_SEED_STRIDE = 1_000_003


@dataclass(frozen=True)
class Share:
    """The global clients [first_client, first_client + clients) that share `index` (0-based) runs."""

    index: int
    first_client: int
    clients: int


def deal(clients: int, places: int) -> list[Share]:
    """Whole clients dealt over `places` in order: each gets ⌊c/p⌋, the first c mod p one more. A mix
    with fewer clients than places (a ladder's first rungs) uses its first `clients` places."""
    used = max(1, min(clients, places))
    base, extra = divmod(clients, used)
    shares, first = [], 0
    for i in range(used):
        n = base + (1 if i < extra else 0)
        shares.append(Share(i, first, n))
        first += n
    return shares


def budgets(max_requests: int | None, shares: Sequence[Share], places: str, fewer: str) -> list[int | None]:
    """A request budget (-n) split over the shares: one each, the rest in proportion to their clients by
    cumulative cuts, so the budgets add up to the whole exactly.

    Args:
        places: what a share runs on, for the message ("load nodes", "subnets").
        fewer: the other fix the message offers ("fewer --nodes").

    Raises:
        ConfigError: fewer requests than shares (a share with nothing to send).
    """
    if max_requests is None:
        return [None] * len(shares)
    if max_requests < len(shares):
        raise ConfigError(
            f"-n {max_requests} is fewer requests than the {len(shares)} {places} (each sends at least one):"
            f" use -n {len(shares)} or more, or {fewer}"
        )
    rest, total = max_requests - len(shares), sum(s.clients for s in shares)
    return [1 + rest * (s.first_client + s.clients) // total - rest * s.first_client // total for s in shares]


def share_specs(spec: RunSpec, shares: Sequence[Share], places: str, fewer: str) -> list[RunSpec]:
    """The part of `spec` each share runs: its whole clients, its part of an open-loop rate, its request
    budget (see budgets) and its own seed. A SPECweb99 share numbers its connections from its first
    global one (user ids, POST forms), a loadfile share its dbench clients (their trees), both counted on
    from where `spec` itself starts (a node's share split again over its subnets); a replay share takes
    every n-th logged request (timed) or session (sessions), `part` [k, n]; a script share numbers its
    virtual users (their CSV rows) from its first global one. Threads and source
    addresses are the placement's to set."""
    total = sum(s.clients for s in shares)
    split = budgets(spec.max_requests, shares, places, fewer)
    k = spec.connections_per_client
    out = []
    for share, budget in zip(shares, split):
        requests = spec.requests
        if spec.selection == "once" and len(shares) > 1:
            requests = _once(spec.requests, share, total, places, fewer)
        specweb99 = None
        if spec.specweb99:
            first = int(spec.specweb99.get("first_connection", 0)) + share.first_client * k
            specweb99 = {**spec.specweb99, "first_connection": first}
        # dbench's client ids are global too: each client's tree on the shared target is its own.
        loadfile = None
        if spec.loadfile is not None:
            loadfile = {
                **spec.loadfile,
                "first_client": int(spec.loadfile.get("first_client", 0)) + share.first_client * k,
            }
        # A script's virtual users keep their global CSV rows: user i takes row i mod rows wherever it runs.
        script = None
        if spec.script is not None:
            script = {**spec.script, "first_user": int(spec.script.get("first_user", 0)) + share.first_client * k}
        replay = None
        if spec.replay is not None:
            # A share of a share (a node's split over its subnets) takes every n-th of its own: the same
            # residue class of the whole, by the chinese remainder of [k0, n0] then [k, n].
            k0, n0 = spec.replay.get("part") or (0, 1)
            replay = {**spec.replay, "part": [k0 + n0 * share.index, n0 * len(shares)]}
        out.append(
            replace(
                spec,
                replay=replay,
                script=script,
                connections=share.clients * k,
                rate_rps=spec.rate_rps * share.clients / total if spec.rate_rps is not None else None,
                max_requests=budget,
                seed=spec.seed * SHARE_SEED_STRIDE + share.first_client,
                specweb99=specweb99,
                loadfile=loadfile,
                requests=requests,
            )
        )
    return out


def _once(
    table: tuple[dict[str, Any], ...], share: Share, total: int, places: str, fewer: str
) -> tuple[dict[str, Any], ...]:
    """A share's entries of a table whose every entry is sent exactly once (Zeus' non-cached test): entry j
    belongs to client j mod `total`, so the shares' tables are disjoint, interleaved (each gets small and
    large files alike) and together the whole table.

    Raises:
        ConfigError: a share would get no entry (fewer entries than the clients before its last).
    """
    mine = tuple(e for j, e in enumerate(table) if share.first_client <= j % total < share.first_client + share.clients)
    if not mine:
        raise ConfigError(
            f"the workload sends each of its {len(table)} requests once, too few to deal over {total} clients on"
            f" {places}: use fewer clients or {fewer}"
        )
    return mine


def start(config: dict[str, Any], origin: Origin = "suite") -> Any:
    """Start one engine run of `config` (a RunConfig) and return its handle (wait, live, cancel).

    Raises:
        ConfigError: the engine rejected the config (nothing was sent), worded for `origin`.
        MachineError: the machine refused the engine an event loop, a thread or TLS.
    """
    try:
        return _engine.start_run(engine_json(config))
    except _engine.ConfigError as exc:
        raise engine_config_error(exc, origin) from None
    except _engine.MachineError as exc:
        raise MachineError(str(exc)) from None


def start_part(config: dict[str, Any], start_at_unix_s: float, origin: Origin = "suite") -> Any:
    """Start one share's engine at an absolute time, reporting its mergeable part."""
    return start(dict(config, start_at_unix_s=start_at_unix_s, report_part=True), origin)


@contextmanager
def engine_failures() -> Iterator[None]:
    """Polling started runs: a worker that panicked is the machine's failure, in crest's words."""
    try:
        yield
    except _engine.MachineError as exc:
        raise MachineError(str(exc)) from None


def sum_live(lives: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The shares' live counters as one run's: counts add (by kind and bucket too), elapsed time is the
    longest share's."""
    live: dict[str, Any] = {}
    for one in lives:
        for key, value in one.items():
            if key == "elapsed_s":
                live[key] = max(live.get(key, 0.0), value)
            elif isinstance(value, dict):
                held = live.setdefault(key, {})
                for k, n in value.items():
                    held[k] = held.get(k, 0) + n
            elif isinstance(value, list):
                held = live.get(key) or [0] * len(value)
                live[key] = [a + b for a, b in zip(held, value)]
            else:
                live[key] = live.get(key, 0) + value
    return live


def merge(reports: Sequence[dict[str, Any]], shares: Sequence[Share], what: str) -> dict[str, Any]:
    """One report from the shares' reports (each with its `part`, which is taken out): the engine's exact
    merge, every client numbered globally from its share's first client.

    Args:
        what: whose results these are, for the message ("the nodes' results of mix 3").

    Raises:
        EngineError: the parts do not merge (a bug: the shares ran one plan).
    """
    parts = [r.pop("part") for r in reports]
    try:
        merged: dict[str, Any] = json.loads(_engine.merge_parts(parts, [s.first_client for s in shares]))
    except (_engine.ConfigError, ValueError) as exc:
        raise EngineError(f"{what} do not merge ({exc}): please report this") from None
    return merged
