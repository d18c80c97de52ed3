"""The delay line's figures and verdict from its stats file (crates/delayline writes it; the line itself is
tested in Rust: `cargo test -p crest-delayline`): window deltas of its counters, CPU in cores, lateness
percentiles from its power-of-two buckets, and delay_line_bound when it ran late or at a full core."""

from __future__ import annotations

from typing import Any

from crest.network.counters import delay_line_figures, late_percentile_us, merge_nodes
from crest.placement.subnets import link_verdicts
from crest.verdicts import DELAY_LINE_BOUND


def _stats(at_s: float, cpu_s: float, packets: int, late: list[int], late_sum_ns: int = 0) -> dict[str, Any]:
    """A stats file as crest-delayline writes it: one pair, `packets` each way."""
    way = {"packets": packets, "bytes": packets * 100, "dropped": 1, "overflow": 0}
    return {
        "pairs": [{"a": "crest-x-s1:up", "b": "crest-x-r:s1", "a_to_b": way, "b_to_a": way}],
        "cpu_s": cpu_s, "max_rss_kib": 2048, "late_us_buckets": late + [0] * (24 - len(late)),
        "late_sum_ns": late_sum_ns, "written_at_unix_s": at_s,
    }  # fmt: skip


def test_figures_are_the_windows_deltas() -> None:
    first = _stats(100.0, 1.0, 1000, [900, 100], late_sum_ns=10**6)
    last = _stats(102.0, 1.5, 5000, [900 + 3900, 100 + 90, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10], late_sum_ns=21 * 10**6)
    figures = delay_line_figures(first, last)
    assert figures == {
        "packets": 8000, "dropped": 0, "overflow": 0, "cpu_cores": 0.25,
        "late_mean_us": 5.0, "late_p99_us": 2, "late_max_us": 2048, "max_rss_bytes": 2 << 20,
    }  # fmt: skip
    assert link_verdicts({"links": [], "delay_line": figures}) == []
    since_start = delay_line_figures(None, last)
    assert since_start["packets"] == 10_000 and "cpu_cores" not in since_start  # no window: no rate


def test_percentiles_are_bucket_upper_bounds() -> None:
    assert late_percentile_us([], 0.99) is None
    assert late_percentile_us([0, 0, 0], 0.99) is None
    assert late_percentile_us([98, 1, 1], 0.99) == 2  # the 99th packet is in bucket 1: under 2 µs
    assert late_percentile_us([98, 1, 1], 1.0) == 4
    assert late_percentile_us([0] * 23 + [5], 0.5) == 1 << 23


def test_a_line_late_on_average_is_delay_line_bound() -> None:
    late = [0] * 10 + [90, 10]  # every packet 0.5–2 ms late, 0.8 ms on average: the line fell behind
    figures = delay_line_figures(_stats(0.0, 0.0, 0, []), _stats(4.0, 2.0, 100, late, late_sum_ns=80 * 10**6))
    assert (figures["late_mean_us"], figures["late_p99_us"], figures["cpu_cores"]) == (800.0, 2048, 0.5)
    (verdict,) = link_verdicts({"links": [], "delay_line": figures})
    assert verdict.kind == DELAY_LINE_BOUND
    assert verdict.figures == {"cpu_cores": 0.5, "late_mean_us": 800.0, "late_p99_us": 2048}
    assert "800 µs after they were due on average" in verdict.message


def test_a_line_at_a_full_core_is_delay_line_bound_and_a_slice_now_and_then_is_not() -> None:
    busy = delay_line_figures(_stats(0.0, 0.0, 0, []), _stats(2.0, 1.9, 100, [200]))
    (verdict,) = link_verdicts({"links": [], "delay_line": busy})
    assert verdict.kind == DELAY_LINE_BOUND and verdict.figures["cpu_cores"] == 0.95
    # 2% of packets waited out an 8 ms time slice: a p99 of milliseconds, a mean well under the threshold.
    slices = delay_line_figures(_stats(0.0, 0.0, 0, []), _stats(2.0, 1.0, 100, [98] + [0] * 12 + [2], 16 * 10**6))
    assert slices["late_p99_us"] == 8192 and slices["late_mean_us"] == 160.0
    assert link_verdicts({"links": [], "delay_line": slices}) == []


def test_cluster_nodes_sum_their_counts_and_keep_the_busiest_lines_rates() -> None:
    a = {"links": [], "tcp": {}, "delay_line": {"packets": 10, "dropped": 1, "cpu_cores": 0.2, "late_p99_us": 64}}
    b = {"links": [], "tcp": {}, "delay_line": {"packets": 5, "dropped": 0, "cpu_cores": 0.95, "late_p99_us": 8}}
    merged = merge_nodes([("node1", a), ("node2", b)])["delay_line"]
    assert merged == {"packets": 15, "dropped": 1, "cpu_cores": 0.95, "late_p99_us": 64}
