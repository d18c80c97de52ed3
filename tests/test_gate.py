"""CI gate rules: parsed into a metric, a direction and a bound; judged with crest compare's paired test; bad
rules refused in one line that says how to write them."""

from __future__ import annotations

import math

import pytest

from analysis_records import mix, run
from crest.analysis.compare import paired_result
from crest.analysis.gate import DEFAULT_RULES, METRICS, Side, check, judge, parse_rule, parse_rules, side_from_runs
from crest.errors import ConfigError
from crest.store import RunDetail


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


def test_a_significant_drop_past_the_bound_is_a_regression() -> None:
    base = side(run([1000, 2000, 3000]), name="base")
    slow = side(run([800, 1500, 2400]), name="slow")
    (peak, mean) = check(parse_rules(["peak_rps>-5%,rps>-5%"]), slow, base).verdicts
    assert peak.verdict == mean.verdict == "regression"
    assert (peak.baseline, peak.current, peak.change) == (3000, 2400, pytest.approx(-20.0))
    # crest compare's test on the logarithms of the ratios: the mean ratio and its interval, as changes.
    logs = [(math.log(a), math.log(b)) for a, b in [(800, 1000), (1500, 2000), (2400, 3000)]]
    test = paired_result("slow", "base", logs, "rps")
    ratio = (0.8 * 0.75 * 0.8) ** (1 / 3)
    assert mean.change == pytest.approx((ratio - 1) * 100) and mean.scale == "ratio"
    assert mean.baseline == pytest.approx((1000 * 2000 * 3000) ** (1 / 3))  # geometric means
    assert mean.current / mean.baseline == pytest.approx(ratio)
    assert test.ci95 is not None and mean.interval == pytest.approx(
        (math.expm1(test.ci95[0]) * 100, math.expm1(test.ci95[1]) * 100)
    )
    assert peak.interval == mean.interval and peak.test_change == pytest.approx(mean.change)
    assert mean.pairs == 3 and mean.significant


def test_a_mix_at_zero_has_no_ratio_and_is_tested_on_differences() -> None:
    base = side(run([1000, 2000, 3000]), name="base")
    (verdict,) = check(parse_rules(["rps>-5%"]), side(run([0.0, 1000, 2000])), base).verdicts
    test = paired_result("run", "base", [(0.0, 1000), (1000, 2000), (2000, 3000)], "rps")
    assert verdict.scale == "difference" and verdict.change == pytest.approx(test.mean_diff / 2000 * 100)
    assert verdict.verdict == "regression"


def test_a_change_past_the_bound_that_the_test_cannot_tell_from_noise_is_not_significant() -> None:
    base = side(run([1000, 2000, 3000]))
    noisy = side(run([600, 2300, 2700]))  # the peak fell 10%, but one mix rose
    (verdict,) = check(parse_rules(["peak_rps>-5%"]), noisy, base).verdicts
    assert verdict.change == pytest.approx(-10.0) and not verdict.significant
    assert verdict.verdict == "not significant"


def test_a_change_within_the_bound_passes_and_a_significant_gain_is_an_improvement() -> None:
    base = side(run([1000, 2000, 3000]))
    assert check(parse_rules(["rps>-5%"]), side(run([990, 1970, 2980])), base).verdicts[0].verdict == "pass"
    (gain,) = check(parse_rules(["rps>-5%"]), side(run([1200, 2300, 3400])), base).verdicts
    assert gain.verdict == "improvement" and gain.change > 0
    itself = check(parse_rules([DEFAULT_RULES]), base, base)
    assert [v.verdict for v in itself.verdicts] == ["pass"] * 3 and not itself.regressions


def test_latency_rules_regress_on_a_rise_and_errors_in_points() -> None:
    def slow_run(p99_us: float, error_share: float) -> RunDetail:
        detail = run([1000, 2000, 3000])
        latency = {"p50": 1000.0, "p99": p99_us}
        mixes = [mix(m.index, m.clients, m.rps, latency_us=latency, errors={"timeout": round(m.requests * error_share)})
                 for m in detail.mixes]  # fmt: skip
        return RunDetail(detail.id, detail.meta, detail.status, None, detail.started_at, detail.ended_at, mixes)

    base = side(slow_run(3000, 0))
    p99, errors = check(parse_rules(["p99<+10%,errors<+1pp"]), side(slow_run(3900, 0.02)), base).verdicts
    assert (p99.baseline, p99.current, p99.change) == (pytest.approx(3000), pytest.approx(3900), pytest.approx(30.0))
    # Every pair has the same ratio: no spread, an interval of zero width, which excludes 0.
    assert p99.verdict == "regression" and p99.interval == pytest.approx((30.0, 30.0))
    # Errors in points: 2 errors per 100 requests are 1.96% of the attempts.
    assert errors.scale == "points" and errors.baseline == 0 and errors.change == pytest.approx(200 / 102)
    assert errors.verdict == "regression"


def test_trials_pair_trial_by_trial_and_one_trial_pairs_the_mixes() -> None:
    base = side(run([1000, 2000], repeat_index=0, run_id="b1"), run([1010, 1990], repeat_index=1, run_id="b2"))
    cur = side(run([900, 1800], repeat_index=0, run_id="c1"), run([905, 1790], repeat_index=1, run_id="c2"))
    result = check(parse_rules(["rps>-5%"]), cur, base)
    assert (result.trials, result.loads, result.verdicts[0].pairs, result.one_trial) == (2, 2, 4, False)
    single = check(parse_rules(["rps>-5%"]), side(run([900, 1800])), base)
    assert (single.trials, single.verdicts[0].pairs, single.one_trial) == (1, 2, True)


def test_runs_with_no_load_in_common_or_without_the_figure_are_refused() -> None:
    base = side(run([1000, 2000], loads=[1, 2]), name="base")
    with pytest.raises(ConfigError, match="measured no load in common: gate a run of the same suite ladder"):
        check(parse_rules(["rps>-5%"]), side(run([1000, 2000], loads=[4, 8]), name="other"), base)
    zero = side(run([0.0, 0.0]), name="zero")
    with pytest.raises(
        ConfigError, match="the baseline's req/s over the matched mixes is 0, so a change relative to it is undefined"
    ):
        judge(parse_rule("rps>-5%"), base, zero)


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
        assert verdict.verdict == "pass" and math.isfinite(verdict.current), name
