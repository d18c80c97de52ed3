"""Unit tests of RunSpec validation, header and source-address parsing: every message is checked."""

from __future__ import annotations

import pytest

from crest.errors import ConfigError
from crest.runspec import RunSpec, parse_header, parse_source_addrs

URL = "http://127.0.0.1:8080/1k.html"


def test_valid_spec_builds_the_run_config() -> None:
    spec = RunSpec(url=URL, connections=32, threads=2, duration_s=3.0, headers=(("Accept", "*/*"),))
    target = spec.validate()
    assert (target.host, target.port, target.tls) == ("127.0.0.1", 8080, False)
    config = spec.to_config()
    assert config["url"] == URL
    assert config["headers"] == [["Accept", "*/*"]]
    assert (config["connections"], config["threads"], config["duration_s"]) == (32, 2, 3.0)
    assert config["rate_rps"] is None and config["max_requests"] is None
    # Both receive buffers are the engine's (64 KiB reads) and the kernel's unless asked.
    assert "read_buffer_bytes" not in config and config["socket_rcvbuf_bytes"] is None
    asked = RunSpec(url=URL, read_buffer_bytes=4096, socket_rcvbuf_bytes=8192).to_config()
    assert (asked["read_buffer_bytes"], asked["socket_rcvbuf_bytes"]) == (4096, 8192)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"connections": 1, "threads": 4}, r"connections \(1\) must be >= threads \(4\): .*raise -c or lower -t"),
        (
            {"rate_rps": 100.0, "think_time_s": 1.0},
            r"--rate and --think-time conflict: think time is a closed-loop setting",
        ),
        ({"pipeline": 4, "http_version": "1.0"}, r"pipelining \(depth 4\) needs HTTP/1\.1 with keep-alive"),
        ({"pipeline": 4, "keepalive": False}, r"pipelining \(depth 4\) needs HTTP/1\.1 with keep-alive"),
        ({"rate_rps": 0.0}, r"rate \(0 req/s\) must be greater than 0"),
        ({"rate_rps": -5.0}, r"rate \(-5 req/s\) must be greater than 0"),
        (
            {"duration_s": None, "max_requests": None},
            r"no stop condition: give a duration \(-d 10s\) or a request count",
        ),
        ({"duration_s": 0.0}, r"duration \(0\.0s\) must be greater than 0"),
        ({"max_requests": 0}, r"request count \(0\) must be at least 1"),
        ({"timeout_s": 0.0}, r"timeout \(0\.0s\) must be greater than 0"),
        ({"think_time_s": -1.0}, r"think time \(-1\.0s\) must not be negative"),
        ({"connections": 0, "threads": 0}, r"connections \(0\) must be at least 1"),
        ({"threads": 0}, r"threads \(0\) must be at least 1"),
        ({"pipeline": 0}, r"pipeline depth \(0\) must be at least 1"),
        ({"read_buffer_bytes": 0}, r"read buffer \(0 B\) must be 1 B to 16777216 B \(16 MiB\)"),
        ({"read_buffer_bytes": (16 << 20) + 1}, r"read buffer \(16777217 B\) must be 1 B to 16777216 B"),
        ({"socket_rcvbuf_bytes": 0}, r"socket receive buffer \(0 B\) must be at least 1 byte; leave it out"),
        ({"method": "GE T"}, r"invalid method 'GE T': expected a token such as GET or POST"),
        ({"http_version": "2"}, r"invalid HTTP version '2': expected 1\.0 or 1\.1"),
        ({"headers": (("X-A", "b\r\nc"),)}, r"invalid value for header 'X-A': it must not contain CR, LF or NUL"),
        ({"source_addrs": ("nope",)}, r"invalid source address 'nope'"),
        ({"url": "foo"}, r"invalid URL 'foo': expected http://host\[:port\]/path or https://"),
    ],
)
def test_invalid_specs_name_the_problem(changes: dict[str, object], message: str) -> None:
    settings: dict[str, object] = {"url": URL, "threads": 1, **changes}
    with pytest.raises(ConfigError, match=message):
        RunSpec(**settings).validate()  # type: ignore[arg-type]


def test_parse_header() -> None:
    assert parse_header("Accept: text/html") == ("Accept", "text/html")
    assert parse_header("X-Empty:") == ("X-Empty", "")
    assert parse_header("Cookie: a=b: c") == ("Cookie", "a=b: c")
    with pytest.raises(ConfigError, match=r"invalid header 'bad': expected 'Name: value', e\.g\. 'Accept: \*/\*'"):
        parse_header("bad")
    with pytest.raises(ConfigError, match=r"invalid header ': x': expected 'Name: value'"):
        parse_header(": x")
    with pytest.raises(ConfigError, match=r"invalid header name 'X Y': expected 'Name: value'"):
        parse_header("X Y: z")


def test_parse_source_addrs() -> None:
    assert parse_source_addrs("127.0.0.2-127.0.0.4") == ("127.0.0.2", "127.0.0.3", "127.0.0.4")
    assert parse_source_addrs("127.0.0.2,127.0.0.9") == ("127.0.0.2", "127.0.0.9")
    assert parse_source_addrs("::1") == ("::1",)
    assert parse_source_addrs("10.0.0.1", allow_non_loopback=True) == ("10.0.0.1",)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("127.0.0.9-127.0.0.2", r"invalid source address range '127\.0\.0\.9-127\.0\.0\.2'"),
        ("127.0.0.1-::1", r"invalid source address range"),
        ("localhost", r"invalid source address 'localhost': e\.g\. 127\.0\.0\.2-127\.0\.0\.20"),
        (",", r"invalid source addresses ','"),
        ("127.0.0.0-127.1.0.0", r"too many source addresses in '127\.0\.0\.0-127\.1\.0\.0': at most 4096"),
        ("10.0.0.1", r"source address 10\.0\.0\.1 is not a loopback address: add --allow-non-loopback-sources"),
    ],
)
def test_parse_source_addrs_rejects(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_source_addrs(text)
