"""Weighted throughput (Zeus' quality factor, SPECweb99's class mix): Σ value × weight over classes.

Owns the class weights and their validation. Values come from the caller
(per content-length class throughput, or any per-class figure); this module
never looks at records.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from crest.errors import ConfigError

# SPECweb99's request shares of its four content-length classes (< 1 KB, < 10 KB,
# < 100 KB, < 1000 KB), as Zeus' report (seed 003, appendix A) applies them.
SPECWEB99_WEIGHTS: dict[str, float] = {"class0": 0.35, "class1": 0.50, "class2": 0.14, "class3": 0.01}
# Weights must sum to 1 within this: published shares are rounded to 0.1% at best.
WEIGHT_SUM_TOLERANCE = 1e-3


def weighted_throughput(
    values_by_class: Mapping[str, float], weights: Mapping[str, float] = SPECWEB99_WEIGHTS
) -> float:
    """Σ over the weighted classes of value × weight; classes without a weight are ignored.

    Raises ConfigError when a weighted class has no value, or the weights are
    negative or do not sum to 1 (± WEIGHT_SUM_TOLERANCE).
    """
    check_weights(weights)
    missing = [c for c in weights if c not in values_by_class]
    if missing:
        raise ConfigError(
            f"no value for class {', '.join(missing)}: weighted throughput needs every weighted class"
            f" (have {', '.join(values_by_class) or 'none'}); measure it or give weights for the classes you have"
        )
    return math.fsum(float(values_by_class[c]) * w for c, w in weights.items())


def check_weights(weights: Mapping[str, float]) -> None:
    """Raise ConfigError unless the weights are non-negative and sum to 1 (± WEIGHT_SUM_TOLERANCE)."""
    if not weights:
        raise ConfigError("no class weights given: give e.g. class0=0.35,class1=0.5,class2=0.14,class3=0.01")
    negative = [c for c, w in weights.items() if not w >= 0]
    if negative:
        raise ConfigError(f"class weight of {', '.join(negative)} is negative: weights are shares between 0 and 1")
    total = math.fsum(weights.values())
    if abs(total - 1.0) > WEIGHT_SUM_TOLERANCE:
        raise ConfigError(
            f"class weights sum to {total:g}, not 1 (tolerance {WEIGHT_SUM_TOLERANCE:g}): give shares that add up to 1"
        )


def parse_weights(text: str) -> dict[str, float]:
    """Parse "class0=0.35,class1=0.5,…" or percentages "class0=35%,…" into checked weights."""
    weights: dict[str, float] = {}
    for part in (p.strip() for p in text.split(",")):
        name, sep, raw = part.partition("=")
        name, raw = name.strip(), raw.strip()
        percent = raw.endswith("%")
        try:
            value = float(raw[:-1] if percent else raw)
        except ValueError:
            value = math.nan
        if not sep or not name or math.isnan(value) or name in weights:
            raise ConfigError(
                f"invalid class weight {part!r}: expected NAME=SHARE, each class once, e.g. class0=0.35 or class0=35%"
            )
        weights[name] = value / 100.0 if percent else value
    check_weights(weights)
    return weights
