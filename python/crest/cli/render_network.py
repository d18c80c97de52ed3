"""The terminal's table of a mix's network figures: one line per link and direction (rate, Mbit/s,
utilisation, drops), then TCP's retransmits on each side. Formats only; figures come from the store
or network.counters."""

from __future__ import annotations

from typing import Any


def _mbit(bps: float | None) -> str:
    return "-" if bps is None else f"{bps / 1e6:,.2f}"


def render_network(figures: dict[str, Any]) -> str:
    """The network block printed under a bench's or a mix's report."""
    rows = [("Link", "Dir", "Rate Mbit/s", "Mbit/s", "Util", "Drops", "Overlimits")]
    for link in figures.get("links", []):
        util = link.get("utilisation")
        shown = "-" if util is None else f"{util * 100:.1f}%"
        if link.get("scope") == "client" and util is not None:
            shown += f" (busiest of {link.get('clients', 0)}; mean {link.get('utilisation_mean', 0) * 100:.1f}%)"
        rows.append((
            str(link.get("link")), str(link.get("direction")), _mbit(link.get("rate_bps")),
            _mbit(link.get("bits_per_s")), shown,
            "-" if link.get("drops") is None else f"{link['drops']:,}",
            "-" if link.get("overlimits") is None else f"{link['overlimits']:,}",
        ))  # fmt: skip
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [f"Network ({figures.get('window_s', 0):g}s window)"]
    lines += ["  " + "  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()
              for r in rows]  # fmt: skip
    tcp = figures.get("tcp", {})
    parts = [f"{side} {v.get('retrans_segs', 0):,} of {v.get('out_segs', 0):,} segments" for side, v in tcp.items()]
    if parts:
        lines.append("  TCP retransmits: " + "; ".join(parts))
    delay = figures.get("delay_line")
    if delay:
        lines.append(f"  Delay line: {delay.get('packets', 0):,} packets, {delay.get('dropped', 0):,} dropped")
    return "\n".join(lines)
