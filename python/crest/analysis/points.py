"""LoadPoint: one stored mix seen as a point of a load curve; the only module that reads MixRecord fields.

Owns the per-point derived figures (error rate, Little's load factor, the
monitor's CPU and client-bound flags) so every other analysis module works on
LoadPoints. It must not summarise a curve or compare runs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from crest.analysis.specweb99 import conforming_share
from crest.errors import ConfigError
from crest.store import MixRecord, RunDetail
from crest.verdicts import CLIENT_BOUND, TARGET_IDLE, Verdict, has

# "size" is the content length of a sweep's mix (Zeus' unbundled tests): its points vary by size, not load.
# "rate" is an open-loop mix's total request rate (a capacity search on the rate axis).
LOAD_AXES = ("clients", "threads", "connections", "size", "rate")


@dataclass
class LoadPoint:
    """One mix: its load on the chosen axis and what the target did under it.

    `threads` is the total number of closed-loop threads (clients × threads per
    client); `errors` counts every error kind; `error_rate` = errors ÷ attempts,
    attempts being successful requests + errors. CPU figures are percentages
    of the CPUs the process could use, None when the mix was not monitored.
    `littles_load_factor` = Σ response times ÷ window ≈ mean latency × requests
    ÷ window_s: the average number of requests in flight (≈ threads when the
    generator keeps up); None without a mean latency or a window.
    """

    load: float
    clients: int
    threads: int
    connections: int
    rps: float
    throughput_Bps: float
    requests: int
    errors: int
    error_rate: float
    latency_us: dict[str, float]
    target_cpu_pct: float | None
    engine_cpu_pct: float | None
    client_bound: bool
    client_rps: list[float]
    littles_load_factor: float | None
    index: int = 0  # the mix index in its run
    window_s: float = 0.0
    target_idle_pct: float | None = None
    target_idle: bool = False  # a stored target_idle verdict (files of schema 1: their runner judged the peak)
    conforming_share: float | None = None  # SPECweb99: the share of connections that conform; None otherwise
    verdicts: list[Verdict] = field(default_factory=list)


def points_from_run(detail: RunDetail, load_axis: str = "clients") -> list[LoadPoint]:
    """Every stored mix of a run as a LoadPoint, in ladder (mix index) order.

    load_axis: what `LoadPoint.load` counts: "clients", "threads" (total
    threads = connections of a closed loop) or "connections".
    """
    _check_axis(load_axis)
    return [point_from_mix(mix, load_axis) for mix in sorted(detail.mixes, key=lambda m: m.index)]


def default_load_axis(details: Sequence[RunDetail]) -> str:
    """The axis runs are best compared on: content length when every run is a sweep, else the first
    run's own (published data may say "threads"), else clients."""
    if details and all(d.mixes and all(m.size_bytes is not None for m in d.mixes) for d in details):
        return "size"
    return preferred_load_axis(details[0]) if details else "clients"


def preferred_load_axis(detail: RunDetail) -> str:
    """The axis a run asks to be plotted on (published data may say "threads"), else "clients"."""
    axis = detail.meta.config.get("load_axis") if isinstance(detail.meta.config, dict) else None
    return axis if isinstance(axis, str) and axis in LOAD_AXES else "clients"


def point_from_mix(mix: MixRecord, load_axis: str = "clients") -> LoadPoint:
    """One mix as a LoadPoint (see points_from_run)."""
    _check_axis(load_axis)
    threads = mix.clients * mix.threads_per_client
    load: float
    if load_axis == "size":
        if mix.size_bytes is None:
            raise ConfigError(f"mix {mix.index} has no content length: the size axis is for content-length sweeps")
        load = mix.size_bytes
    elif load_axis == "rate":
        if mix.rate_rps is None:
            raise ConfigError(f"mix {mix.index} is a closed loop: the rate axis is for open-loop mixes")
        load = mix.rate_rps
    else:
        load = {"clients": mix.clients, "threads": threads, "connections": mix.connections}[load_axis]
    errors = mix.error_count
    attempts = mix.requests + errors
    monitor = mix.monitor if isinstance(mix.monitor, dict) else {}
    verdicts = list(mix.verdicts)
    idle_pct = _number(monitor.get("target_idle_pct"))
    return LoadPoint(
        load=float(load),
        clients=mix.clients,
        threads=threads,
        connections=mix.connections,
        rps=float(mix.rps),
        throughput_Bps=float(mix.throughput_Bps),
        requests=mix.requests,
        errors=errors,
        error_rate=errors / attempts if attempts > 0 else 0.0,
        latency_us={str(k): float(v) for k, v in mix.latency_us.items() if _number(v) is not None},
        target_cpu_pct=_number(_section(monitor, "target").get("cpu_util_pct")),
        engine_cpu_pct=_number(_section(monitor, "engine").get("cpu_util_pct")),
        client_bound=monitor.get("client_bound") is True or has(verdicts, CLIENT_BOUND),
        client_rps=[float(c.get("rps", 0.0)) for c in mix.client_scores if isinstance(c, dict)],
        littles_load_factor=_littles_load_factor(mix),
        index=mix.index,
        window_s=float(mix.window_s),
        target_idle_pct=idle_pct,
        target_idle=has(verdicts, TARGET_IDLE),
        verdicts=verdicts,
        conforming_share=conforming_share(mix),
    )


def _littles_load_factor(mix: MixRecord) -> float | None:
    # Σ response times over the window: the histogram's mean (µs) times the requests it
    # recorded; dividing by the window gives the time-averaged number in flight.
    mean_us = _number(mix.latency_us.get("mean"))
    if mean_us is None or not mix.window_s or mix.window_s <= 0 or mix.requests <= 0:
        return None
    return mean_us * 1e-6 * mix.requests / mix.window_s


def _section(monitor: dict[str, Any], key: str) -> dict[str, Any]:
    value = monitor.get(key)
    return value if isinstance(value, dict) else {}


def _number(value: Any) -> float | None:
    # The monitor's keys are optional and may hold None; a NaN is no measurement either.
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return None if math.isnan(value) else float(value)


def _check_axis(load_axis: str) -> None:
    if load_axis not in LOAD_AXES:
        raise ConfigError(f"unknown load axis {load_axis!r}: use one of {', '.join(LOAD_AXES)}")
