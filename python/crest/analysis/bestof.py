"""VeriTest's "better of" the single- and multi-threaded suites: one curve per configuration, each load
point taken from whichever suite served more requests/s there.

VeriTest ran the standard single-threaded suites everywhere, then the
multi-threaded ones (figure 12) where those could not find the peak, and
reported the peak of the two. Here configurations equal in everything but
their suite (veritest-static and veritest-static-mt4 on one server) are merged:
at each load, the suite with the higher mean req/s over its trials supplies
that point for every trial, and `sources` says which one it was. The merged
configuration is an ordinary Configuration to peak_table, paired_difference
and the report. It must not compute peaks or intervals itself.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from crest.analysis.group import Configuration, differing_factors, factor_label, settings
from crest.analysis.points import LoadPoint
from crest.analysis.stats import mean


@dataclass
class BestOf(Configuration):
    """Configurations of several suites merged point by point (see the module comment)."""

    members: list[Configuration] = field(default_factory=list)

    @property
    def suites(self) -> list[str]:
        return [m.trials[0].meta.suite for m in self.members]

    def trial_count(self) -> int:
        return max(m.trial_count() for m in self.members)

    def sources(self, load_axis: str = "clients") -> dict[float, str]:
        """Each load's winning suite: the member with the highest mean req/s over its trials there
        (the first member listed on a tie)."""
        best: dict[float, tuple[float, str]] = {}
        for member, suite in zip(self.members, self.suites):
            at: dict[float, list[float]] = {}
            for trial in member.trial_points(load_axis):
                for p in trial:
                    at.setdefault(p.load, []).append(p.rps)
            for load, values in at.items():
                value = mean(values)
                if load not in best or value > best[load][0]:
                    best[load] = (value, suite)
        return {load: suite for load, (_, suite) in sorted(best.items())}

    def trial_points(self, load_axis: str = "clients") -> list[list[LoadPoint]]:
        chosen = self.sources(load_axis)
        curves = {suite: m.trial_points(load_axis) for suite, m in zip(self.suites, self.members)}
        out: list[list[LoadPoint]] = []
        for i in range(self.trial_count()):
            trial: list[LoadPoint] = []
            for load, suite in chosen.items():
                points = curves[suite][i] if i < len(curves[suite]) else []
                trial.extend(p for p in points if p.load == load)
            out.append(trial)
        return out


def best_of(configs: Sequence[Configuration]) -> list[Configuration]:
    """Configurations that differ only in their suite merged into one BestOf each; the others as they were.
    Order follows each group's first configuration."""
    groups: dict[str, list[Configuration]] = {}
    for config in configs:
        groups.setdefault(_without_suite(config), []).append(config)
    merged = [g[0] if len(g) == 1 else _merge(g) for g in groups.values()]
    names = differing_factors([c.factors for c in merged])
    for config in merged:
        if isinstance(config, BestOf) or names:
            config.label = factor_label(config.factors, names) if names else _suite_label(config)
    labels = [c.label for c in merged]
    for config in merged:
        if labels.count(config.label) > 1:  # different configurations must never share a label
            config.label = f"{config.label} ({config.trials[0].id})"
    return merged


def _merge(group: list[Configuration]) -> BestOf:
    trials = [t for c in group for t in c.trials]
    return BestOf(label="", factors=dict(group[0].factors), trials=trials, members=list(group))


def _suite_label(config: Configuration) -> str:
    suites = config.suites if isinstance(config, BestOf) else [config.trials[0].meta.suite]
    return "better of " + " | ".join(suites)


def _without_suite(config: Configuration) -> str:
    first = config.trials[0]
    return json.dumps([first.meta.profile, config.factors, settings(first)], sort_keys=True, default=str)
