"""The SPECweb99 result in the terminal, laid out as the kit's report: the verdict and its reasons, the
iterations, then the median iteration's conformance, per-class and bit-rate tables. Printing only."""

from __future__ import annotations

from crest.analysis.specweb99 import Iteration, Result


def print_specweb99(result: Result) -> None:
    """The kit's summary of a test."""
    median = result.median
    verdict = result.verdict()
    metric = f"{median.conforming} conforming connections" if median else "no iteration stored"
    print(f"SPECweb99: {metric} · {verdict}")
    for failure in result.failures:
        print(f"  INVALID: {failure}")
    if not result.conforming_length and result.valid:
        print("  not a conforming run length: the kit requires 1200 s warm-up, 3 × 1200 s runs, 300 s ramps")
    print()
    print(
        "  iteration  requested  valid  invalid  conforming   ops/s  ops/s/conn  msec/op  bit rate kbit/s (mean min max)"
    )
    for it in result.iterations:
        mark = "*" if it is median else " "
        msec = f"{it.msec_per_op:.1f}" if it.msec_per_op is not None else "-"
        mean, low, high = (v / 1000 for v in it.bit_rate_bps)
        print(
            f"  {it.index:>8}{mark} {it.requested:>9} {it.valid:>6} {it.invalid:>8} {it.conforming:>11}"
            f" {it.ops_per_s:>7.1f} {it.ops_per_s_per_connection:>11.2f} {msec:>8}  {mean:.0f} {low:.0f} {high:.0f}"
        )
    if median is None:
        return
    print("  (* the median iteration, by conforming connections then ops/s)")
    _median_tables(median)


def _median_tables(it: Iteration) -> None:
    print()
    print("  speed limit kbit/s  " + "  ".join(f"{limit / 1000:>4.0f}" for limit, _ in it.cumulative))
    print("  conforming %        " + "  ".join(f"{share * 100:>4.0f}" for _, share in it.cumulative))
    print()
    print("  class  target mix  mix     requests  errors  error %  msec/op  kbit/s")
    for row in it.classes:
        msec = f"{row.mean_latency_ms:.1f}" if row.mean_latency_ms is not None else "-"
        print(
            f"  {row.file_class:>5}  {row.target_share:>10.3f}  {row.share:.3f}  {row.requests:>8} {row.errors:>7}"
            f"  {row.error_rate * 100:>7.2f}  {msec:>7}  {row.throughput_bps / 1000:>6.0f}"
        )
    ops = ", ".join(f"{name} {n}" for name, n in it.operations.items())
    print(f"  operations: {ops}")
    if it.post_log:
        log = it.post_log
        print(f"  POST log: {log['records']} records of {log['sent']} POSTs sent, {log['missing']} missing")
