"""Page loads of a HAR replay: each page class (`page:PATH`) of a stored mix as loads, loads per second and
the page load time's percentiles (the engine records each load as a completion of its page's class, its load
time as the latency). Works on stored mixes only; it prints nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from crest.store import MixRecord

PAGE_CLASS_PREFIX = "page:"


@dataclass(frozen=True)
class PageLoads:
    """One page's loads in one mix."""

    mix: int
    page: str  # its document's path (the class name without "page:")
    loads: int
    loads_per_s: float
    p50_us: float | None
    p99_us: float | None
    max_us: float | None
    failed: int  # loads in which a request failed (not timed)


def page_loads(mixes: Sequence[MixRecord]) -> list[PageLoads]:
    """Every page class of every mix, in ladder order, pages by name; [] for a run that loaded no page."""
    rows = []
    for mix in mixes:
        for name, c in sorted(mix.classes.items()):
            if not name.startswith(PAGE_CLASS_PREFIX):
                continue
            lat = c.get("latency_us") or {}
            loads = int(c.get("requests", 0))
            rows.append(PageLoads(
                mix=mix.index, page=name[len(PAGE_CLASS_PREFIX):], loads=loads, loads_per_s=float(c.get("rps", 0.0)),
                p50_us=_us(lat.get("p50")) if loads else None, p99_us=_us(lat.get("p99")) if loads else None,
                max_us=_us(lat.get("max")) if loads else None, failed=int(c.get("errors", 0)),
            ))  # fmt: skip
    return rows


def _us(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) else None
