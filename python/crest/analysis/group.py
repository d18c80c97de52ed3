"""Configuration: the runs that are trials of one target configuration, and a short label for each.

Runs with the same suite, profile and factors (repeat_index aside) are
trials of one configuration; without factors the target URL tells them apart
too. Labels name only what differs between the configurations at hand, so a
table of nginx vs apache says "server=nginx", not every factor. It must not
compute statistics.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from crest.analysis.points import LoadPoint, points_from_run
from crest.store import RunDetail

_MISSING = "none"  # how a factor a configuration lacks shows in a label


@dataclass
class Configuration:
    """One configuration and its trials, in trial (repeat_index) order."""

    label: str
    factors: dict[str, Any]
    trials: list[RunDetail] = field(default_factory=list)

    def trial_points(self, load_axis: str = "clients") -> list[list[LoadPoint]]:
        """Each trial's curve, in trial order."""
        return [points_from_run(trial, load_axis) for trial in self.trials]


def configurations(details: Sequence[RunDetail]) -> list[Configuration]:
    """Group runs into configurations, in the order each configuration first appears."""
    groups: dict[str, list[RunDetail]] = {}
    for detail in details:
        groups.setdefault(_key(detail), []).append(detail)
    trials = [sorted(g, key=lambda d: (d.meta.repeat_index, d.started_at, d.id)) for g in groups.values()]
    labels = _labels([t[0] for t in trials])
    return [Configuration(label, dict(t[0].meta.factors), t) for label, t in zip(labels, trials)]


def factor_label(factors: dict[str, Any], names: Sequence[str]) -> str:
    """ "k=v k2=v2" over the given factor names, in that order."""
    return " ".join(f"{name}={_value(factors.get(name, _MISSING))}" for name in names)


def differing_factors(factor_sets: Sequence[dict[str, Any]]) -> list[str]:
    """The factor names whose values are not the same in every set, in first-seen order."""
    names: dict[str, None] = {}
    for factors in factor_sets:
        names.update(dict.fromkeys(factors))
    return [
        name for name in names
        if len({_canonical(f.get(name, _MISSING)) for f in factor_sets}) > 1
    ]  # fmt: skip


def _key(detail: RunDetail) -> str:
    meta = detail.meta
    # Factors are what a run says about its configuration; a run without any can only
    # be told apart by where it went.
    target = None if meta.factors else meta.target
    return json.dumps([meta.suite, meta.profile, target, meta.factors], sort_keys=True, default=str)


def _labels(firsts: list[RunDetail]) -> list[str]:
    if len(firsts) == 1:
        only = firsts[0]
        return [factor_label(only.meta.factors, list(only.meta.factors)) or f"{only.meta.suite} on {only.meta.target}"]
    names = differing_factors([d.meta.factors for d in firsts])
    labels = [factor_label(d.meta.factors, names) for d in firsts] if names else _fallback(firsts)
    if len(set(labels)) < len(labels):  # different configurations must never share a label
        labels = [f"{label} ({d.id})" for label, d in zip(labels, firsts)]
    return labels


def _fallback(firsts: list[RunDetail]) -> list[str]:
    differing = [a for a in ("suite", "target", "profile") if len({str(getattr(d.meta, a)) for d in firsts}) > 1]
    if not differing:
        return [d.id for d in firsts]
    return [" ".join(str(getattr(d.meta, a)) for a in differing) for d in firsts]


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)
