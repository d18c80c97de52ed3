"""The report document → one self-contained HTML page: inline CSS, inline SVG charts, a small inline script.

The page loads nothing: no font, no script and no image from anywhere, and its
Content-Security-Policy forbids it to (only its own two scripts, by hash, may
run). Jinja autoescaping escapes every string of the document; the charts
escape theirs in crest.report.svg.
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

import jinja2
from markupsafe import Markup

from crest.analysis.stats import MIN_TRIALS_FOR_INTERVAL, too_few_for_interval
from crest.report import fmt
from crest.report.bars import grouped_bar_chart, peak_bar_chart
from crest.report.counters import counter_charts
from crest.report.network import network_charts
from crest.report.svg import MARKERS, PALETTE, WIDTH, Axis, Series, el, geometric, line_chart, short_number, strip_chart

_LATENCY = (("p50", "p50"), ("p90", "p90"), ("p99", "p99"), ("p999", "p99.9"))
# Where a configuration label may break when its column is narrow: after each = , _ / (cpus=2 · max_request_workers).
_LABEL_BREAK = re.compile(r"(?<=[=,_/])")


@dataclass
class Chart:
    """One figure: its caption and SVG; `group` is the heading it appears under."""

    group: str
    caption: str
    svg: Markup
    note: str = ""


def render_html(doc: dict[str, Any]) -> str:
    """The whole page as a string."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("crest.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        rps=fmt.rps, signed_rps=fmt.signed_rps, mbytes=fmt.mbytes, mbits=fmt.mbits, ms=fmt.ms, percent=fmt.percent,
        error_rate=fmt.error_rate, cpu=fmt.cpu, number=fmt.number, load=fmt.load, load_number=fmt.load_number,
        interval=fmt.interval, when=fmt.when, duration=fmt.duration, factor=fmt.factor_value, pct=fmt.pct,
        trial_peaks=fmt.trial_peaks, signed_mbytes=fmt.signed_mbytes, index=fmt.index, times=fmt.times,
        plus_minus=fmt.plus_minus, half_width=fmt.half_width, label=breakable, headline=fmt.headline,
        saturation=fmt.saturation,
        cv=fmt.cv,
    )  # fmt: skip
    guard = _asset("guard.js")
    script = _asset("report.js")
    charts = build_charts(doc)
    h2_title, h2_codec = fmt.stream_section_names(doc.get("h2") or [])
    page = env.get_template("report.html.j2").render(
        doc=doc,
        charts=charts,
        groups=list(dict.fromkeys(c.group for c in charts)),
        css=Markup(_asset("report.css")),
        guard=Markup(guard),
        script=Markup(script),
        csp=_csp(guard, script),
        swatches=[_swatch(c["index"]) for c in doc["configurations"]],
        colours=[PALETTE[c["index"] % len(PALETTE)] for c in doc["configurations"]],
        axis=doc["load_axis"],
        ranked=_ranked(doc),
        rps_fmt=fmt.rps,
        signed_mbytes_fmt=fmt.signed_mbytes,
        sweep=doc.get("sweep"),
        sweep_by_index={c["index"]: c for c in (doc.get("sweep") or {}).get("configurations", [])},
        h2_title=h2_title,
        h2_codec=h2_codec,
        h2_both="/" in h2_codec,  # HTTP/2 beside HTTP/3: each row says which it spoke
    )
    return page


def grouped_charts(grouped: dict[str, Any] | None, configs: list[dict[str, Any]]) -> list[Chart]:
    """VeriTest's figure 1, one chart per panel (workload): bars by server in each CPU group, and under
    them each group's percent improvements."""
    if not grouped:
        return []
    index = {c["label"]: c["index"] for c in configs}
    factors = " and ".join(grouped["group_factors"])
    rows = (f"each other {grouped['series_factor']}'s improvement over {grouped['reference']}"
            if grouped["reference_is_baseline"] else
            f"the improvement of {grouped['reference']} over each other {grouped['series_factor']}")  # fmt: skip
    return [
        Chart("Peaks", f"Peaks by {grouped['series_factor']} and {factors}{': ' + p['label'] if p['label'] else ''}"
                       f" · under each group: {rows}, (A − B) ÷ B",
              grouped_bar_chart(f"chart-grouped-{n}", grouped, p, index))
        for n, p in enumerate(grouped["panels"])
    ]  # fmt: skip


def build_charts(doc: dict[str, Any]) -> list[Chart]:
    """Every chart the page shows, in page order; a chart with nothing to plot is left out."""
    configs: list[dict[str, Any]] = doc["configurations"]
    axis_name = doc["load_axis"]
    loads = [p["load"] for c in configs for p in c["points"]]
    label = "content length (bytes)" if axis_name == "size" else f"load ({axis_name})"
    x = Axis(label, log=geometric(loads), fmt=fmt.load_number, unit=axis_name)
    several = any(c["trials"] > 1 for c in configs)
    band_note = " · shaded: 95% CI over trials" if any(c["trials"] >= MIN_TRIALS_FOR_INTERVAL for c in configs) else ""
    if several and any(too_few_for_interval(c["trials"]) for c in configs):
        band_note += f" · no band below {MIN_TRIALS_FOR_INTERVAL} trials"
    charts = [
        Chart("Capacity", f"Requests/s vs load{band_note}",
              line_chart("chart-rps", "Requests per second vs load", x, Axis("req/s", fmt=short_number, unit="req/s", value=fmt.rps),
                         [_series(c, "rps", "rps_ci95", peak=True) for c in configs])),
        Chart("Capacity", f"Throughput vs load{band_note}",
              line_chart("chart-throughput", "Throughput vs load", x, Axis("MB/s", fmt=short_number, unit="MB/s", value=_mb),
                         [_series(c, "throughput_Bps", "throughput_Bps_ci95", scale=1e-6) for c in configs])),
    ]  # fmt: skip
    for key, name in _LATENCY:
        series = [_latency_series(c, key) for c in configs]
        if any(v is not None for s in series for _, v in s.points):
            charts.append(Chart("Latency", f"{name} latency vs load (log scale)",
                                line_chart(f"chart-latency-{key}", f"{name} latency vs load", x,
                                           Axis(f"{name} latency (ms)", log=True, fmt=_ms_tick, unit="ms", value=_ms),
                                           series)))  # fmt: skip
    errors = [_series(c, "error_rate", None, scale=100.0) for c in configs]
    no_errors = all((v or 0) == 0 for s in errors for _, v in s.points)
    charts.append(Chart("Errors and resources", "Error rate vs load",
                        line_chart("chart-errors", "Error rate vs load", x, Axis("errors (% of attempts)", fmt=short_number, unit="%", value=_pct),
                                   errors, note="no errors at any load" if no_errors else "")))  # fmt: skip
    cpu = [_series(c, "target_cpu_pct", None) for c in configs]
    if any(v is not None for s in cpu for _, v in s.points):
        charts.append(Chart("Errors and resources", "Target CPU vs load",
                            line_chart("chart-cpu", "Target CPU vs load", x,
                                       Axis("target CPU (% of its CPUs)", fmt=short_number, unit="%", value=_pct), cpu)))  # fmt: skip
    charts += [Chart("Host counters", caption, svg) for caption, svg in counter_charts(doc)]
    charts += [Chart("Client network", caption, svg) for caption, svg in network_charts(doc)]
    fairness = _fairness_chart(configs, axis_name)
    if fairness is not None:
        charts.append(fairness)
    sweep = _sweep_chart(doc)
    if sweep is not None:
        charts.insert(0, sweep)
    searches = [_capacity_chart(i, search) for i, search in enumerate(doc.get("capacity") or [])]
    charts[:0] = searches
    peaks = doc.get("peaks")
    if peaks:  # VeriTest's figure 1 leads (after a search's or a sweep's own figure), as the seed's summary did
        whisker = " · whiskers: 95% CI over trials" if any(b["ci95"] for b in peaks["bars"]) else ""
        if any(too_few_for_interval(b["n"]) for b in peaks["bars"]):
            whisker += f" · none below {MIN_TRIALS_FOR_INTERVAL} trials"
        index = f" · in brackets: index against {peaks['baseline']} = 1.00" if peaks["baseline"] else ""
        what = "Peak throughput (Mbit/s)" if peaks.get("metric") == "throughput_Bps" else "Peak requests/s"
        at = len(searches) + (sweep is not None)
        charts.insert(at, Chart("Peaks", f"{what} by configuration{whisker}{index}",
                                peak_bar_chart("chart-peaks", peaks)))  # fmt: skip
        charts[at + 1 : at + 1] = grouped_charts(peaks.get("grouped"), configs)
    return charts


# Colours of a capacity chart's series (palette indexes): probes that met the rule, that broke it, the bound.
_MET, _BROKE, _BOUND = 2, 4, 6


def _capacity_chart(number: int, search: dict[str, Any]) -> Chart:
    """A capacity search's probes: the rule's first condition against load, met and broken apart, the
    bound dashed and the answer ringed."""
    margin = search["margins"][0] if search["margins"] else None
    metric = margin["metric"] if margin else "rps"
    scale, y = _capacity_axis(metric)

    def value(probe: dict[str, Any]) -> float | None:
        if metric in ("rps", "error_rate"):
            v = probe[metric]
        elif metric == "conforming":
            v = probe["conforming_share"]
        else:
            v = probe["latency_us"].get(metric)
        return None if v is None else float(v) * scale

    probes = sorted(search["probes"], key=lambda p: p["load"])
    met = Series(_MET, "met the rule", [(p["load"], value(p)) for p in probes if p["passed"]], line=False)
    broke = Series(_BROKE, "broke the rule", [(p["load"], value(p)) for p in probes if not p["passed"]], line=False)
    answer = search["answer"]
    at_answer = [v for p in probes if p["load"] == answer and p["passed"] and (v := value(p)) is not None]
    if answer is not None and at_answer:
        met.peak = (answer, sum(at_answer) / len(at_answer))
    series = [met, broke]
    loads = [p["load"] for p in probes]
    if margin and loads:
        series.append(
            Series(
                _BOUND,
                "bound",
                [(min(loads), margin["bound"] * scale), (max(loads), margin["bound"] * scale)],
                dash=True,
            )
        )
    unit = {"clients": "clients", "connections": "connections", "rate": "req/s"}[search["axis"]]
    x = Axis(f"load ({unit})", log=geometric(loads), fmt=fmt.load_number, unit=unit)
    condition = margin["condition"] if margin else search["rule"]
    svg = line_chart(f"chart-capacity-{number}", f"Capacity search: {condition} vs load", x, y, series)
    answer_text = f"answer {answer:g} {unit}" if answer is not None else "no answer"
    return Chart("Capacity search", f"{search['label']}: {condition} at each probe (green met, red broke, dashed the bound, ringed the {answer_text})", svg)  # fmt: skip


def _capacity_axis(metric: str) -> tuple[float, Axis]:
    """How a rule's metric is plotted: the scale from its stored unit, and its axis."""
    if metric == "rps":
        return 1.0, Axis("req/s", fmt=short_number, unit="req/s", value=fmt.rps)
    if metric == "error_rate":
        return 100.0, Axis("errors (% of attempts)", fmt=short_number, unit="%", value=_pct)
    if metric == "conforming":
        return 100.0, Axis("conforming connections (%)", fmt=short_number, unit="%", value=_pct)
    return 1e-3, Axis(f"{metric} latency (ms)", log=True, fmt=_ms_tick, unit="ms", value=_ms)


def _sweep_chart(doc: dict[str, Any]) -> Chart | None:
    """Throughput vs content length (log x), every configuration overlaid; only for content-length sweeps."""
    sweep = doc.get("sweep")
    if not sweep:
        return None
    series = [
        Series(c["index"], c["label"], [(p["size_bytes"], None if fmt.missing(p["throughput_Bps"])
                                         else p["throughput_Bps"] * 8 / 1e6) for p in c["points"]])
        for c in sweep["configurations"]
    ]  # fmt: skip
    x = Axis("content length (bytes, log scale)", log=True, fmt=short_number, unit="B", decades=True,
             value=lambda v: f"{v:,.0f}")  # fmt: skip
    y = Axis("throughput (Mbit/s)", fmt=short_number, unit="Mbit/s", value=lambda v: f"{v:,.2f}")
    svg = line_chart("chart-sweep", "Throughput vs content length", x, y, series)
    several = any(c["trials"] > 1 for c in sweep["configurations"])
    return Chart(
        "Content length", "Throughput vs content length (log scale)" + (" · mean over trials" if several else ""), svg
    )


def _series(config: dict[str, Any], key: str, ci_key: str | None, *, scale: float = 1.0, peak: bool = False) -> Series:
    points = config["points"]
    values = [(p["load"], None if fmt.missing(p[key]) else p[key] * scale) for p in points]
    band = []
    if ci_key is not None and config["trials"] > 1:
        band = [(p["load"], p[ci_key][0] * scale, p[ci_key][1] * scale) for p in points if p[ci_key]]
    top = None
    if peak:  # ringed at the load the peak table names, on the curve drawn
        top = next(((x, y) for x, y in values if x == config["peak"]["load"] and y is not None), None)
    return Series(config["index"], config["label"], values, band, peak=top)


def _latency_series(config: dict[str, Any], key: str) -> Series:
    values = []
    for p in config["points"]:
        us = p["latency_us"].get(key)
        values.append((p["load"], None if fmt.missing(us) else us / 1000.0))
    return Series(config["index"], config["label"], values)


def _fairness_chart(configs: list[dict[str, Any]], axis_name: str) -> Chart | None:
    rows: list[tuple[Series, list[str]]] = []
    for c in configs:
        f = c["fairness"]
        if not f or not f["mean_rps"]:
            continue
        many_trials = len({cl["trial"] for cl in f["clients"]}) > 1
        points: list[tuple[float, float | None]] = []
        tips: list[str] = []
        for cl in f["clients"]:
            if fmt.missing(cl["share_of_mean"]):
                continue
            share = cl["share_of_mean"] * 100.0
            points.append((share, None))
            who = f"client {cl['client']}" + (f" (trial {cl['trial']})" if many_trials else "")
            tips.append(f"{c['label']} · {who}: {fmt.rps(cl['rps'])} req/s, {share:.0f}% of the mean")
        rows.append((Series(c["index"], c["label"], points), tips))
    if not rows:
        return None
    values = [p[0] for s, _ in rows for p in s.points]
    lo, hi = min(values), max(values)
    span = max(abs(100 - lo), abs(hi - 100), 5.0)
    x = Axis("client req/s, % of the configuration's mean per client", fmt=lambda v: f"{v:.0f}%", zero=False)
    svg = strip_chart("chart-fairness", "Per-client req/s at each configuration's peak", x, rows, 100.0,
                      domain=(max(0.0, 100 - span * 1.15), 100 + span * 1.15), width=2 * WIDTH)  # fmt: skip
    return Chart("Fairness", "Per-client req/s at each configuration's peak load (WebBench client scores)", svg)


def breakable(text: Any) -> Markup:
    """A label (a configuration, a run's setup) escaped, with break opportunities inside its factors, so that a
    table of several configurations fits the page by wrapping its labels instead of scrolling sideways."""
    return Markup("<wbr>").join(_LABEL_BREAK.split(str(text)))


def _ranked(doc: dict[str, Any]) -> list[dict[str, Any]]:
    configs: list[dict[str, Any]] = doc["configurations"]
    if not doc["comparison"]:
        return configs
    by_label = {c["label"]: c for c in configs}
    return [by_label[label] for label in doc["comparison"]["ranking"]]


def _swatch(index: int) -> Markup:
    """The legend's sample of a configuration: its line and its marker."""
    colour = PALETTE[index % len(PALETTE)]
    line = el("line", {"x1": 1, "x2": 25, "y1": 6, "y2": 6, "stroke": colour, "stroke-width": 2})
    shape = MARKERS[index % len(MARKERS)]
    mark: Markup
    if shape == "circle":
        mark = el("circle", {"cx": 13, "cy": 6, "r": 4, "fill": colour})
    else:
        d = {"square": "M9,2 h8 v8 h-8 Z", "triangle": "M13,1 L17.5,10 L8.5,10 Z", "down": "M13,11 L17.5,2 L8.5,2 Z",
             "diamond": "M13,0.5 L18,6 L13,11.5 L8,6 Z", "cross": "M9,2 L17,10 M9,10 L17,2"}[shape]  # fmt: skip
        mark = el("path", {"d": d, "fill": "none" if shape == "cross" else colour, "stroke": colour,
                           "stroke-width": 2 if shape == "cross" else 0})  # fmt: skip
    return el("svg", {"viewBox": "0 0 26 12", "aria-hidden": "true"}, line, mark)


def _csp(*scripts: str) -> str:
    hashes = " ".join(f"'sha256-{base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()}'" for s in scripts)
    return f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src {hashes}; base-uri 'none'; form-action 'none'"


def _asset(name: str) -> str:
    return resources.files("crest.report").joinpath("templates").joinpath(name).read_text(encoding="utf-8")


def _mb(value_MBps: float) -> str:
    return fmt.mbytes(value_MBps * 1e6)


def _ms(value_ms: float) -> str:
    return fmt.ms(value_ms * 1000)


def _pct(value_pct: float) -> str:
    return f"{value_pct:.2f}" if value_pct < 10 else f"{value_pct:.0f}"


def _ms_tick(value: float) -> str:
    if value >= 1:
        return f"{value:,.0f}" if value >= 10 else f"{value:g}"
    return f"{value:g}"
