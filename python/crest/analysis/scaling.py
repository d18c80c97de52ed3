"""Scaling across CPU counts: peak req/s, speedup and efficiency per group of otherwise equal configurations.

Configurations that differ only in their `cpus` factor form one group (the
1P/2P/4P/8P columns of the seed tables); speedup is relative to the group's
smallest CPU count. It must not compute peaks itself (compare.peak_table does).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from crest.analysis.compare import PeakRow, peak_table
from crest.analysis.group import Configuration, differing_factors, factor_label
from crest.errors import ConfigError

CPUS_FACTOR = "cpus"


@dataclass
class ScalingRow:
    """One configuration in its scaling group.

    speedup = peak_rps ÷ peak_rps at base_cpus; efficiency = speedup ÷
    (cpus ÷ base_cpus), 1.0 being perfect linear scaling.
    """

    group_label: str
    cpus: float
    peak_rps: float
    speedup: float
    efficiency: float
    base_cpus: float = 0.0
    label: str = ""  # the configuration's own label
    n: int = 1  # trials behind peak_rps


def scaling(configs: Sequence[Configuration], load_axis: str = "clients") -> list[ScalingRow]:
    """Rows grouped by every factor except cpus, groups in first-seen order, CPUs ascending within each.

    Configurations without a cpus factor are left out; ConfigError when none has one
    or a cpus value is not a positive number.
    """
    with_cpus = [c for c in configs if CPUS_FACTOR in c.factors]
    if not with_cpus:
        raise ConfigError(
            "no configuration has a cpus factor: scaling compares runs tagged cpus=N (e.g. crest import --factor cpus=2)"
        )
    rows = peak_table(with_cpus, load_axis).rows
    groups: dict[str, list[tuple[float, PeakRow]]] = {}
    others = [{k: v for k, v in r.factors.items() if k != CPUS_FACTOR} for r in rows]
    names = differing_factors(others)
    for row, rest in zip(rows, others):
        label = factor_label(rest, names) if names else factor_label(rest, list(rest)) or "all"
        groups.setdefault(label, []).append((_cpus(row), row))
    result: list[ScalingRow] = []
    for label, members in groups.items():
        members.sort(key=lambda m: m[0])
        base_cpus, base = members[0]
        for cpus, row in members:
            speedup = row.peak_rps / base.peak_rps if base.peak_rps > 0 else float("nan")
            result.append(ScalingRow(
                group_label=label, cpus=cpus, peak_rps=row.peak_rps, speedup=speedup,
                efficiency=speedup / (cpus / base_cpus), base_cpus=base_cpus, label=row.label, n=row.n,
            ))  # fmt: skip
    return result


def _cpus(row: PeakRow) -> float:
    value = row.factors[CPUS_FACTOR]
    try:
        cpus = float(value)
    except (TypeError, ValueError):
        cpus = 0.0
    if isinstance(value, bool) or not cpus > 0:
        raise ConfigError(f"configuration {row.label!r} has cpus={value!r}: cpus must be a positive number of CPUs")
    return cpus
