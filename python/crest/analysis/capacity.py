"""A stored capacity search read back: each probe judged by the run's rule, the answer, and how sure it is. Pure.

The search's settings are stored with the run (`config["capacity"]`) and every probe is a stored mix,
so the answer is recomputed here by replaying the probes through `crest.analysis.capacity_search.CapacitySearch`:
nothing but the mixes is trusted. Owns the confidence statement (the share of trials at the answer
that met the rule, bounded at 95 %, and each condition's margin there); must not run load or print.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from crest.analysis.capacity_search import CapacitySearch
from crest.analysis.points import LoadPoint, point_from_mix
from crest.analysis.rule import Condition, Rule, parse_rule
from crest.analysis.specweb99 import iteration
from crest.analysis.stats import CONFIDENCE, mean, nonnegative_interval
from crest.store import MixRecord, RunDetail
from crest.verdicts import DECIDING, Verdict, decided_by


def judge_probe(rule: Rule, specweb99: bool, mix: MixRecord, axis: str) -> tuple[float, tuple[str, ...]]:
    """A probe's load on the axis and what it broke: the rule's conditions as written, and with
    `specweb99` every SPECweb99 rule its iteration broke (empty: it passed)."""
    point = point_from_mix(mix, axis)
    failures = list(rule.failures(point))
    if point.requests + point.errors == 0:
        failures.append("no request completed in the window")  # nothing measured meets nothing
    if specweb99:
        failures.extend(iteration(mix).failures)
    return point.load, tuple(failures)


@dataclass(frozen=True)
class ProbeResult:
    """One probe: its mix, its load, its phase in the search and the conditions it broke."""

    index: int
    load: float
    phase: str
    passed: bool
    failures: tuple[str, ...]
    point: LoadPoint


@dataclass(frozen=True)
class Margin:
    """One condition at the answer: its values over the answer's trials, their mean and 95 % interval
    (None below 3 trials, never below 0: stats.nonnegative_interval), and the value at the lowest
    failing load (what broke it), in the condition's stored unit."""

    condition: Condition
    values: tuple[float, ...]
    mean: float | None
    interval: tuple[float, float] | None
    at_failed: float | None


@dataclass(frozen=True)
class CapacityResult:
    """A capacity search's outcome. `answer` is None when the search did not end (interrupted) or when
    even its smallest load broke the rule (`complete` tells which)."""

    rule: str
    axis: str
    precision: float
    probes: tuple[ProbeResult, ...]
    answer: float | None
    failed: float | None  # the lowest load that broke the rule (None: none did, up to the ceiling)
    complete: bool
    trials: int  # trials at the answer, every one of which met the rule
    pass_probability_lower: float | None  # one-sided 95 % lower bound on P(a trial at the answer meets the rule)
    margins: tuple[Margin, ...]
    # What else than the target decided the answer (DECIDING verdicts of its trials, first first), and
    # whether the answer is the ceiling (--max) rather than a load that broke the rule.
    limited_by: tuple[Verdict, ...] = ()
    at_ceiling: bool = False
    ceiling_given: bool = True  # the ceiling was --max (else the start × 1024 the search keeps without one)
    exhausted: bool = False  # the search used every probe of its plan before it confirmed an answer

    def statement(self) -> str:
        """The confidence statement, one sentence a reader can quote."""
        unit = {"clients": "clients", "connections": "connections", "rate": "requests/s"}[self.axis]
        if not self.complete:
            return f"the search did not finish ({len(self.probes)} probes stored): no answer"
        if self.answer is None:
            low = min((p.load for p in self.probes), default=0)
            return f"no load met {self.rule}: even {low:g} {unit} broke it"
        bracket = (
            f"and {self.failed:g} {unit} broke it"
            if self.failed is not None
            else "and no higher load was tried" + ("" if self.at_ceiling else " (the ceiling, --max)")
        )
        lower = self.pass_probability_lower or 0.0
        # Success first, then what n passing trials can and cannot promise: "at least 47%" read alone
        # sounds like a failure rate, when it is the most 4 passes out of 4 can prove.
        every = f"all {self.trials} trials" if self.trials > 1 else "its one trial"
        found = (
            f"{self.answer:g} {unit} met {self.rule} in {every} {bracket};"
            f" with {self.trials} trial{'s' if self.trials > 1 else ''} that means, with {CONFIDENCE:.0%}"
            f" confidence, a trial at {self.answer:g} {unit} meets the rule at least {lower:.0%} of the time"
            " (more trials, a higher --confirm, tighten that bound)"
        )
        # What decided the answer comes first: a reader who stops after one clause must not take a
        # measurement of the load generator, the network or the ceiling for one of the target.
        first = [decided_by(v.kind, "at the answer", figures=v.figures) or v.message for v in self.limited_by]
        if self.at_ceiling:
            ceiling = f"--max {self.answer:g}" if self.ceiling_given else f"{self.answer:g}, the start × 1024"
            first.append(
                f"the search stopped at its ceiling ({ceiling}), not at a load that broke the rule"
                + ("" if self.ceiling_given else ": raise --max to look higher")
            )
        if self.exhausted:
            first.append(
                f"the search used all {len(self.probes)} probes of its plan before it confirmed an answer (its"
                " target met and broke the rule at like loads): the answer is the highest load that met it so far"
            )
        return "; ".join([*first, found]) if first else found


def is_capacity_run(detail: RunDetail) -> bool:
    """Whether a run is a capacity search (its config carries the search's settings)."""
    config = detail.meta.config
    return isinstance(config, dict) and isinstance(config.get("capacity"), dict)


def capacity_result(detail: RunDetail) -> CapacityResult:
    """Replay a capacity run's probes through the search its settings describe."""
    settings: dict[str, Any] = detail.meta.config["capacity"]
    rule = parse_rule(str(settings["rule"]))
    axis = str(settings["axis"])
    search = CapacitySearch(
        start=float(settings["start"]),
        factor=float(settings["factor"]),
        precision=float(settings["precision"]),
        confirm=int(settings["confirm"]),
        integer=axis != "rate",
        max_load=settings.get("max_load"),
        max_probes=settings.get("max_probes"),
    )
    probes: list[ProbeResult] = []
    for mix in sorted(detail.mixes, key=lambda m: m.index):
        point = point_from_mix(mix, axis)
        _, failures = judge_probe(rule, bool(settings.get("specweb99")), mix, axis)
        if search.next_load() != point.load:
            break  # not the probe the search asked for (a hand-edited file): stop trusting the rest
        phase = search.phase
        search.record(point.load, not failures)
        probes.append(ProbeResult(mix.index, point.load, phase, not failures, failures, point))
    answer = search.answer
    complete = search.next_load() is None
    at_answer = [p for p in probes if answer is not None and p.load == answer and p.passed]
    failed_probes = [p for p in probes if not p.passed and answer is not None and p.load > answer]
    lowest_failed = min(failed_probes, key=lambda p: p.load) if failed_probes else None
    trials = len(at_answer)
    margins = tuple(_margin(c, at_answer, lowest_failed) for c in rule.conditions) if at_answer else ()
    seen = {v.kind: v for p in at_answer for v in p.point.verdicts if v.kind in DECIDING}
    max_load = settings.get("max_load")
    return CapacityResult(
        rule=rule.text,
        axis=axis,
        precision=float(settings["precision"]),
        probes=tuple(probes),
        answer=answer,
        failed=lowest_failed.load if lowest_failed else None,
        complete=complete,
        trials=trials,
        pass_probability_lower=(1 - CONFIDENCE) ** (1 / trials) if trials else None,
        margins=margins,
        limited_by=tuple(seen[k] for k in DECIDING if k in seen),
        at_ceiling=answer is not None and lowest_failed is None and max_load is not None and answer >= max_load,
        ceiling_given=bool(settings.get("max_load_given", True)),
        exhausted=search.exhausted,
    )


def _margin(condition: Condition, at_answer: list[ProbeResult], failed: ProbeResult | None) -> Margin:
    values = tuple(v for v in (condition.value(p.point) for p in at_answer) if v is not None)
    # Every metric a rule names is at least 0, and a share (errors, conforming) at most 1.
    interval = nonnegative_interval(values)
    if interval is not None and condition.metric in ("error_rate", "conforming"):
        interval = (interval[0], min(1.0, interval[1]))
    return Margin(
        condition=condition,
        values=values,
        mean=mean(values) if values else None,
        interval=interval,
        at_failed=condition.value(failed.point) if failed else None,
    )
