"""The SPECweb99 result in the terminal, laid out as the kit's report: the verdict and its reasons, the
iterations, then the median iteration's conformance, per-class and bit-rate tables. Printing only; each
table fits the terminal as every crest table does (cli.terminal.FitTable)."""

from __future__ import annotations

from crest.analysis.specweb99 import Iteration, Result
from crest.cli.terminal import Column, FitTable, fold, render_text, terminal_width


def print_specweb99(result: Result, width: int | None = None) -> None:
    """The kit's summary of a test, `width` columns wide (default: the terminal's)."""
    width = terminal_width() if width is None else width
    median = result.median
    verdict = result.verdict()
    metric = f"{median.conforming} conforming connections" if median else "no iteration stored"
    print(fold(f"SPECweb99: {metric} · {verdict}", width))
    for failure in result.failures:
        print(fold(f"  INVALID: {failure}", width))
    if not result.conforming_length and result.valid:
        print(
            fold("  not a conforming run length: the kit requires 1200 s warm-up, 3 × 1200 s runs, 300 s ramps", width)
        )
    print()
    names = ("requested", "valid", "invalid", "conforming", "ops/s", "ops/s/conn", "msec/op", "bit rate kbit/s")
    table = FitTable([Column("iteration")] + [Column(name) for name in names])
    for it in result.iterations:
        mark = "*" if it is median else " "
        msec = f"{it.msec_per_op:.1f}" if it.msec_per_op is not None else "-"
        mean, low, high = (v / 1000 for v in it.bit_rate_bps)
        table.add_row(
            f"{it.index}{mark}", str(it.requested), str(it.valid), str(it.invalid), str(it.conforming),
            f"{it.ops_per_s:.1f}", f"{it.ops_per_s_per_connection:.2f}", msec,
            f"{mean:.0f} ({low:.0f}–{high:.0f})",
        )  # fmt: skip
    print(render_text(table, width, indent=2))
    if median is None:
        return
    print(fold("  (* the median iteration, by conforming connections then ops/s; bit rate: mean (min–max))", width))
    _median_tables(median, width)


def _median_tables(it: Iteration, width: int) -> None:
    print()
    speeds = FitTable(
        [Column("speed limit kbit/s", "left")] + [Column(f"{limit / 1000:.0f}") for limit, _ in it.cumulative]
    )
    speeds.add_row("conforming %", *(f"{share * 100:.0f}" for _, share in it.cumulative))
    print(render_text(speeds, width, indent=2))
    print()
    names = ("target mix", "mix", "requests", "errors", "error %", "msec/op", "kbit/s")
    classes = FitTable([Column("class")] + [Column(name) for name in names])
    for row in it.classes:
        msec = f"{row.mean_latency_ms:.1f}" if row.mean_latency_ms is not None else "-"
        classes.add_row(
            str(row.file_class), f"{row.target_share:.3f}", f"{row.share:.3f}", str(row.requests), str(row.errors),
            f"{row.error_rate * 100:.2f}", msec, f"{row.throughput_bps / 1000:.0f}",
        )  # fmt: skip
    print(render_text(classes, width, indent=2))
    ops = ", ".join(f"{name} {n}" for name, n in it.operations.items())
    print(fold(f"  operations: {ops}", width))
    if it.post_log:
        log = it.post_log
        print(
            fold(f"  POST log: {log['records']} records of {log['sent']} POSTs sent, {log['missing']} missing", width)
        )
