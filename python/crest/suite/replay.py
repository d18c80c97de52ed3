"""`[workload.replay]`: an access log as a suite's workload (timed, mix or sessions), and the suite crest
makes of a bare log (`crest run LOG`, `crest capacity LOG`); models and rules only, no I/O.

The log's own classes (crest.replay.CLASSES) are the workload's: a replay workload has no
[[workload.classes]].
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

_MODEL_CONFIG = ConfigDict(strict=True, extra="forbid", frozen=True, allow_inf_nan=False)

ReplayMode = Literal["timed", "mix", "sessions"]
REPLAY_MODES: tuple[ReplayMode, ...] = ("timed", "mix", "sessions")
# A timed or sessions mix runs the log's length ÷ speed, plus this for the last answers to come back.
REPLAY_DRAIN_S = 5
# Connections of a replay when the suite gives no ladder: twice the most requests the log shows in
# flight at once, at least this many (a log that does not say has no peak).
MIN_REPLAY_CONNECTIONS = 8
# A mix-mode suite without timing (`crest run LOG`): each mix this long, the first seconds its ramp-up.
MIX_LENGTH_S, MIX_RAMP_UP_S = 60, 10


class SessionCookie(BaseModel):
    """Sessions keyed by a cookie's value."""

    model_config = _MODEL_CONFIG

    cookie: str = Field(min_length=1)


class Replay(BaseModel):
    """An access log replayed: which log, how it is read and how it is sent."""

    model_config = _MODEL_CONFIG

    # The log; a relative path is resolved against the suite file's directory when the file is read.
    log: str = Field(min_length=1)
    # A format name (auto, combined, common, crest, caddy, h2o) or a format string (Apache % or nginx $ words).
    format: str = Field(default="auto", min_length=1)
    # timed: each request at its logged time ÷ speed, open loop; mix: the log's requests as weighted
    # classes for any ladder; sessions: one virtual user per session, the logged gaps as think time.
    mode: ReplayMode = "timed"
    speed: float = Field(default=1.0, gt=0)
    # How sessions are told apart: "client" (address and user agent) or {cookie = "NAME"}.
    session_key: Literal["client"] | SessionCookie = "client"
    session_gap_s: float = Field(default=1800.0, gt=0)
    # Lines that do not parse that the reader skips before it gives up (0: the first one stops it).
    max_bad_lines: int = Field(default=0, ge=0)
    # A directory `crest fileset from-log` wrote: the target serves it, dynamic requests go to crest's
    # dynamic page with their logged size. Relative: to the suite file's directory.
    site: str | None = None
    # Hash query strings and client addresses in what crest stores.
    hash: bool = False

    @field_validator("session_key", mode="before")
    @classmethod
    def _cookie_table(cls, value: object) -> object:
        # TOML gives {cookie = "sid"} as a dict; strict mode would not make the model of it.
        return SessionCookie.model_validate(value) if isinstance(value, dict) else value

    def reader_options(self) -> dict[str, Any]:
        """The engine's reader options (crates/replay Options) for this log."""
        key: Any = "client" if isinstance(self.session_key, str) else {"cookie": self.session_key.cookie}
        return {"format": self.format, "session_key": key, "session_gap_s": self.session_gap_s,
                "max_bad_lines": self.max_bad_lines}  # fmt: skip

    @property
    def sends_the_log(self) -> bool:
        """Whether the engine sends the log itself (timed, sessions), not a weighted table of it (mix)."""
        return self.mode != "mix"


def default_connections(peak_concurrency: int | None) -> int:
    """The connections of a replay whose suite gives none: twice the log's peak in flight, at least 8."""
    return max(MIN_REPLAY_CONNECTIONS, 2 * (peak_concurrency or 0))


def default_timing(replay: Replay, duration_s: float) -> dict[str, float]:
    """The timing of a replay whose suite gives none: timed and sessions run the log's length ÷ speed
    (whole seconds) and a drain; a mix runs MIX_LENGTH_S after MIX_RAMP_UP_S of ramp-up."""
    if replay.sends_the_log:
        return {"length_s": float(math.ceil(duration_s / replay.speed) + REPLAY_DRAIN_S)}
    return {"length_s": float(MIX_LENGTH_S), "ramp_up_s": float(MIX_RAMP_UP_S)}


def log_suite(log: str, *, duration_s: float, peak_concurrency: int | None, format: str = "auto") -> dict[str, Any]:
    """The suite crest makes of a bare log (a path given in place of a suite): its request mix, one mix
    of default_connections clients."""
    replay = Replay(log=log, format=format, mode="mix")
    return {
        "name": "replay",
        "description": f"the request mix of {log}",
        "source": "an access log (crest run LOG)",
        "workload": {"http_version": "1.1", "keepalive": True, "replay": replay.model_dump()},
        "ladder": {"clients": [default_connections(peak_concurrency)]},
        "timing": default_timing(replay, duration_s),
    }
