"""A configuration's host counters against load: each mix's stored host figures (crest.host.monitor's
`host`), as rates, averaged over the trials at each load.

Owns turning window counts into per-second rates and the mean over trials; the figures themselves are
the monitor's. Pure: no printing, no /proc. Mixes stored before host counters were sampled have no
`host` and are left out; a load with none gives no point.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from crest.analysis.group import Configuration

# The TCP counts charted, as per-second rates (the rest stay in the stored mix).
TCP_RATES = ("retrans_segs", "estab_resets", "out_rsts", "attempt_fails", "listen_overflows", "listen_drops")
# Paging counts charted, as per-second rates (pgpgin/pgpgout are KiB).
PAGING_RATES = ("pgpgin", "pgpgout", "pgmajfault", "pswpin", "pswpout")


@dataclass
class HostPoint:
    """One load's host figures, each the mean over the trials that measured it."""

    load: float
    mixes: int  # how many mixes (trials) the means are over
    cpus: int
    cpu_pct: dict[str, float]  # CPU time by kind, % of all the host's CPUs (adds up to 100)
    steal_cores: float
    tcp_per_s: dict[str, float]
    time_wait_max: float
    interrupts_per_s: dict[str, float]  # by kind; a kind a trial did not list counts 0 there
    softirqs_per_s: dict[str, float]
    paging_per_s: dict[str, float]
    available_bytes_min: float
    per_cpu_busy_pct: list[float] = field(default_factory=list)  # each CPU's non-idle share, by CPU


def host_points(config: Configuration, load_axis: str) -> list[HostPoint]:
    """The configuration's host figures at each load, in load order (empty when no mix has them)."""
    by_load: dict[float, list[dict[str, Any]]] = defaultdict(list)
    for trial, points in zip(config.trials, config.trial_points(load_axis)):
        mixes = {m.index: m for m in trial.mixes}
        for point in points:
            host = mixes[point.index].monitor.get("host") if point.index in mixes else None
            if isinstance(host, dict) and host.get("cpu_pct"):
                by_load[point.load].append(host)
    return [_point(load, hosts) for load, hosts in sorted(by_load.items())]


def _point(load: float, hosts: list[dict[str, Any]]) -> HostPoint:
    def rates(key: str, names: tuple[str, ...]) -> dict[str, float]:
        return {n: _mean([float((h.get(key) or {}).get(n) or 0) / _span(h) for h in hosts]) for n in names}

    per_cpu = [h.get("per_cpu_pct") or [] for h in hosts]
    cpus = max(len(p) for p in per_cpu)
    return HostPoint(
        load=load,
        mixes=len(hosts),
        cpus=int(max(int(h.get("cpus") or 0) for h in hosts)),
        cpu_pct=_mean_dicts([h["cpu_pct"] for h in hosts]),
        steal_cores=_mean([float(h.get("steal_cores") or 0.0) for h in hosts]),
        tcp_per_s=rates("tcp", TCP_RATES),
        time_wait_max=_mean([float(h.get("time_wait_max") or 0) for h in hosts]),
        interrupts_per_s=_mean_dicts([h.get("interrupts_per_s") or {} for h in hosts]),
        softirqs_per_s=_mean_dicts([h.get("softirqs_per_s") or {} for h in hosts]),
        paging_per_s=rates("paging", PAGING_RATES),
        available_bytes_min=_mean([float((h.get("memory") or {}).get("available_bytes_min") or 0) for h in hosts]),
        per_cpu_busy_pct=[
            _mean([100.0 - float(p[i].get("idle", 100.0)) for p in per_cpu if len(p) > i]) for i in range(cpus)
        ],
    )


def _span(host: dict[str, Any]) -> float:
    return max(float(host.get("span_s") or 0.0), 1e-9)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _mean_dicts(dicts: list[dict[str, Any]]) -> dict[str, float]:
    keys = list(dict.fromkeys(k for d in dicts for k in d))
    return {k: _mean([float(d.get(k) or 0.0) for d in dicts]) for k in keys}
