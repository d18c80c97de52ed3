"""Unit tests of RunSpec validation (the engine's rules, worded as flags or suite settings), header and
source-address parsing: every message is checked. In-process, no sockets."""

from __future__ import annotations

import json

import pytest

from crest import _engine
from crest.errors import ConfigError
from crest.load.runspec import FIELD_LABELS, RunSpec, engine_message, parse_header, parse_source_addrs

URL = "http://127.0.0.1:8080/1k.html"
H3_URL = "https://127.0.0.1:8443/1k.html"  # HTTP/3 is QUIC, always encrypted


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
    # Naps are the engine's default; only turning them off is sent.
    assert "nap" not in config and RunSpec(url=URL, nap=False).to_config()["nap"] is False


# Every rule is the engine's (plan.rs); each message names the `crest bench` flag the value came from.
@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"connections": 1, "threads": 4},
            r"^-c/--connections \(1\) must be >= -t/--threads \(4\): each thread needs a connection;"
            r" raise -c/--connections or lower -t/--threads$",
        ),
        (
            {"rate_rps": 100.0, "think_time_s": 1.0},
            r"^--rate and --think-time conflict: think time is a closed-loop setting",
        ),
        ({"rate_rps": 100.0, "pipeline": 2}, r"^--rate and --pipeline conflict: pipelining is a closed-loop setting"),
        (
            {"pipeline": 4, "http_version": "1.0"},
            r"^pipelining \(--pipeline 4\) needs HTTP/1\.1 with keep-alive: drop --pipeline or use --http 1\.1"
            r" with --keepalive$",
        ),
        ({"pipeline": 4, "keepalive": False}, r"^pipelining \(--pipeline 4\) needs HTTP/1\.1 with keep-alive"),
        ({"pipeline": 300}, r"^--pipeline must be 1 to 256 \(got 300\)$"),
        ({"rate_rps": 0.0}, r"^--rate must be > 0 requests/s \(got 0\)$"),
        ({"duration_s": None, "max_requests": None}, r"^no stop condition: give -d/--duration or -n/--requests$"),
        ({"duration_s": 0.0}, r"^-d/--duration must be > 0 and at most a week \(got 0 s\)$"),
        ({"duration_s": 8 * 86400.0}, r"^-d/--duration must be > 0 and at most a week \(got 691200 s\)$"),
        ({"max_requests": 0}, r"^-n/--requests must be at least 1 \(got 0\)$"),
        ({"timeout_s": 0.0}, r"^--timeout must be > 0 and at most 1 h \(got 0 s\)$"),
        ({"timeout_s": 7200.0}, r"^--timeout must be > 0 and at most 1 h \(got 7200 s\)$"),
        ({"think_time_s": -1.0}, r"^--think-time must be >= 0 s \(got -1\)$"),
        ({"connections": 0, "threads": 0}, r"^-c/--connections must be at least 1 \(got 0\)$"),
        ({"threads": 0}, r"^-t/--threads must be at least 1 \(got 0\)$"),
        ({"pipeline": 0}, r"^--pipeline must be 1 to 256 \(got 0\)$"),
        ({"read_buffer_bytes": 0}, r"^--read-buffer must be 1 B to 16777216 B \(16 MiB\) \(got 0\)$"),
        (
            {"read_buffer_bytes": (16 << 20) + 1},
            r"^--read-buffer must be 1 B to 16777216 B \(16 MiB\) \(got 16777217\)$",
        ),
        (
            {"socket_rcvbuf_bytes": 0},
            r"^--socket-rcvbuf must be at least 1 byte \(got 0\); leave it out for the kernel",
        ),
        ({"method": "GE T"}, r"^invalid -m/--method 'GE T': expected an HTTP token such as GET or POST$"),
        ({"headers": (("X Y", "z"),)}, r"^invalid -H/--header name 'X Y': expected 'Name: value'"),
        (
            {"headers": (("X-A", "b\r\nc"),)},
            r"^invalid -H/--header value of 'X-A': it must not contain CR, LF or NUL$",
        ),
        ({"source_addrs": ("nope",)}, r"^invalid --source-addrs 'nope': not an IP address \(e\.g\. 127\.0\.0\.2\)$"),
        ({"http_version": "4"}, r"^invalid --http '4': expected 1\.0, 1\.1, 2 or 3$"),
        ({"streams": 4}, r"^--streams \(4\) needs HTTP/2 or HTTP/3: set --http to 2 or 3, or drop --streams$"),
        ({"http_version": "2", "pipeline": 2}, r"^--pipeline does not apply to HTTP/2: use --streams"),
        (
            {"http_version": "3"},
            r"^HTTP/3 runs over QUIC, which is always encrypted: http://127\.0\.0\.1:8080 needs https://$",
        ),
        ({"url": H3_URL, "http_version": "3", "pipeline": 2}, r"^--pipeline does not apply to HTTP/3: use --streams"),
        ({"url": H3_URL, "http_version": "3", "keepalive": False}, r"^--keepalive does not apply to HTTP/3"),
        ({"url": H3_URL, "http_version": "3", "streams": 2000}, r"^--streams must be 1 to 1024 per connection"),
        ({"http_version": "2", "streams": 0}, r"^--streams must be 1 to 1024 per connection \(got 0\)$"),
        (
            {"http_version": "2", "h2_connection_window_bytes": 0},
            r"^--h2-connection-window must be 1 to 2\^31-1 bytes \(got 0\)$",
        ),
        ({"url": "foo"}, r"^invalid URL 'foo': expected http://host\[:port\]/path or https://"),
    ],
)
def test_engine_rules_name_the_bench_flag(changes: dict[str, object], message: str) -> None:
    settings: dict[str, object] = {"url": URL, "threads": 1, **changes}
    with pytest.raises(ConfigError, match=message):
        RunSpec(**settings).validate("bench")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"read_buffer_bytes": 0}, r"^workload\.read_buffer_bytes must be 1 B to 16777216 B \(16 MiB\) \(got 0\)$"),
        ({"window_s": (5.0, 5.0)}, r"^timing\.ramp_up_s and timing\.ramp_down_s must be \[start, end\) seconds"),
        ({"connections_per_client": 0}, r"^ladder\.threads_per_client must be at least 1 \(got 0\)$"),
        ({"client_start_delay_s": -1.0}, r"^timing\.delay_s must be >= 0 s \(got -1\)$"),
        (
            {"requests": ({"url": URL, "weight": 0.0},)},
            r"^the workload's request table\[0\]: weight must be > 0 \(got 0\)$",
        ),
        ({"requests": ({"url": URL, "weight": 1.0, "class": 3},)}, r"class 3 is not one of the 1 classes$"),
        ({"http_version": "4"}, r"^invalid workload\.http_version '4': expected 1\.0, 1\.1, 2 or 3$"),
        (
            {"streams": 4},
            r"^workload\.streams \(4\) needs HTTP/2 or HTTP/3: set workload\.http_version to 2 or 3, or drop"
            r" workload\.streams$",
        ),
        (
            {"http_version": "3", "requests": ({"url": URL, "weight": 1.0},)},
            r"^HTTP/3 runs over QUIC, which is always encrypted: http://127\.0\.0\.1:8080 needs https://$",
        ),
    ],
)
def test_engine_rules_name_the_suite_setting(changes: dict[str, object], message: str) -> None:
    settings: dict[str, object] = {"url": URL, **changes}
    with pytest.raises(ConfigError, match=message):
        RunSpec(**settings).validate("suite")  # type: ignore[arg-type]


def test_http3_runs_over_https_with_streams_and_quic_windows() -> None:
    spec = RunSpec(url=H3_URL, http_version="3", streams=10, h2_stream_window_bytes=65_536,
                   h2_connection_window_bytes=1 << 20)  # fmt: skip
    target = spec.validate("bench")
    assert (target.port, target.tls) == (8443, True)
    config = spec.to_config()
    assert (config["http_version"], config["keepalive"], config["streams"]) == ("3", True, 10)
    assert (config["h2_stream_window_bytes"], config["h2_connection_window_bytes"]) == (65_536, 1 << 20)


def test_engine_validation_is_structured() -> None:
    config = RunSpec(url=URL, connections=2, threads=3).to_config()
    with pytest.raises(_engine.ConfigError) as caught:
        _engine.validate(json.dumps(config))
    assert caught.value.field == "threads"
    assert caught.value.template.startswith("{connections} (2) must be >= {threads} (3)")
    assert str(caught.value).startswith("connections (2) must be >= threads (3)")
    _engine.validate(json.dumps(RunSpec(url=URL).to_config()))  # valid: returns None


def test_engine_validation_needs_no_dns() -> None:
    # .invalid never resolves (RFC 6761): validation checks the URL's form only; resolving is the run's.
    RunSpec(url="http://crest-gate.invalid:8080/").validate("bench")


def test_every_labelled_field_is_an_engine_key() -> None:
    # The table names only keys the engine knows: a key it does not know fails as malformed JSON.
    # read_buffer_bytes, SPECweb99's settings, a file run's loadfile, a replay, a script, a HAR's pages and HTTP/2's streams and
    # windows are sent only when set.
    spec = RunSpec(
        url=URL, read_buffer_bytes=4096, line_speed_bps=400_000.0, keepalive_requests=(5, 15),
        specweb99={"base_url": URL, "dirs": 30}, loadfile={"path": "/usr/share/dbench/client.txt"},
        streams=4, h2_stream_window_bytes=65_535, h2_connection_window_bytes=1 << 20, nap=False,
        replay={"log": "/var/log/nginx/access.log"}, script={"steps": []}, pages={"pages": []},
    )  # fmt: skip
    config = spec.to_config()
    for key in FIELD_LABELS:
        assert key in config, key
    assert engine_message("{connections} vs {threads} vs {nokey}", "bench") == (
        "-c/--connections vs -t/--threads vs nokey"
    )
    # The log reader's refusals at the engine (a log changed since it was checked) name its options as a
    # suite gives them.
    assert engine_message("give the log's own format string as {format}", "suite") == (
        "give the log's own format string as workload.replay.format"
    )


def test_parse_header() -> None:
    assert parse_header("Accept: text/html") == ("Accept", "text/html")
    assert parse_header("X-Empty:") == ("X-Empty", "")
    assert parse_header("Cookie: a=b: c") == ("Cookie", "a=b: c")
    with pytest.raises(ConfigError, match=r"invalid header 'bad': expected 'Name: value', e\.g\. 'Accept: \*/\*'"):
        parse_header("bad")
    with pytest.raises(ConfigError, match=r"invalid header ': x': expected 'Name: value'"):
        parse_header(": x")


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
