"""SPECweb99's settings as a suite carries them: the client model, the validity rules and the run shape.

Defaults are the kit's required values (reference specweb99.md §2.1, §3.2–3.5, §4.2); where the
reference marks a fact UNVERIFIED, the choice is a setting here and docs/specweb99.md says why it
was chosen. Data only: the harness (crest.specweb99) runs it, crest.analysis.specweb99 judges it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from crest.filesets.specweb import FILES_PER_CLASS, file_size
from crest.suite.errors import RuleError

_MODEL_CONFIG = ConfigDict(strict=True, extra="forbid", frozen=True, allow_inf_nan=False)

# The kit's names for the five operations, in the engine's class order (op × 4 + file class).
OPERATIONS = ("static", "dynamic", "cgi", "cad", "post")
FILE_CLASSES = 4
DEFAULT_TIMEOUT_S = 10.0


class Specweb99(BaseModel):
    """One SPECweb99 test's settings. Times are seconds; rates bits per second; shares fractions."""

    model_config = _MODEL_CONFIG

    # Where the dynamic requests go: "server" is the target's own SPECweb99 module (the built-in
    # target's in-process handlers, crest's FastCGI responder behind a real server); "cgi" sends the
    # standard dynamic GET, custom-ad GET and POST to the CGI program too (DYNAMIC_ROOT pointing at CGI).
    dynamic: Literal["server", "cgi"] = "server"
    line_speed_bps: float = Field(default=400_000, gt=0)  # USER_LINE_SPEED
    conforming_bps: float = Field(default=320_000, gt=0)  # USER_SPEED_LIMIT
    min_conforming_share: float = Field(default=0.95, gt=0, le=1)  # MIN_CONFORM_PCT
    max_error_share: float = Field(default=0.0104999, ge=0, le=1)  # per class; the kit's 1 % after %.3f rounding
    mix_tolerance: float = Field(default=0.105, ge=0, le=1)  # MIX_TOLERANCE, relative
    max_missing_posts: float = Field(default=0.01, ge=0, le=1)  # MAX_ERROR_RATE of the POST log
    keepalive_request_share: float = Field(default=0.70, ge=0, le=1)  # PERCENT_KEEP_ALIVE_REQUESTS
    # Requests per keep-alive connection, uniform: UNVERIFIED for SPECweb99, SPECweb2005's 5..15 (mean 10).
    keepalive_requests: list[int] = Field(default=[5, 15], min_length=2, max_length=2)
    # static, dynamic GET, CGI GET, custom-ad GET, POST: 70 % static, then 41.5/0.5/42/16 % of dynamic.
    request_mix: list[float] = Field(default=[0.70, 0.1245, 0.0015, 0.126, 0.048], min_length=5, max_length=5)
    class_mix: list[float] = Field(default=[0.35, 0.50, 0.14, 0.01], min_length=4, max_length=4)
    iterations: int = Field(default=3, ge=1)
    warmup_s: float = Field(default=1200, gt=0)  # before iteration 1
    rampup_s: float = Field(default=300, gt=0)  # before iterations 2..n
    run_s: float = Field(default=1200, gt=0)
    rampdown_s: float = Field(default=300, ge=0)

    @model_validator(mode="after")
    def _rules(self) -> Specweb99:
        problems: list[tuple[tuple[str, ...], str]] = []
        if self.conforming_bps > self.line_speed_bps:
            problems.append(
                (("conforming_bps",), f"may not exceed line_speed_bps {self.line_speed_bps:g} (the kit's rule)")
            )
        low, high = self.keepalive_requests
        if not 1 <= low <= high:
            problems.append((("keepalive_requests",), f"must be [min, max] with 1 <= min <= max (got [{low}, {high}])"))
        for name, shares in (("request_mix", self.request_mix), ("class_mix", self.class_mix)):
            if any(s < 0 for s in shares) or abs(sum(shares) - 1) > 1e-6:
                problems.append(((name,), f"shares must be >= 0 and add up to 1 (got {sum(shares):g})"))
        if problems:
            raise RuleError(problems)
        return self

    def request_timeout_s(self, lined: bool) -> float:
        """A request's timeout when none is given: 10 s, or, when a network's line carries the bytes
        (`lined`: --network), the largest file (class 3's 921,600 bytes) at the conforming rate with a
        quarter more. The engine's own pacing waits do not count against a timeout, but a line's slow
        transfer does: at 400 kbit/s a class-3 file takes up to 18 s, and a request slower than the
        conforming rate already makes its connection non-conforming, so it must not also be an error."""
        if not lined:
            return DEFAULT_TIMEOUT_S
        largest = max(file_size(c, n) for c in range(FILE_CLASSES) for n in range(FILES_PER_CLASS))
        return max(DEFAULT_TIMEOUT_S, round(1.25 * largest * 8 / self.conforming_bps))

    def conforming_length(self) -> bool:
        """Whether the run shape is the kit's required one (a reportable, conforming run length)."""
        return (
            self.iterations == 3
            and self.warmup_s >= 1200
            and self.rampup_s == 300
            and self.run_s == 1200
            and self.rampdown_s == 300
        )


# The shape `--profile quick` runs: long enough that a class-3 file's pacing (up to 18 s at
# 400 kbit/s) stays well inside the measured window, short enough for tests.
QUICK = {"warmup_s": 5.0, "rampup_s": 3.0, "run_s": 30.0, "rampdown_s": 1.0}
# `--profile smoke`: seconds, to check that the harness, the target and the network work end to end
# before a long test; too short for class 3's slow files to settle, so a measurement it is not.
SMOKE = {"warmup_s": 2.0, "rampup_s": 1.0, "run_s": 8.0, "rampdown_s": 1.0}
# `--profile standard`: minutes, not hours.
STANDARD = {"warmup_s": 60.0, "rampup_s": 30.0, "run_s": 120.0, "rampdown_s": 10.0}


def class_names() -> tuple[str, ...]:
    """The engine's class names of a SPECweb99 run, index = operation × 4 + file class."""
    return tuple(f"{op}/class{c}" for op in OPERATIONS for c in range(FILE_CLASSES))
