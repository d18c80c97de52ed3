"""The terminal's table of a mix's network figures: one line per link and direction (rate, Mbit/s,
utilisation, drops), then TCP's retransmits on each side and the delay line's packets, CPU and lateness. Formats only; figures come from the store
or network.counters."""

from __future__ import annotations

import textwrap
from typing import Any

from crest.cli.terminal import Column, FitTable, render_text, safe, terminal_width


def _mbit(bps: float | None) -> str:
    return "-" if bps is None else f"{bps / 1e6:,.2f}"


def render_network(figures: dict[str, Any], width: int | None = None) -> str:
    """The network block printed under a bench's or a mix's report, `width` columns wide (default: the
    terminal's)."""
    table = FitTable([Column("Link", "left", wrap=True), Column("Dir", "left"), Column("Rate Mbit/s"),
                      Column("Mbit/s"), Column("Util", wrap=True), Column("Drops"), Column("Overlimits")])  # fmt: skip
    for link in figures.get("links", []):
        util = link.get("utilisation")
        shown = "-" if util is None else f"{util * 100:.1f}%"
        if link.get("scope") == "client" and util is not None:
            shown += f" (busiest of {link.get('clients', 0)}; mean {link.get('utilisation_mean', 0) * 100:.1f}%)"
        table.add_row(
            safe(link.get("link")), safe(link.get("direction")), _mbit(link.get("rate_bps")),
            _mbit(link.get("bits_per_s")), shown,
            "-" if link.get("drops") is None else f"{link['drops']:,}",
            "-" if link.get("overlimits") is None else f"{link['overlimits']:,}",
        )  # fmt: skip
    width = terminal_width() if width is None else width
    lines = [f"Network ({figures.get('window_s', 0):g}s window)", render_text(table, width, indent=2)]
    tcp = figures.get("tcp", {})
    parts = [f"{side} {v.get('retrans_segs', 0):,} of {v.get('out_segs', 0):,} segments" for side, v in tcp.items()]
    if parts:
        lines += textwrap.wrap("  TCP retransmits: " + "; ".join(parts), width, subsequent_indent="    ",
                               break_long_words=False, break_on_hyphens=False)  # fmt: skip
    delay = figures.get("delay_line")
    if delay:
        said = f"  Delay line: {delay.get('packets', 0):,} packets, {delay.get('dropped', 0):,} dropped"
        if delay.get("cpu_cores") is not None:
            said += f"; {delay['cpu_cores']:.2f} of a core"
        if delay.get("late_mean_us") is not None:
            said += f"; packets left {delay['late_mean_us']:,.0f} µs after due on average"
            if delay.get("late_p99_us") is not None:
                said += f" (p99 under {delay['late_p99_us']:,} µs)"
        lines += textwrap.wrap(said, width, subsequent_indent="    ", break_long_words=False, break_on_hyphens=False)
    return "\n".join(lines)
