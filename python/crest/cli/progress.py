"""The live progress line of `crest bench`, drawn with rich on stderr (never touches stdout), and the
bench's frames for whatever watches it (--ui, --metrics, --jsonl: crest.cli.watching)."""

from __future__ import annotations

import time
from types import TracebackType
from typing import TYPE_CHECKING, Any

from crest.load.runspec import RunSpec
from crest.units import format_count, format_seconds

if TYPE_CHECKING:  # rich loads only when the line is shown: `crest bench -q` and --json never pay for it
    from rich.live import Live

    from crest.cli.watching import Watching


class LiveProgress:
    """Shows elapsed/total, the current request rate and the error count; a no-op when disabled."""

    def __init__(self, spec: RunSpec, *, enabled: bool, watch: Watching | None = None) -> None:
        self._spec = spec
        self._watch = watch
        self._feed = watch.feed if watch is not None else None
        # A bench is not stored: its frames are named by when it started, one run of one mix.
        self.run_id = time.strftime("bench-%Y%m%d-%H%M%S")
        self._live: Live | None = None
        if enabled:
            from rich.console import Console
            from rich.live import Live
            from rich.text import Text

            # transient: the line disappears when the run ends, leaving only the report.
            self._live = Live(Text(""), console=Console(stderr=True), refresh_per_second=4, transient=True)
        self._last: tuple[float, int] = (0.0, 0)

    def __enter__(self) -> LiveProgress:
        if self._watch is not None:
            self._watch.start()
        if self._feed is not None:
            spec = self._spec
            self._feed.run_started(self.run_id, 0, 1, {"target": spec.url, "command": "bench"})
            self._feed.mix_started(self.run_id, 1, spec.connections, 1, threads_per_client=1,
                                   length_s=spec.duration_s, ramp_up_s=0.0, ramp_down_s=0.0)  # fmt: skip
        if self._live is not None:
            self._live.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._live is not None:
            self._live.stop()
        if self._feed is not None and exc is not None:
            status = "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed"
            self._feed.run_finished(self.run_id, status, str(exc) or type(exc).__name__)

    def finished(self, report: dict[str, Any], *, interrupted: bool) -> None:
        """The bench's report: its figures for the watchers, and the run's end."""
        if self._feed is not None:
            self._feed.report_finished(self.run_id, 1, self._spec.connections, report)
            self._feed.run_finished(self.run_id, "interrupted" if interrupted else "complete", None)

    def update(self, live: dict[str, Any]) -> None:
        """Take one sample of the engine's cumulative counters."""
        if self._feed is not None:
            self._feed.progress(self.run_id, 1, live)
        if self._live is None:
            return
        elapsed_s = float(live.get("elapsed_s", 0.0))
        requests = int(live.get("requests", 0))
        last_s, last_requests = self._last
        # The rate over the last poll interval, not the whole run: it shows warm-up and stalls.
        rate = (requests - last_requests) / (elapsed_s - last_s) if elapsed_s > last_s else 0.0
        self._last = (elapsed_s, requests)
        from rich.text import Text

        self._live.update(Text(self._describe(elapsed_s, requests, rate, int(live.get("errors", 0)))))

    def _describe(self, elapsed_s: float, requests: int, rate: float, errors: int) -> str:
        spec = self._spec
        if spec.duration_s is not None:
            done = f"{elapsed_s:5.1f}s / {format_seconds(spec.duration_s)}"
        else:
            done = f"{format_count(requests)} / {format_count(spec.max_requests or 0)} requests"
        return f"  {done}   {rate:,.0f} req/s   {format_count(requests)} done   errors {format_count(errors)}"
