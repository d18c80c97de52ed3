"""A capacity rule, e.g. `p99<50ms,errors<1%`: parsed once, then judged on a LoadPoint. Pure.

A rule is conditions joined by commas, all of which a load must meet: a latency percentile (p50, p90,
p99, p99.9, max, mean) below a time (us, ms or s), the error rate (errors ÷ attempts) below a
percentage, the throughput (rps) above a rate, or for SPECweb99 the share of conforming connections
(conforming>=95%). `crest capacity` searches for the highest load
whose mix meets its rule.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass

from crest.analysis.points import LoadPoint
from crest.errors import ConfigError

_LATENCY = {"p50": "p50", "p90": "p90", "p99": "p99", "p99.9": "p999", "p999": "p999", "max": "max", "mean": "mean"}
_TIME_UNITS_US = {"us": 1.0, "µs": 1.0, "ms": 1e3, "s": 1e6}
_OPS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le, "<": operator.lt, ">=": operator.ge, ">": operator.gt,
}  # fmt: skip
_CONDITION = re.compile(r"^\s*([a-z][a-z0-9.]*)\s*(<=|>=|<|>)\s*([0-9]*\.?[0-9]+)\s*([a-zµ%/]*)\s*$")
_EXAMPLE = "e.g. p99<50ms,errors<1% or rps>=1000"


@dataclass(frozen=True)
class Condition:
    """One condition, its bound in the stored unit (latency µs, error rate as a fraction, req/s)."""

    metric: str  # a latency_us key, "error_rate", "rps" or "conforming" (a share of connections)
    op: str
    bound: float
    text: str  # as the user wrote it

    def value(self, point: LoadPoint) -> float | None:
        """The point's figure for this condition (None when the mix lacks it)."""
        if self.metric == "error_rate":
            return point.error_rate
        if self.metric == "rps":
            return point.rps
        if self.metric == "conforming":
            return point.conforming_share
        return point.latency_us.get(self.metric)

    def met(self, point: LoadPoint) -> bool:
        value = self.value(point)
        return value is not None and _OPS[self.op](value, self.bound)


@dataclass(frozen=True)
class Rule:
    """All of its conditions must hold."""

    conditions: tuple[Condition, ...]
    text: str

    def failures(self, point: LoadPoint) -> list[str]:
        """The conditions a point breaks, as the user wrote them (empty: the rule is met)."""
        return [c.text for c in self.conditions if not c.met(point)]

    def met(self, point: LoadPoint) -> bool:
        return not self.failures(point)


def parse_rule(text: str) -> Rule:
    """Parse a rule.

    Raises:
        ConfigError: one line naming the condition that is not understood, with an example.
    """
    parts = [p.strip() for p in text.split(",")]
    if not text.strip() or any(not p for p in parts):
        raise ConfigError(f"invalid --rule {text!r}: give conditions separated by commas, {_EXAMPLE}")
    return Rule(tuple(_condition(p, text) for p in parts), text.strip())


def _condition(part: str, rule: str) -> Condition:
    match = _CONDITION.match(part)
    if match is None:
        raise ConfigError(f"invalid --rule condition {part!r}: write METRIC<VALUE, {_EXAMPLE}")
    name, op, number, unit = match.groups()
    value = float(number)
    if name in _LATENCY:
        if unit not in _TIME_UNITS_US:
            raise ConfigError(
                f"invalid --rule condition {part!r}: a latency needs a unit (us, ms or s), e.g. {name}<50ms"
            )
        return Condition(_LATENCY[name], op, value * _TIME_UNITS_US[unit], part)
    if name == "errors":
        if unit != "%":
            raise ConfigError(f"invalid --rule condition {part!r}: the error rate is a percentage, e.g. errors<1%")
        return Condition("error_rate", op, value / 100, part)
    if name == "conforming":
        if unit != "%":
            raise ConfigError(
                f"invalid --rule condition {part!r}: conforming is a percentage of connections, e.g. conforming>=95%"
            )
        return Condition("conforming", op, value / 100, part)
    if name == "rps":
        if unit not in ("", "/s"):
            raise ConfigError(f"invalid --rule condition {part!r}: rps is requests per second, e.g. rps>=1000")
        return Condition("rps", op, value, part)
    known = ", ".join([*_LATENCY, "errors", "rps", "conforming"])
    raise ConfigError(f"invalid --rule condition {part!r}: unknown metric {name!r}; use one of {known}")
