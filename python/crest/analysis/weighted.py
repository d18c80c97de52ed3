"""Weighted throughput (Zeus' quality factor, SPECweb99's class mix): Σ value × weight over classes.

Owns the class weights and their validation. Values come from the caller
(per content-length class throughput, or any per-class figure); this module
never looks at records.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from crest.errors import ConfigError

if TYPE_CHECKING:
    from crest.store import RunDetail

# SPECweb99's request shares of its four content-length classes (< 1 KB, < 10 KB,
# < 100 KB, < 1000 KB), as Zeus' report (seed 003, appendix A) applies them.
SPECWEB99_WEIGHTS: dict[str, float] = {"class0": 0.35, "class1": 0.50, "class2": 0.14, "class3": 0.01}
# The content-length bins of those classes, [low, high) bytes. SPECweb99 sizes its class-C
# files base[C] × (F+1)/10 with base 1024, 10240, 102400, 1024000 (class 0 holds 102–921 B,
# class 3 102,400–921,600 B); Zeus' table says "< 1k, < 10k, < 100k, < 1000k". Both agree
# with binary kilobytes: < 1 KiB, < 10 KiB, < 100 KiB, < 1000 KiB (1,024,000 B).
SIZE_CLASS_BOUNDS: dict[str, tuple[int, int]] = {
    "class0": (0, 1_024),
    "class1": (1_024, 10_240),
    "class2": (10_240, 102_400),
    "class3": (102_400, 1_024_000),
}
# Weights must sum to 1 within this: published shares are rounded to 0.1% at best.
WEIGHT_SUM_TOLERANCE = 1e-3


def weighted_throughput(
    values_by_class: Mapping[str, float], weights: Mapping[str, float] = SPECWEB99_WEIGHTS
) -> float:
    """Σ over the weighted classes of value × weight; classes without a weight are ignored.

    Raises ConfigError when a weighted class has no value, or the weights are
    negative or do not sum to 1 (± WEIGHT_SUM_TOLERANCE).
    """
    check_weights(weights)
    missing = [c for c in weights if c not in values_by_class]
    if missing:
        raise ConfigError(
            f"no value for class {', '.join(missing)}: weighted throughput needs every weighted class"
            f" (have {', '.join(values_by_class) or 'none'}); measure it or give weights for the classes you have"
        )
    return math.fsum(float(values_by_class[c]) * w for c, w in weights.items())


def check_weights(weights: Mapping[str, float]) -> None:
    """Raise ConfigError unless the weights are non-negative and sum to 1 (± WEIGHT_SUM_TOLERANCE)."""
    if not weights:
        raise ConfigError("no class weights given: give e.g. class0=0.35,class1=0.5,class2=0.14,class3=0.01")
    negative = [c for c, w in weights.items() if not w >= 0]
    if negative:
        raise ConfigError(f"class weight of {', '.join(negative)} is negative: weights are shares between 0 and 1")
    total = math.fsum(weights.values())
    if abs(total - 1.0) > WEIGHT_SUM_TOLERANCE:
        raise ConfigError(
            f"class weights sum to {total:g}, not 1 (tolerance {WEIGHT_SUM_TOLERANCE:g}): give shares that add up to 1"
        )


def parse_weights(text: str) -> dict[str, float]:
    """Parse "class0=0.35,class1=0.5,…" or percentages "class0=35%,…" into checked weights."""
    weights: dict[str, float] = {}
    for part in (p.strip() for p in text.split(",")):
        name, sep, raw = part.partition("=")
        name, raw = name.strip(), raw.strip()
        percent = raw.endswith("%")
        try:
            value = float(raw[:-1] if percent else raw)
        except ValueError:
            value = math.nan
        if not sep or not name or math.isnan(value) or name in weights:
            raise ConfigError(
                f"invalid class weight {part!r}: expected NAME=SHARE, each class once, e.g. class0=0.35 or class0=35%"
            )
        weights[name] = value / 100.0 if percent else value
    check_weights(weights)
    return weights


def size_class(size_bytes: int) -> str | None:
    """The SPECweb99 class of a content length (see SIZE_CLASS_BOUNDS); None outside every class (≥ 1000 KiB)."""
    for name, (low, high) in SIZE_CLASS_BOUNDS.items():
        if low <= size_bytes < high:
            return name
    return None


@dataclass(frozen=True)
class WeightedResult:
    """A content-length sweep reduced to Zeus' weighted throughput.

    value_Bps is Σ over weighted classes of weight × the class's mean throughput with
    sizes uniform within the class (class_mean: the measured curve averaged over the
    class's byte range), as Zeus' §3.4 assumes.
    """

    value_Bps: float
    per_class: dict[str, float]  # mean throughput (B/s) over each weighted class's range, sizes uniform
    sizes: dict[str, list[int]]  # the measured sizes inside each weighted class, ascending
    excluded: list[int] = field(default_factory=list)  # sizes in no weighted class, ascending

    @property
    def value_Mbps(self) -> float:
        """The weighted throughput in Mbit/s, as Zeus prints it."""
        return self.value_Bps * 8 / 1e6


def class_mean(curve: Sequence[tuple[int, float]], low: int, high: int) -> float:
    """The mean of a throughput curve over sizes uniform in [low, high).

    The curve is the measured (size, value) points, ascending and one per size, joined by
    straight lines and flat beyond its first and last point; its integral over
    [low, high) divided by the width. Points outside the range still shape it at the
    edges (a class's edge lies between two measured lengths).
    """
    xs = [float(s) for s, _ in curve]
    ys = [v for _, v in curve]

    def at(x: float) -> float:
        if x <= xs[0]:
            return ys[0]
        if x >= xs[-1]:
            return ys[-1]
        i = bisect.bisect_right(xs, x)
        x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
        return y0 + (y1 - y0) * (x - x0) / (x1 - x0)

    # The integrand is linear between consecutive knots: trapezoids over the knots inside the range.
    knots = [float(low), *(x for x in xs if low < x < high), float(high)]
    area = math.fsum((b - a) * (at(a) + at(b)) / 2 for a, b in zip(knots, knots[1:]))
    return area / (high - low)


def sweep_weighted_throughput(
    points: Sequence[tuple[int, float]], weights: Mapping[str, float] = SPECWEB99_WEIGHTS
) -> WeightedResult:
    """Zeus' weighted throughput of (size_bytes, throughput B/s) points.

    Points of the same size are averaged first; each weighted class then takes the mean of
    the measured curve over its byte range with sizes uniform in it (class_mean), and the
    classes are summed by weight. A class needs at least one measured size inside it;
    sizes in no class, or in a class the weights omit, get no weight (listed as excluded)
    but still shape the curve at the class edges. Raises ConfigError when a weighted class
    has no size measured, a throughput is not a finite number ≥ 0, or the weights are bad.
    """
    check_weights(weights)
    by_size: dict[int, list[float]] = {}
    for size, value in points:
        if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
            raise ConfigError(f"throughput at {size} bytes is {value!r}: give a finite number ≥ 0")
        by_size.setdefault(int(size), []).append(float(value))
    sizes: dict[str, list[int]] = {c: [] for c in weights}
    excluded: list[int] = []
    for size in sorted(by_size):
        cls = size_class(size)
        if cls is not None and cls in sizes:
            sizes[cls].append(size)
        else:
            excluded.append(size)
    missing = [c for c, members in sizes.items() if not members or c not in SIZE_CLASS_BOUNDS]
    if missing:
        have = sorted(by_size)
        raise ConfigError(
            f"no content length measured in {', '.join(_class_span(c) for c in missing)}"
            f" (have {', '.join(map(str, have)) or 'none'} bytes): measure one, or give --weights without"
            f" {'that class' if len(missing) == 1 else 'those classes'}"
        )
    curve = [(s, math.fsum(v) / len(v)) for s, v in sorted(by_size.items())]
    per_class = {c: class_mean(curve, *SIZE_CLASS_BOUNDS[c]) for c in sizes}
    return WeightedResult(weighted_throughput(per_class, weights), per_class, sizes, excluded)


def _class_span(name: str) -> str:
    if name in SIZE_CLASS_BOUNDS:
        low, high = SIZE_CLASS_BOUNDS[name]
        return f"{name} ({low:,}–{high - 1:,} B)"
    return f"{name} (not a SPECweb99 class: name the classes class0 … class3)"


def sweep_points(detail: RunDetail) -> list[tuple[int, float]]:
    """(size_bytes, throughput B/s) of a stored content-length sweep, ascending by size.

    A size measured at several client counts counts once, at its peak throughput
    (Zeus ran one concurrency per size). Raises ConfigError when no mix has a size.
    """
    best: dict[int, float] = {}
    for mix in detail.mixes:
        size = mix.size_bytes
        value = mix.throughput_Bps
        if size is None or not math.isfinite(value):
            continue
        best[size] = max(best.get(size, value), value)
    if not best:
        raise ConfigError(
            f"run {detail.id} ({detail.meta.suite}) is not a content-length sweep: none of its"
            f" {len(detail.mixes)} stored mixes has a size (run a suite whose ladder sets sizes_bytes or sizes)"
        )
    return sorted(best.items())


@dataclass(frozen=True)
class SizeMean:
    """The mean throughput over every stored mix of one content length (all trials together)."""

    size_bytes: int
    throughput_Bps: float
    n: int  # mixes behind the mean


def size_means(details: Sequence[RunDetail]) -> list[SizeMean]:
    """Mean throughput by content length over the runs' mixes, ascending by size; mixes without a size
    or a finite throughput are left out."""
    by_size: dict[int, list[float]] = {}
    for detail in details:
        for m in detail.mixes:
            if m.size_bytes is not None and math.isfinite(m.throughput_Bps):
                by_size.setdefault(m.size_bytes, []).append(m.throughput_Bps)
    return [SizeMean(size, math.fsum(v) / len(v), len(v)) for size, v in sorted(by_size.items())]


def is_sweep(detail: RunDetail) -> bool:
    """Whether any stored mix of the run has a content length."""
    return any(m.size_bytes is not None for m in detail.mixes)


@dataclass(frozen=True)
class SweepConfiguration:
    """One configuration's content-length sweeps: each trial's result and the weighted figure over trials."""

    label: str
    run_ids: list[str]
    trials: list[WeightedResult]
    mean_Bps: float
    ci95_Bps: tuple[float, float] | None  # None below 3 trials (stats.nonnegative_interval)
    points: list[tuple[int, float]]  # (size, mean throughput over trials) for the chart


def sweep_configurations(
    details: Sequence[RunDetail], weights: Mapping[str, float] = SPECWEB99_WEIGHTS
) -> list[SweepConfiguration]:
    """Weighted throughput of each configuration (trials grouped as crest.analysis.group does), mean and 95% CI.

    Raises ConfigError when a run is no sweep or lacks a weighted class.
    """
    from crest.analysis.group import configurations
    from crest.analysis.stats import describe

    out: list[SweepConfiguration] = []
    for config in configurations(details):
        trial_points = [sweep_points(t) for t in config.trials]
        results = [sweep_weighted_throughput(p, weights) for p in trial_points]
        summary = describe([r.value_Bps for r in results], nonnegative=True)
        by_size: dict[int, list[float]] = {}
        for points in trial_points:
            for size, value in points:
                by_size.setdefault(size, []).append(value)
        mean_points = [(s, math.fsum(v) / len(v)) for s, v in sorted(by_size.items())]
        out.append(SweepConfiguration(
            config.label, [t.id for t in config.trials], results, summary.mean, summary.ci95, mean_points,
        ))  # fmt: skip
    return out


def weighted_index(configs: Sequence[SweepConfiguration], baseline: str) -> list[float]:
    """Each configuration's mean weighted throughput ÷ the baseline's (Zeus' "Index (Zeus=1.00)"; × 100 its
    "Percentage (of Zeus)"). `baseline` is a whole label or a factor value naming one configuration
    (crest.analysis.compare.find_label); NaN where the baseline's figure is 0."""
    from crest.analysis.compare import find_label

    base = configs[find_label([c.label for c in configs], baseline)].mean_Bps
    return [c.mean_Bps / base if base > 0 else math.nan for c in configs]
