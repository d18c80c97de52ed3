"""Peaks in the seeds' grouped figures: a baseline within groups, and bars grouped by CPU count (or by any
other factor) with a percent-improvement row per group.

VeriTest's figures 1/3/7 set each server's peak beside the others' at every
server and CPU count (DL380 2P, DL760 1P … 8P), one figure per workload, and
print under each column the percent improvement of Windows Server 2003 over
each other platform. Zeus indexed every server against Zeus within each of
its three tables (cached, non-cached, dynamic). Both are a comparison
*within* groups of configurations that are equal in every factor but one.
This module owns those groupings: which configuration is a row's baseline
when a factor value names several (one per group), which factor is the
series, which make the columns and which split the figures, and the
percent improvements. It reads a peak table's rows; it must not compute
peaks (compare.peak_table does).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from crest.analysis.compare import PeakRow, percent_improvement, ratio
from crest.analysis.group import differing_factors
from crest.errors import ConfigError

CPUS_FACTOR = "cpus"
SERIES_FACTOR = "server"  # the seeds' bars are servers (operating system and web server)


@dataclass(frozen=True)
class Baselines:
    """Each row's baseline row (None where its group has none). `name` is what the user gave; `factor`
    the factor whose value it is when it names one configuration per group (None for one baseline)."""

    name: str
    factor: str | None
    rows: list[int | None]

    @property
    def single(self) -> int | None:
        """The one baseline row every row is indexed against; None when each group has its own."""
        return self.rows[0] if self.factor is None else None


def baselines(rows: Sequence[PeakRow], name: str) -> Baselines:
    """The baseline of every row: the configuration `name` names, or, when `name` is a factor value
    ("Zeus 4.0", "server=nginx") that several configurations hold, the one among them that equals the row
    in every other factor (Zeus' index within each table; VeriTest's improvement per CPU column).

    Raises:
        ConfigError: `name` names no configuration, or names several that no single factor tells apart.
    """
    labels = [r.label for r in rows]
    if name in labels:
        return Baselines(name, None, [labels.index(name)] * len(rows))
    holders: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        for key, value in r.factors.items():
            if name in (_text(value), f"{key}={_text(value)}"):
                holders.setdefault(key, []).append(i)
    known = ", ".join(map(repr, labels))
    if not holders:
        raise ConfigError(f"no configuration {name!r}: give a label, one of {known}")
    if len(holders) > 1:
        raise ConfigError(f"{name!r} is a value of {', '.join(holders)}: give it as FACTOR=VALUE, e.g. "
                          f"{next(iter(holders))}={name}")  # fmt: skip
    factor, members = next(iter(holders.items()))
    if len(members) == 1:
        return Baselines(name, None, [members[0]] * len(rows))
    by_group: dict[str, int] = {}
    for i in members:
        group = _group_key(rows[i].factors, factor)
        if group in by_group:
            raise ConfigError(f"{name!r} names {len(members)} configurations: give a whole label, one of {known}")
        by_group[group] = i
    return Baselines(name, factor, [by_group.get(_group_key(r.factors, factor)) for r in rows])


def indexes(rows: Sequence[PeakRow], base: Baselines, metric: str) -> list[float | None]:
    """Each row's peak ÷ its baseline's peak in `metric`; None where the row's group has no baseline."""
    out: list[float | None] = []
    for r, b in zip(rows, base.rows):
        out.append(None if b is None else ratio(r.peak_value(metric), rows[b].peak_value(metric)))
    return out


def pairs(rows: Sequence[PeakRow], ranking: Sequence[int], base: Baselines | None) -> list[tuple[int, int]]:
    """The (A, B) pairs a comparison states "A over B" for: each configuration over its baseline, or,
    without one, the leader (ranking[0]) over each other, as the seeds' "NT is 2.5 times Samba" does."""
    if base is not None:
        return [(i, b) for i, b in enumerate(base.rows) if b is not None and b != i]
    if not ranking:
        return []
    lead = ranking[0]
    return [(lead, j) for j in ranking if j != lead]


@dataclass
class Improvement:
    """One improvement row: A's percent improvement over B in each group, (A − B) ÷ B × 100."""

    a: str
    b: str
    pct: list[float | None]


@dataclass
class Panel:
    """One figure: its groups (columns) and each series' peak in each; None where it was not measured."""

    label: str  # the panel factors' values ("workload=static"); "" for the only panel
    groups: list[str]  # each group's label ("system=DL760 cpus=4")
    group_values: list[list[Any]]  # each group's values of the group factors, in group_factors order
    values: list[list[float | None]]  # [series][group]
    configurations: list[list[str | None]]  # [series][group]: the label behind each bar
    improvements: list[Improvement] = field(default_factory=list)


@dataclass
class GroupedBars:
    """Peaks grouped as the seeds drew them: bars of `series_factor` side by side in each group of
    `group_factors`, one panel per value of `panel_factors`. The improvement rows compare `reference`
    with every other series: its gain over each (the seed's "Windows Server 2003 over …"), or, when the
    reference is a baseline the user named, each other's gain over it."""

    metric: str
    series_factor: str
    series: list[str]
    group_factors: list[str]
    panel_factors: list[str]
    reference: str
    reference_is_baseline: bool
    panels: list[Panel]


def grouped_bars(
    rows: Sequence[PeakRow], metric: str, ranking: Sequence[int], baseline: str | None = None
) -> GroupedBars | None:
    """The grouped figure of a peak table's rows; None unless one factor (the series: server when it
    varies) varies within groups of the others and some group holds two or more series.

    Columns are the CPU count and every factor that changes which CPU counts were measured (VeriTest's
    DL380 had 2 processors, its DL760 1 to 8: the machine belongs with the CPUs); a factor every CPU
    count was measured at (the workload) makes a panel of its own. Without a CPU factor every factor but
    the series makes the columns. The reference series is the baseline's value of the series factor when
    it names one, else the series of the highest peak.
    """
    factor_sets = [r.factors for r in rows]
    varying = differing_factors(factor_sets)
    if any(any(f not in r.factors for f in varying) for r in rows):
        return None  # a configuration lacking a factor has no place in the grid
    candidates = [f for f in varying if f != CPUS_FACTOR]
    if not candidates:
        return None
    series_factor = SERIES_FACTOR if SERIES_FACTOR in candidates else candidates[0]
    rest = [f for f in varying if f != series_factor]
    if not rest:
        return None  # one factor varies: the flat bars are the figure
    panel_factors = (
        [f for f in rest if f != CPUS_FACTOR and _independent_of_cpus(rows, f)] if CPUS_FACTOR in rest else []
    )
    group_factors = [f for f in rest if f not in panel_factors]
    series = list(dict.fromkeys(_text(r.factors[series_factor]) for r in rows))
    reference, from_baseline = _reference(rows, series_factor, ranking, baseline)
    seen = {f: list(dict.fromkeys(_text(r.factors[f]) for r in rows)) for f in group_factors}
    panels: dict[str, dict[str, Any]] = {}
    for r in rows:
        name = " ".join(f"{f}={_text(r.factors[f])}" for f in panel_factors)
        at = tuple(r.factors[f] for f in group_factors)
        entry = panels.setdefault(name, {"groups": {}})
        entry["groups"].setdefault(_key(at), at)
        entry.setdefault("cells", {})[(_text(r.factors[series_factor]), _key(at))] = r
    out: list[Panel] = []
    for label, entry in panels.items():
        keys = sorted(entry["groups"], key=lambda k: tuple(
            _order(v, seen[f]) for f, v in zip(group_factors, entry["groups"][k])))  # fmt: skip
        cells: dict[tuple[str, str], PeakRow] = entry["cells"]
        values: list[list[float | None]] = [[_value(cells.get((s, k)), metric) for k in keys] for s in series]
        configs = [[cells[(s, k)].label if (s, k) in cells else None for k in keys] for s in series]
        group_values = [list(entry["groups"][k]) for k in keys]
        groups = [" ".join(f"{f}={_text(v)}" for f, v in zip(group_factors, vals)) for vals in group_values]
        figure = Panel(label, groups, group_values, values, configs)
        figure.improvements = _improvements(series, values, reference, from_baseline)
        out.append(figure)
    if not any(sum(v is not None for v in column) >= 2 for p in out for column in zip(*p.values)):
        return None  # no group has two series side by side
    return GroupedBars(metric, series_factor, series, group_factors, panel_factors, reference, from_baseline, out)


def _improvements(
    series: list[str], values: list[list[float | None]], reference: str, is_baseline: bool
) -> list[Improvement]:
    at = series.index(reference)
    rows = []
    for i in range(len(series)):
        if i == at:
            continue
        a, b = (i, at) if is_baseline else (at, i)
        pct = [_pct(x, y) for x, y in zip(values[a], values[b])]
        if any(p is not None for p in pct):
            rows.append(Improvement(series[a], series[b], pct))
    return rows


def _reference(rows: Sequence[PeakRow], factor: str, ranking: Sequence[int], baseline: str | None) -> tuple[str, bool]:
    """The series the improvement rows compare with, and whether the user named it as the baseline."""
    series = [_text(r.factors[factor]) for r in rows]
    if baseline is not None:
        for value in dict.fromkeys(series):
            if baseline in (value, f"{factor}={value}"):
                return value, True
        for r in rows:  # a whole label: the series it belongs to
            if r.label == baseline:
                return _text(r.factors[factor]), True
    return (series[ranking[0]] if ranking else series[0]), False


def _independent_of_cpus(rows: Sequence[PeakRow], factor: str) -> bool:
    """Whether every value of `factor` was measured at the same CPU counts (then it splits figures)."""
    counts: dict[str, set[str]] = {}
    for r in rows:
        counts.setdefault(_text(r.factors[factor]), set()).add(_text(r.factors[CPUS_FACTOR]))
    return len({frozenset(c) for c in counts.values()}) == 1


def _pct(a: float | None, b: float | None) -> float | None:
    if a is None or b is None:
        return None
    value = percent_improvement(a, b)
    return value if math.isfinite(value) else None


def _value(row: PeakRow | None, metric: str) -> float | None:
    if row is None:
        return None
    value = row.peak_value(metric)
    return value if math.isfinite(value) else None


def _group_key(factors: dict[str, Any], without: str) -> str:
    return json.dumps({k: v for k, v in factors.items() if k != without}, sort_keys=True, default=str)


def _key(values: tuple[Any, ...]) -> str:
    return json.dumps(values, default=str)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


def _order(value: Any, seen: list[str]) -> tuple[int, float]:
    """Numbers (CPU counts) in numeric order, text in the order the table first gave it (cached,
    non-cached, dynamic as Zeus printed them)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (0, float(value))
    return (1, float(seen.index(_text(value))))
