"""--jsonl FILE|-: every frame as one JSON line, flushed as written, for any other tool (jq, a log
shipper, a notebook). Owns the line format; the CLI opens the stream (a file, or stdout, which it then
keeps free of its own output)."""

from __future__ import annotations

import json
from typing import TextIO

from crest.observe.frames import Frame


class JsonlSink:
    """Writes each frame as one line to `out`; closes it at the end when `owned`."""

    def __init__(self, out: TextIO, *, owned: bool) -> None:
        self._out = out
        self._owned = owned

    def publish(self, frame: Frame) -> None:
        self._out.write(json.dumps(frame, separators=(",", ":")) + "\n")
        self._out.flush()

    def close(self) -> None:
        if self._owned:
            self._out.close()
