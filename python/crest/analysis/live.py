"""Percentiles of the engine's live latency histogram (two buckets per power of two): what a watcher sees
second by second. Coarse on purpose (about ±25%); a mix's stored percentiles come from its HDR histogram."""

from __future__ import annotations

from collections.abc import Sequence

LIVE_QUANTILES: tuple[tuple[str, float], ...] = (("p50", 0.50), ("p90", 0.90), ("p99", 0.99))


def bucket_percentiles(
    counts: Sequence[int], lower_us: Sequence[int], quantiles: Sequence[tuple[str, float]] = LIVE_QUANTILES
) -> dict[str, float] | None:
    """Each quantile of the latencies counted in `counts` (bucket i holds [lower_us[i], lower_us[i+1])),
    interpolated linearly inside its bucket; None when nothing was counted."""
    total = sum(counts)
    if total <= 0:
        return None
    found: dict[str, float] = {}
    for name, q in quantiles:
        rank = q * total
        seen = 0
        for i, n in enumerate(counts):
            if n <= 0:
                continue
            if seen + n >= rank:
                low = float(lower_us[i])
                # The open last bucket has no upper bound: report its lower one.
                high = float(lower_us[i + 1]) if i + 1 < len(lower_us) else low
                found[name] = round(low + (high - low) * max(0.0, rank - seen) / n, 1)
                break
            seen += n
    return found
