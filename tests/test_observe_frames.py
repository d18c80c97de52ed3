"""Frames a second from the engine's live counters (crest.observe.frames), the hub that keeps them for
returning readers, the live percentiles (crest.analysis.live) and the watching options' checks."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from crest.analysis.live import bucket_percentiles
from crest.cli.watching import Watching, WatchOptions, parse_listen
from crest.errors import ConfigError
from crest.observe.frames import LATENCY_LOWER_US, Feed, Frame, configuration_of, finished_report
from crest.observe.hub import Hub
from crest.observe.jsonl import JsonlSink


class Kept:
    def __init__(self) -> None:
        self.frames: list[Frame] = []
        self.closed = False

    def publish(self, frame: Frame) -> None:
        self.frames.append(frame)

    def close(self) -> None:
        self.closed = True


class Broken:
    def publish(self, frame: Frame) -> None:
        raise OSError("no space left on device")

    def close(self) -> None:
        pass


def _live(elapsed_s: float, completed: int, *, us: int = 1000, failed: int = 0, received: int = 0) -> dict[str, Any]:
    buckets = [0] * len(LATENCY_LOWER_US)
    buckets[next(i for i, low in enumerate(LATENCY_LOWER_US) if low > us) - 1] = completed
    return {
        "elapsed_s": elapsed_s, "requests": completed, "errors": failed, "bytes": received,
        "connections_opened": 4, "completed": completed, "received": received,
        "failed": {"connect": 0, "timeout": failed}, "latency_buckets": buckets,
    }  # fmt: skip


def _feed() -> tuple[Feed, Kept]:
    kept = Kept()
    feed = Feed([kept], clock=lambda: 1000.0)
    feed.run_started("r1", 0, 2, {"suite": "tiny", "factors": {"server": "nginx", "cpus": 1}})
    feed.mix_started("r1", 1, 4, 2, length_s=10.0)
    return feed, kept


def test_a_sample_a_second_with_rates_over_that_second_and_its_own_percentiles() -> None:
    feed, kept = _feed()
    feed.progress("r1", 1, _live(0.25, 100))  # under a second: no sample yet
    feed.progress("r1", 1, _live(1.0, 1000, us=1000, received=10_000))
    feed.progress("r1", 1, _live(1.5, 1500, us=1000))  # half a second after the last sample: none
    live = _live(2.0, 1000, us=1000, failed=3, received=30_000)
    live["completed"] = 3000
    live["latency_buckets"] = [
        a + b for a, b in zip(live["latency_buckets"], _live(0, 2000, us=50_000)["latency_buckets"])
    ]
    feed.progress("r1", 1, live)
    samples = [f for f in kept.frames if f["type"] == "sample"]
    assert [s["elapsed_s"] for s in samples] == [1.0, 2.0]
    first, second = samples
    assert first["rps"] == 1000.0 and second["rps"] == 2000.0
    assert second["errors_per_s"] == 3.0 and second["errors_by_kind"]["timeout"] == 3
    assert second["bytes_per_s"] == 20_000.0 and second["requests"] == 3000
    # The second's percentiles are of that second's latencies (all about 50 ms), not the mix's so far.
    assert first["latency_us"]["p50"] == pytest.approx(1000, rel=0.3)
    assert second["latency_us"]["p50"] == pytest.approx(50_000, rel=0.3)
    assert all(f["configuration"] == "server=nginx cpus=1" and f["run_id"] == "r1" for f in kept.frames)
    assert json.loads(json.dumps(kept.frames)) == kept.frames  # plain JSON all the way


def test_a_cluster_sample_names_each_node_with_its_own_rate() -> None:
    feed, kept = _feed()
    nodes = {"node1": _live(1.0, 600), "node2": _live(1.0, 400)}
    feed.progress("r1", 1, {**_live(1.0, 1000), "by_node": nodes})
    (sample,) = [f for f in kept.frames if f["type"] == "sample"]
    assert sample["by_node"]["node1"]["rps"] == 600.0 and sample["by_node"]["node2"]["requests"] == 400


def test_a_failing_watcher_is_dropped_with_its_reason_and_the_others_go_on() -> None:
    kept = Kept()
    feed = Feed([Broken(), kept])
    feed.run_started("r1", 0, 1, {})
    feed.run_finished("r1", "complete", None)
    assert [f["type"] for f in kept.frames] == ["run-started", "run-finished"]
    assert feed.failures == ["Broken: no space left on device"]


def test_a_bench_report_is_a_finished_mix() -> None:
    frame = finished_report(1, 8, {"rps": 5000.0, "requests": 990, "errors": {"timeout": 10, "read": 0},
                                   "latency_us": {"p99": 800}})  # fmt: skip
    assert frame["errors"] == 10 and frame["error_rate"] == pytest.approx(0.01)
    assert frame["errors_by_kind"] == {"timeout": 10}


def test_configuration_words() -> None:
    assert configuration_of({"factors": {"server": "nginx", "cpus": 1}}) == "server=nginx cpus=1"
    assert configuration_of({"server": None, "target": "http://127.0.0.1:8080"}) == "http://127.0.0.1:8080"


def test_bucket_percentiles_interpolate_inside_the_bucket() -> None:
    lower = [0, 100, 200, 400]
    assert bucket_percentiles([0, 0, 0, 0], lower) is None
    found = bucket_percentiles([0, 10, 0, 0], lower, (("p50", 0.5), ("p100", 1.0)))
    assert found == {"p50": 150.0, "p100": 200.0}
    # The last bucket is open above: its lower bound stands for it.
    assert bucket_percentiles([0, 0, 0, 5], lower, (("p99", 0.99),)) == {"p99": 400.0}


def test_the_hub_replays_what_a_reader_missed_and_bounds_samples_per_run() -> None:
    hub = Hub(samples_kept=3)
    hub.publish({"type": "run-started", "run_id": "r1"})
    for i in range(5):
        hub.publish({"type": "sample", "run_id": "r1", "i": i})
    hub.publish({"type": "run-finished", "run_id": "r1", "status": "complete"})
    frames = hub.since(0)
    assert [f.get("i") for _, f in frames if f["type"] == "sample"] == [2, 3, 4]
    assert frames[0][1]["type"] == "run-started"
    last = frames[-1][0]
    assert hub.since(last) == [] and hub.last_number() == last
    assert [n for n, _ in hub.since(last - 1)] == [last]
    assert hub.runs() == [{"type": "run-started", "run_id": "r1", "status": "complete"}]


def test_jsonl_writes_one_line_per_frame() -> None:
    out = io.StringIO()
    sink = JsonlSink(out, owned=False)
    sink.publish({"type": "sample", "rps": 1.5})
    sink.publish({"type": "run-finished"})
    assert [json.loads(line)["type"] for line in out.getvalue().splitlines()] == ["sample", "run-finished"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [("9464", ("127.0.0.1", 9464)), (":0", ("127.0.0.1", 0)), ("0.0.0.0:80", ("0.0.0.0", 80)),
     ("[::1]:9000", ("::1", 9000))],
)  # fmt: skip
def test_listen_addresses(text: str, expected: tuple[str, int]) -> None:
    assert parse_listen(text, "--metrics") == expected


@pytest.mark.parametrize("text", ["host:port", "example.com:80", "127.0.0.1:70000", ""])
def test_a_bad_listen_address_is_one_line_with_the_form_that_works(text: str) -> None:
    with pytest.raises(ConfigError, match=r"--metrics .*127\.0\.0\.1:9464"):
        parse_listen(text, "--metrics")


def test_jsonl_into_a_missing_directory_is_refused_before_anything_starts(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="directory does not exist"):
        Watching(WatchOptions(jsonl=str(tmp_path / "nowhere" / "f.jsonl")))
    with pytest.raises(ConfigError, match="is a directory"):
        Watching(WatchOptions(jsonl=str(tmp_path)))
    assert Watching(WatchOptions()).feed is None  # nothing asked: nothing imported or started
