"""Charts drawn on the server as inline SVG: they render without JavaScript, print, and load nothing.

Every string that reaches the markup goes through `el()`, which escapes text
and attribute values; nothing here concatenates unescaped input. The page's
script only enhances (hover read-outs, hiding series) using the `data-*`
attributes written here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from markupsafe import Markup, escape

# Okabe & Ito's colour-blind-safe palette, the most distinct first (yellow, weak on white, last);
# each series also has its own marker shape, so print in grey still tells them apart.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#000000", "#F0E442")
MARKERS = ("circle", "square", "triangle", "diamond", "down", "cross", "circle", "square")

WIDTH = 560
HEIGHT = 300
_MARGIN_LEFT = 62
_MARGIN_RIGHT = 16
_MARGIN_TOP = 14
_MARGIN_BOTTOM = 46
_MARK_R = 3.6
_TICKS = 6
_BAND_OPACITY = 0.24  # one band alone; n overlapping bands get 0.24 / √n each
_BAND_HEADROOM = 1.25  # a band may stretch the y axis to 1.25 × the highest line, no further
_STRIP_LEFT = 170  # room for a configuration's name before its row

Formatter = Callable[[float], str]


@dataclass
class Series:
    """One configuration's line: points (x, y or None for a gap), an optional band (x, low, high)."""

    index: int  # the configuration's position: picks colour and marker
    label: str
    points: list[tuple[float, float | None]]
    band: list[tuple[float, float, float]] = field(default_factory=list)
    peak: tuple[float, float] | None = None  # ringed, with its value in the tooltip
    dash: bool = False
    line: bool = True  # False: markers only (a capacity search's probes are points, not a curve)


@dataclass
class Axis:
    """What an axis shows: its label (with units), whether it is logarithmic, how ticks read."""

    label: str
    log: bool = False
    fmt: Formatter = field(default=lambda v: short_number(v))
    zero: bool = True  # a linear axis starts at 0 (capacity is read against zero)
    unit: str = ""  # appended to a value in read-outs: "24 clients"
    value: Formatter | None = None  # how a read-out shows a value (default: like a tick)
    decades: bool = False  # a log x axis ticks at powers of ten (content lengths), not of two (loads)

    def read(self, value: float) -> str:
        """A value as hover read-outs and tooltips show it, with its unit."""
        return f"{(self.value or self.fmt)(value)} {self.unit}".strip()


def el(tag: str, attrs: dict[str, object] | None = None, *children: str | Markup) -> Markup:
    """One element; text children and every attribute value are escaped, Markup children are kept."""
    parts = [tag]
    for name, value in (attrs or {}).items():
        if value is None or value is False:
            continue
        parts.append(f'{name}="{escape(str(value))}"')
    inner = Markup("").join(c if isinstance(c, Markup) else escape(c) for c in children)
    return Markup(f"<{' '.join(parts)}>{inner}</{tag}>")


def short_number(value: float) -> str:
    """Tick labels: 0, 250, 1.5k, 20k, 1.2M; decimals only when the value needs them."""
    a = abs(value)
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if a >= limit:
            return f"{value / limit:.3g}{suffix}"
    if a == 0 or a >= 1:
        return f"{value:.4g}"
    return f"{value:.2g}"


def nice_ticks(low: float, high: float, count: int = _TICKS) -> list[float]:
    """Round tick values (1, 2, 2.5 or 5 × 10^k steps) covering [low, high]."""
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        high = low + 1.0
    raw = (high - low) / max(1, count - 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.floor(low / step + 1e-9) * step
    ticks: list[float] = []
    value = start
    while value < high + step * 0.999:
        ticks.append(round(value, 12))
        value += step
    return ticks


def log_ticks(low: float, high: float, base2: bool = False) -> list[float]:
    """Tick values for a log axis: powers of two (loads) or 1-2-5 × 10^k (latencies)."""
    low, high = max(low, 1e-12), max(high, low * 1.0001)
    if base2:
        first, last = math.floor(math.log2(low)), math.ceil(math.log2(high))
        return [2.0**k for k in range(first, last + 1)]
    ticks: list[float] = []
    for k in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1):
        ticks.extend(m * 10.0**k for m in (1, 2, 5))
    inside = [t for t in ticks if low / 1.0001 <= t <= high * 1.0001]
    below = [t for t in ticks if t < low]
    above = [t for t in ticks if t > high]
    return ([below[-1]] if below else []) + inside + ([above[0]] if above else [])


class _Scale:
    def __init__(self, low: float, high: float, start: float, end: float, log: bool) -> None:
        self.log = log
        self.low, self.high = (math.log(low), math.log(high)) if log else (low, high)
        self.start, self.end = start, end

    def clamp(self, value: float) -> float:
        """The value moved into the axis' domain (for clipping bands to the plot)."""
        low, high = (math.exp(self.low), math.exp(self.high)) if self.log else (self.low, self.high)
        return min(max(value, min(low, high)), max(low, high))

    def __call__(self, value: float) -> float:
        v = math.log(max(value, 1e-12)) if self.log else value
        span = self.high - self.low or 1.0
        return self.start + (v - self.low) / span * (self.end - self.start)


def geometric(values: Sequence[float]) -> bool:
    """Whether load points grow by a factor (1, 2, 4, 8 …) rather than a step: then x is logarithmic."""
    xs = sorted({v for v in values if v > 0})
    if len(xs) < 4 or xs[-1] / xs[0] < 16:
        return False
    ratios = sorted(b / a for a, b in zip(xs, xs[1:]))
    return ratios[len(ratios) // 2] >= 1.5


def line_chart(chart_id: str, title: str, x: Axis, y: Axis, series: Sequence[Series], note: str = "") -> Markup:
    """A line chart of every series over a shared x axis, with bands, peak rings and a legend-free body."""
    xs = [p[0] for s in series for p in s.points]
    ys = [v for s in series for _, v in s.points if v is not None and math.isfinite(v)]
    # Bands widen the axis only so far: with 2 trials a 95% CI spans ±12.7 sd/√2, and
    # letting it set the scale would flatten every line. What sticks out is clipped.
    cap = max(ys, default=0.0) * _BAND_HEADROOM
    ys += [min(hi, cap) for s in series for _, _, hi in s.band if math.isfinite(hi)]
    x_ticks, x_scale = _x_axis(x, xs)
    y_ticks, y_scale = _y_axis(y, ys)
    body: list[Markup] = [_grid(x_ticks, y_ticks, x_scale, y_scale, x, y)]
    # Overlapping bands add up: the more of them, the fainter each, so lines stay readable.
    banded = sum(1 for s in series if s.band)
    opacity = _BAND_OPACITY / math.sqrt(max(1, banded))
    for s in series:
        body.append(_series(s, x_scale, y_scale, x, y, opacity))
    if note:
        body.append(el("text", {"class": "note", "x": (_MARGIN_LEFT + WIDTH - _MARGIN_RIGHT) / 2,
                                "y": _MARGIN_TOP + 24, "text-anchor": "middle"}, note))  # fmt: skip
    return chart_svg(chart_id, title, body)


def strip_chart(
    chart_id: str,
    title: str,
    x: Axis,
    rows: Sequence[tuple[Series, list[str]]],
    reference: float,
    domain: tuple[float, float] | None = None,
    width: int = WIDTH,
) -> Markup:
    """One row per series, one mark per value (e.g. per-client req/s), a vertical reference line.

    `rows` pairs each series (its points are (value, None): y is unused) with the tooltip of each mark.
    """
    values = [p[0] for s, _ in rows for p in s.points]
    lo = min([*values, reference]) if values else 0.0
    hi = max([*values, reference]) if values else 1.0
    if domain is not None:
        lo, hi = min(lo, domain[0]), max(hi, domain[1])
    ticks = nice_ticks(0.0 if x.zero else lo, hi)
    left = _STRIP_LEFT
    scale = _Scale(ticks[0], ticks[-1], left, width - _MARGIN_RIGHT, False)
    height = _MARGIN_TOP + _MARGIN_BOTTOM + 34 * max(1, len(rows))
    body: list[Markup] = []
    bottom = height - _MARGIN_BOTTOM
    for t in ticks:
        px = scale(t)
        body.append(
            el("line", {"class": "gridline", "x1": coord(px), "x2": coord(px), "y1": _MARGIN_TOP, "y2": bottom})
        )
        body.append(el("text", {"class": "tick", "x": coord(px), "y": bottom + 16, "text-anchor": "middle"}, x.fmt(t)))
    body.append(el("text", {"class": "axis-label", "x": (left + width - _MARGIN_RIGHT) / 2,
                            "y": height - 8, "text-anchor": "middle"}, x.label))  # fmt: skip
    ref = scale(reference)
    body.append(el("line", {"class": "reference", "x1": coord(ref), "x2": coord(ref), "y1": _MARGIN_TOP, "y2": bottom}))
    for row, (s, tips) in enumerate(rows):
        cy = _MARGIN_TOP + 17 + 34 * row
        marks: list[Markup] = []
        count = len(s.points)
        for i, ((value, _), tip) in enumerate(zip(s.points, tips)):
            jitter = ((i * 7) % 9 - 4) * 2.2 if count > 1 else 0.0
            marks.append(_marker(s.index, scale(value), cy + jitter, tip, {"data-x": s.label, "data-v": tip}))
        label = el("text", {"class": "row-label", "x": left - 10, "y": cy + 4, "text-anchor": "end"},
                   clip(s.label, 24))  # fmt: skip
        body.append(el("g", _series_attrs(s), label, *marks))
    return chart_svg(chart_id, title, body, height, kind="strip", width=width)


def _x_axis(axis: Axis, xs: list[float]) -> tuple[list[float], _Scale]:
    lo, hi = (min(xs), max(xs)) if xs else (0.0, 1.0)
    if axis.log and lo > 0:
        if axis.decades:
            ticks = [10.0**k for k in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)]
        else:
            ticks = log_ticks(lo, hi, base2=True)
        return ticks, _Scale(lo, hi, _MARGIN_LEFT + 8, WIDTH - _MARGIN_RIGHT - 8, True)
    axis.log = False
    ticks = [t for t in nice_ticks(0.0 if axis.zero else lo, hi) if t <= hi * 1.0001 or hi == lo]
    start = ticks[0] if axis.zero else lo
    if hi <= start:
        hi = start + 1.0
    return ticks, _Scale(start, hi, _MARGIN_LEFT + 8, WIDTH - _MARGIN_RIGHT - 8, False)


def _y_axis(axis: Axis, ys: list[float]) -> tuple[list[float], _Scale]:
    top, bottom = _MARGIN_TOP, HEIGHT - _MARGIN_BOTTOM
    positive = [v for v in ys if v > 0]
    if axis.log and positive:
        ticks = log_ticks(min(positive), max(positive))
        return ticks, _Scale(ticks[0], ticks[-1], bottom, top, True)
    axis.log = False
    hi = max(ys) if ys else 1.0
    lo = 0.0 if axis.zero else (min(ys) if ys else 0.0)
    ticks = nice_ticks(lo, hi if hi > lo else lo + 1.0)
    return ticks, _Scale(ticks[0], ticks[-1], bottom, top, False)


def _grid(x_ticks: list[float], y_ticks: list[float], xs: _Scale, ys: _Scale, x: Axis, y: Axis) -> Markup:
    top, bottom = _MARGIN_TOP, HEIGHT - _MARGIN_BOTTOM
    left, right = _MARGIN_LEFT, WIDTH - _MARGIN_RIGHT
    parts: list[Markup] = []
    for t in y_ticks:
        py = ys(t)
        parts.append(el("line", {"class": "gridline", "x1": left, "x2": right, "y1": coord(py), "y2": coord(py)}))
        parts.append(el("text", {"class": "tick", "x": left - 6, "y": coord(py + 4), "text-anchor": "end"}, y.fmt(t)))
    for t in x_ticks:
        px = xs(t)
        if px < left - 1 or px > right + 1:
            continue
        parts.append(
            el("line", {"class": "tickmark", "x1": coord(px), "x2": coord(px), "y1": bottom, "y2": bottom + 4})
        )
        parts.append(el("text", {"class": "tick", "x": coord(px), "y": bottom + 17, "text-anchor": "middle"}, x.fmt(t)))
    parts.append(el("line", {"class": "axis", "x1": left, "x2": right, "y1": bottom, "y2": bottom}))
    parts.append(el("text", {"class": "axis-label", "x": (left + right) / 2, "y": HEIGHT - 8,
                             "text-anchor": "middle"}, x.label))  # fmt: skip
    mid = (top + bottom) / 2
    parts.append(el("text", {"class": "axis-label", "x": 14, "y": coord(mid), "text-anchor": "middle",
                             "transform": f"rotate(-90 14 {coord(mid)})"}, y.label))  # fmt: skip
    return el("g", {"class": "frame"}, *parts)


def _series(s: Series, xs: _Scale, ys: _Scale, x: Axis, y: Axis, band_opacity: float = 0.2) -> Markup:
    parts: list[Markup] = []
    if s.band:
        upper = [f"{coord(xs(bx))},{coord(ys(ys.clamp(hi)))}" for bx, _, hi in s.band]
        lower = [f"{coord(xs(bx))},{coord(ys(ys.clamp(lo)))}" for bx, lo, _ in reversed(s.band)]
        parts.append(el("path", {"class": "band", "d": "M" + " L".join(upper + lower) + " Z",
                                 "fill": PALETTE[s.index % len(PALETTE)], "fill-opacity": f"{band_opacity:.3f}"}))  # fmt: skip
    segments: list[list[str]] = [[]]
    for px, py in s.points:
        if py is None or not math.isfinite(py) or (ys.log and py <= 0):
            segments.append([])
            continue
        segments[-1].append(f"{coord(xs(px))},{coord(ys(py))}")
    d = " ".join("M" + " L".join(seg) for seg in segments if seg)
    if d and s.line:
        parts.append(el("path", {"class": "line" + (" dashed" if s.dash else ""), "d": d,
                                 "stroke": PALETTE[s.index % len(PALETTE)]}))  # fmt: skip
    for px, py in s.points:
        if py is None or not math.isfinite(py) or (ys.log and py <= 0):
            continue
        at, value = x.read(px), y.read(py)
        parts.append(_marker(s.index, xs(px), ys(py), f"{s.label} · {at}: {value}", {"data-x": at, "data-v": value}))
    if s.peak is not None:
        cx, cy = xs(s.peak[0]), ys(s.peak[1])
        parts.append(el("circle", {"class": "peak", "cx": coord(cx), "cy": coord(cy), "r": 8,
                                   "stroke": PALETTE[s.index % len(PALETTE)]},
                        el("title", None, f"{s.label}: peak {y.read(s.peak[1])} at {x.read(s.peak[0])}")))  # fmt: skip
    return el("g", _series_attrs(s), *parts)


def _series_attrs(s: Series) -> dict[str, object]:
    return {"class": "series", "data-series": s.index, "data-label": s.label}


def _marker(index: int, cx: float, cy: float, tip: str, data: dict[str, object]) -> Markup:
    shape = MARKERS[index % len(MARKERS)]
    colour = PALETTE[index % len(PALETTE)]
    r = _MARK_R
    attrs: dict[str, object] = {"class": "mark", "fill": colour, **data}
    title = el("title", None, tip)
    if shape == "circle":
        return el("circle", {**attrs, "cx": coord(cx), "cy": coord(cy), "r": r}, title)
    paths = {
        "square": f"M{coord(cx - r)},{coord(cy - r)} h{coord(2 * r)} v{coord(2 * r)} h{coord(-2 * r)} Z",
        "triangle": f"M{coord(cx)},{coord(cy - r * 1.25)} L{coord(cx + r * 1.15)},{coord(cy + r * 0.9)} L{coord(cx - r * 1.15)},{coord(cy + r * 0.9)} Z",
        "down": f"M{coord(cx)},{coord(cy + r * 1.25)} L{coord(cx + r * 1.15)},{coord(cy - r * 0.9)} L{coord(cx - r * 1.15)},{coord(cy - r * 0.9)} Z",
        "diamond": f"M{coord(cx)},{coord(cy - r * 1.35)} L{coord(cx + r * 1.2)},{coord(cy)} L{coord(cx)},{coord(cy + r * 1.35)} L{coord(cx - r * 1.2)},{coord(cy)} Z",
        "cross": f"M{coord(cx - r)},{coord(cy - r)} L{coord(cx + r)},{coord(cy + r)} M{coord(cx - r)},{coord(cy + r)} L{coord(cx + r)},{coord(cy - r)}",
    }
    if shape == "cross":
        attrs = {**attrs, "class": "mark cross", "stroke": colour}
    return el("path", {**attrs, "d": paths[shape]}, title)


def chart_svg(
    chart_id: str, title: str, body: list[Markup], height: int = HEIGHT, kind: str = "line", width: int = WIDTH
) -> Markup:
    return el(
        "svg",
        {"class": f"chart {kind}", "id": chart_id, "viewBox": f"0 0 {width} {height}", "role": "img",
         "aria-label": title, "preserveAspectRatio": "xMidYMid meet"},
        el("title", None, title),
        *body,
    )  # fmt: skip


def clip(text: str, width_chars: int) -> str:
    return text if len(text) <= width_chars else text[: width_chars - 1] + "…"


def coord(value: float) -> str:
    return f"{value:.1f}"


_LEGEND_ROW = 18
_LEGEND_CHAR_W = 6.6  # an estimate of one legend character's width at the chart's font size


@dataclass
class Kind:
    """One quantity of a kind chart (CPU user time, retransmits/s): its name, colour and points."""

    label: str
    colour: str
    points: list[tuple[float, float | None]]
    dash: bool = False


def kind_chart(
    chart_id: str, title: str, x: Axis, y: Axis, kinds: Sequence[Kind], *, stacked: bool = False, note: str = ""
) -> Markup:
    """Several quantities over a shared x axis, each in its own colour, named in a legend above the plot;
    `stacked`: areas on one another (the parts of a whole, e.g. CPU time by kind). Its series are not
    configurations: their `data-series` never matches the page legend's buttons."""
    legend, rows = _kind_legend(kinds)
    tops: list[list[tuple[float, float | None, float]]] = []  # (x, own value, drawn top) per kind
    base: dict[float, float] = {}
    for k in kinds:
        row = []
        for px, v in k.points:
            top = (base.get(px, 0.0) + (v or 0.0)) if stacked else (v if v is not None else 0.0)
            row.append((px, v, top))
            if stacked:
                base[px] = top
        tops.append(row)
    xs = [px for k in kinds for px, _ in k.points]
    ys = [top for row in tops for _, v, top in row if v is not None and math.isfinite(top)]
    x_ticks, x_scale = _x_axis(x, xs)
    y_ticks, y_scale = _y_axis(y, ys)
    if y_scale.log:  # nothing to draw for a zero on a log axis
        tops = [[(px, v if v is not None and v > 0 else None, top) for px, v, top in row] for row in tops]
    body: list[Markup] = [_grid(x_ticks, y_ticks, x_scale, y_scale, x, y)]
    below: dict[float, float] = {}
    for i, (k, row) in enumerate(zip(kinds, tops)):
        parts: list[Markup] = []
        if stacked and row:
            upper = [f"{coord(x_scale(px))},{coord(y_scale(top))}" for px, _, top in row]
            lower = [f"{coord(x_scale(px))},{coord(y_scale(below.get(px, 0.0)))}" for px, _, _ in reversed(row)]
            parts.append(el("path", {"class": "area", "d": "M" + " L".join(upper + lower) + " Z", "fill": k.colour,
                                     "fill-opacity": "0.85"}))  # fmt: skip
            below.update({px: top for px, _, top in row})
        else:
            path = " L".join(f"{coord(x_scale(px))},{coord(y_scale(v))}" for px, v, _ in row if v is not None)
            if path:
                parts.append(el("path", {"class": "line" + (" dashed" if k.dash else ""), "d": "M" + path,
                                         "stroke": k.colour}))  # fmt: skip
        for px, v, top in row:
            if v is None:
                continue
            at, value = x.read(px), y.read(v)
            parts.append(el("circle", {"class": "mark", "cx": coord(x_scale(px)), "cy": coord(y_scale(top)),
                                       "r": 2.6 if stacked else _MARK_R, "fill": k.colour, "data-x": at,
                                       "data-v": value}, el("title", None, f"{k.label} · {at}: {value}")))  # fmt: skip
        body.append(el("g", {"class": "series", "data-series": f"kind-{i}", "data-label": k.label}, *parts))
    if note:
        body.append(el("text", {"class": "note", "x": (_MARGIN_LEFT + WIDTH - _MARGIN_RIGHT) / 2,
                                "y": _MARGIN_TOP + 24, "text-anchor": "middle"}, note))  # fmt: skip
    shift = rows * _LEGEND_ROW + 4
    plot = el("g", {"transform": f"translate(0 {shift})"}, *body)
    return chart_svg(chart_id, title, [legend, plot], HEIGHT + shift, kind="kinds")


def _kind_legend(kinds: Sequence[Kind]) -> tuple[Markup, int]:
    """The legend row(s) of a kind chart, wrapped to the chart's width, and how many rows it took."""
    items: list[Markup] = []
    px, row = float(_MARGIN_LEFT), 0
    for k in kinds:
        width = 16 + len(k.label) * _LEGEND_CHAR_W + 14
        if px + width > WIDTH - _MARGIN_RIGHT and px > _MARGIN_LEFT:
            px, row = float(_MARGIN_LEFT), row + 1
        cy = 10 + row * _LEGEND_ROW
        if k.dash:
            items.append(el("line", {"class": "line dashed", "x1": coord(px), "x2": coord(px + 12), "y1": cy, "y2": cy,
                                     "stroke": k.colour}))  # fmt: skip
        else:
            items.append(
                el("rect", {"x": coord(px), "y": cy - 5, "width": 11, "height": 11, "rx": 2, "fill": k.colour})
            )
        items.append(el("text", {"class": "legend-label", "x": coord(px + 16), "y": cy + 4}, k.label))
        px += width
    return el("g", {"class": "kind-legend"}, *items), row + 1
