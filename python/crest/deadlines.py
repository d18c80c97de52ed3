"""Deadlines: the absolute time by which an exchange with a peer must end (DESIGN.md's `deadline`).

Owns the one way crest bounds a wait on a peer from Python: a `Deadline` made once for a whole exchange
(connect, handshake, head and body together), whose `timeout_s()` is what the next blocking call may still
take, and `guard`, which shuts the exchange's socket when the deadline passes. A per-read socket timeout
alone is not a deadline: a peer that sends one byte a second restarts it forever, so every wait on a
socket goes under a guard, and every wait on a process or a Ray call takes `timeout_s()`. Shuts the
guarded socket and nothing else; never prints.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass


class DeadlinePassed(TimeoutError):
    """The exchange's deadline passed before it ended."""


@dataclass(frozen=True)
class Deadline:
    """An instant on the monotonic clock, and the budget it was set with (for messages)."""

    at: float  # time.monotonic() seconds
    budget_s: float

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        """The deadline `seconds` from now."""
        return cls(time.monotonic() + seconds, seconds)

    def remaining_s(self) -> float:
        """Seconds left, 0 once passed."""
        return max(0.0, self.at - time.monotonic())

    @property
    def passed(self) -> bool:
        return time.monotonic() >= self.at

    def timeout_s(self) -> float:
        """The timeout for the next blocking call: what is left.

        Raises:
            DeadlinePassed: nothing is left.
        """
        left = self.remaining_s()
        if left <= 0.0:
            raise DeadlinePassed(f"no end within {self.budget_s:g}s")
        return left

    @contextmanager
    def guard(self, current: Callable[[], socket.socket | None]) -> Iterator[Guard]:
        """Within the block, the socket `current()` names at the deadline is shut down for reading and
        writing, so a blocking call on it returns (an end of stream, or an error) however the peer trickles.
        `current` is asked at the deadline, because a connection's socket changes while it is made (the TLS
        wrapper replaces the plain socket). The yielded Guard says whether the deadline cut the exchange."""
        guard = Guard()
        timer = threading.Timer(self.remaining_s(), guard.fire, (current,))
        timer.daemon = True
        timer.start()
        try:
            yield guard
        finally:
            timer.cancel()


class Guard:
    """Whether a guard shut its socket because the deadline passed."""

    def __init__(self) -> None:
        self._fired = threading.Event()

    @property
    def fired(self) -> bool:
        return self._fired.is_set()

    def fire(self, current: Callable[[], socket.socket | None]) -> None:
        self._fired.set()
        sock = current()
        if sock is None:
            return
        try:
            # The plain socket's shutdown, also under TLS: SSLSocket's own would drop its TLS state while
            # another thread may be reading through it.
            socket.socket.shutdown(sock, socket.SHUT_RDWR)
        except OSError:
            pass  # already closed, or never connected: the blocking call ends on its own
