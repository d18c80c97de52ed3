"""Timing of one mix (WebBench's ramp-up, length, ramp-down, delay, think time) and the profiles that scale it; no I/O.

Profiles change durations and nothing else, so a quick run has the same ladder,
threads and request mix as the published one.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from crest.suite.errors import RuleError, SuiteError, show

PROFILES = ("quick", "standard", "full")
STANDARD_LENGTH_S = 60
QUICK_LENGTH_S, QUICK_RAMP_S, QUICK_MAX_DELAY_S = 4, 1, 0.5

_MODEL_CONFIG = ConfigDict(strict=True, extra="forbid", frozen=True, allow_inf_nan=False)


class Timing(BaseModel):
    """Seconds. length_s INCLUDES ramp-up and ramp-down (WebBench's definition); only the window is measured."""

    model_config = _MODEL_CONFIG

    length_s: float = Field(gt=0)
    ramp_up_s: float = Field(default=0, ge=0)
    ramp_down_s: float = Field(default=0, ge=0)
    # Each client waits a random time in [0, delay_s] before it starts (staggered start).
    delay_s: float = Field(default=0, ge=0)
    # Pause of each thread between a response and its next request (closed loop).
    think_time_s: float = Field(default=0, ge=0)

    @field_validator("length_s", "ramp_up_s", "ramp_down_s")
    @classmethod
    def _whole_seconds(cls, value: float) -> float:
        # The runner cuts windows on whole-second timeline buckets.
        if value != math.floor(value):
            raise ValueError(f"must be a whole number of seconds (got {show(value)})")
        return value

    @model_validator(mode="after")
    def _window(self) -> Timing:
        if self.window_s <= 0:
            raise RuleError(
                [
                    (
                        (),
                        (
                            "the window (length_s − ramp_up_s − ramp_down_s) must be > 0"
                            f" (got {self.length_s:g} − {self.ramp_up_s:g} − {self.ramp_down_s:g} = {self.window_s:g})"
                        ),
                    )
                ]
            )
        if self.delay_s >= self.length_s - self.ramp_down_s:
            raise RuleError(
                [
                    (
                        ("delay_s",),
                        (
                            "must be < length_s − ramp_down_s so every client starts before the ramp-down"
                            f" (got {self.delay_s:g} with length_s − ramp_down_s = {self.length_s - self.ramp_down_s:g})"
                        ),
                    )
                ]
            )
        return self

    @property
    def window_s(self) -> float:
        """The measured part of a mix: length minus ramp-up and ramp-down."""
        return self.length_s - self.ramp_up_s - self.ramp_down_s


def _half_up(x: float) -> int:
    # Python's round() rounds halves to even; durations read better rounded up.
    return math.floor(x + 0.5)


def scale_timing(timing: Timing, profile: str) -> Timing:
    """The timing a profile runs: full = as published, standard ≤ 60 s, quick = 4 s with a 2 s window.

    standard: length min(60 s, own); ramps keep their share of the length (whole
    seconds) but together take at most a third of it; delay is capped so every
    client has started by length/3 − ramp-down, i.e. all clients run for at least
    2/3 of the length; think time is unchanged.
    quick: length 4 s, ramp-up 1 s, ramp-down 1 s, delay min(delay, 0.5 s), think time unchanged.
    """
    if profile == "full":
        return timing
    if profile == "quick":
        return Timing(
            length_s=QUICK_LENGTH_S,
            ramp_up_s=QUICK_RAMP_S,
            ramp_down_s=QUICK_RAMP_S,
            delay_s=min(timing.delay_s, QUICK_MAX_DELAY_S),
            think_time_s=timing.think_time_s,
        )
    if profile != "standard":
        raise SuiteError(f"unknown profile {show(profile)}: expected one of {', '.join(PROFILES)}")
    if timing.length_s <= STANDARD_LENGTH_S:
        return timing
    length = STANDARD_LENGTH_S
    up = _half_up(length * timing.ramp_up_s / timing.length_s)
    down = _half_up(length * timing.ramp_down_s / timing.length_s)
    budget = length // 3
    if up + down > budget:
        up_share = up / (up + down)
        up = math.floor(budget * up_share)
        down = budget - up
    delay = min(timing.delay_s, float(length // 3 - down))
    return Timing(length_s=length, ramp_up_s=up, ramp_down_s=down, delay_s=delay, think_time_s=timing.think_time_s)
