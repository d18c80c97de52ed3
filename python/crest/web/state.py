"""What every request of one served app shares: the hub and the store it shows, its token, its stop flag."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from crest.observe.hub import Hub


@dataclass
class State:
    hub: Hub | None  # the live page's frames; None: no run in this process (crest ui)
    db: Path | None  # the results store the browser reads; None: no browser (a run without a store)
    token: str
    stopping: threading.Event = field(default_factory=threading.Event)  # ends the open event streams
    streams: int = 0  # event streams open now
    lock: threading.Lock = field(default_factory=threading.Lock)

    def opened(self, change: int) -> None:
        with self.lock:
            self.streams += change
