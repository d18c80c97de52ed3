"""crest.analysis.h2: the figures derived from the engine's HTTP/2 counters."""

from __future__ import annotations

import pytest

from crest.analysis.h2 import H2Figures, h2_figures, header_codec, protocol_name, run_http_version

COUNTERS = {
    "streams_opened": 1000, "streams_in_use_sum": 9300, "streams_in_use_max": 10,
    "response_header_block_bytes": 50_000, "response_header_raw_bytes": 97_000,
    "request_header_block_bytes": 20_000, "request_header_raw_bytes": 58_800,
    "goaways": 106, "resets": 2, "refused": 7,
}  # fmt: skip


def test_figures_of_the_counters() -> None:
    assert h2_figures(COUNTERS) == H2Figures(
        streams_opened=1000, streams_in_use_mean=9.3, streams_in_use_max=10,
        hpack_ratio_response=1.94, hpack_ratio_request=2.94, goaways=106, resets=2, refused=7,
    )  # fmt: skip


@pytest.mark.parametrize("counters", [None, {}])
def test_http1_has_no_figures(counters: dict[str, int] | None) -> None:
    assert h2_figures(counters) is None


def test_nothing_counted_leaves_the_ratios_undefined() -> None:
    figures = h2_figures({**COUNTERS, "streams_opened": 0, "streams_in_use_sum": 0, "request_header_block_bytes": 0})
    assert figures is not None
    assert figures.streams_in_use_mean is None and figures.hpack_ratio_request is None
    assert figures.hpack_ratio_response == pytest.approx(1.94)


def test_missing_counters_count_as_zero() -> None:
    figures = h2_figures({"streams_opened": 4, "streams_in_use_sum": 4, "streams_in_use_max": 1})
    assert figures == H2Figures(4, 1.0, 1, None, None, 0, 0, 0)


def test_http3_runs_are_named_with_qpack_and_older_runs_read_as_http2() -> None:
    config = {"suite": {"workload": {"http_version": "3"}}}
    assert run_http_version(config) == "3"
    assert (protocol_name("3"), header_codec("3")) == ("HTTP/3", "QPACK")
    assert (protocol_name("2"), header_codec("2")) == ("HTTP/2", "HPACK")
    assert run_http_version({}) is None and run_http_version({"suite": {"workload": {}}}) is None
    assert (protocol_name(None), header_codec(None)) == ("HTTP/2", "HPACK")  # counters before HTTP/3 were HTTP/2's
