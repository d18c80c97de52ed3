"""The peak bar chart (VeriTest's figure 1): one horizontal bar per configuration, its 95% CI over trials as
a whisker, the index against a baseline beside it. Draws SVG from the report document's "peaks" part;
every string is escaped by crest.report.svg.el. It must not compute a figure.
"""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from crest.report import fmt
from crest.report.svg import PALETTE, WIDTH, chart_svg, clip, coord, el, nice_ticks, short_number

_LEFT = 190  # room for a configuration's name
_RIGHT = 90  # room for the value printed after the bar
_TOP = 10
_BOTTOM = 40
_ROW = 30
_BAR = 18


def peak_bar_chart(chart_id: str, peaks: dict[str, Any], width: int = 2 * WIDTH) -> Markup:
    """Bars of peak req/s, highest first, whiskers where there are trials, "×0.79" when indexed."""
    bars = sorted((b for b in peaks["bars"] if not fmt.missing(b["rps"])), key=lambda b: -float(b["rps"]))
    tops = [float(b["ci95"][1]) if b["ci95"] else float(b["rps"]) for b in bars]
    ticks = nice_ticks(0.0, max(tops, default=1.0) or 1.0)
    span = ticks[-1] or 1.0
    right = width - _RIGHT

    def x(value: float) -> float:
        return _LEFT + (right - _LEFT) * max(0.0, min(value, span)) / span

    height = _TOP + _BOTTOM + _ROW * max(1, len(bars))
    bottom = height - _BOTTOM
    body: list[Markup] = []
    for t in ticks:
        body.append(el("line", {"class": "gridline", "x1": coord(x(t)), "x2": coord(x(t)), "y1": _TOP, "y2": bottom}))
        body.append(el("text", {"class": "tick", "x": coord(x(t)), "y": bottom + 16, "text-anchor": "middle"},
                       short_number(t)))  # fmt: skip
    body.append(el("text", {"class": "axis-label", "x": (_LEFT + right) / 2, "y": height - 6,
                            "text-anchor": "middle"}, "peak requests per second"))  # fmt: skip
    for row, b in enumerate(bars):
        top = _TOP + _ROW * row + (_ROW - _BAR) / 2
        mid = top + _BAR / 2
        colour = PALETTE[b["index"] % len(PALETTE)]
        value = float(b["rps"])
        ci = b["ci95"]
        tip = f"{b['label']}: peak {fmt.rps(value)} req/s at {fmt.load_number(b['load'])}"
        interval = fmt.mean_interval(ci, b["n"])
        if interval:
            tip += f", {interval} over {b['n']} trials" if ci else f", {interval}"
        if b["ratio"] is not None:
            tip += f", index {fmt.index(b['ratio'])}"
        parts = [
            el("text", {"class": "row-label", "x": _LEFT - 8, "y": coord(mid + 4), "text-anchor": "end"},
               clip(b["label"], 28)),
            el("rect", {"class": "bar", "x": _LEFT, "y": coord(top), "width": coord(x(value) - _LEFT), "height": _BAR,
                        "fill": colour, "fill-opacity": "0.85"}, el("title", None, tip)),
        ]  # fmt: skip
        if ci:
            lo, hi = x(float(ci[0])), x(float(ci[1]))
            parts.append(el("path", {"class": "whisker", "d": f"M{coord(lo)},{coord(mid)} H{coord(hi)} M{coord(lo)},{coord(mid - 5)}"
                                     f" V{coord(mid + 5)} M{coord(hi)},{coord(mid - 5)} V{coord(mid + 5)}",
                                     "stroke": "#222", "stroke-width": 1.4, "fill": "none"}))  # fmt: skip
        text = fmt.rps(value) + (f" ({fmt.index(b['ratio'])})" if b["ratio"] is not None else "")
        end = x(float(ci[1])) if ci else x(value)
        parts.append(el("text", {"class": "tick", "x": coord(end + 6), "y": coord(mid + 4)}, text))
        body.append(el("g", {"class": "series", "data-series": b["index"], "data-label": b["label"]}, *parts))
    if peaks["baseline"] is not None:
        base = next((float(b["rps"]) for b in bars if b["label"] == peaks["baseline"]), None)
        if base is not None:
            body.append(el("line", {"class": "reference", "x1": coord(x(base)), "x2": coord(x(base)), "y1": _TOP,
                                    "y2": bottom}, el("title", None, f"baseline {peaks['baseline']} = 1.00")))  # fmt: skip
    body.append(el("line", {"class": "axis", "x1": _LEFT, "x2": right, "y1": bottom, "y2": bottom}))
    return chart_svg(chart_id, "Peak requests per second by configuration", body, height, "bars", width)
