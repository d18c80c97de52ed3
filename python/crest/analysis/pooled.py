"""Pooled paired test: A vs B over several workloads at once, as Kornecki et al. compared IIS and Apache.

Owns pairing across the levels of one factor (the pool factor, e.g.
workload=static|dynamic): configurations equal in every other factor form one
side, and a pair is one (level, load, trial) both sides measured. One interval
of the mean of A − B covers every pair (Kornecki's 36 = 2 workloads × 6 client
counts × 3 repeats). It must not group runs (group.py) nor compute an interval
itself (compare.paired_result, stats).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from crest.analysis.compare import PairedResult, matched_pairs, paired_result
from crest.analysis.group import Configuration, differing_factors, factor_label
from crest.analysis.stats import CONFIDENCE, Quantile, mean
from crest.errors import ConfigError

POOL_FACTOR = "workload"  # what a pooled test pools over unless asked otherwise (the kornecki-detail group)


@dataclass
class Side:
    """The configurations equal in every factor but the pool factor: one per level."""

    label: str
    levels: dict[str, Configuration] = field(default_factory=dict)


@dataclass
class PooledResult:
    """One pooled comparison: the test over every pair, and the levels the pairs came from."""

    factor: str
    levels: list[str]
    result: PairedResult
    pairs_by_level: dict[str, int]


def sides(configs: Sequence[Configuration], factor: str = POOL_FACTOR) -> list[Side]:
    """The configurations grouped by every factor except `factor`, in first-seen order."""
    pooled = [c for c in configs if factor in c.factors]
    others = [{k: v for k, v in c.factors.items() if k != factor} for c in pooled]
    names = differing_factors(others)
    found: dict[str, Side] = {}
    for config, rest in zip(pooled, others):
        label = factor_label(rest, names) if names else config.label
        side = found.setdefault(label, Side(label))
        level = _level(config.factors[factor])
        if level in side.levels:
            raise ConfigError(
                f"two configurations of {label!r} have {factor}={level}: pool over a factor that tells every"
                " other setting apart, or compare them without pooling"
            )
        side.levels[level] = config
    return list(found.values())


def can_pool(configs: Sequence[Configuration], factor: str = POOL_FACTOR) -> bool:
    """Whether a pooled test says anything: two or more sides, each with two or more levels of `factor`."""
    try:
        found = sides(configs, factor) if all(factor in c.factors for c in configs) else []
    except ConfigError:  # configurations that cannot be told apart: nothing to pool unless asked (--pool)
        return False
    return len(found) >= 2 and all(len(s.levels) >= 2 for s in found)


def pooled_difference(
    a: Side,
    b: Side,
    factor: str = POOL_FACTOR,
    metric: str = "rps",
    load_axis: str = "clients",
    confidence: float = CONFIDENCE,
    quantile: Quantile = "t",
) -> PooledResult:
    """A − B over every (level, load, trial) both sides measured, as one interval."""
    levels = [level for level in a.levels if level in b.levels]
    pairs: list[tuple[float, float]] = []
    counts: dict[str, int] = {}
    for level in levels:
        found = matched_pairs(a.levels[level], b.levels[level], metric, load_axis)
        counts[level] = len(found)
        pairs.extend(found)
    if not pairs:
        raise ConfigError(
            f"{a.label!r} and {b.label!r} share no {factor} level with a load point in common:"
            " run both over the same workloads and suite ladders"
        )
    result = paired_result(a.label, b.label, pairs, metric, confidence, quantile)
    return PooledResult(factor, levels, result, counts)


def pooled_tests(
    configs: Sequence[Configuration],
    factor: str = POOL_FACTOR,
    metrics: Sequence[str] = ("rps", "throughput_Bps"),
    load_axis: str = "clients",
    confidence: float = CONFIDENCE,
    quantile: Quantile = "t",
) -> list[PooledResult]:
    """Every pair of sides under every metric; A is the side with the higher mean req/s over the pairs.

    Raises:
        ConfigError: a configuration lacks the factor, or fewer than two sides.
    """
    lacking = [c.label for c in configs if factor not in c.factors]
    if lacking:
        raise ConfigError(f"{', '.join(map(repr, lacking))} has no {factor} factor: pool over a factor every run has")
    found = sides(configs, factor)
    if len(found) < 2:
        raise ConfigError(f"the runs differ only in {factor}: a pooled test needs two configurations to compare")
    out: list[PooledResult] = []
    for i, first in enumerate(found):
        for second in found[i + 1 :]:
            a, b = _order(first, second, factor, load_axis)
            for metric in metrics:
                out.append(pooled_difference(a, b, factor, metric, load_axis, confidence, quantile))
    return out


def _order(x: Side, y: Side, factor: str, load_axis: str) -> tuple[Side, Side]:
    """The side with the higher mean req/s over their matched pairs first (a positive difference)."""
    pairs = [
        p
        for level in x.levels
        if level in y.levels
        for p in matched_pairs(x.levels[level], y.levels[level], "rps", load_axis)
    ]
    if pairs and mean([a for a, _ in pairs]) < mean([b for _, b in pairs]):
        return y, x
    return x, y


def _level(value: Any) -> str:
    return value if isinstance(value, str) else str(value)
