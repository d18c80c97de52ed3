"""The hub: every frame of a command's runs, numbered, for readers that come late or come back (the live
page replays from the number its browser last saw: EventSource's Last-Event-ID).

Owns the history and its bound, nothing else: it never serves (crest.web reads it) and never blocks the
runner (a frame is appended under a lock held for an append).
"""

from __future__ import annotations

import bisect
import threading
from typing import Any

from crest.observe.frames import Frame

# Samples kept per run, oldest dropped first: two hours of a run at one a second. Run and mix frames are
# always kept (a ladder has tens of mixes, not thousands).
SAMPLES_KEPT = 7200


class Hub:
    """A Sink that keeps frames; `since(n)` gives readers what they have not seen yet."""

    def __init__(self, samples_kept: int = SAMPLES_KEPT) -> None:
        self.samples_kept = samples_kept
        self._frames: list[tuple[int, Frame]] = []
        self._samples: dict[str, int] = {}  # samples held per run
        self._next = 1
        self._lock = threading.Lock()
        self.closed = False  # the command is done: no frame will follow

    def publish(self, frame: Frame) -> None:
        with self._lock:
            self._frames.append((self._next, frame))
            self._next += 1
            if frame.get("type") == "sample":
                run = str(frame.get("run_id"))
                self._samples[run] = self._samples.get(run, 0) + 1
                if self._samples[run] > self.samples_kept:
                    self._drop_oldest_sample(run)

    def close(self) -> None:
        self.closed = True

    def since(self, seen: int) -> list[tuple[int, Frame]]:
        """The frames numbered above `seen`, oldest first."""
        with self._lock:
            # Numbers only grow: a page polling 4x/s copies what it has not seen, not the whole history.
            return self._frames[bisect.bisect_right(self._frames, seen, key=lambda nf: nf[0]) :]

    def last_number(self) -> int:
        with self._lock:
            return self._next - 1

    def runs(self) -> list[dict[str, Any]]:
        """Each run's run-started frame (with its run-finished status once it has one), in order."""
        found: dict[str, dict[str, Any]] = {}
        for _, frame in self.since(0):
            if frame.get("type") == "run-started":
                found[str(frame["run_id"])] = dict(frame)
            elif frame.get("type") == "run-finished" and frame.get("run_id") in found:
                found[str(frame["run_id"])]["status"] = frame.get("status")
        return list(found.values())

    def _drop_oldest_sample(self, run: str) -> None:
        for i, (_, frame) in enumerate(self._frames):
            if frame.get("type") == "sample" and frame.get("run_id") == run:
                del self._frames[i]
                self._samples[run] -= 1
                return
