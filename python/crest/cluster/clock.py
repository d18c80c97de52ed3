"""Each node's clock offset from the driver's, NTP-style: of several request/response rounds,
the one with the smallest round trip wins; its half round trip bounds the error. And a node's own wall
clock: the system's, plus the offset a lab's machine injects (CREST_CLOCK_OFFSET_S, crest.machines: Linux
cannot shift CLOCK_REALTIME per namespace), which whatever waits on the system clock (the engine's
start) takes back off. Reads nothing but the clock and that variable."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass

from crest.machines.plan import CLOCK_OFFSET_ENV

# Rounds per node and mix: enough for one quiet round on a busy machine, cheap (each is one actor call).
ROUNDS = 8


@dataclass(frozen=True)
class Offset:
    """node clock - driver clock, seconds, within ± uncertainty_s."""

    offset_s: float
    uncertainty_s: float
    round_trip_s: float


def measure(ask_time: Callable[[], float], rounds: int = ROUNDS, now: Callable[[], float] = time.time) -> Offset:
    """The offset of the clock behind `ask_time` (a call that returns the node's time.time()).

    A node read its clock somewhere between our send (t0) and our receipt (t1); assuming the middle
    errs by at most half the round trip, so the shortest round is the most exact.
    """
    best: Offset | None = None
    for _ in range(max(1, rounds)):
        t0 = now()
        remote = ask_time()
        t1 = now()
        rtt = max(0.0, t1 - t0)
        candidate = Offset(remote - (t0 + t1) / 2, rtt / 2, rtt)
        if best is None or candidate.round_trip_s < best.round_trip_s:
            best = candidate
    assert best is not None
    return best


def injected_offset_s() -> float:
    """The offset a simulated machine adds to this process's wall clock (0 on a real one)."""
    return float(os.environ.get(CLOCK_OFFSET_ENV) or 0.0)


def wall() -> float:
    """This node's wall clock, Unix seconds: what a real machine with its offset would read."""
    return time.time() + injected_offset_s()


def to_system(node_unix_s: float) -> float:
    """An instant on this node's clock (wall) as the system clock reads it, for what waits on that clock."""
    return node_unix_s - injected_offset_s()
