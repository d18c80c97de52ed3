"""The peak bar charts: one horizontal bar per configuration, its 95% CI over trials as a whisker, the index
against a baseline beside it; and VeriTest's figure 1 itself, each server's bar side by side in every CPU
group with the percent-improvement rows under the groups. Bars are req/s, or Mbit/s for runs judged by
throughput. Draws SVG from the report document's "peaks" part; every string is escaped by
crest.report.svg.el. It must not compute a figure.
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
    """Bars of peak req/s (Mbit/s for runs judged by throughput), highest first, whiskers where there are
    trials, "(0.7871)" when indexed."""
    metric = peaks.get("metric", "rps")
    scale = 8 / 1e6 if metric == "throughput_Bps" else 1.0
    unit = "Mbit/s" if metric == "throughput_Bps" else "req/s"
    bars = sorted((b for b in peaks["bars"] if not fmt.missing(b["value"])), key=lambda b: -float(b["value"]))
    tops = [float(b["ci95"][1]) if b["ci95"] else float(b["value"]) for b in bars]
    ticks = nice_ticks(0.0, (max(tops, default=1.0) * scale) or 1.0)
    span = ticks[-1] or 1.0
    right = width - _RIGHT

    def x(value: float) -> float:
        return _LEFT + (right - _LEFT) * max(0.0, min(value * scale, span)) / span

    height = _TOP + _BOTTOM + _ROW * max(1, len(bars))
    bottom = height - _BOTTOM
    body: list[Markup] = []
    for t in ticks:
        at = coord(x(t / scale))
        body.append(el("line", {"class": "gridline", "x1": at, "x2": at, "y1": _TOP, "y2": bottom}))
        body.append(el("text", {"class": "tick", "x": at, "y": bottom + 16, "text-anchor": "middle"}, short_number(t)))
    axis = "peak throughput, Mbit/s" if metric == "throughput_Bps" else "peak requests per second"
    body.append(el("text", {"class": "axis-label", "x": (_LEFT + right) / 2, "y": height - 6,
                            "text-anchor": "middle"}, axis))  # fmt: skip
    for row, b in enumerate(bars):
        top = _TOP + _ROW * row + (_ROW - _BAR) / 2
        mid = top + _BAR / 2
        colour = PALETTE[b["index"] % len(PALETTE)]
        value = float(b["value"])
        ci = b["ci95"]
        tip = f"{b['label']}: peak {fmt.headline(value, metric)} {unit} at {fmt.load_number(b['load'])}"
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
        text = fmt.headline(value, metric) + (f" ({fmt.index(b['ratio'])})" if b["ratio"] is not None else "")
        end = x(float(ci[1])) if ci else x(value)
        parts.append(el("text", {"class": "tick", "x": coord(end + 6), "y": coord(mid + 4)}, text))
        body.append(el("g", {"class": "series", "data-series": b["index"], "data-label": b["label"]}, *parts))
    if peaks["baseline"] is not None:
        base = next((float(b["value"]) for b in bars if b["label"] == peaks["baseline"]), None)
        if base is not None:
            body.append(el("line", {"class": "reference", "x1": coord(x(base)), "x2": coord(x(base)), "y1": _TOP,
                                    "y2": bottom}, el("title", None, f"baseline {peaks['baseline']} = 1.00")))  # fmt: skip
    body.append(el("line", {"class": "axis", "x1": _LEFT, "x2": right, "y1": bottom, "y2": bottom}))
    title = (
        "Peak throughput by configuration"
        if metric == "throughput_Bps"
        else "Peak requests per second by configuration"
    )
    return chart_svg(chart_id, title, body, height, "bars", width)


_G_LABELS = 210  # room for an improvement row's name, left of the plot
_G_RIGHT = 16
_G_LEGEND = 28
_G_PLOT = 250
_G_GROUP_LABELS = 40
_G_ROW = 18
_G_BOTTOM = 12
_G_FILL = 0.8  # the share of a group's width its bars take


def grouped_bar_chart(chart_id: str, grouped: dict[str, Any], panel: dict[str, Any], configs: dict[str, int],
                      width: int = 2 * WIDTH) -> Markup:  # fmt: skip
    """VeriTest's figure 1 for one panel: each group's bars side by side (one colour per series, as the
    seed's legend), the value over each bar, and under each group its percent improvement rows.
    `configs` maps a configuration's label to its index, so the page's legend buttons hide its bar."""
    metric = grouped["metric"]
    series = [s for s, values in zip(grouped["series"], panel["values"]) if any(v is not None for v in values)]
    values = {s: v for s, v in zip(grouped["series"], panel["values"])}
    labels = {s: c for s, c in zip(grouped["series"], panel["configurations"])}
    groups = panel["groups"]
    tops = [float(v) for s in series for v in values[s] if v is not None]
    scale = 8 / 1e6 if metric == "throughput_Bps" else 1.0  # bars of throughput in Mbit/s
    ticks = nice_ticks(0.0, (max(tops, default=1.0) * scale) or 1.0)
    span = ticks[-1] or 1.0
    left, right = _G_LABELS, width - _G_RIGHT
    top, bottom = _G_LEGEND + 8, _G_LEGEND + 8 + _G_PLOT
    rows = panel["improvements"]
    height = bottom + _G_GROUP_LABELS + _G_ROW * len(rows) + _G_BOTTOM
    slot = (right - left) / max(1, len(groups))
    bar = slot * _G_FILL / max(1, len(series))

    def y(value: float) -> float:
        return bottom - (bottom - top) * max(0.0, min(value * scale, span)) / span

    unit = "Mbit/s" if metric == "throughput_Bps" else "req/s"
    body: list[Markup] = []
    for t in ticks:
        body.append(
            el(
                "line",
                {"class": "gridline", "x1": left, "x2": right, "y1": coord(y(t / scale)), "y2": coord(y(t / scale))},
            )
        )
        body.append(el("text", {"class": "tick", "x": left - 6, "y": coord(y(t / scale) + 4), "text-anchor": "end"},
                       short_number(t)))  # fmt: skip
    body.append(el("text", {"class": "axis-label", "x": left - 48, "y": coord((top + bottom) / 2), "text-anchor": "middle",
                            "transform": f"rotate(-90 {left - 48} {coord((top + bottom) / 2)})"}, f"peak {unit}"))  # fmt: skip
    at = left
    for s in series:  # the legend: one swatch per series, in the table's order
        colour = PALETTE[grouped["series"].index(s) % len(PALETTE)]
        body.append(
            el("rect", {"x": coord(at), "y": 8, "width": 12, "height": 12, "fill": colour, "fill-opacity": "0.85"})
        )
        body.append(el("text", {"class": "tick", "x": coord(at + 16), "y": 18}, clip(s, 34)))
        at += 16 + 7 * min(len(s), 34) + 18
    for g in range(len(groups)):
        x0 = left + slot * g + slot * (1 - _G_FILL) / 2
        for k, s in enumerate(series):
            value = values[s][g]
            if value is None:
                continue
            colour = PALETTE[grouped["series"].index(s) % len(PALETTE)]
            x = x0 + bar * k
            label = labels[s][g] or s
            text = fmt.headline(value, metric)
            parts = [
                el("rect", {"class": "bar", "x": coord(x + 1), "y": coord(y(float(value))), "width": coord(max(1.0, bar - 2)),
                            "height": coord(bottom - y(float(value))), "fill": colour, "fill-opacity": "0.85"},
                   el("title", None, f"{label}: peak {text} {unit}")),
                el("text", {"class": "tick bar-value", "x": coord(x + bar / 2), "y": coord(y(float(value)) - 4),
                            "text-anchor": "middle"}, text),
            ]  # fmt: skip
            body.append(
                el("g", {"class": "series", "data-series": configs.get(label, -1), "data-label": label}, *parts)
            )
        middle = left + slot * (g + 0.5)
        for line, words in enumerate(panel["group_titles"][g]):
            body.append(el("text", {"class": "tick", "x": coord(middle), "y": bottom + 16 + 14 * line,
                                    "text-anchor": "middle"}, clip(words, 30)))  # fmt: skip
    body.append(el("line", {"class": "axis", "x1": left, "x2": right, "y1": bottom, "y2": bottom}))
    for r, row in enumerate(rows):  # the seed's percent-improvement rows, one figure under each group
        base = bottom + _G_GROUP_LABELS + _G_ROW * r + 13
        body.append(el("text", {"class": "row-label", "x": left - 8, "y": base, "text-anchor": "end"},
                       clip(f"{row['a']} over {row['b']}", 32), el("title", None, f"{row['a']} over {row['b']}")))  # fmt: skip
        for g, pct in enumerate(row["pct"]):
            body.append(el("text", {"class": "tick", "x": coord(left + slot * (g + 0.5)), "y": base,
                                    "text-anchor": "middle"}, fmt.pct(pct)))  # fmt: skip
    title = f"Peak {unit} by {' and '.join(grouped['group_factors'])}" + (
        f", {panel['label']}" if panel["label"] else ""
    )
    return chart_svg(chart_id, title, body, height, "bars grouped", width)
