"""DelayLine: one direction of an emulated link's delay, jitter and loss, sans-IO. Packets are
offered with the time they arrived and taken back when due; it never reads a clock, a socket or a
device (relay.py does), so it is tested on plain bytes and numbers.

Departures never go backwards: a packet leaves no earlier than the one before it. netem reorders
packets when jitter exceeds the gap between them, which turns a delay test into a reordering test;
the seeds' links were wires and switches, which keep order.
"""

from __future__ import annotations

import random
from collections import deque

DEFAULT_LIMIT_PACKETS = 10_000  # a deep queue, like a generous netem limit: beyond it packets are dropped


class DelayLine:
    """Holds each packet for `delay_s` ± up to `jitter_s` (uniform), drops a share `loss` of them (each
    independently, from its own seeded generator) and keeps at most `limit_packets` in flight."""

    def __init__(
        self, delay_s: float, jitter_s: float = 0.0, loss: float = 0.0, seed: int = 0,
        limit_packets: int = DEFAULT_LIMIT_PACKETS,
    ) -> None:  # fmt: skip
        if delay_s < 0 or jitter_s < 0 or not 0 <= loss < 1 or limit_packets < 1:
            raise ValueError(f"bad delay line: delay {delay_s}, jitter {jitter_s}, loss {loss}, limit {limit_packets}")
        self.delay_s, self.jitter_s, self.loss, self.limit_packets = delay_s, jitter_s, loss, limit_packets
        self._rng = random.Random(seed)
        self._queue: deque[tuple[float, bytes]] = deque()
        self._last_departure = float("-inf")
        self.packets = 0  # carried (offered and not dropped)
        self.bytes = 0
        self.dropped = 0  # lost on purpose (loss)
        self.overflow = 0  # dropped because the queue was full

    def offer(self, packet: bytes, now: float) -> bool:
        """Take a packet that arrived at `now`; False when it is lost or the queue is full."""
        if self.loss and self._rng.random() < self.loss:
            self.dropped += 1
            return False
        if len(self._queue) >= self.limit_packets:
            self.overflow += 1
            return False
        delay = self.delay_s
        if self.jitter_s:
            delay += self._rng.uniform(-self.jitter_s, self.jitter_s)
        departure = max(now, now + delay, self._last_departure)
        self._last_departure = departure
        self._queue.append((departure, packet))
        self.packets += 1
        self.bytes += len(packet)
        return True

    def next_due(self) -> float | None:
        """When the next packet leaves; None when none is held."""
        return self._queue[0][0] if self._queue else None

    def pop_due(self, now: float) -> list[bytes]:
        """The packets due by `now`, in order."""
        out = []
        queue = self._queue
        while queue and queue[0][0] <= now:
            out.append(queue.popleft()[1])
        return out

    def counters(self) -> dict[str, int]:
        return {"packets": self.packets, "bytes": self.bytes, "dropped": self.dropped, "overflow": self.overflow}
