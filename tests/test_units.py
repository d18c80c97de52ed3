"""Unit tests of crest.units: parsing and formatting, pure functions."""

from __future__ import annotations

import pytest

from crest.errors import ConfigError
from crest.units import (
    format_bytes,
    format_count,
    format_latency_us,
    format_seconds,
    format_span,
    parse_count,
    parse_duration,
    parse_rate,
)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("10s", 10.0),
        ("1m", 60.0),
        ("500ms", 0.5),
        ("2h", 7200.0),
        ("1.5s", 1.5),
        ("30", 30.0),
        ("0.25", 0.25),
        ("1m30s", 90.0),
        ("250us", 0.00025),
        (" 3s ", 3.0),
    ],
)
def test_parse_duration_accepts(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["10x", "-1s", "", "s", "1.2.3s", "inf", "nan", "10 s", "1d"])
def test_parse_duration_rejects_with_example(text: str) -> None:
    with pytest.raises(ConfigError, match=r"invalid duration .*: expected a number with a unit, e\.g\. 10s"):
        parse_duration(text)


def test_parse_duration_zero_only_where_meaningful() -> None:
    with pytest.raises(ConfigError, match=r"invalid --duration '0s': must be greater than 0, e\.g\. 10s"):
        parse_duration("0s", what="--duration")
    assert parse_duration("0s", allow_zero=True) == 0.0
    assert parse_duration("0", allow_zero=True) == 0.0


@pytest.mark.parametrize(
    ("text", "count"), [("100", 100), ("10k", 10_000), ("10K", 10_000), ("1.5M", 1_500_000), ("2G", 2 * 10**9)]
)
def test_parse_count(text: str, count: int) -> None:
    assert parse_count(text) == count


def test_parse_count_rejects() -> None:
    with pytest.raises(ConfigError, match=r"invalid -n '1\.5': must be a whole number, e\.g\. 100 or 10k"):
        parse_count("1.5", what="-n")
    with pytest.raises(ConfigError, match=r"invalid count '10x': expected a number, e\.g\. 100, 10k, 1M"):
        parse_count("10x")
    with pytest.raises(ConfigError, match=r"invalid count '-3': expected a number"):
        parse_count("-3")
    with pytest.raises(ConfigError, match=r"invalid count '0': must be at least 1"):
        parse_count("0")
    assert parse_count("0", allow_zero=True) == 0


def test_parse_rate() -> None:
    assert parse_rate("200") == 200.0
    assert parse_rate("0.5") == 0.5
    assert parse_rate("10k") == 10_000.0
    with pytest.raises(ConfigError, match=r"invalid rate '0': must be greater than 0"):
        parse_rate("0")
    with pytest.raises(ConfigError, match=r"invalid rate 'fast': expected a number"):
        parse_rate("fast")


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (0, "0 B"),
        (999, "999 B"),
        (1000, "1.00 KB"),
        (1024, "1.02 KB"),
        (131_200_000, "131.2 MB"),
        (1_310_000_000, "1.31 GB"),
        (12_345_678, "12.35 MB"),
    ],
)
def test_format_bytes_is_decimal_si(n: int, text: str) -> None:
    assert format_bytes(n) == text


@pytest.mark.parametrize(
    ("us", "text"),
    [
        (0, "0us"),
        (812, "812us"),
        (812.4, "812us"),
        (999.4, "999us"),
        (1200, "1.20ms"),
        (45_670, "45.67ms"),
        (2_310_000, "2.31s"),
    ],
)
def test_format_latency_us(us: float, text: str) -> None:
    assert format_latency_us(us) == text


def test_format_count_and_seconds() -> None:
    assert format_count(1_234_567) == "1,234,567"
    assert format_seconds(10.0) == "10s"
    assert format_seconds(1.5) == "1.5s"
    assert format_seconds(120.0) == "2m"
    assert format_seconds(90.0) == "1m30s"


def test_parse_values_splits_on_unescaped_commas_and_refuses_empty_or_repeated_items() -> None:
    from crest.units import parse_values

    assert parse_values(" nginx , apache-event", what="--server") == ["nginx", "apache-event"]
    assert parse_values(r"a\,b,c", what="--server-opt K") == ["a,b", "c"]
    with pytest.raises(ConfigError, match=r"^--memory '1G,' has an empty item: give comma-separated values, e.g. 1,2$"):
        parse_values("1G,", what="--memory")
    with pytest.raises(ConfigError, match=r"^--server 'a,a' repeats a value: give each once$"):
        parse_values("a,a", what="--server")


def test_format_span_reads_as_people_say_it() -> None:
    assert [format_span(s) for s in (4, 59.4, 60, 720, 3600, 9600, 5400.4)] == [
        "4 s", "59 s", "1 min", "12 min", "1 h", "2 h 40 min", "1 h 30 min"
    ]  # fmt: skip
