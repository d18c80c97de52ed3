"""A capacity search run through the suite runner: each probe one stored mix of one run.

Owns turning the search's next load into a mix of the suite (clients, connections of one thread
each, or an open-loop rate) and judging each stored mix by the rule before the search is asked for
the next one. The search itself is crest.analysis.capacity_search's, the rule crest.analysis.rule's; the answer is
read back from the store by crest.analysis.capacity, so what is printed is what was stored. Never
prints.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from crest.analysis.capacity import judge_probe
from crest.analysis.capacity_search import CapacitySearch, SearchPlan, plan
from crest.analysis.rule import Rule
from crest.errors import ConfigError
from crest.runner.trials import Event, EventCallback, MixHooks, RunRequest, SuiteRunner
from crest.store import Store
from crest.suite import Mix

AXES = ("clients", "connections", "rate")


# Without --max a search stops at this many times its start: its plan (most probes, highest load) is then a
# promise the search keeps, where an unbounded one could only state it for answers it guessed.
DEFAULT_SPAN = 1024


@dataclass(frozen=True)
class CapacityRequest:
    """What `crest capacity` was asked: the rule, the axis and how the search moves along it."""

    rule: Rule
    axis: str = "clients"
    start: float = 1.0
    factor: float = 2.0
    precision: float = 0.05
    confirm: int = 3
    max_load: float | None = None
    specweb99: bool = False  # a probe must also be a valid SPECweb99 iteration (every rule of the kit)

    @property
    def ceiling(self) -> float:
        """The highest load the search may probe: --max, else DEFAULT_SPAN times the start."""
        return self.max_load if self.max_load is not None else self.start * DEFAULT_SPAN

    def settings(self) -> dict[str, Any]:
        """As stored with the run (crest.analysis.capacity replays the probes with them): the ceiling and
        the probe budget the search ran under, so the replay takes the same course."""
        return {
            "rule": self.rule.text, "axis": self.axis, "start": self.start, "factor": self.factor,
            "precision": self.precision, "confirm": self.confirm, "max_load": self.ceiling,
            "max_load_given": self.max_load is not None, "max_probes": self.plan().probes,
            "specweb99": self.specweb99,
        }  # fmt: skip

    def plan(self) -> SearchPlan:
        """The most probes the search takes and the highest load it probes, whatever the target does."""
        return plan(self._search())

    def search(self) -> CapacitySearch:
        """A fresh search with these settings, held to its plan's probes (checks them: ConfigError names a
        bad one)."""
        search = self._search()
        search.max_probes = plan(search).probes
        return search

    def _search(self) -> CapacitySearch:
        if self.axis not in AXES:
            raise ConfigError(f"unknown --axis {self.axis!r}: use one of {', '.join(AXES)}")
        return CapacitySearch(
            start=self.start, factor=self.factor, precision=self.precision, confirm=self.confirm,
            integer=self.axis != "rate", max_load=self.ceiling,
        )  # fmt: skip


def probe_mix(ladder_mix: Mix, axis: str, load: float, index: int) -> Mix:
    """The mix that probes `load` on `axis`, with the suite's timing (and threads per client for the
    clients axis; an open-loop probe keeps the ladder mix's connections and sends at the rate)."""
    if axis == "clients":
        return replace_mix(ladder_mix, index=index, clients=int(load))
    if axis == "connections":
        return replace_mix(ladder_mix, index=index, clients=int(load), threads_per_client=1)
    return replace_mix(ladder_mix, index=index, rate_rps=float(load))


def replace_mix(mix: Mix, **changes: Any) -> Mix:
    # A probe never restarts the target (run_capacity refuses a ladder that asks); warmup = "each" carries over.
    return Mix.model_validate({**mix.model_dump(), "restart_target": False, **changes})


def run_capacity(
    request: RunRequest,
    capacity: CapacityRequest,
    store: Store,
    on_event: EventCallback | None = None,
    *,
    hooks: MixHooks | None = None,
    ladder_mix: Mix | None = None,
    on_ready: Callable[[Mix], None] | None = None,
) -> str:
    """Run the search against `request`'s target; returns the run id (the probes are its mixes).

    hooks: a harness around each probe (SPECweb99's Reset and POST-log check); ladder_mix: the mix whose
    timing each probe takes (default: the suite's first at the request's profile); on_ready: told that mix
    once every check passed, before anything is sent.
    """
    ladder = request.suite.ladder
    if ladder.restart_target not in (False, []) or ladder.warmup == "first":
        raise ConfigError(f"suite {request.suite.name}: a capacity search's probes are not the ladder's mixes, so"
                          " restart_target and warmup = \"first\" do not apply: drop them (warmup = \"each\" works)")  # fmt: skip
    search = capacity.search()
    shown = on_event or (lambda _event: None)
    first = ladder_mix or request.suite.mixes(request.profile)[0]

    def judge(event: Event) -> None:
        if event.kind == "mix-finished" and event.record is not None:
            load, failures = judge_probe(capacity.rule, capacity.specweb99, event.record, capacity.axis)
            search.record(load, not failures)
        shown(event)

    def probes() -> Iterator[Mix]:
        index = 0
        while (load := search.next_load()) is not None:
            index += 1
            yield probe_mix(first, capacity.axis, load, index)

    runner = SuiteRunner(replace(request, capacity=capacity.settings()), judge, hooks)
    runner.preflight()
    if on_ready is not None:
        on_ready(first)
    return runner.run_trial(store, 0, probes())
