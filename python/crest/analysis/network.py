"""A configuration's client-network figures against load: each link's utilisation and throughput and
TCP's retransmits, the mean over the trials at each load, from the mixes' stored network figures
(crest.network.counters). Pure: no printing; mixes without figures (loopback) are left out.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from crest.analysis.group import Configuration


@dataclass
class NetworkPoint:
    """One load's link figures, keyed by "LINK (DIRECTION)", each the mean over `mixes` trials."""

    load: float
    mixes: int
    utilisation_pct: dict[str, float] = field(default_factory=dict)  # shaped links only
    mbit_per_s: dict[str, float] = field(default_factory=dict)
    drops: dict[str, float] = field(default_factory=dict)
    retrans_segs: dict[str, float] = field(default_factory=dict)  # "target" / "clients"


def link_key(link: dict[str, Any]) -> str:
    return f"{link['link']} ({link['direction']})"


def network_points(config: Configuration, load_axis: str) -> list[NetworkPoint]:
    """The configuration's network figures at each load, in load order (empty when no mix has them)."""
    by_load: dict[float, list[dict[str, Any]]] = defaultdict(list)
    for trial, points in zip(config.trials, config.trial_points(load_axis)):
        mixes = {m.index: m for m in trial.mixes}
        for point in points:
            figures = getattr(mixes.get(point.index), "network", None)
            if isinstance(figures, dict) and figures.get("links"):
                by_load[point.load].append(figures)
    return [_point(load, figures) for load, figures in sorted(by_load.items())]


def _point(load: float, runs: list[dict[str, Any]]) -> NetworkPoint:
    p = NetworkPoint(load=load, mixes=len(runs))
    util: dict[str, list[float]] = defaultdict(list)
    mbit: dict[str, list[float]] = defaultdict(list)
    drops: dict[str, list[float]] = defaultdict(list)
    retrans: dict[str, list[float]] = defaultdict(list)
    for figures in runs:
        for link in figures["links"]:
            key = link_key(link)
            if link.get("utilisation") is not None:
                util[key].append(float(link["utilisation"]) * 100)
            mbit[key].append(float(link.get("bits_per_s") or 0) / 1e6)
            if link.get("drops") is not None:
                drops[key].append(float(link["drops"]))
        for side, tcp in (figures.get("tcp") or {}).items():
            retrans[side].append(float(tcp.get("retrans_segs") or 0))
    p.utilisation_pct = {k: sum(v) / len(v) for k, v in util.items()}
    p.mbit_per_s = {k: sum(v) / len(v) for k, v in mbit.items()}
    p.drops = {k: sum(v) / len(v) for k, v in drops.items()}
    p.retrans_segs = {k: sum(v) / len(v) for k, v in retrans.items()}
    return p
