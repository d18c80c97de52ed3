"""`crest bench` end to end: the real CLI and engine against the real built-in target."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from crest.servers import BuiltinServer, ServeSpec
from support import connected_to, run_cli, start_cli, wait_until

pytestmark = pytest.mark.integration

ERROR_KINDS = ("connect", "tls", "timeout", "read", "write", "status", "parse")


def bench_json(*args: str) -> dict[str, Any]:
    result = run_cli("bench", "--json", *args)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stdout.strip().splitlines()) == 1  # exactly one JSON object, nothing else
    report: dict[str, Any] = json.loads(result.stdout)
    schema = json.loads(files("crest").joinpath("schemas/bench.schema.json").read_text())
    jsonschema.validate(report, schema, cls=jsonschema.Draft202012Validator)
    return report


def assert_no_errors(report: dict[str, Any]) -> None:
    assert {kind: report["errors"][kind] for kind in ERROR_KINDS} == dict.fromkeys(ERROR_KINDS, 0)


def test_json_report_matches_schema(builtin_target: str) -> None:
    report = bench_json("-d", "1s", "-c", "4", builtin_target + "1k.html")
    assert report["requests"] > 0
    assert_no_errors(report)
    assert report["status"] == {"200": report["requests"]}
    assert report["url"] == builtin_target + "1k.html"
    assert report["config"]["connections"] == 4
    assert report["open_loop"] is False
    assert report["cancelled"] is False
    # Every response carries the 1024-byte body; headers come on top.
    assert report["body_bytes"] == 1024 * report["responses"]
    assert report["bytes"] > report["body_bytes"]


def test_human_output(builtin_target: str) -> None:
    result = run_cli("bench", "-d", "1s", "-c", "4", "-t", "2", builtin_target + "10k.html")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith(f"Running 1s test @ {builtin_target}10k.html\n")
    assert "2 threads and 4 connections · HTTP/1.1 keep-alive · closed loop" in out
    for label in ("Latency", "Requests", "Transfer", "Connections", "Status", "Errors"):
        assert f"  {label}" in out
    assert "Errors      none" in out
    assert result.stderr == ""  # no progress line when stderr is not a terminal


def test_request_count_is_exact(builtin_target: str) -> None:
    report = bench_json("-n", "100", "-c", "4", builtin_target + "1k.html")
    assert report["requests"] == 100
    assert_no_errors(report)


def test_http10_without_keepalive_opens_a_connection_per_request(builtin_target: str) -> None:
    report = bench_json("--no-keepalive", "--http", "1.0", "-n", "50", "-c", "2", builtin_target + "1k.html")
    assert report["requests"] == 50
    assert report["connections_opened"] >= 50
    assert_no_errors(report)


def test_read_buffer_and_socket_rcvbuf_reach_the_engine(builtin_target: str) -> None:
    report = bench_json("--read-buffer", "4K", "-n", "20", "-c", "2", builtin_target + "10k.html")
    assert (report["config"]["read_buffer_bytes"], report["config"]["socket_rcvbuf_bytes"]) == (4096, None)
    assert report["requests"] == 20 and report["body_bytes"] == 20 * 10240
    assert_no_errors(report)
    report = bench_json("--socket-rcvbuf", "8192", "-n", "20", "-c", "2", builtin_target + "10k.html")
    assert "read_buffer_bytes" not in report["config"] and report["config"]["socket_rcvbuf_bytes"] == 8192
    assert report["requests"] == 20
    assert_no_errors(report)


def test_no_nap_reaches_the_engine(builtin_target: str) -> None:
    report = bench_json("--no-nap", "-n", "20", "-c", "2", builtin_target + "1k.html")
    assert report["config"]["nap"] is False and report["naps"] == 0
    assert report["requests"] == 20
    assert "nap" not in bench_json("-n", "20", "-c", "2", builtin_target + "1k.html")["config"]


def test_open_loop_rate(builtin_target: str) -> None:
    report = bench_json("--rate", "200", "-d", "1s", "-c", "4", builtin_target + "1k.html")
    assert report["open_loop"] is True
    assert report["rate_rps"] == 200
    # Generous bounds only: the schedule sends ~200 in 1 s; timing itself is the engine's tests' job.
    assert 0 < report["requests"] <= 200 * report["duration_s"] + 50
    assert_no_errors(report)


def test_ctrl_c_prints_the_partial_result_and_exits_130(builtin_target: str) -> None:
    with start_cli("bench", "-d", "30s", "-c", "2", builtin_target + "1k.html") as proc:
        try:
            assert proc.stdout is not None
            header = proc.stdout.readline()  # printed once the preflight is done, just before the run starts
            # The engine's own connection, not the preflight's (closed before the header): the run is going.
            wait_until(lambda: connected_to(proc.pid, builtin_target), 20, "crest bench connecting to the target")
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=20)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    out = header + out
    assert proc.returncode == 130, err
    assert "Requests" in out
    assert "Interrupted after" in out
    assert err.strip().splitlines()[-1] == "crest: interrupted"
    assert "Traceback" not in err


def test_version() -> None:
    result = run_cli("version")
    assert result.returncode == 0
    assert result.stdout.startswith("crest ")
    assert "(engine " in result.stdout
    assert run_cli("--version").stdout == result.stdout  # the usual spelling says the same


@pytest.fixture
def tls_target(docroot: Path) -> Iterator[str]:
    """The built-in target with its main listener on TLS (self-signed); yields the https base URL."""
    with BuiltinServer(ServeSpec(docroot=docroot, tls=True)) as server:
        assert server.url.startswith("https://")
        yield server.url


def test_tls_new_connection_per_request(tls_target: str) -> None:
    report = bench_json("--insecure", "--no-keepalive", "-n", "50", "-c", "2", tls_target + "1k.html")
    assert report["requests"] == 50
    assert report["tls_handshakes"] >= 50
    assert_no_errors(report)


def test_tls_certificate_is_verified_by_default(tls_target: str) -> None:
    # The preflight's one handshake meets the self-signed certificate: one line naming the fix, exit 2,
    # before the engine opens a single connection (no report).
    result = run_cli("bench", "--json", "-n", "20", "-c", "2", tls_target + "1k.html")
    assert result.returncode == 2 and result.stdout == "" and "Traceback" not in result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("crest: error: the TLS certificate of 127.0.0.1:")
    assert line.endswith("add --insecure for a self-signed certificate")


def test_a_path_that_answers_404_stops_before_the_load(builtin_target: str) -> None:
    result = run_cli("bench", "-n", "50", "-c", "2", builtin_target + "no-such-file.html")
    assert result.returncode == 2 and result.stdout == ""
    (line,) = result.stderr.strip().splitlines()
    assert "answered 404 Not Found before any load was sent: check the URL's path" in line


def test_a_bench_where_every_response_is_an_error_exits_1(builtin_target: str) -> None:
    # A POST is not sent by the preflight (it may change the target): the load finds the 404s, and the
    # bench ends with its report, then the one line.
    result = run_cli("bench", "-n", "50", "-c", "2", "-m", "POST", "--body", "x", builtin_target + "no-such-file.html")
    assert result.returncode == 1, result.stderr
    assert "Status      405: 50" in result.stdout  # the report still comes first (a static file takes no POST)
    assert (
        result.stderr.strip()
        .splitlines()[-1]
        .endswith("the target answered 405 to every request: check the URL's path and method")
    )


def test_jsonl_to_stdout_is_the_frames_alone_and_the_summary_moves_to_stderr(builtin_target: str) -> None:
    result = run_cli("bench", "-d", "2s", "-c", "2", "--jsonl", "-", builtin_target + "1k.html")
    assert result.returncode == 0, result.stderr
    frames = [json.loads(line) for line in result.stdout.splitlines()]
    kinds = [f["type"] for f in frames]
    assert kinds[:2] == ["run-started", "mix-started"] and kinds[-2:] == ["mix-finished", "run-finished"]
    samples = [f for f in frames if f["type"] == "sample"]
    assert samples and all(s["rps"] > 0 and s["latency_us"]["p99"] > 0 for s in samples)
    finished = frames[-2]
    assert finished["errors"] == 0 and finished["rps"] > 0
    assert frames[-1]["status"] == "complete"
    assert "Requests" in result.stderr  # the human summary, out of the frames' way
