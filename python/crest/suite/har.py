"""`[workload.har]`: a HAR recording as a suite's workload (each client a browser loading the recorded pages
in turn), and the suite crest makes of a bare HAR file (`crest run page.har`); models and rules only, no I/O.

The classes are the page load's own (crest.replay.har: resource classes, then one `page:<name>` per page):
a HAR workload has no [[workload.classes]].
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

_MODEL_CONFIG = ConfigDict(strict=True, extra="forbid", frozen=True, allow_inf_nan=False)
# A browser's connections to one host over HTTP/1.x (Chrome's and Firefox's limit); over HTTP/2 it opens one
# connection and multiplexes at least this many streams on it.
BROWSER_CONNECTIONS = 6
# Where a recorded host's requests go: a URL (scheme, host, port) or "skip" (not sent: a third party).
_HOST_URL = re.compile(r"https?://[^/?#\s]+/?")
SKIP = "skip"
# A bare HAR (`crest run page.har`): one browser, this long, the first seconds its ramp-up.
HAR_LENGTH_S, HAR_RAMP_UP_S = 30, 5


class HarWorkload(BaseModel):
    """A HAR recording replayed as page loads."""

    model_config = _MODEL_CONFIG

    # The HAR file; a relative path is resolved against the suite file's directory when the file is read.
    file: str = Field(min_length=1)
    # Pause after a page has loaded before the client loads the next page (pages cycle).
    think_s: float = Field(default=0.0, ge=0)
    # Connections per client (the browser's per-host limit over HTTP/1.x; over HTTP/2 the streams of its one).
    connections: int = Field(default=BROWSER_CONNECTIONS, ge=1, le=64)
    # A recorded host ("cdn.example.com" or "example.com:8443") → where its requests go: a URL, or "skip".
    # Hosts not named go to the run's target, path and query kept.
    hosts: dict[str, str] = {}
    # A directory the target serves in place of the recorded site (relative: to the suite file's directory);
    # None: a target crest starts serves a site written from the HAR (each recorded file with its size).
    site: str | None = None

    @field_validator("hosts")
    @classmethod
    def _hosts(cls, value: dict[str, str]) -> dict[str, str]:
        for host, where in value.items():
            if where != SKIP and not _HOST_URL.fullmatch(where):
                raise ValueError(f"hosts[{host!r}] must be a URL with no path (http://127.0.0.1:8081) or"
                                 f" \"skip\" (got {where!r})")  # fmt: skip
        return value


def har_suite(path: str) -> dict[str, Any]:
    """The suite crest makes of a bare HAR file: one browser loading its pages in turn over HTTP/1.1."""
    return {
        "name": "har",
        "description": f"the page loads of {path}",
        "source": "a HAR recording (crest run PAGE.har)",
        "workload": {"http_version": "1.1", "keepalive": True, "har": HarWorkload(file=path).model_dump()},
        "ladder": {"clients": [1]},
        "timing": {"length_s": float(HAR_LENGTH_S), "ramp_up_s": float(HAR_RAMP_UP_S)},
    }
