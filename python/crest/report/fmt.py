"""How numbers read in reports (HTML, Markdown, terminal); pure functions returning plain text.

Sizes are decimal SI (1 MB = 10^6 bytes), as everywhere in crest. A missing
value (None or NaN) reads "–" so a table never shows "nan".
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timezone
from typing import Any

from crest.analysis.stats import MIN_TRIALS_FOR_INTERVAL, clipped_at_zero, too_few_for_interval
from crest.analysis.summary import PEAK_ONLY_SHAPE, SINGLE_POINT_SHAPE
from crest.verdicts import BOUND_WORDS

DASH = "–"

LOAD_UNITS = {"clients": ("client", "clients"), "threads": ("thread", "threads"),
              "connections": ("connection", "connections"), "size": ("B", "B")}  # fmt: skip


def missing(value: Any) -> bool:
    """None, NaN and infinities are "no value"."""
    return value is None or (isinstance(value, float) and not math.isfinite(value))


def rps(value: Any) -> str:
    """Requests per second: 41,230 (one decimal below 100: 12.5)."""
    if missing(value):
        return DASH
    v = float(value)
    text = f"{abs(v):,.1f}" if abs(v) < 100 else f"{abs(v):,.0f}"
    return ("−" if v < 0 and text.strip("0.,") else "") + text


def signed_rps(value: Any) -> str:
    """A difference in requests per second, always signed: +3,120 or −45.2."""
    if missing(value):
        return DASH
    text = rps(abs(float(value)))
    return ("−" if float(value) < 0 else "+") + text


def mbytes(value_Bps: Any) -> str:
    """Throughput in MB/s: 32.15 (three significant digits at least)."""
    if missing(value_Bps):
        return DASH
    v = float(value_Bps) / 1e6
    return f"{v:,.2f}" if abs(v) < 100 else f"{v:,.1f}"


def mbits(value_Bps: Any) -> str:
    """Throughput in Mbit/s: 257.2."""
    if missing(value_Bps):
        return DASH
    v = float(value_Bps) * 8 / 1e6
    return f"{v:,.2f}" if abs(v) < 10 else f"{v:,.1f}"


def ms(value_us: Any) -> str:
    """A latency in milliseconds with sensible precision: 0.412, 3.10, 48.2, 1,204."""
    if missing(value_us):
        return DASH
    v = float(value_us) / 1000
    if v < 1:
        return f"{v:.3f}"
    if v < 10:
        return f"{v:.2f}"
    if v < 100:
        return f"{v:.1f}"
    return f"{v:,.0f}"


def percent(value: Any, *, signed: bool = False, digits: int = 0) -> str:
    """A fraction as a percentage: 0.231 → "23%" (signed: "+23%", "−4%")."""
    if missing(value):
        return DASH
    p = float(value) * 100
    text = f"{abs(p):,.{digits}f}%"
    if signed:
        return ("−" if p < 0 and text.strip("0.%") else "+") + text
    return ("−" if p < 0 else "") + text


def error_rate(value: Any) -> str:
    """An error rate: "0" when none, else a percentage with enough digits to be non-zero."""
    if missing(value):
        return DASH
    v = float(value)
    if v == 0:
        return "0"
    p = v * 100
    if p >= 10:
        return f"{p:.0f}%"
    if p >= 1:
        return f"{p:.1f}%"
    if p >= 0.01:
        return f"{p:.2f}%"
    return "<0.01%"


def cpu(value: Any) -> str:
    """A CPU utilisation in percent: 87%."""
    if missing(value):
        return DASH
    return f"{float(value):.0f}%"


def number(value: Any, digits: int = 2) -> str:
    """A plain number (speedup, ratio): 1.87."""
    if missing(value):
        return DASH
    return f"{float(value):,.{digits}f}"


def load(value: Any, axis: str = "clients") -> str:
    """A load point with its unit: "1 client", "48 clients", "2.5 threads"."""
    if missing(value):
        return DASH
    one, many = LOAD_UNITS.get(axis, (axis, axis))
    v = float(value)
    text = f"{v:,.0f}" if v == int(v) else f"{v:,.1f}"
    return f"{text} {one if v == 1 else many}"


def load_number(value: Any) -> str:
    """A load point without its unit: 48."""
    if missing(value):
        return DASH
    v = float(value)
    return f"{v:,.0f}" if v == int(v) else f"{v:,.1f}"


def trial_peaks(peak: dict[str, Any], axis: str = "clients", *, loads: bool = True) -> str:
    """The spread of the trials' own peaks beside the mean curve's: "4,700–5,608 at 24–28 clients"
    (without the loads: "4,700–5,608"); a dash with one trial (its own peak is the peak)."""
    values = peak["trial_peaks"]
    if len(values) < 2 or missing(peak["trial_peaks_min"]):
        return DASH
    if not loads:
        return f"{rps(peak['trial_peaks_min'])}–{rps(peak['trial_peaks_max'])}"
    where = [v for v in peak["trial_peak_loads"] if not missing(v)]
    low, high = (min(where), max(where)) if where else (None, None)
    at = load(low, axis) if low == high else f"{load_number(low)}–{load(high, axis)}"
    return f"{rps(peak['trial_peaks_min'])}–{rps(peak['trial_peaks_max'])} at {at}"


def interval(pair: Any, fmt: Any = None) -> str:
    """A confidence interval: "+2,400 to +3,800" (fmt formats each end; signed req/s by default)."""
    if not pair or any(missing(v) for v in pair):
        return DASH
    f = fmt or signed_rps
    return f"{f(pair[0])} to {f(pair[1])}"


def no_interval(n: int, fix: str = f"--repeat {MIN_TRIALS_FOR_INTERVAL} or more") -> str:
    """What stands where a mean of n trials has no interval (stats.too_few_for_interval), with its fix."""
    return f"too few trials for an interval (n={n}; {fix})"


def mean_interval(pair: Any, n: int, fmt: Any = None, fix: str = f"--repeat {MIN_TRIALS_FOR_INTERVAL} or more") -> str:
    """A mean's 95% interval in words: "95% CI 18,000 to 24,000"; a lower end the analysis clipped at 0
    says so; below stats.MIN_TRIALS_FOR_INTERVAL trials, no_interval; "" with one trial (no spread)."""
    f = fmt or rps
    if too_few_for_interval(n):
        return no_interval(n, fix)
    if not pair or any(missing(v) for v in pair):
        return ""
    if clipped_at_zero(pair):
        return f"95% CI 0 to {f(pair[1])}, its 0 a clipped floor, not a measurement"
    return f"95% CI {f(pair[0])} to {f(pair[1])}"


def cv(value: Any) -> str:
    """A coefficient of variation (a fraction) as a percentage with one decimal: "2.0%"; a dash for none."""
    return DASH if missing(value) else f"{float(value) * 100:.1f}%"


def half_width(pair: Any, n: int, fmt: Any = None) -> str:
    """A table cell under "± 95% CI": the half-width; "0–HIGH" for an interval clipped at 0 (its halves
    differ); "too few (n<3)" below stats.MIN_TRIALS_FOR_INTERVAL trials; a dash with one trial."""
    f = fmt or rps
    if too_few_for_interval(n):
        return f"too few (n<{MIN_TRIALS_FOR_INTERVAL})"
    if not pair or any(missing(v) for v in pair):
        return DASH
    if clipped_at_zero(pair):
        return f"0–{f(pair[1])}"
    return str(f((float(pair[1]) - float(pair[0])) / 2))


def interval_cell(pair: Any, n: int, fmt: Any = None) -> str:
    """A table cell under "95% CI": "18,000–24,000"; "0–HIGH (clipped)"; "too few (n<3)"; a dash with one
    trial."""
    f = fmt or rps
    if too_few_for_interval(n):
        return half_width(pair, n, f)
    if not pair or any(missing(v) for v in pair):
        return DASH
    if clipped_at_zero(pair):
        return f"0–{f(pair[1])} (clipped)"
    return f"{f(pair[0])}–{f(pair[1])}"


def plus_minus(pair: Any, n: int, fmt: Any = None) -> str:
    """What follows a mean in a cell: "± 1,234"; "CI 0–HIGH" clipped at 0; "(too few trials for a CI)";
    "" with one trial."""
    if too_few_for_interval(n):
        return "(too few trials for a CI)"
    text = half_width(pair, n, fmt)
    if text == DASH:
        return ""
    return f"CI {text}" if clipped_at_zero(pair) else f"± {text}"


def when(unix_s: Any) -> str:
    """A moment in UTC: 2026-11-22 07:12 UTC."""
    if missing(unix_s):
        return DASH
    return datetime.fromtimestamp(float(unix_s), tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def duration(seconds: Any) -> str:
    """A run's length: 45s, 12m 30s, 1h 05m."""
    if missing(seconds):
        return DASH
    s = round(float(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m {s % 60:02d}s"
    return f"{s // 3600}h {s % 3600 // 60:02d}m"


def factor_value(value: Any) -> str:
    """A factor's value as a reader sees it: strings bare, everything else as JSON would print."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return DASH
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, default=str, ensure_ascii=False)
    return str(value)


def pct(value: Any, signed: bool = True) -> str:
    """A value already in percent (analysis's percent improvement), signed: +23%, −4.5%."""
    if missing(value):
        return DASH
    v = float(value)
    text = f"{abs(v):,.0f}%" if abs(v) >= 10 or v == 0 else f"{abs(v):,.1f}%"
    if not signed:
        return ("−" if v < 0 else "") + text
    return ("−" if v < 0 else "+") + text


def signed_mbytes(value_Bps: Any) -> str:
    """A difference of throughput in MB/s, always signed: +1.25 or −0.40."""
    if missing(value_Bps):
        return DASH
    return ("−" if float(value_Bps) < 0 else "+") + mbytes(abs(float(value_Bps)))


def index(value: Any) -> str:
    """A ratio to a baseline, as Zeus printed its index (Zeus = 1.00): 0.7871 (its "percentage of Zeus",
    78.71, has the same digits)."""
    if missing(value):
        return DASH
    return f"{float(value):.4f}"


def times(value: Any) -> str:
    """A ratio as the seeds say "2.5 times": 2.50×."""
    if missing(value):
        return DASH
    return f"{float(value):,.2f}×"


def headline(value: Any, metric: str) -> str:
    """A peak in a report's headline metric: req/s, or Mbit/s (10^6 bits) for runs judged by throughput."""
    if metric != "throughput_Bps":
        return rps(value)
    if missing(value):
        return DASH
    v = float(value) * 8 / 1e6
    return f"{v:,.2f}" if abs(v) < 1000 else f"{v:,.1f}"  # Zeus printed 87.65, Mindcraft 286.7


def stream_section_names(rows: list[dict[str, Any]]) -> tuple[str, str]:
    """The `h2` section's title and header compression for the HTTP versions its rows spoke: ("HTTP/2",
    "HPACK"), ("HTTP/3", "QPACK"), or ("HTTP/2 and HTTP/3", "HPACK/QPACK") when a comparison spoke both."""
    versions = sorted({str(r.get("http_version", "2")) for r in rows}) or ["2"]
    return (
        " and ".join(f"HTTP/{v}" for v in versions),
        "/".join("QPACK" if v == "3" else "HPACK" for v in versions),
    )


def saturation(summary: dict[str, Any], shout: bool = False) -> str:
    """A curve's saturation in a word; a dash where there is no curve to judge (one load point, or a published
    peak without its loads): "not saturated" there would say more than was measured. A peak decided by the
    engine, the host's shared CPUs or the network names that instead ("client-bound"): the target did not
    saturate. Every rendering (terminal, Markdown, HTML, the UI) says it through this one function."""
    if summary["shape"] in (PEAK_ONLY_SHAPE, SINGLE_POINT_SHAPE):
        return DASH
    limit = summary.get("limit")
    if isinstance(limit, dict) and limit.get("kind") in BOUND_WORDS:
        return BOUND_WORDS[str(limit["kind"])]
    if summary["saturated"]:
        return "saturated"
    return "NOT saturated" if shout else "not saturated"
