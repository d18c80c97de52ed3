"""Capacity search: the highest load a target sustains under a rule, as a sans-IO state machine.

Asks for one probe at a time (`next_load`) and is told whether it met the rule (`record`); it never
runs load, stores or prints, so `crest capacity` can drive it with stored mixes and the tests with a
target whose capacity is known. The search grows the load geometrically from a start until a probe
fails, bisects between the highest pass and the lowest fail down to a precision, then repeats the
answer `confirm` times: any failed repeat makes that load a fail and the bisection goes on below it.
`plan` says before a search starts the most probes it takes and the highest load it probes, by walking
the search itself through every outcome a target can give; a search given that many probes
(`max_probes`) ends when a noisy target has used them all, so the plan holds whatever the target does.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field

from crest.errors import ConfigError

GROW, BISECT, CONFIRM, DONE = "grow", "bisect", "confirm", "done"


@dataclass(frozen=True)
class Probe:
    """One trial at a load, and whether it met the rule."""

    load: float
    passed: bool
    phase: str


@dataclass
class CapacitySearch:
    """`while (load := s.next_load()) is not None: s.record(load, run(load))`, then `s.answer`.

    Loads are whole numbers (clients, connections) unless `integer` is False (an open-loop rate);
    `precision` is relative: bisection stops when fail / pass ≤ 1 + precision (or, for whole numbers,
    when they are adjacent).
    """

    start: float
    factor: float = 2.0
    precision: float = 0.05
    confirm: int = 3
    integer: bool = True
    max_load: float | None = None
    # The most probes it may take (plan's, for a noisy target whose refuted confirmations would go on
    # bisecting); None: no budget. Out of probes, it ends with the highest load that met the rule so far.
    max_probes: int | None = None
    probes: list[Probe] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.start > 0:
            raise ConfigError(f"a capacity search starts at a load above 0 (got {self.start:g})")
        if not self.factor > 1:
            raise ConfigError(f"a capacity search grows by a factor above 1 (got {self.factor:g})")
        if not self.precision > 0:
            raise ConfigError(f"a capacity search needs a precision above 0 (got {self.precision:g})")
        if self.max_probes is not None and self.max_probes < 1:
            raise ConfigError(f"a capacity search needs at least one probe (got {self.max_probes})")
        if self.confirm < 1:
            raise ConfigError(f"a capacity search confirms its answer at least once (got {self.confirm})")
        if self.max_load is not None and self.start > self.max_load:
            raise ConfigError(
                f"a capacity search starts at or below its ceiling (--start {self.start:g} > --max {self.max_load:g})"
            )
        self.phase = GROW
        self.passed: float | None = None  # the highest load that met the rule (and was not refuted)
        self.failed: float | None = None  # the lowest load that did not
        self._pending = self._round(self.start)
        self._confirmed = 0
        self.exhausted = False  # ended because it used its max_probes, not because it found its answer

    def _round(self, load: float) -> float:
        return float(max(1, round(load))) if self.integer else load

    def next_load(self) -> float | None:
        """The load of the next probe, or None when the search is over."""
        return None if self.phase == DONE else self._pending

    @property
    def answer(self) -> float | None:
        """The highest load that met the rule in its probe and in every confirmation; None before the
        search is over or when even the smallest load failed."""
        return self.passed if self.phase == DONE else None

    @property
    def confirmations(self) -> int:
        """How many repeats at the answer met the rule (all of them, once the search is over)."""
        return self._confirmed

    def record(self, load: float, passed: bool) -> None:
        """The outcome of the probe `next_load` asked for."""
        if self.phase == DONE or load != self._pending:
            raise ValueError(f"the search asked for a probe at {self._pending:g}, not {load:g}")
        self.probes.append(Probe(load, passed, self.phase))
        self._step(load, passed)
        if self.phase != DONE and self.max_probes is not None and len(self.probes) >= self.max_probes:
            self.phase, self.exhausted = DONE, True

    def _step(self, load: float, passed: bool) -> None:
        if self.phase == CONFIRM:
            self._record_confirmation(load, passed)
        elif passed:
            self.passed = load
            if self.phase == GROW and self.failed is None:
                grown = self._round(load * self.factor)
                if self.max_load is not None and grown > self.max_load:
                    grown = self._round(self.max_load)
                if grown <= load:  # at the ceiling: it is the answer, to be confirmed
                    self._start_confirming()
                    return
                self._pending = grown
                return
            self._narrow()
        else:
            self.failed = load
            if self.passed is None:  # even the start failed: shrink until something passes
                self._shrink(load)
                return
            self._narrow()

    def _shrink(self, load: float) -> None:
        """Probe below a failed load with nothing passed under it; over when it cannot get smaller (a
        whole load of 1, or a rate below the start ÷ 1024: ten halvings say the rule is out of reach)."""
        shrunk = self._round(load / self.factor)
        if shrunk >= load or (not self.integer and shrunk < self.start / 1024):
            self.phase = DONE
            return
        self.phase = GROW
        self._pending = shrunk

    def _narrow(self) -> None:
        """Bisect between the highest pass and the lowest fail, or confirm once they are close enough."""
        assert self.passed is not None and self.failed is not None
        self.phase = BISECT
        lo, hi = self.passed, self.failed
        if hi / lo <= 1 + self.precision or (self.integer and hi - lo <= 1):
            self._start_confirming()
            return
        middle = self._round((lo + hi) / 2) if self.integer else (lo * hi) ** 0.5
        self._pending = middle if lo < middle < hi else lo

    def _start_confirming(self) -> None:
        assert self.passed is not None
        self.phase = CONFIRM
        self._confirmed = 0
        self._pending = self.passed

    def _record_confirmation(self, load: float, passed: bool) -> None:
        if passed:
            self._confirmed += 1
            if self._confirmed >= self.confirm:
                self.phase = DONE
            return
        # Refuted: this load is a fail; the answer lies below it, above the highest other pass.
        self.failed = load
        below = [p.load for p in self.probes if p.passed and p.load < load and p.phase != CONFIRM]
        self.passed = max(below) if below else None
        self._confirmed = 0
        if self.passed is None:
            self._shrink(load)
            return
        self._narrow()


def probes_needed(search: CapacitySearch, capacity: float, limit: int = 1000) -> int:
    """How many probes `search` (a fresh one) makes against a target that meets the rule up to `capacity`
    and never above: the plan of a search before it runs (`crest capacity` states the range it spans)."""
    count = 0
    while count < limit and (load := search.next_load()) is not None:
        search.record(load, load <= capacity)
        count += 1
    return count


@dataclass(frozen=True)
class SearchPlan:
    """What a search will do at most, whatever its target: `probes` probes, none above `highest_load`."""

    probes: int
    highest_load: float


def plan(fresh: CapacitySearch, limit: int = 100_000) -> SearchPlan:
    """The most probes a search like `fresh` (not yet asked anything; its max_probes ignored) takes against
    any target that meets the rule up to some load and never above, and the highest load it probes.

    Walks the search itself through every such target: at each probe whose outcome the earlier ones do not
    already decide (a load above every fail fails, one at or below a pass passes), both outcomes. The
    walk has one leaf per distinct course of the search, a few hundred for a ceiling of thousands.

    Raises ConfigError for a search without a ceiling (max_load), which has no most, and for one whose
    courses are too many to walk (`limit` probes in all: a precision far finer than any load's noise).
    """
    if fresh.max_load is None:
        raise ConfigError("a capacity search without a ceiling (--max) has no plan: give it one")
    first = copy.deepcopy(fresh)
    first.max_probes = None
    most, highest, walked = 0, 0.0, 0
    stack: list[tuple[CapacitySearch, float, float]] = [(first, -math.inf, math.inf)]
    while stack:
        search, passed_at, failed_at = stack.pop()
        walked += 1
        if walked > limit:
            raise ConfigError(
                f"a capacity search this fine has too many courses to plan (over {limit:,} probes to walk): give"
                " a coarser --precision or a narrower span from --start to --max"
            )
        load = search.next_load()
        if load is None:
            most = max(most, len(search.probes))
            continue
        highest = max(highest, load)
        outcomes = [True] if load <= passed_at else [False] if load >= failed_at else [True, False]
        for i, passed in enumerate(outcomes):
            course = search if i == len(outcomes) - 1 else copy.deepcopy(search)
            course.record(load, passed)
            stack.append(
                (course, max(passed_at, load), failed_at) if passed else (course, passed_at, min(failed_at, load))
            )
    return SearchPlan(most, highest)
