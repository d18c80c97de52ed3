"""--metrics: a run's frames as Prometheus/OpenMetrics metrics, served over HTTP for a scraper.

Owns the metric names, their labels and units, what stays exported and for how long, and the endpoint.
`MetricsSink` keeps the latest figures of each run (publish only stores; a scrape builds the families
through one custom collector, so the runner's thread never formats text); `serve_metrics` serves them
with prometheus_client's content negotiation: OpenMetrics text to a scraper that asks for it (Prometheus
does), the classic text format to anyone else (curl). Every figure comes from the frames: the same
numbers the live page and --jsonl show.

What stays exported, to keep a long experiment's series few:
- the counters and the latency histogram of each run's current mix, and of its last one until the run's
  next mix starts (a run's final totals stay to the end of the command);
- the live gauges (requests/s, CPU, clients) while their mix runs only: a stopped mix has no rate;
- every finished mix's figures (crest_mix_*) and every run's crest_run_info, to the end of the command.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

from prometheus_client.exposition import choose_encoder
from prometheus_client.metrics_core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    InfoMetricFamily,
    Metric,
)
from prometheus_client.registry import CollectorRegistry

from crest.listen import listen
from crest.observe.frames import LATENCY_LOWER_US, Frame

DEFAULT_HOST = "127.0.0.1"
# What every series carries: which run, which of its mixes, which configuration, where the load ran.
LABELS = ("run", "mix", "configuration", "node")
# The node of a figure off a cluster, and of a cluster's figure that only its merge has (errors by kind,
# latency, rates, CPU): per-node series exist only for what each node reports (requests, bytes,
# connections), so summing a metric over `node` never counts twice.
LOCAL_NODE = "local"
MERGED_NODE = "all"

# The histogram's `le` bounds: the engine's own bucket edges (each bucket 1.33x or 1.5x the one below:
# about ±25% around a value) from 16 µs to 33.6 s; quicker answers fall in the first bucket, slower ones
# in +Inf only.
_LE_MIN_US = 16
_LE_MAX_US = 33_554_432
LATENCY_LE_US: tuple[int, ...] = tuple(b for b in LATENCY_LOWER_US if _LE_MIN_US <= b <= _LE_MAX_US)
_LE_SET = frozenset(LATENCY_LE_US)
# The quantiles of a finished mix's latency, as the store names them.
_QUANTILES = (("p50", "0.5"), ("p90", "0.9"), ("p99", "0.99"), ("p999", "0.999"))


@dataclass
class _NodeTotals:
    requests: int = 0
    bytes: int = 0
    connections_opened: int = 0
    rps: float | None = None  # over the last second, while the mix runs


@dataclass
class _MixNow:
    """One run's current (or last) mix: the engine's totals so far and, while it runs, its live gauges."""

    mix: str
    clients: int
    running: bool = True
    nodes: dict[str, _NodeTotals] = field(default_factory=dict)
    errors_by_kind: dict[str, int] = field(default_factory=dict)
    latency_buckets: list[int] = field(default_factory=list)
    gauges: dict[str, float] = field(default_factory=dict)


@dataclass
class _RunNow:
    configuration: str
    info: dict[str, str]
    cluster: bool = False  # its samples come per node
    mix: _MixNow | None = None
    finished: list[Frame] = field(default_factory=list)  # its mix-finished frames, in order

    @property
    def node(self) -> str:
        return MERGED_NODE if self.cluster else LOCAL_NODE


class MetricsSink:
    """A Sink whose state a scrape reads: thread-safe (frames arrive on the runner's thread, scrapes on the
    server's), and `publish` only updates a few dicts under a lock."""

    def __init__(self) -> None:
        self._runs: dict[str, _RunNow] = {}
        self._lock = threading.Lock()
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(self)

    # -- the Sink

    def publish(self, frame: Frame) -> None:
        kind = frame.get("type")
        run_id = str(frame.get("run_id", ""))
        with self._lock:
            if kind == "run-started":
                self._runs[run_id] = _run_now(frame)
                return
            run = self._runs.get(run_id)
            if run is None:  # a frame of a run whose start this sink did not see (a resumed run)
                run = self._runs[run_id] = _RunNow(str(frame.get("configuration", "")), {})
            if kind == "mix-started":
                run.mix = _MixNow(str(frame.get("mix", "")), int(frame.get("clients") or 0))
            elif kind == "sample":
                _take_sample(run, frame)
            elif kind == "mix-finished":
                if run.mix is not None and run.mix.mix == str(frame.get("mix", "")):
                    _stop(run.mix)
                run.finished.append(frame)
            elif kind == "run-finished" and run.mix is not None:
                _stop(run.mix)

    def close(self) -> None:
        """Nothing to release: the endpoint serves the last figures until the command stops it."""

    # -- the Collector

    def collect(self) -> Iterator[Metric]:
        with self._lock:
            families = _families(self._runs)
        yield from families


def _run_now(frame: Frame) -> _RunNow:
    about = frame.get("about") or {}
    info = {
        "repeat": str(frame.get("repeat", "")),
        "suite": str(about.get("suite") or ""),
        "server": str(about.get("server") or ""),
        "profile": str(about.get("profile") or ""),
        "experiment": str(about.get("experiment") or ""),
        "mixes": str(frame.get("mixes", "")),
    }
    return _RunNow(str(frame.get("configuration", "")), info, cluster=bool(about.get("cluster")))


def _take_sample(run: _RunNow, frame: Frame) -> None:
    index = str(frame.get("mix", ""))
    if run.mix is None or run.mix.mix != index:  # no mix-started seen for it (a resumed run's first mix)
        run.mix = _MixNow(index, int(frame.get("clients") or 0))
    mix = run.mix
    mix.running = True
    if frame.get("clients"):
        mix.clients = int(frame["clients"])
    by_node = frame.get("by_node")
    if isinstance(by_node, dict) and by_node:
        run.cluster = True
        totals = {name: (one, float(one.get("rps", 0.0))) for name, one in by_node.items()}
    else:
        totals = {run.node: (frame, float(frame.get("rps", 0.0)))}
    for name, (one, rps) in totals.items():
        node = mix.nodes.setdefault(str(name), _NodeTotals())
        # A counter never goes down within its series (Prometheus would read a drop as a restart).
        node.requests = max(node.requests, int(one.get("requests", 0)))
        node.bytes = max(node.bytes, int(one.get("bytes", 0)))
        node.connections_opened = max(node.connections_opened, int(one.get("connections_opened", 0)))
        node.rps = rps
    for kind, n in (frame.get("errors_by_kind") or {}).items():
        mix.errors_by_kind[str(kind)] = max(mix.errors_by_kind.get(str(kind), 0), int(n))
    buckets = [int(n) for n in frame.get("latency_buckets") or []]
    if len(buckets) == len(LATENCY_LOWER_US):
        before = mix.latency_buckets or [0] * len(buckets)
        mix.latency_buckets = [max(a, b) for a, b in zip(buckets, before)]
    gauges: dict[str, float] = {"errors_per_s": float(frame.get("errors_per_s", 0.0))}
    for key in ("target_cpu_pct", "engine_cpu_pct", "target_cores", "engine_cores", "target_rss_bytes"):
        value = frame.get(key)
        if isinstance(value, (int, float)):
            gauges[key] = float(value)
    mix.gauges = gauges


def _stop(mix: _MixNow) -> None:
    mix.running = False
    mix.gauges = {}
    for node in mix.nodes.values():
        node.rps = None


# -- the families a scrape returns


def _families(runs: dict[str, _RunNow]) -> list[Metric]:
    """Every metric of every run, built under the sink's lock (a scrape's work, not the runner's)."""
    info = InfoMetricFamily(
        "crest_run",
        "One series per run of this command: its suite, server, profile, experiment, trial (repeat) and"
        " number of mixes.",
        labels=("run", "configuration"),
    )
    requests = CounterMetricFamily(
        "crest_requests",
        "Requests answered in this mix so far (ramps included), as the engine counts them; each mix starts"
        " at 0 under its own mix label.",
        labels=LABELS,
    )
    errors = CounterMetricFamily(
        "crest_errors", "Failed requests in this mix so far, by kind (connect, timeout, status, ...).",
        labels=(*LABELS, "kind"),
    )  # fmt: skip
    received = CounterMetricFamily(
        "crest_bytes", "Bytes received from the target in this mix so far (headers and bodies).", labels=LABELS,
        unit="bytes",
    )  # fmt: skip
    connections = CounterMetricFamily(
        "crest_connections_opened", "Connections the load engine opened in this mix so far.", labels=LABELS
    )
    latency = HistogramMetricFamily(
        "crest_request_latency_seconds",
        "Latency of the requests answered in this mix so far. Buckets are the engine's (~±25% resolution:"
        " each bound is 1.33x or 1.5x the one below); _sum is estimated from bucket midpoints.",
        labels=LABELS,
        unit="seconds",
    )
    rps = GaugeMetricFamily(
        "crest_requests_per_second", "Requests answered over the last second, while the mix runs.", labels=LABELS
    )
    errors_rate = GaugeMetricFamily(
        "crest_errors_per_second", "Failed requests over the last second, while the mix runs.", labels=LABELS
    )
    clients = GaugeMetricFamily("crest_clients", "The running mix's clients (the ladder's load).", labels=LABELS)
    cpu = {
        "target_cpu_pct": GaugeMetricFamily(
            "crest_target_cpu_cores",
            "CPU the target used over the last second, in cores (CPU seconds per second: 1 = one core busy;"
            " what rate(process_cpu_seconds_total) gives).",
            labels=LABELS,
        ),
        "engine_cpu_pct": GaugeMetricFamily(
            "crest_engine_cpu_cores",
            "CPU the load engine (this crest process) used over the last second, in cores (CPU seconds per"
            " second: 1 = one core busy).",
            labels=LABELS,
        ),
        "target_cores": GaugeMetricFamily(
            "crest_target_cpu_available_cores", "Cores the target may use (a fraction under --cpus 0.5).",
            labels=LABELS,
        ),
        "engine_cores": GaugeMetricFamily(
            "crest_engine_cpu_available_cores", "Cores the load engine may use.", labels=LABELS
        ),
        "target_rss_bytes": GaugeMetricFamily(
            "crest_target_resident_memory_bytes", "The target's processes' resident memory.", labels=LABELS,
            unit="bytes",
        ),
    }  # fmt: skip
    finished = _mix_families()
    for run_id, run in runs.items():
        info.add_metric((run_id, run.configuration), run.info)
        for frame in run.finished:
            _add_finished(finished, run_id, run, frame)
        mix = run.mix
        if mix is None:
            continue
        merged = (run_id, mix.mix, run.configuration, run.node)
        for node, totals in mix.nodes.items():
            labels = (run_id, mix.mix, run.configuration, node)
            requests.add_metric(labels, totals.requests)
            received.add_metric(labels, totals.bytes)
            connections.add_metric(labels, totals.connections_opened)
            if totals.rps is not None:
                rps.add_metric(labels, totals.rps)
        for kind, n in sorted(mix.errors_by_kind.items()):
            errors.add_metric((*merged, kind), n)
        if mix.latency_buckets:
            cumulative, total = latency_histogram(mix.latency_buckets)
            latency.add_metric(merged, cumulative, total)
        if not mix.running:
            continue
        clients.add_metric(merged, mix.clients)
        if "errors_per_s" in mix.gauges:
            errors_rate.add_metric(merged, mix.gauges["errors_per_s"])
        for key, family in cpu.items():
            if key in mix.gauges:
                value = round(mix.gauges[key] / 100, 6) if key.endswith("_pct") else mix.gauges[key]
                family.add_metric(merged, value)
    live = [requests, errors, received, connections, latency, rps, errors_rate, clients, *cpu.values()]
    # A family with no series says nothing: left out, so a scrape between runs is short.
    return [family for family in (info, *live, *finished.values()) if family.samples]


def latency_histogram(buckets: list[int]) -> tuple[list[tuple[str, float]], float]:
    """The engine's per-bucket counts (LATENCY_LOWER_US) as cumulative (le in seconds, count) pairs ending
    with +Inf, and an estimated sum in seconds (each bucket's midpoint; the last, open one its lower bound).

    A bucket [lower, next lower) µs counts under le = next lower: the engine's latencies are whole µs, so
    every one of them is ≤ that bound."""
    edges = (*LATENCY_LOWER_US[1:], None)
    pairs: list[tuple[str, float]] = []
    count = 0
    total_us = 0.0
    for lower, upper, n in zip(LATENCY_LOWER_US, edges, buckets):
        count += n
        total_us += n * (lower if upper is None else (lower + upper) / 2)
        if upper is not None and upper in _LE_SET:
            pairs.append((_le(upper), float(count)))
    pairs.append(("+Inf", float(count)))
    return pairs, total_us / 1e6


def _le(bound_us: int) -> str:
    return f"{bound_us / 1e6:.6f}".rstrip("0").rstrip(".")


def _mix_families() -> dict[str, Metric]:
    labels = ("run", "mix", "clients", "configuration", "node")

    def gauge(name: str, text: str, *extra: str, unit: str = "") -> GaugeMetricFamily:
        return GaugeMetricFamily(name, text, labels=(*labels, *extra), unit=unit)

    return {
        "rps": gauge(
            "crest_mix_requests_per_second",
            "A finished mix's requests/s over its measurement window (the ladder's point; the clients label"
            " is its load).",
        ),
        "throughput": gauge(
            "crest_mix_throughput_bytes_per_second", "A finished mix's bytes/s over its measurement window."
        ),
        "latency": gauge(
            "crest_mix_latency_seconds", "A finished mix's latency percentiles over its window (exact, from its"
            " HDR histogram).", "quantile", unit="seconds",
        ),
        "error_ratio": gauge(
            "crest_mix_error_ratio", "A finished mix's failed requests as a share of all it sent (0-1)."
        ),
        "target_cpu": gauge(
            "crest_mix_target_cpu_ratio",
            "A finished mix's target CPU over its window as a share of the cores the target had (0-1).",
        ),
        "engine_cpu": gauge(
            "crest_mix_engine_cpu_ratio",
            "A finished mix's load-engine CPU over its window as a share of the cores it had (0-1; near 1 the"
            " client, not the target, is the limit).",
        ),
        "verdicts": gauge(
            "crest_mix_verdicts", "A finished mix's verdicts by kind (client-bound, errors, ...): how many.",
            "kind",
        ),
    }  # fmt: skip


def _add_finished(families: dict[str, Metric], run_id: str, run: _RunNow, frame: Frame) -> None:
    labels = (run_id, str(frame.get("mix", "")), str(frame.get("clients", "")), run.configuration, run.node)

    def put(key: str, value: Any, *extra: str, per: float = 1.0) -> None:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            family = families[key]
            assert isinstance(family, GaugeMetricFamily)
            family.add_metric((*labels, *extra), round(value / per, 9))  # 10.3% is 0.103, not 0.10300000000000001

    put("rps", frame.get("rps"))
    put("throughput", frame.get("throughput_Bps"))
    latency = frame.get("latency_us") or {}
    for key, quantile in _QUANTILES:
        put("latency", latency.get(key), quantile, per=1e6)
    put("error_ratio", frame.get("error_rate"))
    put("target_cpu", frame.get("target_cpu_util_pct"), per=100)
    put("engine_cpu", frame.get("engine_cpu_util_pct"), per=100)
    kinds: dict[str, int] = {}
    for verdict in frame.get("verdicts") or []:
        kind = str(verdict.get("kind", ""))
        kinds[kind] = kinds.get(kind, 0) + 1
    for kind, n in sorted(kinds.items()):
        put("verdicts", n, kind)


# -- the endpoint


def exposition(sink: MetricsSink, accept: str | None) -> tuple[bytes, str]:
    """The sink's metrics as (body, content type): OpenMetrics when `accept` (an Accept header) asks for
    it, else the classic Prometheus text format."""
    encoder, content_type = choose_encoder(accept or "")
    return encoder(sink.registry), content_type


def wsgi_app(sink: MetricsSink) -> Any:
    """A WSGI app serving `sink` at /metrics (and /, for a browser); 404 elsewhere, 405 for other methods."""

    def app(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        path = environ.get("PATH_INFO") or "/"
        if environ.get("REQUEST_METHOD") not in ("GET", "HEAD"):
            start_response("405 Method Not Allowed", [("Allow", "GET, HEAD"), ("Content-Type", "text/plain")])
            return [b"GET /metrics\n"]
        if path not in ("/", "/metrics"):
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b"crest serves its metrics at /metrics\n"]
        body, content_type = exposition(sink, environ.get("HTTP_ACCEPT"))
        start_response("200 OK", [("Content-Type", content_type), ("Content-Length", str(len(body)))])
        return [body] if environ.get("REQUEST_METHOD") == "GET" else []

    return app


class _Handler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: only the CLI prints, and a scrape a second is not news."""


class _Server(ThreadingMixIn, WSGIServer):
    """The stdlib's WSGI server on a socket crest.listen bound (its wording of a refusal is the one)."""

    daemon_threads = True  # a scraper that hangs on must not keep the command from ending

    def __init__(self, sock: socket.socket) -> None:
        super().__init__(sock.getsockname()[:2], _Handler, bind_and_activate=False)
        self.socket.close()
        self.socket = sock
        self.server_address = sock.getsockname()
        self.server_name, self.server_port = str(self.server_address[0]), int(self.server_address[1])
        self.setup_environ()


@dataclass
class Served:
    """A running endpoint: `url` is what a scraper is given; `stop()` ends it (safe to call twice)."""

    url: str
    host: str
    port: int
    _server: _Server
    _thread: threading.Thread
    _stopped: bool = False

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


def serve_metrics(sink: MetricsSink, host: str = DEFAULT_HOST, port: int = 0) -> Served:
    """Serve `sink` at http://host:port/metrics (port 0: a free one) in a daemon thread; returns once the
    socket listens. Listens on `host` alone.

    Raises:
        ConfigError: the address cannot be bound (in use, not this machine's, not permitted).
    """
    sock = listen(host, port, "--metrics")
    server = _Server(sock)
    server.set_app(wsgi_app(sink))
    thread = threading.Thread(target=server.serve_forever, args=(0.2,), name="crest-metrics", daemon=True)
    thread.start()
    bound_host, bound_port = str(server.server_address[0]), int(server.server_address[1])
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    return Served(f"http://{shown}:{bound_port}/metrics", bound_host, bound_port, server, thread)
