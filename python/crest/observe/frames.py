"""Frames: a run as plain JSON-able dicts, one `sample` a second while a mix runs and one frame at each
run's and mix's start and end. Every watcher (the live page, the metrics endpoint, JSON Lines) reads the
same frames, so they never disagree.

Owns turning the runner's events and the engine's cumulative live counters into frames: rates over the
last second, that second's latency percentiles (analysis.live), the target's and the engine's CPU and the
links from the mix's probes, a finished mix's figures and verdicts. Never prints, never serves, never
stores; a sink that fails is the sink's problem (see `Feed.publish`).

Frame types (every frame has `type`, `t` (unix s), `run_id`, `repeat`, `configuration`):
- run-started: mixes, about (suite, server, target, profile, factors, experiment, cluster)
- mix-started: mix, mixes, clients, threads_per_client, length_s, ramp_up_s, ramp_down_s
- sample: mix, clients, elapsed_s, interval_s, rps, errors_per_s, bytes_per_s, connections_per_s,
  requests / errors / bytes / connections_opened (the mix's totals so far, ramps included),
  errors_by_kind (totals so far), latency_us ({p50, p90, p99} of this second, or null),
  latency_buckets (totals so far per LATENCY_LOWER_US bucket), target_cpu_pct, engine_cpu_pct (% of one core),
  target_cores, engine_cores, target_rss_bytes, links, by_node ({node: {requests, errors, bytes,
  connections_opened, rps}} on a cluster)
- mix-finished: mix, clients, rps, throughput_Bps, latency_us, errors, errors_by_kind, error_rate,
  window_s, size_bytes, rate_rps, target_cpu_util_pct, engine_cpu_util_pct (of the cores each had),
  verdicts ([{kind, message, ...}])
- run-finished: status, reason
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from crest import _engine
from crest.analysis.live import bucket_percentiles
from crest.runner.request import Event
from crest.store import MixRecord

Frame = dict[str, Any]

# Each bucket's lower bound (µs) of the engine's live latency histogram.
LATENCY_LOWER_US: tuple[int, ...] = tuple(_engine.live_latency_lower_us())
# One sample a second: the engine is polled 4×/s, and a second is what Locust, k6 and Prometheus show.
SAMPLE_S = 1.0


class Sink(Protocol):
    """Where frames go: called on the runner's thread, so it must be quick and never block on a reader."""

    def publish(self, frame: Frame) -> None: ...

    def close(self) -> None: ...


def configuration_of(about: dict[str, Any]) -> str:
    """A run's configuration in words: its factor levels (`server=nginx cpus=1`), else its server or target."""
    factors = about.get("factors") or {}
    if factors:
        return " ".join(f"{k}={v}" for k, v in factors.items())
    return str(about.get("server") or about.get("target") or "")


@dataclass
class _Counts:
    """The cumulative figures of a mix's last sample (or its start)."""

    elapsed_s: float = 0.0
    requests: int = 0
    errors: int = 0
    bytes: int = 0
    connections_opened: int = 0
    latency: list[int] = field(default_factory=list)
    by_node: dict[str, int] = field(default_factory=dict)  # requests per node


@dataclass
class _Mix:
    index: int
    clients: int
    last: _Counts = field(default_factory=_Counts)


@dataclass
class _Run:
    repeat: int
    configuration: str
    mix: _Mix | None = None


class Feed:
    """Turns events into frames and hands each to every sink; thread-safe (a cluster's progress may come
    from another thread than the runner's)."""

    def __init__(self, sinks: Iterable[Sink], clock: Callable[[], float] = time.time) -> None:
        self.sinks = list(sinks)
        self.clock = clock
        self.failures: list[str] = []  # one line per sink that failed and was dropped
        self._runs: dict[str, _Run] = {}
        self._lock = threading.Lock()

    # -- the runner's events

    def on_event(self, event: Event) -> None:
        """An EventCallback: what `SuiteRunner` (and the harnesses around it) report."""
        if event.kind == "run-started":
            self.run_started(event.run_id, event.repeat_index, event.mixes, event.about)
        elif event.kind == "mix-started" and event.mix is not None:
            t = event.mix.timing
            self.mix_started(
                event.run_id, event.mix.index, event.mix.clients, event.mixes,
                threads_per_client=event.mix.threads_per_client, length_s=t.length_s,
                ramp_up_s=t.ramp_up_s, ramp_down_s=t.ramp_down_s,
            )  # fmt: skip
        elif event.kind == "mix-progress" and event.mix is not None:
            self.progress(event.run_id, event.mix.index, event.live)
        elif event.kind == "mix-finished" and event.record is not None:
            self.mix_finished(event.run_id, event.record)
        elif event.kind == "run-finished":
            self.run_finished(event.run_id, event.status, event.reason)

    # -- the same, for a command without a runner (crest bench)

    def run_started(self, run_id: str, repeat: int, mixes: int, about: dict[str, Any]) -> None:
        run = _Run(repeat, configuration_of(about))
        with self._lock:
            self._runs[run_id] = run
        self._send(run_id, run, {"type": "run-started", "mixes": mixes, "about": about})

    def mix_started(self, run_id: str, index: int, clients: int, mixes: int, **timing: Any) -> None:
        run = self._run(run_id)
        run.mix = _Mix(index, clients)
        self._send(run_id, run, {"type": "mix-started", "mix": index, "mixes": mixes, "clients": clients, **timing})

    def progress(self, run_id: str, index: int, live: dict[str, Any]) -> None:
        """The engine's cumulative live counters (with the probes' latest figures): a sample once a second."""
        run = self._run(run_id)
        mix = run.mix if run.mix is not None and run.mix.index == index else None
        if mix is None:  # progress without a mix-started (a resumed run's first event): start it here
            mix = run.mix = _Mix(index, 0)
        frame = _sample(mix, live)
        if frame is not None:
            self._send(run_id, run, frame)

    def mix_finished(self, run_id: str, record: MixRecord) -> None:
        run = self._run(run_id)
        run.mix = None
        self._send(run_id, run, finished_mix(record))

    def report_finished(self, run_id: str, index: int, clients: int, report: dict[str, Any]) -> None:
        """A mix that ended as an engine report, not a stored record (crest bench)."""
        run = self._run(run_id)
        run.mix = None
        self._send(run_id, run, finished_report(index, clients, report))

    def run_finished(self, run_id: str, status: str, reason: str | None) -> None:
        run = self._run(run_id)
        self._send(run_id, run, {"type": "run-finished", "status": status, "reason": reason})
        with self._lock:
            self._runs.pop(run_id, None)

    def close(self) -> None:
        for sink in self.sinks:
            sink.close()

    # -- internals

    def _run(self, run_id: str) -> _Run:
        with self._lock:
            return self._runs.setdefault(run_id, _Run(0, ""))

    def _send(self, run_id: str, run: _Run, frame: Frame) -> None:
        frame = {"type": frame.pop("type"), "t": round(self.clock(), 3), "run_id": run_id, "repeat": run.repeat,
                 "configuration": run.configuration, **frame}  # fmt: skip
        self.publish(frame)

    def publish(self, frame: Frame) -> None:
        """Hands `frame` to every sink. A sink that raises is dropped with its reason kept in `failures`:
        a watcher's trouble (a closed pipe, a full disk under --jsonl) must not end a measurement."""
        for sink in list(self.sinks):
            try:
                sink.publish(frame)
            except Exception as exc:  # any sink failure is reported the same way
                self.sinks.remove(sink)
                self.failures.append(f"{type(sink).__name__}: {exc}")


def _sample(mix: _Mix, live: dict[str, Any]) -> Frame | None:
    """A sample frame when a second has passed since the mix's last one, else None."""
    elapsed = float(live.get("elapsed_s", 0.0))
    last = mix.last
    interval = elapsed - last.elapsed_s
    if interval < SAMPLE_S:
        return None
    failed = live.get("failed")
    now = _Counts(
        elapsed_s=elapsed,
        requests=int(live.get("completed", live.get("requests", 0))),
        errors=int(sum(failed.values())) if isinstance(failed, dict) else int(live.get("errors", 0)),
        bytes=int(live.get("received", live.get("bytes", 0))),
        connections_opened=int(live.get("connections_opened", 0)),
        latency=[int(n) for n in live.get("latency_buckets") or []],
    )
    frame: Frame = {
        "type": "sample",
        "mix": mix.index,
        "clients": mix.clients,
        "elapsed_s": round(elapsed, 3),
        "interval_s": round(interval, 3),
        "rps": round((now.requests - last.requests) / interval, 1),
        "errors_per_s": round((now.errors - last.errors) / interval, 2),
        "bytes_per_s": round((now.bytes - last.bytes) / interval, 1),
        "connections_per_s": round((now.connections_opened - last.connections_opened) / interval, 1),
        "requests": now.requests,
        "errors": now.errors,
        "bytes": now.bytes,
        "connections_opened": now.connections_opened,
        "errors_by_kind": dict(failed) if isinstance(failed, dict) else {},
        "latency_us": None,
        "latency_buckets": now.latency,
    }
    if now.latency:
        before = last.latency or [0] * len(now.latency)
        second = [max(0, a - b) for a, b in zip(now.latency, before)]
        frame["latency_us"] = bucket_percentiles(second, LATENCY_LOWER_US)
    probes = live.get("probes") or {}
    for key in ("target_cpu_pct", "engine_cpu_pct", "target_cores", "engine_cores", "target_rss_bytes", "links"):
        if key in probes:
            frame[key] = probes[key]
    by_node = live.get("by_node")
    if isinstance(by_node, dict):
        nodes: dict[str, Any] = {}
        for name, one in by_node.items():
            done = int(one.get("completed", one.get("requests", 0)))
            nodes[name] = {
                "requests": done,
                "errors": int(one.get("errors", 0)),
                "bytes": int(one.get("received", one.get("bytes", 0))),
                "connections_opened": int(one.get("connections_opened", 0)),
                "rps": round((done - last.by_node.get(name, 0)) / interval, 1),
            }
            now.by_node[name] = done
        frame["by_node"] = nodes
    mix.last = now
    return frame


def finished_report(index: int, clients: int, report: dict[str, Any]) -> Frame:
    """An engine run's report (crest bench's one mix) as a mix-finished frame."""
    errors_by_kind = {k: int(n) for k, n in (report.get("errors") or {}).items() if n}
    errors, requests = sum(errors_by_kind.values()), int(report.get("requests", 0))
    return {
        "type": "mix-finished",
        "mix": index,
        "clients": clients,
        "rps": round(float(report.get("rps", 0.0)), 1),
        "throughput_Bps": round(float(report.get("throughput_Bps", 0.0)), 1),
        "latency_us": dict(report.get("latency_us") or {}),
        "errors": errors,
        "errors_by_kind": errors_by_kind,
        "error_rate": round(errors / (requests + errors), 6) if requests + errors else 0.0,
        "window_s": report.get("window_s"),
        "rate_rps": report.get("rate_rps"),
        "verdicts": [],
    }


def finished_mix(record: MixRecord) -> Frame:
    """A stored mix as its mix-finished frame: the figures a watcher reads off the ladder."""
    errors = sum(record.errors.values())
    monitor = record.monitor or {}
    return {
        "type": "mix-finished",
        "mix": record.index,
        "clients": record.clients,
        "rps": round(record.rps, 1),
        "throughput_Bps": round(record.throughput_Bps, 1),
        "latency_us": dict(record.latency_us),
        "errors": errors,
        "errors_by_kind": {k: n for k, n in record.errors.items() if n},
        "error_rate": round(errors / (record.requests + errors), 6) if record.requests + errors else 0.0,
        "window_s": record.window_s,
        "size_bytes": record.size_bytes,
        "rate_rps": record.rate_rps,
        # Utilisation of the cores each side had over the window (a sample's CPU is % of one core).
        "target_cpu_util_pct": (monitor.get("target") or {}).get("cpu_util_pct"),
        "engine_cpu_util_pct": (monitor.get("engine") or {}).get("cpu_util_pct"),
        "verdicts": [v.to_json() for v in record.verdicts],
    }
