"""crest.analysis.h2: the figures derived from the engine's HTTP/2 counters."""

from __future__ import annotations

import pytest

from crest.analysis.h2 import H2Figures, h2_figures

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
