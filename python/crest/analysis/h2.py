"""HTTP/2's (and HTTP/3's) figures of a mix: how many streams a connection carried at once, what HPACK
(QPACK for HTTP/3) saved, and what the servers ended (GOAWAYs, stream resets, refused streams), derived
from the engine's raw counters (crates/engine/src/stats/h2.rs; stored as a mix's h2, the same counters
for both versions). Pure: no printing; HTTP/1.x has no counters.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class H2Figures:
    """One mix's (or one bench's) HTTP/2 or HTTP/3 figures; a ratio is None when its denominator counted nothing."""

    streams_opened: int
    # The mean streams open on a connection as a request went out, the new one included.
    streams_in_use_mean: float | None
    streams_in_use_max: int
    # HTTP/1.1 text bytes of the same header fields ÷ the HPACK (HTTP/3: QPACK) block bytes on the wire.
    hpack_ratio_response: float | None
    hpack_ratio_request: float | None
    goaways: int
    resets: int  # streams the server reset (RST_STREAM; HTTP/3: RESET_STREAM), each also a "reset" error
    refused: int  # streams the server refused (past a GOAWAY's last stream, REFUSED_STREAM), sent again


def h2_figures(counters: Mapping[str, Any] | None) -> H2Figures | None:
    """The figures of the engine's h2 counters; None without counters (an HTTP/1.x run)."""
    if not counters:
        return None

    def count(key: str) -> int:
        return int(counters.get(key) or 0)

    opened = count("streams_opened")
    return H2Figures(
        streams_opened=opened,
        streams_in_use_mean=_ratio(count("streams_in_use_sum"), opened),
        streams_in_use_max=count("streams_in_use_max"),
        hpack_ratio_response=_ratio(count("response_header_raw_bytes"), count("response_header_block_bytes")),
        hpack_ratio_request=_ratio(count("request_header_raw_bytes"), count("request_header_block_bytes")),
        goaways=count("goaways"),
        resets=count("resets"),
        refused=count("refused"),
    )


def protocol_name(http_version: str | None) -> str:
    """The label of a run's stream figures: "HTTP/3" for an HTTP/3 run, else "HTTP/2" (the counters
    came from one of the two; a record without its version predates HTTP/3)."""
    return "HTTP/3" if http_version == "3" else "HTTP/2"


def header_codec(http_version: str | None) -> str:
    """What compressed the header blocks the ratios divide by: QPACK for HTTP/3, HPACK for HTTP/2."""
    return "QPACK" if http_version == "3" else "HPACK"


def run_http_version(config: Mapping[str, Any]) -> str | None:
    """The HTTP version a stored run spoke (its meta config's suite workload); None when not recorded."""
    suite = config.get("suite") if isinstance(config, Mapping) else None
    workload = suite.get("workload") if isinstance(suite, Mapping) else None
    version = workload.get("http_version") if isinstance(workload, Mapping) else None
    return str(version) if version is not None else None


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator > 0 else None
