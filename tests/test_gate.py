"""CI gate rules: parsed into a metric, a direction and a bound; judged against the baseline's run-to-run noise
(a prediction interval over its trials, moved by the allowance), or on the bound alone when the baseline has too
few trials to know its noise; bad rules refused in one line that says how to write them. The method is checked on
synthetic series of known noise: A/A gates fail no more often than alpha, a real drop is caught."""

from __future__ import annotations

import math
import random
from dataclasses import replace

import pytest

from analysis_records import run
from crest.analysis.gate import (
    DEFAULT_RULES,
    HOST_NOISY,
    IMPROVEMENT,
    METRICS,
    NOT_SIGNIFICANT,
    PASS,
    PAST_BOUND,
    REGRESSION,
    WITHIN_BOUND,
    Side,
    check,
    history,
    judge,
    noise_test,
    parse_rule,
    parse_rules,
    side_from_runs,
)
from crest.analysis.points import LoadPoint
from crest.analysis.stats import t_quantile
from crest.errors import ConfigError
from crest.store import RunDetail
from crest.verdicts import noisy_host


def side(*trials: RunDetail, name: str = "run") -> Side:
    return side_from_runs(name, list(trials), "clients")


def test_rules_name_a_metric_a_direction_and_a_bound() -> None:
    rules = parse_rules(["peak_rps>-5%, p99<+10%", "errors<=+0.5pp", "p999<+20%", "rps>=-0%"])
    assert [(r.metric.name, r.op, r.bound) for r in rules] == [
        ("peak_rps", ">", -5.0), ("p99", "<", 10.0), ("errors", "<=", 0.5), ("p99.9", "<", 20.0), ("rps", ">=", 0.0)
    ]  # fmt: skip
    assert [r.text for r in rules][:2] == ["peak_rps>-5%", "p99<+10%"]
    assert [r.metric.name for r in parse_rules([DEFAULT_RULES])] == ["peak_rps", "p99", "errors"]
    assert parse_rule("P99 < +10 %").metric.name == "p99"  # case and spaces do not matter


@pytest.mark.parametrize(
    "text,message",
    [
        ("", "give rules separated by commas"),
        ("peak_rps>-5%,", "give rules separated by commas"),
        ("peak_rps=-5%", "write METRIC, < or >, and an allowed change"),
        ("p95<+10%", "unknown metric 'p95'; use one of peak_rps, rps,"),
        ("peak_rps>-5", "in percent of the baseline: write peak_rps>-5%"),
        ("p99<+10pp", "in percent of the baseline: write p99<+10%"),
        ("errors<+1%", "in percentage points (its baseline is often 0): write errors<+1pp"),
        ("peak_rps<+5%", "bounds a rise of peak_rps, but a regression is the other way: write peak_rps>-5%"),
        ("p99>-10%", "bounds a drop of p99, but a regression is the other way: write p99<+10%"),
        ("p99<10%", "sign the allowed change: write p99<+10%"),
        ("peak_rps>+5%", "a bound past 0 asks for a rise, which a gate against a baseline does not test"),
        ("p99<-10%", "a bound past 0 asks for a drop"),
    ],
)
def test_a_bad_rule_is_one_line_naming_the_fix(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match="^invalid --rule") as caught:
        parse_rules([text])
    assert message in str(caught.value) and "\n" not in str(caught.value)


def trials(*curves: list[float], name: str = "run", p99_ms: list[float] | None = None) -> Side:
    """A side whose trial i measured curves[i] req/s at loads 1, 2, 3, …; p99_ms[i] its p99 at every load."""
    points = tuple(
        tuple(_point(load + 1, rps, (p99_ms[i] if p99_ms else 3.0) * 1000) for load, rps in enumerate(curve))
        for i, curve in enumerate(curves)
    )
    return Side(name, name, "suite", points, tuple(f"{name}-{i}" for i in range(len(curves))), {})


def _point(load: int, rps: float, p99_us: float, error_rate: float = 0.0) -> LoadPoint:
    return LoadPoint(load=float(load), clients=load, threads=load, connections=load, rps=rps, throughput_Bps=rps * 1e4,
                     requests=round(rps), errors=0, error_rate=error_rate, latency_us={"p99": p99_us, "p50": 1000.0},
                     target_cpu_pct=None, engine_cpu_pct=None, client_bound=False, client_rps=[],
                     littles_load_factor=None)  # fmt: skip


def test_the_prediction_interval_by_hand() -> None:
    logs = [math.log(v) for v in (1000.0, 1030.0, 970.0)]
    test = noise_test(logs, [math.log(900.0)])
    s = math.sqrt(sum((x - sum(logs) / 3) ** 2 for x in logs) / 2)
    # mean_b ± t[0.975; 2] · s · √(1/3 + 1/1)
    assert test.half == pytest.approx(t_quantile(0.975, 2) * s * math.sqrt(1 / 3 + 1))
    assert (test.n, test.k, test.noise_known) == (3, 1, True)
    assert noise_test(logs, [math.log(900.0), math.log(910.0)]).half == pytest.approx(
        t_quantile(0.975, 2) * s * math.sqrt(1 / 3 + 1 / 2)
    )
    assert not noise_test(logs[:2], [0.0]).noise_known


def test_a_drop_past_the_bound_and_past_the_noise_is_a_regression() -> None:
    base = trials([1000, 2000, 3000], [1010, 2030, 3010], [990, 1980, 2990], name="base")
    slow = trials([800, 1600, 2400], name="slow")
    peak, mean = check(parse_rules(["peak_rps>-5%,rps>-5%"]), slow, base).verdicts
    assert peak.verdict == mean.verdict == REGRESSION and peak.regression and mean.significant
    # Each trial's figure is its peak; the baseline's is their geometric mean.
    assert peak.baseline == pytest.approx((3000 * 3010 * 2990) ** (1 / 3)) and peak.current == pytest.approx(2400)
    assert peak.change == pytest.approx((2400 / peak.baseline - 1) * 100)
    # The noise is the baseline's prediction interval as changes; the limit its low end times 0.95.
    assert peak.noise is not None and peak.limit is not None
    assert peak.limit == pytest.approx(((1 + peak.noise[0] / 100) * 0.95 - 1) * 100)
    assert (peak.baseline_trials, peak.current_trials, peak.scale) == (3, 1, "ratio")
    # A mean figure: each trial's geometric mean over the loads every trial measured.
    first = (1000 * 2000 * 3000) ** (1 / 3)
    assert mean.current == pytest.approx(first * 0.8)


def test_a_change_past_the_bound_within_the_noise_is_not_significant() -> None:
    base = trials([1000], [1200], [850], name="base")  # noisy from run to run
    (verdict,) = check(parse_rules(["peak_rps>-5%"]), trials([950]), base).verdicts
    assert verdict.change < -5 and not verdict.significant and verdict.verdict == NOT_SIGNIFICANT
    assert not verdict.regression


def test_a_change_within_the_bound_passes_and_a_gain_past_the_noise_is_an_improvement() -> None:
    base = trials([1000, 2000], [1005, 2010], [995, 1990], name="base")
    assert check(parse_rules(["rps>-5%"]), trials([990, 1970]), base).verdicts[0].verdict == PASS
    (gain,) = check(parse_rules(["rps>-5%"]), trials([1200, 2400]), base).verdicts
    assert gain.verdict == IMPROVEMENT and gain.change > 0
    itself = check(parse_rules([DEFAULT_RULES]), base, base)
    assert [v.verdict for v in itself.verdicts] == [PASS] * 3 and not itself.regressions


def test_with_fewer_than_three_baseline_trials_the_bound_alone_decides() -> None:
    base = trials([1000, 2000], [1010, 2020], name="base")
    slow, near = trials([900, 1800]), trials([990, 1990])
    result = check(parse_rules(["rps>-5%,p99<+10%"]), slow, base)
    rps, p99 = result.verdicts
    assert not result.noise_known and (rps.noise, rps.limit, rps.significant) == (None, None, False)
    assert rps.verdict == PAST_BOUND and rps.regression and p99.verdict == WITHIN_BOUND
    assert check(parse_rules(["rps>-5%"]), near, base).verdicts[0].verdict == WITHIN_BOUND
    assert all("significant" not in v.verdict for v in result.verdicts)


def test_latency_rules_regress_on_a_rise_and_errors_in_points() -> None:
    base = trials([1000, 2000], [1000, 2000], [1000, 2000], name="base", p99_ms=[3.0, 3.03, 2.97])
    p99, errors = check(
        parse_rules(["p99<+10%,errors<+1pp"]), _with_errors(trials([1000, 2000], p99_ms=[3.9]), 0.02), base
    ).verdicts
    assert p99.current == pytest.approx(3900) and p99.change == pytest.approx(3900 / p99.baseline * 100 - 100)
    assert p99.verdict == REGRESSION
    # Every baseline trial at 0 errors: no spread, the limit is the bound itself.
    assert errors.scale == "points" and errors.baseline == 0 and errors.change == pytest.approx(2.0)
    assert errors.limit == pytest.approx(1.0) and errors.verdict == REGRESSION


def _with_errors(side: Side, rate: float) -> Side:
    return replace(side, trials=tuple(tuple(replace(p, error_rate=rate) for p in t) for t in side.trials))


def test_a_figure_at_zero_has_no_logarithm_and_is_compared_by_difference() -> None:
    base = trials([1000, 2000], [1010, 2000], [990, 2000], name="base")
    (verdict,) = check(parse_rules(["rps>-5%"]), trials([0.0, 1000]), base).verdicts
    assert verdict.scale == "difference" and verdict.baseline == pytest.approx(1500)
    assert verdict.change == pytest.approx((500 - 1500) / 1500 * 100) and verdict.verdict == REGRESSION


# -- the method on synthetic series of known noise --------------------------------------------------------------------
# A run's noise is mostly shared by its mixes (the host, the page cache, the target's state): each trial draws one
# run factor, lognormal, that scales every mix, and each mix a smaller noise of its own. Seeds are fixed.

ALPHA = 0.05
LADDER = (1000.0, 1900.0, 2700.0, 3200.0, 3300.0)


def _trial(rng: random.Random, run_sd: float, mix_sd: float, scale: float = 1.0) -> list[float]:
    shared = math.exp(rng.gauss(0.0, run_sd))
    return [v * scale * shared * math.exp(rng.gauss(0.0, mix_sd)) for v in LADDER]


def _p99s(rng: random.Random, run_sd: float) -> list[float]:
    return [3.0 * math.exp(rng.gauss(0.0, run_sd))]


def test_an_a_a_gate_fails_no_more_often_than_alpha() -> None:
    rng = random.Random(42)
    rules = parse_rules(["rps>-0%,p99<+0%,peak_rps>-0%"])
    alarms = {r.text: 0 for r in rules}
    runs_failed, cases = 0, 2000
    for _ in range(cases):
        base_curves = [_trial(rng, 0.03, 0.01) for _ in range(3)]
        base = trials(*base_curves, name="base", p99_ms=[_p99s(rng, 0.05)[0] for _ in range(3)])
        cur = trials(_trial(rng, 0.03, 0.01), name="cur", p99_ms=_p99s(rng, 0.05))
        result = check(rules, cur, base)
        for v in result.verdicts:
            alarms[v.rule.text] += v.regression
        runs_failed += any(v.regression for v in result.verdicts if v.rule.text != "peak_rps>-0%")
    rates = {rule: n / cases for rule, n in alarms.items()}
    # One rule fails an unchanged run (1 − 0.95) ÷ 2 = 2.5% of the time: never more than alpha, and not 0
    # either (a method that never fails would pass this too).
    assert all(0.01 < rate <= ALPHA / 2 + 0.01 for rate in rates.values()), rates
    # Under `rps>-0%,p99<+0%` (the A/A gate) the run fails when either rule does: at most 2 × 2.5%.
    assert runs_failed / cases <= ALPHA, runs_failed


def test_a_real_drop_of_20_percent_with_1_percent_noise_is_caught() -> None:
    rng = random.Random(7)
    rules = parse_rules(["rps>-5%,peak_rps>-5%"])
    for _ in range(200):
        base = trials(*[_trial(rng, 0.01, 0.005) for _ in range(3)], name="base")
        cur = trials(_trial(rng, 0.01, 0.005, scale=0.8), name="cur")
        assert [v.verdict for v in check(rules, cur, base).verdicts] == [REGRESSION, REGRESSION]


def test_a_real_drop_inside_a_noisy_baseline_is_not_called_a_regression() -> None:
    rng = random.Random(11)
    base = trials(*[_trial(rng, 0.15, 0.01) for _ in range(3)], name="base")  # 15% from run to run
    (verdict,) = check(parse_rules(["rps>-0%"]), trials(_trial(rng, 0.0, 0.0, scale=0.9)), base).verdicts
    assert verdict.verdict in (NOT_SIGNIFICANT, PASS) and not verdict.regression


# -- sides, history, warnings -----------------------------------------------------------------------------------------


def test_runs_with_no_load_in_common_or_without_the_figure_are_refused() -> None:
    base = side(run([1000, 2000], loads=[1, 2]), name="base")
    with pytest.raises(ConfigError, match="measured no load in common: gate a run of the same suite ladder"):
        check(parse_rules(["rps>-5%"]), side(run([1000, 2000], loads=[4, 8]), name="other"), base)
    zero = side(run([0.0, 0.0]), name="zero")
    with pytest.raises(
        ConfigError, match="the baseline's req/s over the loads every trial measured is 0, so a change relative"
    ):
        judge(parse_rule("rps>-5%"), base, zero)
    with pytest.raises(ConfigError, match="invalid confidence 1.5"):
        check(parse_rules(["rps>-5%"]), base, base, confidence=1.5)


def test_several_configurations_are_not_one_side() -> None:
    two = [run([1000], factors={"server": "nginx"}, run_id="a"), run([900], factors={"server": "apache"}, run_id="b")]
    with pytest.raises(ConfigError, match="holds 2 configurations .*name one run id"):
        side_from_runs("exp-1", two, "clients")


def test_every_metric_reads_a_figure() -> None:
    base, cur = side(run([1000, 2000, 3000])), side(run([1000, 2000, 3000]))
    for name, metric in METRICS.items():
        bound = "+1pp" if metric.in_points else ("-5%" if metric.higher_is_better else "+10%")
        op = ">" if metric.higher_is_better else "<"
        (verdict,) = check(parse_rules([f"{name}{op}{bound}"]), cur, base).verdicts
        assert verdict.verdict == WITHIN_BOUND and math.isfinite(verdict.current), name


def test_history_is_the_configurations_earlier_runs_newest_first_kept() -> None:
    def at(run_id: str, started: float, cpus: int = 1) -> RunDetail:
        return replace(run([1000], factors={"cpus": cpus}, run_id=run_id), started_at=started)

    named = [at("b", 50.0)]
    stored = [at(f"h{i}", float(i)) for i in range(6)] + [at("later", 200.0), at("other", 10.0, cpus=2)]
    assert [d.id for d in history(named, stored, before=100.0, keep=4)] == ["h3", "h4", "h5", "b"]
    assert [d.id for d in history(named, stored, before=100.0, keep=1)] == ["b"]


def _noisy_at(side: Side, trial: int, load: float) -> Side:
    """The side with a noisy-host verdict on trial `trial`'s mix at `load`."""
    marked = [list(t) for t in side.trials]
    marked[trial] = [replace(p, verdicts=[noisy_host(0.4, 0.0)]) if p.load == load else p for p in marked[trial]]
    return replace(side, trials=tuple(tuple(t) for t in marked))


def test_a_mix_a_noisy_host_measured_is_left_out_of_every_rule() -> None:
    base = trials([1000, 2000, 3000], [1010, 2030, 3010], [990, 1980, 2990], name="base")
    # The run's third load lost CPU to the hypervisor: it reads low, but it measured the host, not the code.
    run_side = _noisy_at(trials([1000, 2010, 1500]), 0, 3.0)
    peak, mean = check(parse_rules(["peak_rps>-5%,rps>-5%"]), run_side, base).verdicts
    assert peak.verdict == mean.verdict == PASS
    # A peak: each side's over the same quiet loads, the baseline's at load 2, not its 3000 at load 3.
    assert (peak.noisy_left_out, peak.judged_on) == (4, 8)
    assert peak.baseline == pytest.approx((2000 * 2030 * 1980) ** (1 / 3)) and peak.current == pytest.approx(2010)
    # A mean: the run's figure from its two quiet mixes, each against the baseline's mean at that load.
    assert (mean.noisy_left_out, mean.judged_on) == (1, 11)
    base_at = [(1000 * 1010 * 990) ** (1 / 3), (2000 * 2030 * 1980) ** (1 / 3), (3000 * 3010 * 2990) ** (1 / 3)]
    effect = (math.log(1000 / base_at[0]) + math.log(2010 / base_at[1])) / 2
    assert mean.change == pytest.approx(math.expm1(effect) * 100)
    assert mean.baseline == pytest.approx(math.prod(base_at) ** (1 / 3))
    # A noisy baseline mix leaves that trial's figure to its other loads, and the other trials whole.
    (left,) = check(parse_rules(["rps>-5%"]), trials([1000, 2010, 3000]), _noisy_at(base, 1, 1.0)).verdicts
    assert (left.noisy_left_out, left.judged_on, left.baseline_trials) == (1, 11, 3)
    # A real drop at the quiet mixes is still a regression.
    slow = _noisy_at(trials([800, 1600, 2400]), 0, 1.0)
    assert [v.verdict for v in check(parse_rules(["peak_rps>-5%,rps>-5%"]), slow, base).verdicts] == [REGRESSION] * 2


def test_a_peak_rule_keeps_the_loads_that_leave_three_quiet_baseline_trials() -> None:
    curves = [[1000, 2000, 3000], [1010, 2030, 3010], [990, 1980, 2990], [1000, 2010, 3005], [1005, 1990, 2995]]
    base = trials(*curves, name="base")
    # One baseline trial noisy at the peak's load: that trial is left out, the load kept.
    (one,) = check(parse_rules(["peak_rps>-5%"]), trials([1000, 2000, 3000]), _noisy_at(base, 0, 3.0)).verdicts
    assert (one.baseline_trials, one.judged_on, one.noisy_left_out) == (4, 15, 3)
    assert one.baseline == pytest.approx((3010 * 2990 * 3005 * 2995) ** (1 / 4))
    # Three noisy there: keeping the load would leave two, so the load goes and all five trials stay.
    three = _noisy_at(_noisy_at(_noisy_at(base, 0, 3.0), 1, 3.0), 2, 3.0)
    (load,) = check(parse_rules(["peak_rps>-5%"]), trials([1000, 2000, 3000]), three).verdicts
    assert (load.baseline_trials, load.judged_on, load.noisy_left_out) == (5, 12, 6)
    assert load.current == pytest.approx(2000) and load.verdict == PASS


def test_a_rule_left_fewer_than_three_quiet_baseline_trials_is_judged_on_its_bound() -> None:
    base = trials([1000, 2000], [1010, 2030], [990, 1980], name="base")
    noisy_trial = _noisy_at(_noisy_at(base, 2, 1.0), 2, 2.0)  # the third trial noisy at every load
    (rule,) = check(parse_rules(["rps>-5%"]), trials([900, 1800]), noisy_trial).verdicts
    assert (rule.baseline_trials, rule.noise, rule.verdict) == (2, None, PAST_BOUND) and rule.regression


def test_without_a_noisy_mix_the_trial_effects_are_the_plain_figures() -> None:
    base = trials([1000, 2000, 3000], [1100, 2030, 2900], [990, 1900, 3100], name="base")
    run_side = trials([950, 2100, 2800], [1000, 1900, 3000])
    (mean,) = check(parse_rules(["rps>-5%"]), run_side, base).verdicts
    geo = [math.log(math.prod(t) ** (1 / 3)) for t in ([1000, 2000, 3000], [1100, 2030, 2900], [990, 1900, 3100])]
    cur = [math.log(math.prod(t) ** (1 / 3)) for t in ([950, 2100, 2800], [1000, 1900, 3000])]
    test = noise_test(geo, cur)
    assert mean.change == pytest.approx(math.expm1(test.current_mean - test.baseline_mean) * 100)
    assert mean.noise is not None and mean.noise[1] == pytest.approx(math.expm1(test.half or 0) * 100)
    assert (mean.noisy_left_out, mean.judged_on) == (0, 15)


def test_a_rule_with_only_noisy_loads_is_undecided_not_a_regression() -> None:
    base = trials([1000, 2000], [1010, 2030], [990, 1980], name="base")
    run_side = _noisy_at(_noisy_at(trials([500, 900]), 0, 1.0), 0, 2.0)
    result = check(parse_rules(["peak_rps>-5%,rps>-5%"]), run_side, base)
    assert [v.verdict for v in result.verdicts] == [HOST_NOISY] * 2 and not result.regressions
    assert result.undecided == list(result.verdicts)
    undecided = result.verdicts[1]
    assert (undecided.noise, undecided.limit, undecided.significant) == (None, None, False)
    # The figures are still shown, from every mix.
    assert undecided.current == pytest.approx(math.sqrt(500 * 900)) and undecided.noisy_left_out == 2
    # A baseline noisy at every load is undecided too; noisy at one load in each trial, judged on the rest.
    every = _noisy_at(_noisy_at(_noisy_at(base, 0, 1.0), 1, 1.0), 2, 1.0)
    (half,) = check(parse_rules(["rps>-5%"]), trials([1000, 2000]), every).verdicts
    assert half.verdict != HOST_NOISY and half.judged_on == 4
    every = _noisy_at(_noisy_at(_noisy_at(every, 0, 2.0), 1, 2.0), 2, 2.0)
    assert [v.verdict for v in check(parse_rules(["rps>-5%"]), trials([1000, 2000]), every).verdicts] == [HOST_NOISY]


def test_an_a_a_gate_on_a_host_that_steals_cpu_now_and_then_fails_no_more_often_than_alpha() -> None:
    """A/A on a host whose hypervisor takes CPU from some mixes (a 20% drop, flagged noisy) and not others:
    the flagged mixes are left out, so the unchanged runs fail a strict rule no more often than alpha/2
    (the same model without the flags fails far more often)."""
    rng = random.Random(7)
    loads = 5

    def trial() -> list[float]:
        shared = rng.lognormvariate(0, 0.03)
        return [1000.0 * (i + 1) * shared * rng.lognormvariate(0, 0.01) for i in range(loads)]

    def stolen(curve: list[float]) -> tuple[Side, Side]:
        """One trial with about a fifth of its mixes robbed of CPU: with those mixes flagged, and unflagged."""
        robbed = [rng.random() < 0.2 for _ in curve]
        plain = trials([rps * 0.8 if r else rps for rps, r in zip(curve, robbed)])
        marks = [[noisy_host(0.3, 0.0)] if r else [] for r in robbed]
        flagged = replace(plain, trials=(tuple(replace(p, verdicts=m) for p, m in zip(plain.trials[0], marks)),))
        return flagged, plain

    cases, flagged_fails, plain_fails = 1000, 0, 0
    rule = parse_rules(["rps>-0%"])
    for _ in range(cases):
        base = trials(trial(), trial(), trial(), name="base")
        flagged, plain = stolen(trial())
        flagged_fails += bool(check(rule, flagged, base).regressions)
        plain_fails += bool(check(rule, plain, base).regressions)
    assert flagged_fails / cases <= 0.025 + 0.01, flagged_fails
    assert plain_fails > 4 * flagged_fails, (plain_fails, flagged_fails)


def test_warnings_name_differing_settings_and_noisy_hosts() -> None:
    base = side(run([1000, 2000], factors={"cpus": 1}), name="base")
    noisy = run([1000, 2000], factors={"cpus": 0.8}, run_id="c")
    noisy.mixes[1].verdicts.append(noisy_host(0.3, 12.0))
    result = check(parse_rules(["rps>-5%"]), side(noisy), base)
    differs, host = result.warnings
    assert "the run's configuration differs from the baseline's: cpus 0.8 against 1" in differs
    assert host.startswith("1 of the run's 2 mixes carry a noisy-host verdict")
    assert not check(parse_rules(["rps>-5%"]), base, base).warnings
    unknown = replace(base, setup=None, name="file.json")
    assert "file.json stores no settings" in check(parse_rules(["rps>-5%"]), base, unknown).warnings[0]
