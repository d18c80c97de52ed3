"""CurveSummary: where a load curve peaks, whether the peak was reached, and how it behaves past it.

Owns the saturation verdict, the curve-shape thresholds and when the curve-level
verdicts apply (errors, client-bound points, an idle target at the peak; their
wording is crest.verdicts'). Works on
LoadPoints only; comparing curves belongs to compare.py.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from crest.analysis.peak import highest
from crest.analysis.points import LoadPoint
from crest.errors import ConfigError
from crest.verdicts import (
    BOUND_WORDS,
    BUSY_AT_PEAK_PCT,
    CLIENT_BOUND,
    DECIDING,
    LIMIT_FIXES,
    LIMIT_NAMES,
    PEAK_ONLY,
    TARGET_IDLE,
    Verdict,
    client_bound_points,
    collapse,
    error_rate,
    has,
    limit,
    limited_points,
    not_saturated,
    ranked,
    target_idle,
)

# Shape past the peak, from min(req/s after the peak) ÷ peak req/s. A plateau keeps
# ≥ 90% (run-to-run noise of a healthy server is a few %); "graceful" keeps at least
# half; below half the server collapsed (Mindcraft's Apache fell to 7%).
PLATEAU_RATIO = 0.9
# The shape of a published peak without its load (a peak table): no load, no curve, no saturation.
PEAK_ONLY_SHAPE = "published peak"
SINGLE_POINT_SHAPE = "single point"  # one load point (a bench, a timed replay): no curve, so no saturation to judge
GRACEFUL_RATIO = 0.5
# A point whose error rate exceeds this gets a warning: 1% is where WebBench-era
# reports stopped trusting a mix.
ERROR_RATE_WARN = 0.01
# The monitor's target_idle_pct at the peak above which the target was not the bottleneck:
# the monitor's rule, applied here at the peak of a configuration's (mean) curve.
TARGET_IDLE_WARN_PCT = 100.0 - BUSY_AT_PEAK_PCT

NOT_SATURATED = "not saturated — add load"


@dataclass
class CurveSummary:
    """A load curve in a few figures; loads are on the axis the points were built with.

    shape: "rising" (the peak is the last point), "plateau", "graceful
    degradation", "collapse", or "single point" (one point makes no curve).
    past_peak_ratio: min req/s after the peak ÷ peak req/s; None with no point after it.
    """

    peak_rps: float
    peak_rps_load: float
    peak_throughput_Bps: float
    peak_throughput_load: float
    saturated: bool
    verdict: str
    past_peak_ratio: float | None
    shape: str
    max_error_rate: float
    verdicts: list[Verdict] = field(default_factory=list)  # in crest.verdicts.RANK order
    points: int = 0  # how many load points the summary covers
    # What decided the peak when the target did not: a DECIDING verdict found at the peak, or the curve never
    # peaking (not saturated); one of `verdicts`. None: the target's own limit.
    limit: Verdict | None = None


def summarize(points: Sequence[LoadPoint], *, sweep: bool = False) -> CurveSummary:
    """Summarise one curve. Points are taken in load order; a NaN req/s never peaks.

    With `sweep` the points are content lengths at one load (a Zeus sweep):
    the highest point is still reported, but saturation and the shape past
    it do not apply (smaller files always give more requests per second).

    A table that gives only throughput (NetBench's) is judged by its throughput: peak_rps is NaN then.

    Raises ConfigError when there is no point with a measured req/s or throughput.
    """
    ordered = sorted(points, key=lambda p: p.load)
    by_rps = any(not math.isnan(p.rps) for p in ordered)

    def value(p: LoadPoint) -> float:
        return p.rps if by_rps else p.throughput_Bps

    measured = [p for p in ordered if not math.isnan(value(p))]
    peak_at = highest([value(p) for p in measured])  # peak.py's rule, so every peak crest prints agrees
    if peak_at is None:
        raise ConfigError("no load points with a measured req/s: the run stored no usable mix; pick another run")
    peak = measured[peak_at]
    tp_at = highest([p.throughput_Bps for p in ordered])
    tp_peak = ordered[tp_at] if tp_at is not None else peak
    after = measured[peak_at + 1 :]
    ratio = min(value(p) for p in after) / value(peak) if after and value(peak) > 0 else None
    shape, saturated, verdict = _shape(len(measured), after, ratio)
    if sweep:
        shape, saturated, ratio = "content-length sweep", True, None
        verdict = "content-length sweep: one load at every size, so saturation does not apply (see weighted throughput)"
    elif all(has(p.verdicts, PEAK_ONLY) for p in ordered):
        shape, saturated, ratio = PEAK_ONLY_SHAPE, False, None
        verdict = "a published peak: the report gives no load, so there is no curve to judge"
    found = ranked(_verdicts(ordered, peak) + _shape_verdicts(shape, ratio, ordered))
    limit = _limit(found, peak)
    if limit is not None and limit.kind in DECIDING:
        # What limited the peak is known: "the target idled, something else limited it" adds nothing.
        found = [v for v in found if v.kind != TARGET_IDLE]
    if limit is not None and limit.kind in BOUND_WORDS and saturated:
        # The curve flattened because the engine, the host's CPUs or the network ran out: not the target.
        saturated = False
        verdict = f"{LIMIT_NAMES[limit.kind]} at the peak, not the target: {LIMIT_FIXES[limit.kind]}"
    return CurveSummary(
        peak_rps=peak.rps,
        peak_rps_load=peak.load,
        peak_throughput_Bps=tp_peak.throughput_Bps,
        peak_throughput_load=tp_peak.load,
        saturated=saturated,
        verdict=verdict,
        past_peak_ratio=ratio,
        shape=shape,
        max_error_rate=max(p.error_rate for p in ordered),
        verdicts=found,
        points=len(ordered),
        limit=limit,
    )


def _limit(found: list[Verdict], peak: LoadPoint) -> Verdict | None:
    """The first ranked verdict that held at the peak (a DECIDING one) or over the curve (not saturated)."""
    at_peak = {CLIENT_BOUND} if peak.client_bound else set()
    at_peak |= {v.kind for v in peak.verdicts if v.kind in DECIDING}
    return limit([v for v in found if v.kind in at_peak or v.kind not in DECIDING])


def shape_of(ratio: float) -> str:
    """The name of a curve's behaviour past its peak, from min-after-peak ÷ peak."""
    if ratio >= PLATEAU_RATIO:
        return "plateau"
    if ratio >= GRACEFUL_RATIO:
        return "graceful degradation"
    return "collapse"


def _shape(n: int, after: list[LoadPoint], ratio: float | None) -> tuple[str, bool, str]:
    if n == 1:
        return SINGLE_POINT_SHAPE, False, "one load point: no curve to judge; measure a ladder of loads"
    if not after:
        return "rising", False, NOT_SATURATED
    if ratio is None:  # a peak of 0 req/s: nothing was served at any load
        return "collapse", True, "saturated — no request succeeded at any load"
    shape = shape_of(ratio)
    return shape, True, f"saturated — {shape} past the peak (falls to {ratio:.0%} of peak)"


def _shape_verdicts(shape: str, ratio: float | None, points: list[LoadPoint]) -> list[Verdict]:
    """What the curve's shape says a reader must mind: no peak reached yet, or a collapse past it."""
    if shape == "rising":
        return [not_saturated(points[-1].load)]
    if shape == "collapse" and ratio is not None:
        return [collapse(ratio)]
    return []


def _verdicts(points: list[LoadPoint], peak: LoadPoint) -> list[Verdict]:
    found: list[Verdict] = []
    erring = [p for p in points if p.error_rate > ERROR_RATE_WARN]
    if erring:
        worst = max(erring, key=lambda p: p.error_rate)
        found.append(error_rate(ERROR_RATE_WARN, len(erring), worst.error_rate, worst.load))
    bound = [p for p in points if p.client_bound]
    if bound:
        found.append(client_bound_points([p.load for p in bound]))
    for kind in DECIDING:
        hit = [p for p in points if has(p.verdicts, kind)]
        if kind == CLIENT_BOUND or not hit:
            continue  # client-bound points are judged from their figures above
        where = peak if has(peak.verdicts, kind) else hit[0]
        found.append(limited_points(kind, [p.load for p in hit], next(v for v in where.verdicts if v.kind == kind)))
    idle = peak.target_idle or (peak.target_idle_pct is not None and peak.target_idle_pct > TARGET_IDLE_WARN_PCT)
    if idle:
        found.append(target_idle(peak.load, peak.target_idle_pct))
    return found
