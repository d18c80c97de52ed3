"""SPECweb99's result from stored iterations: each connection's bit rate and whether it conforms, the
validity rules, the kit's tables, the median of the iterations and VALID or INVALID. Pure.

An iteration is one stored mix of a SPECweb99 run: its per-client scores are per connection (one
connection per client) with per-class counts and the time the connection's line needed, its classes
are the engine's `op/classC`, and its `specweb99` figures hold the settings it ran with and the harness's
POST-log check. Owns every SPECweb99 statistic; must not run load or print.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from crest.store import MixRecord, RunDetail
from crest.suite.specweb99 import FILE_CLASSES, OPERATIONS

# The successive speed limits of the kit's cumulative conformance table, bits/s.
SPEED_LIMITS_BPS = (400_000, 380_000, 360_000, 340_000, 320_000, 300_000, 280_000, 240_000, 200_000, 100_000)
# A connection served faster than its line is credited the line speed itself, up to the µs rounding of
# its line time: a limit is met within this relative slack.
_RATE_SLACK = 1e-4
# A connection without a request of a class is invalid only when it made enough operations to expect
# this many of that class: with the kit's run length always (4,000 operations a connection), in a short
# run not for one that spent its window mostly waiting out two class-3 files (P(none) <= e^-15).
_MIN_EXPECTED = 15
# Classes the kit checks per connection; class 3 (1 % of requests) only over all connections.
_PER_CONNECTION_CLASSES = (0, 1, 2)


@dataclass(frozen=True)
class Connection:
    """One simultaneous connection over the window."""

    index: int
    requests: int
    errors: int
    bytes: int
    line_s: float  # the time its line needed for those bytes (pacing included)
    rate_bps: float  # 8 × bytes ÷ line_s (0 when it did nothing)
    class_requests: tuple[int, ...]  # per file class, every operation
    class_errors: tuple[int, ...]
    invalid: tuple[str, ...]  # why it is an invalid connection (empty: valid)


@dataclass(frozen=True)
class ClassRow:
    """One file class over all connections: its share of operations, counts, response time, bit rate."""

    file_class: int
    target_share: float
    share: float
    requests: int
    errors: int
    error_rate: float
    mean_latency_ms: float | None
    throughput_bps: float


@dataclass(frozen=True)
class Iteration:
    """One iteration: the kit's figures and every rule it broke (empty: valid)."""

    index: int
    requested: int
    valid: int
    invalid: int
    conforming: int
    ops_per_s: float
    ops_per_s_per_connection: float
    msec_per_op: float | None
    bit_rate_bps: tuple[float, float, float]  # mean, min, max over connections
    cumulative: tuple[tuple[float, float], ...]  # (speed limit, share of connections at or above it)
    classes: tuple[ClassRow, ...]
    operations: dict[str, int]  # operations by kind (static, dynamic, cgi, cad, post)
    post_log: dict[str, Any] | None
    failures: tuple[str, ...]
    connections: tuple[Connection, ...] = field(repr=False, default=())

    @property
    def is_valid(self) -> bool:
        return not self.failures


@dataclass(frozen=True)
class Result:
    """A SPECweb99 test: its iterations, the median one, and whether the test is VALID."""

    iterations: tuple[Iteration, ...]
    median: Iteration | None
    conforming_length: bool
    settings: dict[str, Any]

    @property
    def valid(self) -> bool:
        return bool(self.iterations) and all(i.is_valid for i in self.iterations)

    @property
    def failures(self) -> list[str]:
        return [f"iteration {i.index}: {f}" for i in self.iterations for f in i.failures]

    def verdict(self) -> str:
        """VALID or INVALID, and why a VALID result is still not reportable."""
        if not self.valid:
            return "INVALID"
        return "VALID" if self.conforming_length else "VALID (not a conforming run length)"


def is_specweb99_run(detail: RunDetail) -> bool:
    return any(m.specweb99 is not None for m in detail.mixes)


def specweb99_result(detail: RunDetail) -> Result:
    """Every stored iteration judged, and the median by conforming connections, then ops/s (the kit's)."""
    iterations = tuple(iteration(m) for m in sorted(detail.mixes, key=lambda m: m.index) if m.specweb99 is not None)
    ranked = sorted(iterations, key=lambda i: (i.conforming, i.ops_per_s))
    median = ranked[(len(ranked) - 1) // 2] if ranked else None
    first = next((m.specweb99 for m in detail.mixes if m.specweb99), {}) or {}
    return Result(iterations, median, bool(first.get("conforming_length")), dict(first.get("settings") or {}))


def iteration(mix: MixRecord) -> Iteration:
    """One stored iteration against the rules its settings name."""
    figures = mix.specweb99 or {}
    settings: dict[str, Any] = figures.get("settings") or {}
    conforming_bps = float(settings.get("conforming_bps", 320_000))
    max_errors = float(settings.get("max_error_share", 0.0104999))
    class_mix = [float(s) for s in settings.get("class_mix", (0.35, 0.50, 0.14, 0.01))]
    tolerance = float(settings.get("mix_tolerance", 0.105))
    min_share = float(settings.get("min_conforming_share", 0.95))
    connections = tuple(_connection(i, c, max_errors, class_mix) for i, c in enumerate(mix.client_scores))
    requested = mix.connections
    invalid = [c for c in connections if c.invalid]
    conforming = sum(1 for c in connections if not c.invalid and _meets(c.rate_bps, conforming_bps))
    classes = _classes(mix, class_mix)
    failures: list[str] = []
    if requested and conforming / requested < min_share:
        failures.append(
            f"conforming connections: {conforming} of {requested} ({conforming / requested:.1%})"
            f" at >= {conforming_bps / 1000:g} kbit/s, must be >= {min_share:.0%}"
        )
    if invalid:
        reasons = sorted({r for c in invalid for r in c.invalid})
        failures.append(f"invalid connections: {len(invalid)} of {requested} ({'; '.join(reasons[:3])})")
    operations = sum(row.requests + row.errors for row in classes)
    for row in classes:
        if row.file_class == 3 and row.requests + row.errors and row.error_rate > max_errors:
            failures.append(f"class 3 errors: {row.error_rate:.2%} of its operations, must be <= 1%")
        allowed = mix_allowance(row.target_share, tolerance, operations)
        if row.target_share > 0 and abs(row.share - row.target_share) > allowed:
            failures.append(
                f"class {row.file_class} mix: {row.share:.4f} of {operations} operations, must be within"
                f" ±{allowed:.4f} of {row.target_share:.2f}"
            )
    by_op = _operation_errors(mix)
    post_log = figures.get("post_log")
    if isinstance(post_log, dict):
        failures.extend(str(f) for f in post_log.get("failures", []))
    elif post_log is None:
        failures.append("POST log: not checked (no Fetch after the iteration)")
    rates = [c.rate_bps for c in connections] or [0.0]
    ops = mix.requests
    window = mix.window_s or 1.0
    mean_us = mix.latency_us.get("mean")
    return Iteration(
        index=mix.index,
        requested=requested,
        valid=requested - len(invalid),
        invalid=len(invalid),
        conforming=conforming,
        ops_per_s=ops / window,
        ops_per_s_per_connection=ops / window / requested if requested else 0.0,
        msec_per_op=float(mean_us) / 1000 if isinstance(mean_us, (int, float)) else None,
        bit_rate_bps=(sum(rates) / len(rates), min(rates), max(rates)),
        cumulative=tuple((limit, _share(connections, limit)) for limit in SPEED_LIMITS_BPS),
        classes=classes,
        operations=_operations(mix),
        post_log=post_log if isinstance(post_log, dict) else None,
        failures=tuple(failures + _error_notes(invalid, by_op)),
        connections=connections,
    )


def mix_allowance(target: float, tolerance: float, operations: int) -> float:
    """How far a class's share of operations may stray from its target: the kit's ±tolerance (relative),
    or three binomial standard deviations when the iteration had too few operations for that to mean
    anything (a short run: class 3's ±0.1 % needs ~80,000 operations). With the kit's run length the
    kit's own tolerance is the wider one."""
    if operations <= 0:
        return tolerance * target
    return max(tolerance * target, 3 * math.sqrt(target * (1 - target) / operations))


def _connection(index: int, score: dict[str, Any], max_errors: float, class_mix: list[float]) -> Connection:
    requests = int(score.get("requests", 0))
    errors = int(score.get("errors", 0))
    nbytes = int(score.get("bytes", 0))
    line_s = float(score.get("line_us", score.get("active_us", 0))) / 1e6
    by_class_requests = _per_file_class(score.get("class_requests") or [])
    by_class_errors = _per_file_class(score.get("class_errors") or [])
    invalid: list[str] = []
    operations = sum(by_class_requests) + sum(by_class_errors)
    for c in _PER_CONNECTION_CLASSES:
        attempts = by_class_requests[c] + by_class_errors[c]
        share = class_mix[c] if c < len(class_mix) else 0.0
        if by_class_requests[c] == 0 and operations * share >= _MIN_EXPECTED:
            invalid.append(f"no class {c} request completed")
        elif attempts and by_class_errors[c] / attempts > max_errors:
            invalid.append(f"class {c} errors over 1%")
    return Connection(
        index=index,
        requests=requests,
        errors=errors,
        bytes=nbytes,
        line_s=line_s,
        rate_bps=8 * nbytes / line_s if line_s > 0 else 0.0,
        class_requests=tuple(by_class_requests),
        class_errors=tuple(by_class_errors),
        invalid=tuple(invalid),
    )


def _per_file_class(by_engine_class: Sequence[Any]) -> list[int]:
    """Engine classes are op × 4 + file class: fold the operations."""
    totals = [0] * FILE_CLASSES
    for i, n in enumerate(by_engine_class):
        totals[i % FILE_CLASSES] += int(n)
    return totals


def _classes(mix: MixRecord, class_mix: list[float]) -> tuple[ClassRow, ...]:
    requests = [0] * FILE_CLASSES
    errors = [0] * FILE_CLASSES
    latency_sum = [0.0] * FILE_CLASSES
    nbytes = [0] * FILE_CLASSES
    for name, stats in mix.classes.items():
        c = _file_class(name)
        if c is None:
            continue
        n = int(stats.get("requests", 0))
        requests[c] += n
        errors[c] += int(stats.get("errors", 0))
        nbytes[c] += int(stats.get("bytes", 0))
        mean = (stats.get("latency_us") or {}).get("mean")
        if isinstance(mean, (int, float)):
            latency_sum[c] += float(mean) * n
    total = sum(requests) + sum(errors)
    window = mix.window_s or 1.0
    return tuple(
        ClassRow(
            file_class=c,
            target_share=class_mix[c] if c < len(class_mix) else 0.0,
            share=(requests[c] + errors[c]) / total if total else 0.0,
            requests=requests[c],
            errors=errors[c],
            error_rate=errors[c] / (requests[c] + errors[c]) if requests[c] + errors[c] else 0.0,
            mean_latency_ms=latency_sum[c] / requests[c] / 1000 if requests[c] else None,
            throughput_bps=8 * nbytes[c] / window,
        )
        for c in range(FILE_CLASSES)
    )


def _file_class(name: str) -> int | None:
    op, _, cls = name.partition("/class")
    return int(cls) if op in OPERATIONS and cls.isdigit() and int(cls) < FILE_CLASSES else None


def _operations(mix: MixRecord) -> dict[str, int]:
    ops = dict.fromkeys(OPERATIONS, 0)
    for name, stats in mix.classes.items():
        op = name.partition("/")[0]
        if op in ops:
            ops[op] += int(stats.get("requests", 0)) + int(stats.get("errors", 0))
    return ops


def _operation_errors(mix: MixRecord) -> dict[str, int]:
    errors: dict[str, int] = {}
    for name, stats in mix.classes.items():
        n = int(stats.get("errors", 0))
        if n:
            errors[name] = n
    return errors


def _error_notes(invalid: list[Connection], by_op: dict[str, int]) -> list[str]:
    """Which operations failed, when their errors made connections invalid (the rule's evidence)."""
    if not invalid or not by_op:
        return []
    worst = sorted(by_op.items(), key=lambda kv: -kv[1])[:4]
    return ["errors by operation: " + ", ".join(f"{name} {n}" for name, n in worst)]


def _share(connections: Sequence[Connection], limit: float) -> float:
    if not connections:
        return 0.0
    return sum(1 for c in connections if not c.invalid and _meets(c.rate_bps, limit)) / len(connections)


def _meets(rate_bps: float, limit_bps: float) -> bool:
    return rate_bps >= limit_bps * (1 - _RATE_SLACK)


def conforming_share(mix: MixRecord) -> float | None:
    """The share of a SPECweb99 iteration's connections that conform (None for other mixes): the
    `conforming` metric of a capacity rule."""
    if mix.specweb99 is None:
        return None
    it = iteration(mix)
    return it.conforming / it.requested if it.requested else 0.0
