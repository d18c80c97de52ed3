"""Capacity rules: parsed into stored units, judged on load points, bad input in one line."""

from __future__ import annotations

import pytest

from crest.analysis.points import LoadPoint
from crest.analysis.rule import parse_rule
from crest.errors import ConfigError


def point(p99_us: float = 20_000, errors: int = 0, requests: int = 1000, rps: float = 500.0) -> LoadPoint:
    return LoadPoint(
        load=10, clients=10, threads=10, connections=10, rps=rps, throughput_Bps=0.0, requests=requests,
        errors=errors, error_rate=errors / (requests + errors), latency_us={"p99": p99_us, "p999": 2 * p99_us},
        target_cpu_pct=None, engine_cpu_pct=None, client_bound=False, client_rps=[], littles_load_factor=None,
    )  # fmt: skip


def test_conditions_are_kept_in_stored_units() -> None:
    rule = parse_rule("p99<50ms, errors<1%, rps>=400, p99.9<=0.1s")
    assert [(c.metric, c.op, c.bound) for c in rule.conditions] == [
        ("p99", "<", 50_000.0), ("error_rate", "<", 0.01), ("rps", ">=", 400.0), ("p999", "<=", 100_000.0)
    ]  # fmt: skip


def test_a_point_meets_the_rule_or_names_what_it_breaks() -> None:
    rule = parse_rule("p99<50ms,errors<1%,rps>=400")
    assert rule.met(point())
    assert rule.failures(point(p99_us=60_000, errors=20, rps=300)) == ["p99<50ms", "errors<1%", "rps>=400"]
    assert parse_rule("p50<1ms").failures(point()) == ["p50<1ms"]  # a figure the mix lacks is not met


@pytest.mark.parametrize(
    "text,message",
    [
        ("", "give conditions separated by commas"),
        ("p99<50ms,", "give conditions separated by commas"),
        ("p99<50", "a latency needs a unit"),
        ("errors<1", "the error rate is a percentage"),
        ("rps>=1k", "rps is requests per second"),
        ("p98<50ms", "unknown metric 'p98'"),
        ("p99 about 50ms", "write METRIC<VALUE"),
    ],
)
def test_bad_rules_are_one_line(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as exc:
        parse_rule(text)
    assert "\n" not in str(exc.value)
