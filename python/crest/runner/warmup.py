"""The warm-up pass before a mix's window: every entry of the mix's request table requested once.

Zeus's cached test loaded every file once before measuring, so the server
answered from its caches. Owns the engine run that does it (the mix's own
table and target, selection "once", no think time, no window) and the figures
stored with the mix about it; the pass is never part of the mix's measurement.
Never decides when to warm up (the suite's ladder does) and never stores.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from crest.load.runspec import RunSpec

# Connections the pass uses at most: enough to be quick, few enough not to be a load test of its own.
WARMUP_CONNECTIONS = 16
# Seconds allowed per table entry (a floor of a minute): a pass ends when every entry was sent.
WARMUP_S_PER_ENTRY = 0.05
WARMUP_MIN_S = 60.0


def warmup_spec(spec: RunSpec) -> RunSpec:
    """The pass for a mix whose engine run is `spec`: the same table and target, each entry once."""
    entries = max(1, len(spec.requests))
    connections = max(1, min(WARMUP_CONNECTIONS, spec.connections, entries))
    duration_s = max(WARMUP_MIN_S, entries * WARMUP_S_PER_ENTRY)
    return replace(
        spec, selection="once", connections=connections, threads=min(spec.threads, connections),
        connections_per_client=1, think_time_s=0.0, rate_rps=None, window_s=None, drain_s=0.0,
        client_start_delay_s=0.0, duration_s=duration_s, line_speed_bps=None,
    )  # fmt: skip


def warmup_figures(report: dict[str, Any], entries: int, elapsed_s: float) -> dict[str, Any]:
    """What a mix stores about its warm-up pass (never counted in its requests)."""
    return {
        "entries": entries,
        "requests": int(report.get("requests", 0)),
        "responses": int(report.get("responses", 0)),
        "bytes": int(report.get("bytes", 0)),
        "errors": sum(int(n) for n in dict(report.get("errors") or {}).values()),
        "elapsed_s": round(elapsed_s, 3),
    }
