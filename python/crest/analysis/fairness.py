"""Fairness: how evenly a configuration's clients were served at one load (WebBench's client scores).

Owns the per-client spread: every trial's clients at the load taken
together. It must not choose the load (the peak is peak.py's).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from crest.analysis.points import LoadPoint
from crest.analysis.stats import describe


@dataclass
class ClientScore:
    """One client's req/s in one trial (both 1-based); share_of_mean = rps ÷ the mean per client
    (None when that mean is 0 or the client measured nothing)."""

    trial: int
    client: int
    rps: float
    share_of_mean: float | None = None


@dataclass
class Fairness:
    """Per-client req/s at one load; cv is None with one client or a zero mean, min_over_max with a zero max."""

    load: float
    clients: list[ClientScore] = field(default_factory=list)
    mean_rps: float = math.nan
    min_rps: float = math.nan
    max_rps: float = math.nan
    cv: float | None = None
    min_over_max: float | None = None


def fairness(trials: Sequence[Sequence[LoadPoint]], load: float) -> Fairness | None:
    """The client scores of every trial at `load`; None when no client there has a measured req/s."""
    clients: list[ClientScore] = []
    for t, trial in enumerate(trials):
        for point in trial:
            if point.load == load:
                clients.extend(ClientScore(t + 1, c + 1, r) for c, r in enumerate(point.client_rps))
    values = [c.rps for c in clients if math.isfinite(c.rps)]
    if not values:
        return None
    spread = describe(values)
    top = max(values)
    for c in clients:
        c.share_of_mean = c.rps / spread.mean if spread.mean > 0 and math.isfinite(c.rps) else None
    return Fairness(
        load=load,
        clients=clients,
        mean_rps=spread.mean,
        min_rps=min(values),
        max_rps=top,
        cv=spread.cv,
        min_over_max=min(values) / top if top > 0 else None,
    )
