"""Stored runs with plausible web-server curves for the report tests: a real SQLite Store, made-up numbers.

Each configuration climbs to its own peak, then holds, degrades or collapses;
latency follows Little's law (threads ÷ req/s), throughput a ~12 KB mean
response, target CPU the load. Deterministic: a seeded RNG per run.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crest import verdicts
from crest.store import MixRecord, RunMeta, Store

LOADS = (1, 4, 8, 12, 16, 20, 24, 32, 40, 48)
MEAN_RESPONSE_BYTES = 12_400
HOST = {"hostname": "lab1", "kernel": "6.1.0-18-amd64", "cpu_model": "AMD EPYC 7B13", "cpus": 8,
        "python": "3.11.7", "crest_version": "0.1.0", "engine_version": "0.1.0"}  # fmt: skip


@dataclass
class Curve:
    """How one configuration behaves: its peak, where it saturates, and what happens after."""

    factors: dict[str, Any]
    peak_rps: float
    knee: float  # the load where it reaches ~peak
    after: float = 0.0  # relative loss per load unit past the knee (0 = plateau)
    noise: float = 0.02
    error_after: float = 0.0  # error rate reached at the highest load when > 0
    server: dict[str, Any] | None = None
    warnings: dict[int, list[str]] = field(default_factory=dict)  # mix index → messages of `note` verdicts

    def rps(self, load: float) -> float:
        rising = self.peak_rps * (1 - math.exp(-2.2 * load / self.knee))
        past = max(0.0, load - self.knee)
        return rising * max(0.05, 1 - self.after * past)


THREE = (
    Curve({"server": "nginx", "cpus": 2}, 42_000, 24, 0.0,
          server={"name": "nginx", "version": "1.22.1", "config_text": "worker_processes 2;\nevents { worker_connections 4096; }\n"}),
    Curve({"server": "apache", "cpus": 2}, 31_000, 20, 0.004,
          server={"name": "apache", "version": "2.4.62", "config_text": "ServerLimit 16\nMaxRequestWorkers 400\n"}),
    Curve({"server": "lighttpd", "cpus": 2}, 27_500, 16, 0.018, error_after=0.03,
          server={"name": "lighttpd", "version": "1.4.69", "config_text": 'server.max-worker = 2\n'}),
)  # fmt: skip


def store_lab(
    db: Path,
    curves: tuple[Curve, ...] | list[Curve] = THREE,
    trials: int = 2,
    loads: tuple[int, ...] = LOADS,
    suite: str = "webbench-static",
    seed: int = 7,
) -> list[str]:
    """Store `trials` runs of each curve in `db` (one experiment); returns the run ids in store order."""
    ids: list[str] = []
    with Store(db) as store:
        for c, curve in enumerate(curves):
            for trial in range(trials):
                rng = random.Random(seed * 1000 + c * 10 + trial)
                config: dict[str, Any] = {
                    "suite": {"name": suite},
                    "options": {"profile": "quick"},
                    "experiment": "exp-1",
                }
                if curve.server is not None:
                    config["server"] = curve.server
                run_id = store.create_run(RunMeta(
                    suite=suite, target=f"http://127.0.0.1:{8080 + c}/", profile="quick", repeat_index=trial,
                    config=config, factors=dict(curve.factors), host=dict(HOST),
                ))  # fmt: skip
                for index, load in enumerate(loads):
                    store.add_mix(run_id, make_mix(curve, index, load, len(loads), rng))
                store.finish_run(run_id, "complete")
                ids.append(run_id)
    return ids


def make_mix(curve: Curve, index: int, clients: int, count: int, rng: random.Random) -> MixRecord:
    """One mix of `curve` at `clients` clients × 2 threads, 20 s window."""
    threads = clients * 2
    rps = curve.rps(clients) * (1 + rng.gauss(0, curve.noise))
    window_s = 20.0
    requests = int(rps * window_s)
    error_rate = curve.error_after * max(0.0, (index - count / 2) / (count / 2)) if curve.error_after else 0.0
    errors = int(requests * error_rate)
    latency_mean_us = threads / max(rps, 1.0) * 1e6
    shares = [max(0.2, 1 + rng.gauss(0, 0.05 + 0.01 * index)) for _ in range(clients)]
    total = sum(shares)
    cpu_pct = min(99.0, 100 * rps / curve.peak_rps * (0.9 + 0.1 * rng.random()))
    return MixRecord(
        index=index, clients=clients, threads_per_client=2, connections=threads,
        started_at=1_795_000_000.0 + 30 * index, ended_at=1_795_000_024.0 + 30 * index, window_s=window_s,
        requests=requests, responses=requests, bytes=int(requests * MEAN_RESPONSE_BYTES),
        body_bytes=int(requests * (MEAN_RESPONSE_BYTES - 250)), rps=rps,
        throughput_Bps=rps * MEAN_RESPONSE_BYTES,
        errors={"timeout": errors // 2, "read": errors - errors // 2} if errors else {},
        latency_us={"p50": latency_mean_us * 0.8, "p90": latency_mean_us * 1.9, "p99": latency_mean_us * 4.5,
                    "p999": latency_mean_us * 9.0, "max": latency_mean_us * 20, "mean": latency_mean_us,
                    "min": 40.0, "stdev": latency_mean_us * 0.7},
        status={"200": requests},
        classes={},
        client_scores=[{"client": i, "requests": int(requests * s / total), "bytes": 0, "errors": 0,
                        "rps": rps * s / total, "throughput_Bps": 0.0} for i, s in enumerate(shares)],
        timeline=[],
        histogram_b64="",
        monitor={"client_cpu_s": 3.1, "target": {"cpu_util_pct": cpu_pct, "cpus": 2},
                 "engine": {"cpu_util_pct": 30.0 + clients}},
        verdicts=[verdicts.note(text) for text in curve.warnings.get(index, [])],
    )  # fmt: skip
