"""CI gates: a run against a baseline under rules of an allowed change, e.g. `peak_rps>-5%,p99<+10%`. Pure.

Owns the gate-rule grammar, the figure each rule names and the verdict of a
rule. A rule names a metric, a direction and how much worse the run may be
than the baseline: in percent of the baseline (`%`), or for the error rate in
percentage points (`pp`: its baseline is often 0).

The test is crest compare's paired-difference test (compare.paired_result)
over the (load, trial) points both sides measured, trial i against trial i;
with one trial each, that pairs the ladder's mixes. It is taken on the
logarithm of each pair's ratio run ÷ baseline, because the bound is relative:
mixes whose req/s differ tenfold weigh alike, and a uniform 20% drop over a
rising ladder is as clear as it looks. The change and its interval are then
the mean ratio's, the figures the geometric means (their quotient is that
ratio). Where a value is 0 there is no ratio and the test takes plain
differences, as crest compare does; the error rate always does, in points.

A rule fails ("regression") only when the figure's change is past the bound
and the paired interval lies wholly on the worse side of 0. Past the bound
with an interval that holds 0 is "not significant"; an interval wholly on the
better side with a change on that side is "improvement"; anything else is
"pass". It must not read files or the store, nor word anything for a terminal.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from crest.analysis.compare import paired_result, percent_improvement, trial_pairs
from crest.analysis.group import configurations
from crest.analysis.peak import peak_of
from crest.analysis.points import LoadPoint
from crest.analysis.stats import CONFIDENCE
from crest.errors import ConfigError
from crest.store import RunDetail


@dataclass(frozen=True)
class GateMetric:
    """What a rule may name: its figure, the LoadPoint figure its test pairs, and which way is better."""

    name: str
    point_metric: str  # a compare.POINT_METRICS name or a latency key
    higher_is_better: bool
    peak: bool  # the figure is the peak of the mean curve; else the mean over the matched points
    unit: str  # "req/s", "MB/s", "ms" or "%", how the figure reads
    description: str

    @property
    def in_points(self) -> bool:
        """Whether its change is in percentage points (the error rate) rather than percent of the baseline."""
        return self.point_metric == "error_rate"


def _latency(name: str, key: str, what: str) -> GateMetric:
    return GateMetric(name, key, False, False, "ms", f"{what} latency over the matched mixes")


METRICS: dict[str, GateMetric] = {
    m.name: m
    for m in (
        GateMetric("peak_rps", "rps", True, True, "req/s", "peak req/s (the top of the mean curve)"),
        GateMetric("rps", "rps", True, False, "req/s", "req/s over the matched mixes"),
        GateMetric("peak_throughput", "throughput_Bps", True, True, "MB/s", "peak throughput (the top of its curve)"),
        GateMetric("throughput", "throughput_Bps", True, False, "MB/s", "throughput over the matched mixes"),
        _latency("p50", "p50", "median"),
        _latency("p90", "p90", "90th percentile"),
        _latency("p99", "p99", "99th percentile"),
        _latency("p99.9", "p999", "99.9th percentile"),
        _latency("max", "max", "maximum"),
        _latency("mean", "mean", "mean"),
        GateMetric("errors", "error_rate", False, False, "%", "error rate (errors ÷ attempts) over the matched mixes"),
    )
}
_ALIASES = {"p999": "p99.9", "peak_throughput_Bps": "peak_throughput", "throughput_Bps": "throughput"}
DEFAULT_RULES = "peak_rps>-5%,p99<+10%,errors<+1pp"
VERDICTS = ("pass", "regression", "improvement", "not significant")
# What a rule's paired test pairs: the logarithm of each matched pair's ratio (a relative bound, every mix
# weighed alike), the plain difference where a value is 0 (no ratio), or the error rate's difference in points.
RATIO, DIFFERENCE, POINTS = "ratio", "difference", "points"

_OPS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le, "<": operator.lt, ">=": operator.ge, ">": operator.gt,
}  # fmt: skip
_RULE = re.compile(r"^([a-z][a-z0-9_.]*)\s*(<=|>=|<|>)\s*([+-]?)\s*([0-9]*\.?[0-9]+)\s*([a-z%]*)$", re.IGNORECASE)
_EXAMPLE = "e.g. peak_rps>-5% or p99<+10% or errors<+1pp"


@dataclass(frozen=True)
class GateRule:
    """One rule: the metric's change must satisfy `op bound` (percent of the baseline, or points for errors)."""

    metric: GateMetric
    op: str
    bound: float
    text: str  # as the user wrote it

    def holds(self, change: float) -> bool:
        return _OPS[self.op](change, self.bound)

    @property
    def worse_sign(self) -> int:
        """-1 when a drop is worse (req/s), +1 when a rise is (latency, errors)."""
        return -1 if self.metric.higher_is_better else 1


def parse_rules(texts: Sequence[str]) -> tuple[GateRule, ...]:
    """Every rule of the --rule values, each a comma-separated list.

    Raises:
        ConfigError: one line naming the rule that is not understood and how to write it.
    """
    rules: list[GateRule] = []
    for text in texts:
        parts = [p.strip() for p in text.split(",")]
        if not text.strip() or any(not p for p in parts):
            raise ConfigError(f"invalid --rule {text!r}: give rules separated by commas, {_EXAMPLE}")
        rules.extend(parse_rule(p) for p in parts)
    if not rules:
        raise ConfigError(f"no --rule given: give at least one, {_EXAMPLE}")
    return tuple(rules)


def parse_rule(text: str) -> GateRule:
    """One rule: METRIC, < <= > or >=, a signed change and its unit (% or, for errors, pp).

    Raises:
        ConfigError: one line naming the problem and the fix.
    """
    match = _RULE.match(text.strip())
    if match is None:
        raise ConfigError(f"invalid --rule {text!r}: write METRIC, < or >, and an allowed change, {_EXAMPLE}")
    name, op, sign, number, unit = match.groups()
    name = _ALIASES.get(name.lower(), name.lower())
    if name not in METRICS:
        raise ConfigError(f"invalid --rule {text!r}: unknown metric {name!r}; use one of {', '.join(METRICS)}")
    metric = METRICS[name]
    bound = -float(number) if sign == "-" else float(number)
    wanted = "pp" if metric.in_points else "%"
    if unit.lower() != wanted:
        if metric.in_points:
            fix = f"the error rate's change is in percentage points (its baseline is often 0): write errors{op}+{number}pp"
        else:
            fix = f"the change is in percent of the baseline: write {_example(metric, number)}"
        raise ConfigError(f"invalid --rule {text!r}: {fix}")
    better = "a rise" if metric.higher_is_better else "a drop"
    if (op in ("<", "<=")) == metric.higher_is_better:
        raise ConfigError(
            f"invalid --rule {text!r}: it bounds {better} of {metric.name}, but a regression is the other way:"
            f" write {_example(metric, number)}"
        )
    if bound != 0 and not sign:
        raise ConfigError(f"invalid --rule {text!r}: sign the allowed change: write {_example(metric, number)}")
    if (bound > 0) == metric.higher_is_better and bound != 0:
        raise ConfigError(
            f"invalid --rule {text!r}: a bound past 0 asks for {better}, which a gate against a baseline"
            f" does not test; bound how much worse it may get: write {_example(metric, number)}"
        )
    return GateRule(metric, op, bound, text.strip())


def _example(metric: GateMetric, amount: str | None = None) -> str:
    if metric.in_points:
        return f"{metric.name}<+{amount or '1'}pp"
    if metric.higher_is_better:
        return f"{metric.name}>-{amount or '5'}%"
    return f"{metric.name}<+{amount or '10'}%"


@dataclass(frozen=True)
class Side:
    """One side of a gate: a run (or the trials of one configuration) as each trial's curve."""

    name: str  # as the user named it: a run id, an experiment id or a file
    label: str
    suite: str
    trials: tuple[tuple[LoadPoint, ...], ...]


def side_from_runs(name: str, details: Sequence[RunDetail], load_axis: str) -> Side:
    """The stored runs `name` selected as one side: they must be trials of one configuration.

    Raises:
        ConfigError: none selected, or several configurations.
    """
    configs = configurations(details)
    if len(configs) != 1:
        labels = ", ".join(repr(c.label) for c in configs)
        raise ConfigError(
            f"{name!r} holds {len(configs)} configurations ({labels}): name one run id (see `crest runs`)"
        )
    config = configs[0]
    trials = tuple(tuple(points) for points in config.trial_points(load_axis))
    return Side(name, config.label, config.trials[0].meta.suite, trials)


@dataclass(frozen=True)
class RuleVerdict:
    """One rule judged. Figures are in the stored units (req/s, bytes/s, µs, a fraction); `change` and
    `interval` in percent of the baseline, or percentage points for errors (`GateMetric.in_points`)."""

    rule: GateRule
    baseline: float
    current: float
    change: float
    test_change: float  # the paired test's mean difference, as a change (the same as `change` but for peaks)
    interval: tuple[float, float] | None  # of test_change; None with a single pair
    pairs: int
    significant: bool
    verdict: str  # one of VERDICTS
    scale: str = RATIO  # what the test paired: RATIO, DIFFERENCE or POINTS

    @property
    def regression(self) -> bool:
        return self.verdict == "regression"


@dataclass(frozen=True)
class GateResult:
    """Every rule's verdict, and what the tests paired."""

    current: Side
    baseline: Side
    verdicts: tuple[RuleVerdict, ...]
    trials: int  # the trials paired: the fewer of the two sides'
    loads: int  # the loads both measured, in the paired trials
    confidence: float

    @property
    def regressions(self) -> list[RuleVerdict]:
        return [v for v in self.verdicts if v.regression]

    @property
    def one_trial(self) -> bool:
        """No spread across trials: each test pairs the ladder's mixes."""
        return self.trials == 1


def check(rules: Sequence[GateRule], current: Side, baseline: Side, confidence: float = CONFIDENCE) -> GateResult:
    """Judge every rule on `current` against `baseline`.

    Raises:
        ConfigError: the sides measured no load in common, or lack a figure a rule names.
    """
    if not current.trials or not baseline.trials:
        empty = current if not current.trials else baseline
        raise ConfigError(f"{empty.name!r} has no stored mix: pick a run that measured")
    loads = {p.load for a, b in zip(current.trials, baseline.trials) for p in a if p.load in {q.load for q in b}}
    if not loads:
        raise ConfigError(
            f"{current.name!r} and {baseline.name!r} measured no load in common: gate a run of the same suite ladder"
        )
    verdicts = tuple(judge(rule, current, baseline, confidence) for rule in rules)
    trials = min(len(current.trials), len(baseline.trials))
    return GateResult(current, baseline, verdicts, trials, len(loads), confidence)


def judge(rule: GateRule, current: Side, baseline: Side, confidence: float = CONFIDENCE) -> RuleVerdict:
    """One rule: the figure of each side, its change, crest compare's paired test of the metric, the verdict."""
    metric = rule.metric
    pairs = trial_pairs(current.trials, baseline.trials, metric.point_metric)
    if not pairs:
        raise ConfigError(
            f"rule {rule.text!r}: the runs have no {metric.point_metric} at a load both measured"
            " (published tables carry no latency): drop the rule"
        )
    if metric.in_points:
        scale = POINTS
    elif all(x > 0 and y > 0 for x, y in pairs):
        scale, pairs = RATIO, [(math.log(x), math.log(y)) for x, y in pairs]
    else:
        scale = DIFFERENCE
    test = paired_result(current.name, baseline.name, pairs, metric.point_metric, confidence)
    # On the log scale the means are logs of geometric means, so current ÷ baseline is the mean ratio.
    base, cur = (math.exp(test.mean_b), math.exp(test.mean_a)) if scale == RATIO else (test.mean_b, test.mean_a)
    if scale == DIFFERENCE and base == 0:
        raise ConfigError(
            f"rule {rule.text!r}: the baseline's {metric.description} is 0, so a change relative to it is"
            " undefined: bound another metric"
        )
    test_change = _as_change(scale, test.mean_diff, base)
    interval = (
        None if test.ci95 is None else (_as_change(scale, test.ci95[0], base), _as_change(scale, test.ci95[1], base))
    )
    change = test_change
    if metric.peak:
        base, cur = _peak(metric, baseline), _peak(metric, current)
        if not (math.isfinite(base) and math.isfinite(cur)) or base == 0:
            raise ConfigError(f"rule {rule.text!r}: a side has no {metric.description}: bound the mean instead")
        change = percent_improvement(cur, base)
    verdict = _verdict(rule, change, test.mean_diff, test.significant)
    return RuleVerdict(rule, base, cur, change, test_change, interval, test.n, test.significant, verdict, scale)


def _as_change(scale: str, difference: float, base: float) -> float:
    """A mean difference on the test's scale as the change a bound reads: percent of the baseline, or points."""
    if scale == POINTS:
        return difference * 100.0
    if scale == RATIO:
        return math.expm1(difference) * 100.0
    return difference / base * 100.0


def _peak(metric: GateMetric, side: Side) -> float:
    peak = peak_of(side.trials)
    return peak.rps if metric.point_metric == "rps" else peak.throughput_Bps


def _verdict(rule: GateRule, change: float, mean_diff: float, significant: bool) -> str:
    worse = rule.worse_sign
    if not rule.holds(change):
        return "regression" if significant and mean_diff * worse > 0 else "not significant"
    if significant and mean_diff * worse < 0 and change * worse <= 0:
        return "improvement"
    return "pass"
