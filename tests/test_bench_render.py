"""crest bench's text (crest.cli.render): the HTTP/2 and HTTP/3 line and protocol, and the order of the error kinds."""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

import jsonschema
import pytest

from crest.cli.render import describe_protocol, render_header, render_report
from crest.load.runspec import RunSpec
from test_store import H2

H2_SPEC = RunSpec(url="http://127.0.0.1:18080/1k.html", http_version="2", streams=10, connections=4)
H3_SPEC = RunSpec(url="https://127.0.0.1:18443/1k.html", http_version="3", streams=10, connections=4)


def report(**changes: Any) -> dict[str, Any]:
    """An engine report of 2 s, as `crest bench --json` prints it (the parts the text reads)."""
    fields: dict[str, Any] = {
        "requests": 74068, "responses": 74068, "duration_s": 2.0, "rps": 37034.0, "bytes": 91_000_000,
        "throughput_Bps": 45_500_000.0, "connections_opened": 76, "connect_us": {"p50": 80.0},
        "latency_us": {"mean": 900.0, "p50": 800.0, "p90": 1500.0, "p99": 4000.0, "p999": 9000.0, "max": 12000.0},
        "status": {"200": 74068}, "errors": dict.fromkeys(("connect", "parse", "read", "reset", "status"), 0),
        "client_cpu_s": 1.8, "threads": 1,
    }  # fmt: skip
    return {**fields, **changes}


def test_an_http2_report_has_its_line() -> None:
    text = render_report(report(h2=H2), H2_SPEC)
    assert (
        "  HTTP/2      streams in use 9.4 mean (10 max) · HPACK 1.93× responses, 2.94× requests · 72 GOAWAYs"
        " · 0 resets · 594 refused (sent again)\n"
    ) in text
    lines = [line.split()[0] for line in text.splitlines()]
    assert lines.index("HTTP/2") == lines.index("Connections") + 1  # beside the connections, before Status


def test_an_http3_report_has_its_line_with_qpack() -> None:
    text = render_report(report(h2=H2), H3_SPEC)  # the engine fills the same counters for HTTP/3
    assert (
        "  HTTP/3      streams in use 9.4 mean (10 max) · QPACK 1.93× responses, 2.94× requests · 72 GOAWAYs"
    ) in text
    assert "HTTP/2" not in text and "HPACK" not in text


def test_the_http2_line_counts_in_the_singular_and_hides_no_refusals() -> None:
    text = render_report(report(h2={**H2, "goaways": 1, "resets": 1, "refused": 0}), H2_SPEC)
    assert "· 1 GOAWAY · 1 reset\n" in text


def test_the_client_cpu_line_counts_the_naps_when_there_were_any() -> None:
    spec = RunSpec(url="http://127.0.0.1:8080/")
    assert "  Client CPU  1.80s (90% of 1 thread), 31,020 naps\n" in render_report(report(naps=31020), spec) + "\n"
    assert "  Client CPU  1.80s (90% of 1 thread)\n" in render_report(report(naps=0), spec) + "\n"


def test_an_http1_report_has_none() -> None:
    assert "HTTP/2" not in render_report(report(), RunSpec(url="http://127.0.0.1:8080/"))


def test_the_protocol_names_the_streams_per_connection() -> None:
    assert describe_protocol(H2_SPEC) == "HTTP/2, 10 streams per connection"
    assert describe_protocol(RunSpec(url="http://x/", http_version="2")) == "HTTP/2, 1 stream per connection"
    assert describe_protocol(RunSpec(url="http://x/")) == "HTTP/1.1 keep-alive"
    assert "4 connections · HTTP/2, 10 streams per connection · closed loop" in render_header(H2_SPEC)
    assert describe_protocol(H3_SPEC) == "HTTP/3, 10 streams per connection"
    assert describe_protocol(RunSpec(url="https://x/", http_version="3")) == "HTTP/3, 1 stream per connection"
    assert "4 connections · HTTP/3, 10 streams per connection · closed loop" in render_header(H3_SPEC)


def test_error_kinds_in_order_with_validation_then_reset() -> None:
    errors = {"reset": 3, "validation": 2, "timeout": 1, "connect": 0, "zeta": 4}
    assert "  Errors      timeout 1, validation 2, reset 3, zeta 4\n" in render_report(report(errors=errors), H2_SPEC)


def test_the_bench_schema_allows_the_h2_counters() -> None:
    schema = json.loads(files("crest").joinpath("schemas/bench.schema.json").read_text())
    kinds = ("connect", "tls", "timeout", "read", "write", "status", "parse", "validation", "reset")
    doc = {**report(h2=H2), "url": H2_SPEC.url, "config": {"url": H2_SPEC.url}, "errors": dict.fromkeys(kinds, 0)}
    jsonschema.validate(doc, schema, cls=jsonschema.Draft202012Validator)
    bad = {**doc, "h2": {**H2, "goaways": -1}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema, cls=jsonschema.Draft202012Validator)
