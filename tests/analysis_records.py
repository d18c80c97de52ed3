"""Builders of RunDetails and MixRecords for the analysis tests: a curve from a list of req/s values."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from crest.store import MixRecord, RunDetail, RunMeta


def mix(index: int, clients: int, rps: float, **changes: Any) -> MixRecord:
    """A mix of `clients` clients × 2 threads at `rps` req/s over a 10 s window, no errors."""
    window_s = 10.0
    requests = 0 if rps != rps else round(rps * window_s)  # NaN: nothing measured
    fields: dict[str, Any] = {
        "index": index, "clients": clients, "threads_per_client": 2, "connections": 2 * clients,
        "started_at": 1_795_000_000.0 + 20 * index, "ended_at": 1_795_000_015.0 + 20 * index,
        "window_s": window_s, "requests": requests, "responses": requests, "bytes": 1000 * requests,
        "body_bytes": 900 * requests, "rps": float(rps), "throughput_Bps": 1000.0 * rps, "errors": {},
        "latency_us": {"p50": 1000.0, "p90": 2000.0, "p99": 3000.0, "p999": 4000.0, "max": 5000.0, "mean": 1200.0},
        "status": {"200": requests}, "classes": {},
        "client_scores": [{"client": c, "requests": requests // clients, "bytes": 0, "errors": 0,
                           "rps": rps / clients, "throughput_Bps": 0.0} for c in range(clients)],
        "timeline": [], "histogram_b64": "", "monitor": {}, "verdicts": [],
    }  # fmt: skip
    return MixRecord(**{**fields, **changes})


def run(
    rps: Sequence[float],
    loads: Sequence[int] | None = None,
    factors: dict[str, Any] | None = None,
    repeat_index: int = 0,
    run_id: str = "r",
    suite: str = "webbench-static",
    target: str = "http://127.0.0.1:8080/",
) -> RunDetail:
    """A complete run whose mixes have these req/s at these client counts (default 1, 2, 3, …)."""
    loads = list(loads) if loads is not None else list(range(1, len(rps) + 1))
    meta = RunMeta(
        suite=suite, target=target, profile="quick", repeat_index=repeat_index, config={},
        factors=dict(factors or {}), host={},
    )  # fmt: skip
    mixes = [mix(i, c, r) for i, (c, r) in enumerate(zip(loads, rps))]
    return RunDetail(run_id, meta, "complete", None, 1_795_000_000.0 + repeat_index, 1_795_000_100.0, mixes)
