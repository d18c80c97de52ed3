"""--metrics' exposition without a socket: frames from a real Feed (real-looking engine live counters, a
stored mix's record) into MetricsSink, read back through prometheus_client's own parsers. The endpoint
and a real Prometheus scraping it: test_metrics_prometheus.py."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_openmetrics
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from analysis_records import mix as stored_mix
from crest.observe.frames import LATENCY_LOWER_US, Feed
from crest.observe.metrics import LATENCY_LE_US, MetricsSink, exposition, latency_histogram, wsgi_app
from crest.verdicts import Verdict

KINDS = ("connect", "tls", "timeout", "read", "write", "status", "parse", "validation", "reset")
OPENMETRICS = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"


class Clock:
    def __init__(self) -> None:
        self.now = 1_795_000_000.0

    def __call__(self) -> float:
        return self.now


def live(elapsed_s: float, requests: int, *, timeouts: int = 0, probes: dict[str, Any] | None = None) -> dict[str, Any]:
    """The engine's cumulative live counters as LoadClient hands them on (a loopback run's shape): latencies
    spread over the 24-96 µs buckets, one slow one at ~2 ms per thousand."""
    buckets = [0] * len(LATENCY_LOWER_US)
    slow = requests // 1000
    buckets[LATENCY_LOWER_US.index(24)] = requests // 2
    buckets[LATENCY_LOWER_US.index(48)] = requests - requests // 2 - slow
    buckets[LATENCY_LOWER_US.index(2048)] = slow
    one: dict[str, Any] = {
        "elapsed_s": elapsed_s, "requests": requests, "completed": requests, "errors": timeouts,
        "bytes": 1157 * requests, "connections_opened": 4,
        "failed": {kind: (timeouts if kind == "timeout" else 0) for kind in KINDS},
        "latency_buckets": buckets,
    }  # fmt: skip
    if probes is not None:
        one["probes"] = probes
    return one


def scrape(sink: MetricsSink) -> dict[str, list[Sample]]:
    """The classic text format, parsed: samples by family name."""
    body, content_type = exposition(sink, None)
    assert content_type.startswith("text/plain")
    return {f.name: f.samples for f in text_string_to_metric_families(body.decode())}


def value(samples: list[Sample], name: str, **labels: str) -> float:
    found = [s.value for s in samples if s.name == name and labels.items() <= s.labels.items()]
    assert len(found) == 1, f"{name}{labels}: {found}"
    return float(found[0])


def started(feed: Feed, run_id: str = "run-a", **about: Any) -> None:
    feed.run_started(run_id, 0, 3, {"suite": "veritest-static", "server": "nginx", "profile": "quick", **about})


def test_a_running_mix_is_counters_a_histogram_and_gauges_labelled_by_run_mix_configuration_and_node() -> None:
    clock = Clock()
    sink = MetricsSink()
    feed = Feed([sink], clock)
    started(feed, factors={"server": "nginx", "cpus": 1})
    feed.mix_started("run-a", 1, 8, 3)
    probes = {"target_cpu_pct": 97.5, "engine_cpu_pct": 151.0, "target_cores": 1, "engine_cores": 2,
              "target_rss_bytes": 52_000_000}  # fmt: skip
    feed.progress("run-a", 1, live(1.0, 40_000, timeouts=3, probes=probes))
    families = scrape(sink)

    mix = {"run": "run-a", "mix": "1", "configuration": "server=nginx cpus=1", "node": "local"}
    assert value(families["crest_requests"], "crest_requests_total", **mix) == 40_000
    assert value(families["crest_bytes"], "crest_bytes_total", **mix) == 1157 * 40_000
    assert value(families["crest_connections_opened"], "crest_connections_opened_total", **mix) == 4
    errors = families["crest_errors"]
    assert {s.labels["kind"] for s in errors} == set(KINDS)
    assert value(errors, "crest_errors_total", kind="timeout", **mix) == 3
    assert value(families["crest_requests_per_second"], "crest_requests_per_second", **mix) == 40_000
    assert value(families["crest_clients"], "crest_clients", **mix) == 8
    # CPU in cores (CPU seconds per second), the sample's "% of one core" / 100.
    assert value(families["crest_target_cpu_cores"], "crest_target_cpu_cores", **mix) == 0.975
    assert value(families["crest_engine_cpu_cores"], "crest_engine_cpu_cores", **mix) == 1.51
    assert value(families["crest_engine_cpu_available_cores"], "crest_engine_cpu_available_cores", **mix) == 2
    assert value(families["crest_target_resident_memory_bytes"], "crest_target_resident_memory_bytes", **mix) == 52e6
    info = families["crest_run_info"]  # the text format has no info type: a gauge of 1
    assert value(info, "crest_run_info", run="run-a", suite="veritest-static", server="nginx", mixes="3") == 1
    # Every series of a family carries the same label names.
    for name, samples in families.items():
        names = {tuple(sorted(set(s.labels) - {"le", "kind", "quantile"})) for s in samples}
        assert len(names) == 1, name


def test_the_latency_histogram_is_cumulative_in_seconds_and_its_buckets_add_up_to_its_count() -> None:
    clock = Clock()
    sink = MetricsSink()
    feed = Feed([sink], clock)
    started(feed)
    feed.mix_started("run-a", 1, 4, 3)
    feed.progress("run-a", 1, live(1.0, 10_000))
    samples = scrape(sink)["crest_request_latency_seconds"]
    buckets = [s for s in samples if s.name.endswith("_bucket")]
    bounds = [float(s.labels["le"]) for s in buckets]
    assert bounds == [b / 1e6 for b in LATENCY_LE_US] + [float("inf")]
    counts = [s.value for s in buckets]
    assert counts == sorted(counts), "cumulative"
    count = value(samples, "crest_request_latency_seconds_count")
    assert counts[-1] == count == 10_000 == sum(live(1.0, 10_000)["latency_buckets"])
    # Under 32 µs: the 24-32 µs bucket's half; up to 64 µs: all but the ten at ~2 ms.
    assert value(samples, "crest_request_latency_seconds_bucket", le="0.000032") == 5_000
    assert value(samples, "crest_request_latency_seconds_bucket", le="0.000064") == 9_990
    mean_s = value(samples, "crest_request_latency_seconds_sum") / count
    assert 40e-6 < mean_s < 70e-6  # midpoints: 28 µs, 56 µs and 2.56 ms


def test_latency_beyond_the_top_bound_counts_under_inf_only() -> None:
    buckets = [0] * len(LATENCY_LOWER_US)
    buckets[0] = 2  # under 1 µs
    buckets[-1] = 1  # the open top bucket, above an hour
    pairs, sum_s = latency_histogram(buckets)
    assert pairs[0] == ("0.000016", 2.0)
    assert pairs[-2] == ("33.554432", 2.0)
    assert pairs[-1] == ("+Inf", 3.0)
    assert sum_s == LATENCY_LOWER_US[-1] / 1e6 + 2 * 0.5e-6


def test_counters_only_grow_within_a_mix_and_a_new_mix_is_a_new_series() -> None:
    clock = Clock()
    sink = MetricsSink()
    feed = Feed([sink], clock)
    started(feed)
    feed.mix_started("run-a", 1, 4, 3)
    seen = []
    for second in range(1, 5):
        feed.progress("run-a", 1, live(float(second), 9_000 * second, timeouts=second))
        families = scrape(sink)
        seen.append((value(families["crest_requests"], "crest_requests_total", mix="1"),
                     value(families["crest_errors"], "crest_errors_total", mix="1", kind="timeout"),
                     value(families["crest_request_latency_seconds"], "crest_request_latency_seconds_count", mix="1")))  # fmt: skip
    assert seen == sorted(seen) and seen[0] < seen[-1]
    feed.mix_finished("run-a", stored_mix(1, 4, 9_000.0))
    feed.mix_started("run-a", 2, 8, 3)
    feed.progress("run-a", 2, live(1.0, 12_000))
    families = scrape(sink)
    # The run's current mix only: mix 1's totals went with its start (each mix starts at 0 under its own label).
    assert {s.labels["mix"] for s in families["crest_requests"]} == {"2"}
    assert value(families["crest_requests"], "crest_requests_total", mix="2") == 12_000


def test_a_finished_mix_leaves_its_ladder_point_and_its_totals_and_takes_its_live_gauges() -> None:
    clock = Clock()
    sink = MetricsSink()
    feed = Feed([sink], clock)
    started(feed)
    feed.mix_started("run-a", 1, 4, 3)
    feed.progress("run-a", 1, live(1.0, 9_000, probes={"target_cpu_pct": 80.0, "engine_cpu_pct": 40.0}))
    monitor = {"target": {"cpu_util_pct": 80.0}, "engine": {"cpu_util_pct": 20.0}}
    verdict = Verdict("client-bound", "the load engine used 99% of its 1 core(s)")
    record = stored_mix(1, 4, 9_000.0, errors={"timeout": 10}, monitor=monitor, verdicts=[verdict])
    feed.mix_finished("run-a", record)
    families = scrape(sink)
    for gone in ("crest_requests_per_second", "crest_clients", "crest_target_cpu_cores", "crest_engine_cpu_cores"):
        assert gone not in families, f"{gone} outlives its mix"
    assert value(families["crest_requests"], "crest_requests_total", mix="1") == 9_000
    point = {"run": "run-a", "mix": "1", "clients": "4", "configuration": "nginx", "node": "local"}
    assert value(families["crest_mix_requests_per_second"], "crest_mix_requests_per_second", **point) == 9_000
    assert value(families["crest_mix_latency_seconds"], "crest_mix_latency_seconds", quantile="0.99", **point) == 0.003
    assert value(families["crest_mix_error_ratio"], "crest_mix_error_ratio", **point) == round(10 / 90_010, 6)
    assert value(families["crest_mix_target_cpu_ratio"], "crest_mix_target_cpu_ratio", **point) == 0.8
    assert value(families["crest_mix_engine_cpu_ratio"], "crest_mix_engine_cpu_ratio", **point) == 0.2
    assert value(families["crest_mix_verdicts"], "crest_mix_verdicts", kind="client-bound", **point) == 1
    # The ladder so far stays to the end of the command, one point per mix.
    feed.mix_started("run-a", 2, 8, 3)
    feed.mix_finished("run-a", stored_mix(2, 8, 15_000.0))
    feed.run_finished("run-a", "complete", None)
    ladder = scrape(sink)["crest_mix_requests_per_second"]
    assert [(s.labels["clients"], s.value) for s in ladder] == [("4", 9_000.0), ("8", 15_000.0)]


def test_a_cluster_counts_per_node_what_each_node_reports_and_the_rest_once_as_all() -> None:
    clock = Clock()
    sink = MetricsSink()
    feed = Feed([sink], clock)
    started(feed, cluster={"address": "local:3", "nodes": ["node1", "node2"]})
    feed.mix_started("run-a", 1, 4, 3)
    merged = live(1.0, 30_000, timeouts=2)
    merged["by_node"] = {
        "node1": {"completed": 10_000, "errors": 2, "bytes": 1157 * 10_000, "connections_opened": 2},
        "node2": {"completed": 20_000, "errors": 0, "bytes": 1157 * 20_000, "connections_opened": 2},
    }
    feed.progress("run-a", 1, merged)
    families = scrape(sink)
    requests = families["crest_requests"]
    assert {s.labels["node"]: s.value for s in requests} == {"node1": 10_000, "node2": 20_000}
    assert {s.labels["node"] for s in families["crest_requests_per_second"]} == {"node1", "node2"}
    assert {s.labels["node"] for s in families["crest_errors"]} == {"all"}
    assert {s.labels["node"] for s in families["crest_request_latency_seconds"]} == {"all"}
    assert value(families["crest_errors"], "crest_errors_total", kind="timeout") == 2


def test_a_resumed_runs_first_sample_starts_its_mix() -> None:
    """Progress with no run-started or mix-started seen (crest run --resume's first event)."""
    clock = Clock()
    sink = MetricsSink()
    feed = Feed([sink], clock)
    feed.progress("run-b", 5, live(1.0, 700))
    assert value(scrape(sink)["crest_requests"], "crest_requests_total", run="run-b", mix="5") == 700


def test_prometheus_asking_for_openmetrics_gets_it_and_anyone_else_the_text_format() -> None:
    clock = Clock()
    sink = MetricsSink()
    feed = Feed([sink], clock)
    started(feed)
    feed.mix_started("run-a", 1, 4, 3)
    feed.progress("run-a", 1, live(1.0, 5_000))
    body, content_type = exposition(sink, OPENMETRICS)
    assert content_type.startswith("application/openmetrics-text; version=1.0.0")
    text = body.decode()
    assert text.endswith("# EOF\n")
    assert "# UNIT crest_request_latency_seconds seconds" in text
    families = {f.name: f for f in parse_openmetrics(text)}
    assert families["crest_requests"].type == "counter"
    assert families["crest_request_latency_seconds"].unit == "seconds"
    plain, plain_type = exposition(sink, "text/plain")
    assert plain_type == "text/plain; version=0.0.4; charset=utf-8"
    assert "# EOF" not in plain.decode()


def test_nothing_watched_yet_is_an_empty_scrape() -> None:
    assert scrape(MetricsSink()) == {}


def call(app: Any, path: str, method: str = "GET", accept: str | None = None) -> tuple[str, dict[str, str], bytes]:
    """One request through the WSGI app, as the server thread makes it."""
    got: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]]) -> None:
        got["status"], got["headers"] = status, dict(headers)

    environ = {"REQUEST_METHOD": method, "PATH_INFO": path, "wsgi.input": io.BytesIO()}
    if accept is not None:
        environ["HTTP_ACCEPT"] = accept
    body: Iterator[bytes] = iter(app(environ, start_response))
    return got["status"], got["headers"], b"".join(body)


def test_the_endpoint_serves_metrics_at_slash_metrics_and_nothing_else() -> None:
    sink = MetricsSink()
    feed = Feed([sink], Clock())
    started(feed)
    app = wsgi_app(sink)
    status, headers, body = call(app, "/metrics", accept=OPENMETRICS)
    assert status == "200 OK"
    assert headers["Content-Type"].startswith("application/openmetrics-text")
    assert b"crest_run_info{" in body and body.endswith(b"# EOF\n")
    assert call(app, "/nope")[0] == "404 Not Found"
    assert call(app, "/metrics", method="POST")[0] == "405 Method Not Allowed"
    status, headers, body = call(app, "/metrics", method="HEAD")
    assert status == "200 OK" and body == b"" and int(headers["Content-Length"]) > 0
