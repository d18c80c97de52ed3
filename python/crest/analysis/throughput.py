"""Throughput curves: the headline of file-server runs (NetBench reported total Mbit/s per mix) and of
published tables that give only throughput. Owns which runs are judged by throughput, the Mbit/s
figures per mix (total and per client), the peak throughput and where it occurs, and the shape past it
(with summary.py's thresholds, so "plateau" and "collapse" mean the same for every metric). Works on
LoadPoints and stored runs only; it prints nothing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from crest.analysis.peak import highest
from crest.analysis.points import LoadPoint, points_from_run, preferred_load_axis
from crest.analysis.summary import GRACEFUL_RATIO, PEAK_ONLY_SHAPE, shape_of
from crest.errors import ConfigError
from crest.store import RunDetail
from crest.verdicts import PEAK_ONLY, has

MBIT = 1e6 / 8  # bytes/s in one Mbit/s (10^6 bits)
# NetBench's "Mbits/sec" was bytes x 8 / 2^20: Mindcraft's tables check out so (37,576,067 B/s is their 286.7).
NETBENCH_MBIT = 2**20 / 8


def judged_by_throughput(detail: RunDetail) -> bool:
    """Whether a run's headline is throughput: a file-operation suite, or a published table that gives
    only throughput (no mix has a req/s)."""
    config = detail.meta.config if isinstance(detail.meta.config, dict) else {}
    suite = config.get("suite")
    if isinstance(suite, dict):
        classes = (suite.get("workload") or {}).get("classes") or []
        if any(isinstance(c, dict) and c.get("kind") == "loadfile" for c in classes):
            return True
    mixes = detail.mixes
    return bool(mixes) and all(math.isnan(m.rps) for m in mixes) and any(m.throughput_Bps > 0 for m in mixes)


def headline_metric(details: Sequence[RunDetail]) -> str:
    """What peaks are ranked, compared and indexed by: "throughput_Bps" when every run is judged by
    throughput (a file server's operations are not requests; NetBench and Zeus printed bytes), else "rps"."""
    return "throughput_Bps" if details and all(judged_by_throughput(d) for d in details) else "rps"


def over_network(details: Sequence[RunDetail]) -> bool:
    """Whether any run's mixes crossed a client network (`--network`): its links carry the throughput, so
    comparisons say what throughput did beside req/s."""
    return any(isinstance(m.network, dict) and m.network.get("links") for d in details for m in d.mixes)


@dataclass(frozen=True)
class ThroughputPoint:
    """One mix's throughput: total and per client, in Mbit/s and MB/s (10^6), and operations per second."""

    index: int
    load: float
    clients: int
    mbit_s: float
    netbench_mbit_s: float
    mb_s: float
    per_client_mbit_s: float
    ops_s: float
    errors: int


@dataclass(frozen=True)
class ThroughputCurve:
    """A throughput curve in a few figures. shape: as summary.py names it ("rising", "plateau",
    "graceful degradation", "collapse", "single point"); past_peak_ratio: min throughput after the
    peak ÷ the peak; last_ratio: the last point ÷ the peak (where the ladder ended up)."""

    points: list[ThroughputPoint]
    peak_mbit_s: float
    peak_netbench_mbit_s: float
    peak_load: float
    peak_index: int
    shape: str
    past_peak_ratio: float | None
    last_ratio: float | None
    load_axis: str

    @property
    def statement(self) -> str:
        """One line: the peak, where it occurs, and what happens past it."""
        if self.shape == PEAK_ONLY_SHAPE:
            return f"peak {self.peak_mbit_s:,.1f} Mbit/s (a published peak: the report gives no load)"
        peak = f"peak {self.peak_mbit_s:,.1f} Mbit/s at {self.peak_load:g} {self.load_axis}"
        if self.shape == "single point":
            return f"{peak} (one load point: no curve)"
        if self.shape == "rising":
            return f"{peak}, the last load: not saturated — add load"
        assert self.past_peak_ratio is not None and self.last_ratio is not None
        last = self.points[-1]
        return (
            f"{peak}; past it {self.shape} (lowest {self.past_peak_ratio:.0%} of the peak,"
            f" {last.mbit_s:,.1f} Mbit/s = {self.last_ratio:.0%} at {last.load:g})"
        )


def throughput_points(points: Sequence[LoadPoint]) -> list[ThroughputPoint]:
    """Each point's throughput figures, in load order; a point without a throughput is left out."""
    out = []
    for p in sorted(points, key=lambda p: p.load):
        if math.isnan(p.throughput_Bps):
            continue
        mbit = p.throughput_Bps / MBIT
        out.append(
            ThroughputPoint(
                index=p.index, load=p.load, clients=p.clients, mbit_s=mbit,
                netbench_mbit_s=p.throughput_Bps / NETBENCH_MBIT, mb_s=p.throughput_Bps / 1e6,
                per_client_mbit_s=mbit / p.clients if p.clients else math.nan,
                ops_s=p.rps, errors=p.errors,
            )
        )  # fmt: skip
    return out


def throughput_curve(points: Sequence[LoadPoint], load_axis: str = "clients") -> ThroughputCurve:
    """The throughput curve of one run's points.

    Raises:
        ConfigError: no point has a throughput.
    """
    tp = throughput_points(points)
    at = highest([p.mbit_s for p in tp])
    if at is None:
        raise ConfigError("no load point has a throughput: the run stored no usable mix; pick another run")
    peak = tp[at]
    if peak.mbit_s <= 0:
        raise ConfigError("no load point moved any data: every client stopped or failed (see the errors by kind)")
    after = tp[at + 1 :]
    ratio = min(p.mbit_s for p in after) / peak.mbit_s if after and peak.mbit_s > 0 else None
    last = tp[-1].mbit_s / peak.mbit_s if after and peak.mbit_s > 0 else None
    if all(has(p.verdicts, PEAK_ONLY) for p in points):
        shape = PEAK_ONLY_SHAPE
    elif len(tp) == 1:
        shape = "single point"
    elif not after:
        shape = "rising"
    else:
        shape = shape_of(ratio) if ratio is not None else "collapse"
    return ThroughputCurve(tp, peak.mbit_s, peak.netbench_mbit_s, peak.load, peak.index, shape, ratio, last, load_axis)


def run_throughput(detail: RunDetail) -> ThroughputCurve:
    """A stored run's throughput curve on its own axis."""
    axis = preferred_load_axis(detail)
    return throughput_curve(points_from_run(detail, axis), axis)


__all__ = [
    "GRACEFUL_RATIO",
    "MBIT",
    "NETBENCH_MBIT",
    "ThroughputCurve",
    "ThroughputPoint",
    "headline_metric",
    "judged_by_throughput",
    "over_network",
    "run_throughput",
    "throughput_curve",
    "throughput_points",
]
