"""LoadClient: one engine run on this machine, from validated spec to parsed report.

It validates and preflights before any traffic, starts the run through the fan-out
(crest.load.fanout, the one place engine runs start), polls it for progress, turns
Ctrl-C into a cancelled partial report, and never prints or exits.
"""

from __future__ import annotations

import json
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from crest import _engine
from crest.errors import ConfigError, EngineError
from crest.load import fanout
from crest.load.preflight import TargetUrl, check_reachable, check_source_addrs
from crest.load.runspec import Origin, RunSpec, engine_config_error, engine_json
from crest.secrets import without_secrets

ProgressCallback = Callable[[dict[str, Any]], None]

# Poll 4×/s: often enough for a live progress line, rare enough to cost nothing.
POLL_INTERVAL_S = 0.25
# After cancel() the engine must stop within one request timeout; this is the slack on top.
CANCEL_GRACE_S = 5.0
# A run with a duration that is still going this long after duration + timeout is hung.
OVERRUN_GRACE_S = 30.0
# File descriptors the process needs beside one per connection (stdio, epoll, pipes, ...).
SPARE_FDS = 64


@dataclass(frozen=True)
class RunResult:
    """The outcome of one run: the engine's report, the config sent (less its secrets: `crest bench
    --json` prints it), whether Ctrl-C stopped it."""

    report: dict[str, Any]
    config: dict[str, Any]
    interrupted: bool

    def __post_init__(self) -> None:
        # Every placement makes its result here: none of them can hand on a password.
        object.__setattr__(self, "config", without_secrets(self.config))


def engine_version() -> str:
    """The version string of the compiled engine."""
    return _engine.version()


class LoadClient:
    """Runs one RunSpec through the engine.

    Construction validates the spec (ConfigError, worded for `origin`: `crest bench`
    flags or suite settings); `preflight()` checks the target accepts connections
    (TargetError); `run()` sends the load.
    """

    def __init__(self, spec: RunSpec, origin: Origin = "suite") -> None:
        self.spec = spec
        self.origin: Origin = origin
        self.target: TargetUrl = spec.validate(origin)
        self.config: dict[str, Any] = spec.to_config()
        self._preflighted = False

    def preflight(self) -> None:
        """Check source addresses, the open-file limit and that the target accepts a connection."""
        check_source_addrs(self.spec.source_addrs, self.target)
        _ensure_fd_limit(self.spec.connections)
        if self.target.scheme != "file":  # a directory was checked with the config
            # HTTP/3 is QUIC over UDP, which a TCP connect cannot probe: only the name is resolved.
            check_reachable(self.target, tcp=self.spec.http_version != "3")
        if self.target.scheme == "smb":
            # The login and the share, before anything is recorded or sent.
            try:
                _engine.probe_file_target(engine_json(self.config))
            except _engine.ConfigError as exc:
                raise engine_config_error(exc, self.origin) from None
        self._preflighted = True

    def run(self, on_progress: ProgressCallback | None = None) -> RunResult:
        """Run to completion (or Ctrl-C) and return the parsed report.

        Args:
            on_progress: called about 4×/s with the engine's cumulative live counters.

        Raises:
            ConfigError: the engine rejected the config (nothing was sent).
            TargetError: the preflight failed (nothing was sent).
            MachineError: the machine refused the engine an event loop, a thread or TLS, or a worker panicked.
            EngineError: the engine overran its run or returned a malformed report.
        """
        if not self._preflighted:
            self.preflight()
        run = fanout.start(self.config, self.origin)
        with fanout.engine_failures():
            try:
                text = self._poll(run, on_progress)
            except KeyboardInterrupt:
                run.cancel()
                return RunResult(self._parse(self._wait_after_cancel(run)), self.config, interrupted=True)
        return RunResult(self._parse(text), self.config, interrupted=False)

    def _poll(self, run: _engine.Run, on_progress: ProgressCallback | None) -> str:
        started = time.monotonic()
        deadline = None
        if self.spec.duration_s is not None:
            deadline = started + self.spec.duration_s + self.spec.timeout_s + OVERRUN_GRACE_S
        while True:
            text = run.wait(POLL_INTERVAL_S)
            if text is not None:
                return text
            if on_progress is not None:
                on_progress(run.live())
            if deadline is not None and time.monotonic() > deadline:
                run.cancel()
                self._wait_after_cancel(run)
                raise EngineError(
                    f"the engine overran a {self.spec.duration_s:g}s run by more than"
                    f" {self.spec.timeout_s + OVERRUN_GRACE_S:g}s and was cancelled: please report this"
                )

    def _wait_after_cancel(self, run: _engine.Run) -> str:
        text = run.wait(self.spec.timeout_s + CANCEL_GRACE_S)
        if text is None:
            raise EngineError(
                f"the engine did not stop within {self.spec.timeout_s + CANCEL_GRACE_S:g}s"
                " of being cancelled: please report this"
            )
        return text

    @staticmethod
    def _parse(text: str) -> dict[str, Any]:
        try:
            report = json.loads(text)
        except json.JSONDecodeError as exc:
            raise EngineError(f"the engine returned a malformed report ({exc}): please report this") from None
        if not isinstance(report, dict):
            raise EngineError("the engine returned a report that is not a JSON object: please report this")
        return report


def _ensure_fd_limit(connections: int) -> None:
    """Raise the soft open-file limit when the run needs more descriptors than it allows.

    Raises:
        ConfigError: the hard limit is too low, with the command that fixes it.
    """
    needed = connections + SPARE_FDS
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return
    if hard != resource.RLIM_INFINITY and hard < needed:
        raise ConfigError(
            f"{connections} connections need {needed} open files but the limit is {hard}:"
            f" raise it (ulimit -n {needed}) or lower -c"
        )
    resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
