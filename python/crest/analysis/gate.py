"""CI gates: a run against a baseline under rules of an allowed change, e.g. `peak_rps>-5%,p99<+10%`. Pure.

Owns the gate-rule grammar, the figure each rule names, the test of a change
against the baseline's run-to-run noise, the verdict of a rule and the
warnings a reader of the verdicts must have (the two sides' configurations
differ, a host was noisy). A rule names a metric, a direction and how much
worse the run may be than the baseline: in percent of the baseline (`%`), or
for the error rate in percentage points (`pp`: its baseline is often 0).

Each trial gives one figure per rule: its peak, or for a mean metric the
geometric mean over the loads every compared trial measured, or its mean
error rate. The mixes of one run share that run's noise (the host, the page
cache, the target's state), so they are not independent measurements: the
spread that decides is the baseline's from trial to trial. With at least
MIN_BASELINE_TRIALS trials, the run's figure (the mean of its trials, of the
logarithms for a relative bound) is tested against the baseline's prediction
interval for it, mean ± t[1 − α/2; n − 1] · s · √(1/n + 1/k), moved by the
rule's allowance: past that limit on the worse side is a regression. With
fewer the noise is unknown and the bound alone decides, and no verdict says
"significant".

A mix that carries a noisy_host verdict (the hypervisor stole CPU, or the
engine waited for one) measured the host as much as the code, and its noise
is not the baseline's, so no figure uses it. A mean rule's trial figure is
then the trial's mean difference from the baseline's mean at each load,
over its quiet mixes (a trial effect in an additive model of trial and
load, on the rule's scale: without a noisy mix, the plain mean less a
constant); a peak rule takes each side's peak over the same loads, those
the run measured quietly less any that would leave fewer than
MIN_BASELINE_TRIALS baseline trials quiet over them.
A rule with nothing quiet left is `host noisy`: neither a pass nor a
regression, for the run must be repeated. It must not read files or the
store, nor word anything for a terminal.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from crest.analysis.group import configurations, differing_factors, settings
from crest.analysis.points import LoadPoint
from crest.analysis.stats import CONFIDENCE, MIN_TRIALS_FOR_INTERVAL, critical_value, mean, sample_sd
from crest.errors import ConfigError
from crest.store import RunDetail
from crest.verdicts import NOISY_HOST


@dataclass(frozen=True)
class GateMetric:
    """What a rule may name: its figure, the LoadPoint figure its test pairs, and which way is better."""

    name: str
    point_metric: str  # a compare.POINT_METRICS name or a latency key
    higher_is_better: bool
    peak: bool  # each trial's figure is its peak; else the mean over the loads every trial measured
    unit: str  # "req/s", "MB/s", "ms" or "%", how the figure reads
    description: str

    @property
    def in_points(self) -> bool:
        """Whether its change is in percentage points (the error rate) rather than percent of the baseline."""
        return self.point_metric == "error_rate"


def _latency(name: str, key: str, what: str) -> GateMetric:
    return GateMetric(name, key, False, False, "ms", f"{what} latency over the loads every trial measured")


METRICS: dict[str, GateMetric] = {
    m.name: m
    for m in (
        GateMetric("peak_rps", "rps", True, True, "req/s", "peak req/s (each trial's highest mix)"),
        GateMetric("rps", "rps", True, False, "req/s", "req/s over the loads every trial measured"),
        GateMetric(
            "peak_throughput", "throughput_Bps", True, True, "MB/s", "peak throughput (each trial's highest mix)"
        ),
        GateMetric(
            "throughput", "throughput_Bps", True, False, "MB/s", "throughput over the loads every trial measured"
        ),
        _latency("p50", "p50", "median"),
        _latency("p90", "p90", "90th percentile"),
        _latency("p99", "p99", "99th percentile"),
        _latency("p99.9", "p999", "99.9th percentile"),
        _latency("max", "max", "maximum"),
        _latency("mean", "mean", "mean"),
        GateMetric(
            "errors",
            "error_rate",
            False,
            False,
            "%",
            "error rate (errors ÷ attempts) over the loads every trial measured",
        ),
    )
}
_ALIASES = {"p999": "p99.9", "peak_throughput_Bps": "peak_throughput", "throughput_Bps": "throughput"}
DEFAULT_RULES = "peak_rps>-5%,p99<+10%,errors<+1pp"
# With the baseline's run-to-run noise known: past the bound beyond the noise (fails), past it within the noise,
# beyond the noise on the better side, anything else. Without it, the bound alone decides (the first fails).
REGRESSION, NOT_SIGNIFICANT, IMPROVEMENT, PASS = "regression", "not significant", "improvement", "pass"
PAST_BOUND, WITHIN_BOUND = "past the bound (noise unknown)", "within the bound (noise unknown)"
# Every measurement a rule could be judged on carried a noisy-host verdict on one side: undecided.
HOST_NOISY = "host noisy (undecided)"
VERDICTS = (PASS, REGRESSION, IMPROVEMENT, NOT_SIGNIFICANT, PAST_BOUND, WITHIN_BOUND, HOST_NOISY)
FAILING = (REGRESSION, PAST_BOUND)
# The scale a rule's figures are compared on: the logarithm (a relative bound, each trial's figure a geometric
# mean), plain values where a figure is 0 (no logarithm), or the error rate in points.
RATIO, DIFFERENCE, POINTS = "ratio", "difference", "points"
# Below this many baseline trials there is no estimate of the run-to-run spread worth a t quantile
# (stats.MIN_TRIALS_FOR_INTERVAL: with 2, t[0.975; 1] = 12.7).
MIN_BASELINE_TRIALS = MIN_TRIALS_FOR_INTERVAL

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
    """One side of a gate: the trials of one configuration as each trial's curve, the runs they are, and the
    configuration's settings (None where they are not known: a published table)."""

    name: str  # as the user named it: a run id, an experiment id or a file
    label: str
    suite: str
    trials: tuple[tuple[LoadPoint, ...], ...]
    runs: tuple[str, ...] = ()  # the run id of each trial
    setup: dict[str, Any] | None = None  # factors, profile and stored settings (group.settings)


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
    first = config.trials[0]
    return Side(name, config.label, first.meta.suite, trials, tuple(t.id for t in config.trials), run_setup(first))


def run_setup(detail: RunDetail) -> dict[str, Any]:
    """What a run's configuration is, as a gate's warning compares it: profile, factors and stored settings."""
    return {"profile": detail.meta.profile, **detail.meta.factors, **settings(detail)}


def history(baseline: Sequence[RunDetail], stored: Sequence[RunDetail], before: float, keep: int) -> list[RunDetail]:
    """The baseline's runs and the stored runs of its configuration (group.configurations' sense) that started
    before `before`, the newest `keep` in all (the named baseline always among them), oldest first."""
    if not baseline:
        return []
    named = {d.id for d in baseline}
    same = next(c for c in configurations([*baseline, *stored]) if baseline[0] in c.trials)
    others = [d for d in same.trials if d.id not in named and d.started_at < before and d.mixes]
    others.sort(key=lambda d: (d.started_at, d.id))
    room = max(0, keep - len(baseline))
    chosen = [*baseline, *(others[-room:] if room else [])]
    return sorted(chosen, key=lambda d: (d.started_at, d.id))


@dataclass(frozen=True)
class NoiseTest:
    """One rule's figures tested against the baseline's run-to-run spread, on the rule's scale (logarithms
    for RATIO, plain values for DIFFERENCE, fractions for POINTS): the baseline's n trial figures, the run's
    k, their means and the baseline's sample sd; `half` is the prediction interval's half width (None with
    fewer than MIN_BASELINE_TRIALS baseline trials: the noise is unknown)."""

    n: int
    k: int
    baseline_mean: float
    current_mean: float
    sd: float | None
    half: float | None
    critical: float | None  # t[1 − α/2; n − 1]

    @property
    def noise_known(self) -> bool:
        return self.half is not None


def noise_test(baseline: Sequence[float], current: Sequence[float], confidence: float = CONFIDENCE) -> NoiseTest:
    """The prediction interval of the mean of k new trials from n baseline trials, both drawn from one
    normal population: mean_b ± t[1 − α/2; n − 1] · s_b · √(1/n + 1/k). The figures are on the rule's
    scale already (logarithms for a relative bound)."""
    if not baseline or not current:
        raise ConfigError("a gate needs a figure from each side: the selection holds no measurements")
    n, k = len(baseline), len(current)
    sd = sample_sd(baseline)
    if n < MIN_BASELINE_TRIALS or sd is None:
        return NoiseTest(n, k, mean(baseline), mean(current), sd, None, None)
    t = critical_value(confidence, n)
    return NoiseTest(n, k, mean(baseline), mean(current), sd, t * sd * math.sqrt(1 / n + 1 / k), t)


@dataclass(frozen=True)
class RuleVerdict:
    """One rule judged. Figures are in the stored units (req/s, bytes/s, µs, a fraction): the geometric mean of
    the trials' figures (arithmetic on the DIFFERENCE and POINTS scales). `change`, `noise` (the baseline's
    prediction interval, as changes) and `limit` (the change past which the rule fails: the noise's worse end
    moved by the allowance) are in percent of the baseline, or percentage points for errors."""

    rule: GateRule
    baseline: float
    current: float
    change: float
    noise: tuple[float, float] | None  # None: fewer than MIN_BASELINE_TRIALS baseline trials
    limit: float | None
    significant: bool  # past `limit` on the worse side; never True while the noise is unknown
    verdict: str  # one of VERDICTS
    scale: str  # RATIO, DIFFERENCE or POINTS
    baseline_trials: int
    current_trials: int
    sd: float | None = None  # the baseline trials' sample sd on the scale (of the logarithms for RATIO)
    noisy_left_out: int = 0  # the mixes, of both sides, left out: noisy, or at a load a peak rule could not use
    judged_on: int = 0  # the mixes, of both sides, the figures come from

    @property
    def regression(self) -> bool:
        """Whether the rule fails the gate: a regression, or past the bound with the noise unknown."""
        return self.verdict in FAILING

    @property
    def undecided(self) -> bool:
        """Whether a noisy host left the rule nothing to judge: the run must be repeated."""
        return self.verdict == HOST_NOISY


@dataclass(frozen=True)
class GateResult:
    """Every rule's verdict, what they were judged on, and the warnings that go with them."""

    current: Side
    baseline: Side
    verdicts: tuple[RuleVerdict, ...]
    loads: int  # the loads every compared trial measured
    confidence: float
    warnings: tuple[str, ...] = ()

    @property
    def regressions(self) -> list[RuleVerdict]:
        return [v for v in self.verdicts if v.regression]

    @property
    def undecided(self) -> list[RuleVerdict]:
        """The rules a noisy host left nothing to judge on."""
        return [v for v in self.verdicts if v.undecided]

    @property
    def noise_known(self) -> bool:
        """Whether the baseline has the trials to tell run-to-run noise from a change."""
        return sum(1 for trial in self.baseline.trials if trial) >= MIN_BASELINE_TRIALS

    @property
    def false_alarm(self) -> float:
        """The chance that one rule fails a run that did not change (normal noise, allowance 0): one side of
        a two-sided interval at `confidence`, (1 − confidence) ÷ 2."""
        return (1.0 - self.confidence) / 2.0


def check(rules: Sequence[GateRule], current: Side, baseline: Side, confidence: float = CONFIDENCE) -> GateResult:
    """Judge every rule on `current` against `baseline`'s run-to-run noise.

    Raises:
        ConfigError: the sides measured no load in common, or lack a figure a rule names.
    """
    critical_value(confidence, 2)  # an invalid level is one line before anything is judged
    if not current.trials or not baseline.trials or not any(current.trials) or not any(baseline.trials):
        empty = current if not any(current.trials) else baseline
        raise ConfigError(f"{empty.name!r} has no stored mix: pick a run that measured")
    loads = common_loads(current, baseline)
    if not loads:
        raise ConfigError(
            f"{current.name!r} and {baseline.name!r} measured no load in common: gate a run of the same suite ladder"
        )
    verdicts = tuple(judge(rule, current, baseline, confidence) for rule in rules)
    return GateResult(current, baseline, verdicts, len(loads), confidence, tuple(warnings(current, baseline)))


def common_loads(current: Side, baseline: Side) -> set[float]:
    """The loads every trial of both sides measured (trials without a mix left out)."""
    sets = [{p.load for p in trial} for trial in (*current.trials, *baseline.trials) if trial]
    return set.intersection(*sets) if sets else set()


def judge(rule: GateRule, current: Side, baseline: Side, confidence: float = CONFIDENCE) -> RuleVerdict:
    """One rule: each trial's figure from the mixes no noisy host measured, the noise test of the run's
    against the baseline's, the verdict; `host noisy` when a side has no such mix for the rule."""
    metric = rule.metric
    loads = common_loads(current, baseline)
    cells = [_cells(rule, side, loads) for side in (baseline, current)]
    if metric.in_points:
        scale = POINTS
    elif all(v > 0 for side in cells for trial in side for _, v, _ in trial):
        scale = RATIO
    else:
        scale = DIFFERENCE
    on_scale = math.log if scale == RATIO else float
    figures = (_peaks if metric.peak else _effects)(cells, loads, on_scale)
    if figures is None:
        # Shown from every mix for the record, but a noisy one is evidence neither way.
        shown = judge(rule, _calm(current), _calm(baseline), confidence)
        return replace(shown, noise=None, limit=None, significant=False, verdict=HOST_NOISY, judged_on=0,
                       noisy_left_out=sum(1 for side in cells for t in side for c in t if c[2]))  # fmt: skip
    base_y, cur_y, level, used, left_out = figures
    test = noise_test(base_y, cur_y, confidence)
    # Back from the scale: on logarithms the means are logs of geometric means.
    base, cur = ((math.exp(level + test.baseline_mean), math.exp(level + test.current_mean)) if scale == RATIO
                 else (level + test.baseline_mean, level + test.current_mean))  # fmt: skip
    if scale == DIFFERENCE and base == 0:
        raise ConfigError(
            f"rule {rule.text!r}: the baseline's {metric.description} is 0, so a change relative to it is"
            " undefined: bound another metric"
        )
    change = _as_change(scale, test.current_mean - test.baseline_mean, base)
    if test.half is None:
        verdict = WITHIN_BOUND if rule.holds(change) else PAST_BOUND
        return RuleVerdict(rule, base, cur, change, None, None, False, verdict, scale, test.n, test.k, test.sd,
                           left_out, used)  # fmt: skip
    noise = (_as_change(scale, -test.half, base), _as_change(scale, test.half, base))
    limit = _moved(scale, noise[1] if rule.worse_sign > 0 else noise[0], rule.bound)
    worse = rule.worse_sign
    significant = (change - limit) * worse > 0
    better_end = noise[0] if worse > 0 else noise[1]
    if significant and not rule.holds(change):
        verdict = REGRESSION
    elif not rule.holds(change):
        verdict = NOT_SIGNIFICANT
    elif (change - better_end) * worse < 0:
        verdict = IMPROVEMENT
    else:
        verdict = PASS
    return RuleVerdict(rule, base, cur, change, noise, limit, significant, verdict, scale, test.n, test.k, test.sd,
                       left_out, used)  # fmt: skip


# A trial's mixes as (load, value, noisy): every mix for a peak rule, else the loads every trial measured.
Cells = list[list[tuple[float, float, bool]]]
# Each side's trial figures on the scale, the level they are relative to, and the mixes used and left out.
Figures = tuple[list[float], list[float], float, int, int]


def _noisy(point: LoadPoint) -> bool:
    return any(v.kind == NOISY_HOST for v in point.verdicts)


def _peaks(cells: Sequence[Cells], loads: set[float], on_scale: Callable[[float], float]) -> Figures | None:
    """Each trial's peak. A noisy mix may have been its trial's peak, so where one is, both sides' peaks are
    taken over the same loads L and only trials quiet at every load of L count: L starts as the loads the
    run measured quietly and loses, one at a time, the load most baseline trials were noisy at, until at
    least MIN_BASELINE_TRIALS baseline trials (or all of a smaller baseline) are quiet over it. None when no
    load is left."""
    base, cur = cells
    if not any(bad for side in cells for trial in side for _, _, bad in trial):
        kept: set[float] | None = None
    else:
        kept = loads - {load for trial in cur for load, _, bad in trial if bad}
        need = min(MIN_BASELINE_TRIALS, len(base))
        while kept:
            noisy_at = {load: sum(1 for t in base if any(bad and at == load for at, _, bad in t)) for load in kept}
            if sum(1 for t in base if not any(bad and at in kept for at, _, bad in t)) >= need:
                break
            kept.discard(max(kept, key=lambda load: (noisy_at[load], load)))
        if not kept:
            return None
        base = [t for t in base if not any(bad and at in kept for at, _, bad in t)]

    def at(trial: list[tuple[float, float, bool]]) -> list[tuple[float, float, bool]]:
        return [c for c in trial if kept is None or c[0] in kept]

    figures = [[on_scale(max(v for _, v, _ in at(trial))) for trial in side] for side in (base, cur)]
    total = sum(len(trial) for side in cells for trial in side)
    used = sum(len(at(trial)) for side in (base, cur) for trial in side)
    return figures[0], figures[1], 0.0, used, total - used


def _effects(cells: Sequence[Cells], loads: set[float], on_scale: Callable[[float], float]) -> Figures | None:
    """Each trial's figure over the loads, from its quiet mixes alone: its mean difference from the baseline's
    mean at each load (on the scale), an additive trial-and-load model that reads a trial measured at fewer
    loads on the same footing. Without a noisy mix it is the plain geometric (or arithmetic) mean, less the
    level. None when a side has no quiet mix at a load the baseline measured quietly."""
    base, cur = cells
    at_load: dict[float, list[float]] = {}
    for trial in base:
        for load, v, bad in trial:
            if not bad:
                at_load.setdefault(load, []).append(on_scale(v))
    level_at = {load: mean(ys) for load, ys in at_load.items()}

    def figures(side: Cells) -> list[float]:
        out = []
        for trial in side:
            diffs = [on_scale(v) - level_at[load] for load, v, bad in trial if not bad and load in level_at]
            if diffs:
                out.append(mean(diffs))
        return out

    base_y, cur_y = figures(base), figures(cur)
    if not base_y or not cur_y:
        return None
    total = sum(len(trial) for side in cells for trial in side)
    used = sum(1 for side in cells for trial in side for load, _, bad in trial if not bad and load in level_at)
    return base_y, cur_y, mean(list(level_at.values())), used, total - used


def _cells(rule: GateRule, side: Side, loads: set[float]) -> Cells:
    """Each trial's (load, value, noisy) for the rule's metric: at every mix for a peak, else at `loads`.

    Raises:
        ConfigError: a side lacks the figure.
    """
    metric = rule.metric
    out: Cells = []
    for trial in side.trials:
        if not trial:
            continue
        points = trial if metric.peak else [p for p in trial if p.load in loads]
        values = [(p.load, _value(p, metric.point_metric), _noisy(p)) for p in points]
        measured = [(load, v, bad) for load, v, bad in values if v is not None]
        if metric.peak and not measured:
            raise ConfigError(f"rule {rule.text!r}: {side.name!r} has no {metric.description}: bound the mean instead")
        if not metric.peak and (len(measured) < len(values) or not measured):
            raise ConfigError(
                f"rule {rule.text!r}: {side.name!r} has no {metric.point_metric} at a load both measured"
                " (published tables carry no latency): drop the rule"
            )
        out.append(measured)
    return out


def _calm(side: Side) -> Side:
    """The side with its noisy-host verdicts taken off (to show what its figures were)."""
    trials = tuple(
        tuple(replace(p, verdicts=[v for v in p.verdicts if v.kind != NOISY_HOST]) for p in t) for t in side.trials
    )
    return replace(side, trials=trials)


def _value(point: LoadPoint, name: str) -> float | None:
    value = getattr(point, name) if name in ("rps", "throughput_Bps", "error_rate") else point.latency_us.get(name)
    if value is None or not math.isfinite(float(value)):
        return None
    return float(value)


def _as_change(scale: str, difference: float, base: float) -> float:
    """A difference on the test's scale as the change a bound reads: percent of the baseline, or points."""
    if scale == POINTS:
        return difference * 100.0
    if scale == RATIO:
        return math.expm1(difference) * 100.0
    return difference / base * 100.0


def _moved(scale: str, end: float, allowance: float) -> float:
    """A noise limit (as a change) moved by a rule's allowance: multiplied on the ratio scale (−5% from a limit
    of −3% is 0.97 × 0.95), added in percent of the baseline or in points on the others."""
    if scale == RATIO:
        return ((1 + end / 100.0) * (1 + allowance / 100.0) - 1) * 100.0
    return end + allowance


def noisy_mixes(side: Side) -> int:
    """How many of the side's mixes carry a noisy-host verdict (steal time, the engine waiting for a CPU)."""
    return sum(1 for trial in side.trials for p in trial if _noisy(p))


def warnings(current: Side, baseline: Side) -> list[str]:
    """What a reader must know before trusting the verdicts: configurations that differ in a setting (named,
    with both values), and mixes a noisy host measured."""
    out = []
    if current.setup is not None and baseline.setup is not None:
        names = differing_factors([current.setup, baseline.setup])
        if names:
            shown = ", ".join(
                f"{n} {_shown(current.setup.get(n))} against {_shown(baseline.setup.get(n))}" for n in names
            )
            out.append(
                f"the run's configuration differs from the baseline's: {shown}; the change measures those settings"
                " too, not only the code: gate against a baseline of the same settings"
            )
    elif current.setup is None or baseline.setup is None:
        unknown = baseline.name if baseline.setup is None else current.name
        out.append(f"{unknown} stores no settings, so crest cannot tell whether the two configurations are equal")
    for side, what in ((current, "run"), (baseline, "baseline")):
        noisy = noisy_mixes(side)
        if noisy:
            total = sum(len(t) for t in side.trials)
            out.append(
                f"{noisy} of the {what}'s {total} mixes carry a noisy-host verdict (steal time, or the load engine"
                " waiting for a CPU): the rules are judged without them; rerun on a quiet host to judge on all"
            )
    return out


def _shown(value: Any) -> str:
    return "unset" if value is None else str(value)
