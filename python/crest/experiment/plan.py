"""Plans experiments for `crest run` and `crest doe`: which configurations an invocation asks for,
the order their trials run in, and the experiment id every run of them shares.

Owns expanding value lists into configurations (every combination), mapping a
configuration's levels onto a run request (server, cores, memory and server
options of a provisioned target; every level is stored as a factor of the run,
so runs that differ in any setting never look like trials of one
configuration), interleaving trials, and minting experiment ids. Then it checks
every configuration before any of them sends and hands each trial to the
runner. Never prints and never measures: SuiteRunner executes each run; what a
design file means is crest.experiment.design's.
"""

from __future__ import annotations

import itertools
import secrets
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from crest.errors import ConfigError
from crest.network.spec import network_level
from crest.runner.trials import EventCallback, RunRequest, SuiteRunner, close_clusters
from crest.servers import cpus as cpu_split
from crest.servers.registry import EXTERNAL
from crest.store import Store
from crest.suite import Mix, Suite
from crest.units import parse_size

# Levels the planner maps onto a provisioned target; any other level is a server option (when
# named as one) or a factor its caller already applied (a suite member, a design's workload).
TARGET_FACTORS = ("server", "cpus", "memory", "network")


@dataclass(frozen=True)
class Configuration:
    """One configuration of an experiment: the request that realises it (its factors are its levels)."""

    request: RunRequest

    @property
    def trials(self) -> int:
        return self.request.repeat or self.request.suite.repeat


@dataclass(frozen=True)
class Trial:
    """One run to make: a trial of one configuration."""

    configuration: int  # index into Plan.configurations
    index: int  # stored as the run's repeat_index: equal configurations' runs are its trials


@dataclass(frozen=True)
class Plan:
    """An experiment: its id, its configurations, and every trial in the order they run."""

    experiment: str
    configurations: list[Configuration]
    trials: list[Trial]

    def mixes(self) -> int:
        """How many mixes the plan runs: every trial's ladder."""
        return sum(len(self._ladder(t)) for t in self.trials)

    def load_s(self) -> float:
        """The seconds of load the plan asks for: every trial's mixes end to end (checks, restarts and
        storing between them come on top)."""
        return sum(m.timing.length_s for t in self.trials for m in self._ladder(t))

    def _ladder(self, trial: Trial) -> list[Mix]:
        request = self.configurations[trial.configuration].request
        return request.suite.mixes(request.profile)


def new_experiment_id(prefix: str) -> str:
    """A fresh id for one invocation's runs: PREFIX + UTC minute + 4 hex digits (x…: crest run, doe…: crest doe)."""
    return prefix + time.strftime("%Y%m%d-%H%M", time.gmtime()) + "-" + secrets.token_hex(2)


def combinations(axes: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """Every combination of the axes' values (a full factorial), the first axis varying slowest."""
    names = list(axes)
    return [dict(zip(names, values)) for values in itertools.product(*(axes[name] for name in names))]


def configure(base: RunRequest, levels: Mapping[str, Any], *, options: Collection[str] = ()) -> RunRequest:
    """`base` with one configuration's levels applied, every level stored as a factor.

    server, cpus and memory (a size, e.g. "256M") set the provisioned target; http and streams the
    suite's protocol (Suite.with_protocol);
    levels named in `options` are server options (passed, and stored, as text);
    any other level is a factor the caller has already applied.

    Raises:
        ConfigError: a memory level that is not a size.
    """
    factors = {**base.factors}
    server_options = dict(base.server_options)
    for name, value in levels.items():
        if name in options:
            server_options[name] = factors[name] = str(value)
        else:
            factors[name] = value
    server = levels.get("server", base.server)
    if server == EXTERNAL:
        server = None
    memory = levels.get("memory")
    suite = base.suite
    if "http" in levels or "streams" in levels:
        http = str(levels["http"]) if "http" in levels else None
        streams = int(levels["streams"]) if "streams" in levels else None
        suite = suite.with_protocol(http, streams)
    return replace(
        base,
        suite=suite,
        factors=factors,
        server=server,
        target=base.target if server is None else None,
        cpus=cpu_split.share(levels["cpus"], what="cpus level").cpus if "cpus" in levels else base.cpus,
        memory_bytes=parse_size(str(memory), what="memory") if memory is not None else base.memory_bytes,
        server_options=server_options,
        network=network_level(str(levels["network"])) if "network" in levels else base.network,
    )


def plan(requests: Sequence[RunRequest], *, prefix: str) -> Plan:
    """The experiment of these configurations under a new id (see new_experiment_id): each one's trials
    (its repeat count) interleaved, trials outermost, so a slow drift of the machine spreads over every
    configuration instead of landing on one."""
    experiment = new_experiment_id(prefix)
    configurations = [Configuration(replace(r, experiment=experiment)) for r in requests]
    most = max((c.trials for c in configurations), default=0)
    trials = [
        Trial(i, index) for index in range(most) for i, c in enumerate(configurations) if index < c.trials
    ]  # fmt: skip
    return Plan(experiment, configurations, trials)


def plan_runs(
    base: RunRequest,
    members: Sequence[tuple[Suite, Mapping[str, Any]]],
    axes: Mapping[str, Sequence[Any]],
    *,
    options: Collection[str] = (),
) -> Plan:
    """`crest run`'s experiment: every suite member (a suite and its factors) × every combination of
    the axes (server, cpus, memory, server options: each a list of values).

    Raises:
        ConfigError: a server option named like another factor (its runs could not be told apart).
    """
    taken = set(TARGET_FACTORS) | {name for _, factors in members for name in factors}
    for name in options:
        if name in taken:
            raise ConfigError(f"--server-opt {name} has the name of a factor of the run: crest cannot store both")
    requests = [
        configure(replace(base, suite=suite, factors=dict(factors)), levels, options=options)
        for suite, factors in members
        for levels in combinations(axes)
    ]
    return plan(requests, prefix="x")


def execute(
    p: Plan,
    *,
    store_path: Path,
    on_event: EventCallback | None = None,
    on_run: Callable[[Configuration, Trial, str], None] | None = None,
    on_ready: Callable[[Plan], None] | None = None,
) -> list[str]:
    """Check every configuration (suite, fileset, server, cores, memory, options) before any of them
    sends, then make every trial in the plan's order; returns the run ids in that order."""
    try:
        runners = [SuiteRunner(c.request, on_event) for c in p.configurations]
        for runner in runners:
            runner.preflight()
        if on_ready is not None:
            on_ready(p)  # every check passed: what is about to run, before any of it does
        run_ids = []
        with Store(store_path) as store:
            for trial in p.trials:
                run_id = runners[trial.configuration].run_trial(store, trial.index)
                run_ids.append(run_id)
                if on_run is not None:
                    on_run(p.configurations[trial.configuration], trial, run_id)
        return run_ids
    finally:
        close_clusters()
