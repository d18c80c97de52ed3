"""crest.specweb99.checks on raw bytes (the harness's Reset/Fetch, POST-log check, file and custom-ad checks)
and crest.analysis.specweb99 on stored iterations built by hand: conformance, the validity rules by name,
the median iteration and VALID/INVALID."""

from __future__ import annotations

from typing import Any

import pytest

from analysis_records import mix
from crest.analysis.specweb99 import iteration, specweb99_result
from crest.filesets.content import CAD_TAG, file_bytes
from crest.filesets.model import FileEntry
from crest.specweb99 import checks
from crest.store import RunDetail, RunMeta
from crest.suite.specweb99 import Specweb99, class_names


def kit_file(path: str, size: int) -> bytes:
    return file_bytes(FileEntry(path, size, "c", 1.0))


def envelope(content: bytes) -> bytes:
    return (
        b"<html>\n<head><title>SPECweb99 Dynamic GET & POST Test</title></head>\n<body>\n"
        b"<p>SERVER_SOFTWARE = crest\n<p>REMOTE_ADDR = 127.0.0.1\n<p>SCRIPT_NAME = /specweb99/dynamic\n"
        b"<p>QUERY_STRING = /x\n<pre>\n" + content + b"\n</pre>\n</body></html>\n"
    )


# ------------------------------------------------------------------ housekeeping requests


def test_reset_query_is_the_kits_with_exp_from_the_time() -> None:
    query = checks.reset_query(50, 1800, 50, now_unix_s=1_795_000_300.7, urlroot="http://h:1/file_set/")
    a = 1_795_000_300 % 360
    low, high = sorted((a, (a + 100) % 360))
    assert query == f"command/Reset&maxload=50&pttime=1800&maxthread=50&exp={low},{high}&urlroot=http://h:1/file_set/"


def record_line(recno: int, file_class: int, user: int = 10_001, pid: int = 77, pid_again: int = 77) -> str:
    line = (
        f"{recno:10d} {1_795_000_000:10d} {pid:10d} {4:5d} {file_class:2d} {3:2d} {2:10d}"
        f" {'/file_set/dir00004/class1_3':<60.60s} {pid_again:10d} {user:10d}\n"
    )
    assert len(line) == checks.POST_RECORD_BYTES
    return line


def fetch_body(lines: list[str], count: int | None = None) -> bytes:
    log = f"{len(lines) if count is None else count:10d}\n" + "".join(lines)
    return envelope(log.encode())


def test_a_fetched_log_parses_into_its_count_and_records() -> None:
    log = checks.parse_fetch(fetch_body([record_line(1, 1), record_line(2, 0)]))
    assert log.count == 2 and [r.recno for r in log.records] == [1, 2] and not log.unreadable
    first = log.records[0]
    assert (first.directory, first.file_class, first.number, first.client, first.user_id) == (4, 1, 3, 2, 10_001)
    assert first.filename == "/file_set/dir00004/class1_3" and first.consistent


def test_the_post_log_check_names_each_broken_rule() -> None:
    good = checks.parse_fetch(fetch_body([record_line(1, 1), record_line(2, 1), record_line(3, 0)]))
    assert checks.check_post_log(good, {0: 1, 1: 2}, 0.01).failures == ()
    disordered = checks.parse_fetch(fetch_body([record_line(2, 1), record_line(1, 1)]))
    assert "out of order" in checks.check_post_log(disordered, {1: 2}, 0.01).failures[0]
    miscounted = checks.parse_fetch(fetch_body([record_line(1, 1)], count=5))
    assert "count says 5 but it holds 1" in checks.check_post_log(miscounted, {1: 1}, 0.01).failures[0]
    extra = checks.check_post_log(good, {0: 1, 1: 1}, 0.01)
    assert extra.failures == ("POST log: class 1 recorded 1 too many POSTs",)
    lost = checks.check_post_log(good, {0: 1, 1: 200}, 0.01)
    assert lost.missing == 198 and "198 of 201 POSTs missing" in lost.failures[0]
    inconsistent = checks.parse_fetch(fetch_body([record_line(1, 1, pid_again=78)]))
    assert "inconsistent data" in checks.check_post_log(inconsistent, {1: 1}, 0.01).failures[0]


# ------------------------------------------------------------------ responses


def test_a_static_file_must_be_whole_and_name_itself() -> None:
    path = "file_set/dir00003/class1_4"
    body = kit_file(path, 5120)
    assert checks.check_file(body, path, whole=True) is None
    assert "5119 bytes" in (checks.check_file(body[:-1], path, whole=True) or "")
    assert "wrong file" in (checks.check_file(body, "file_set/dir00003/class1_5", whole=True) or "")
    assert "improper file" in (checks.check_file(b"hello", path, whole=True) or "")


def test_a_dynamic_page_carries_the_file_after_its_envelope_head() -> None:
    path = "file_set/dir00000/class1_4"
    page = envelope(kit_file(path, 5120))
    assert checks.check_file(page, path, whole=False) is None
    assert "improper file" in (checks.check_file(envelope(b"nothing"), path, whole=False) or "")


def substituted(ad: int, content: bytes) -> bytes:
    return content.replace(CAD_TAG, f'<!WEB99CAD><IMG SRC="/file_set/{checks.ad_path(ad)}"><!/WEB99CAD>'.encode())


def test_the_custom_ad_check_wants_every_tag_on_the_cookies_ad() -> None:
    content = kit_file("file_set/dir00000/class1_4", 5120)
    cookie = "found_cookie=Ad_id=100&Ad_weight=3&Expired=0"
    assert checks.ad_path(100) == "dir00002/class3_1"  # 100 / 36 = 2; 100 % 36 = 28 → class 3, file 1
    assert checks.check_cad(envelope(substituted(100, content)), cookie) is None
    assert "no Set-Cookie" in (checks.check_cad(envelope(substituted(100, content)), None) or "")
    untouched = checks.check_cad(envelope(content), cookie) or ""
    assert "5 of 5 tags name dir00000/class0_0, not Ad_id 100's dir00002/class3_1" in untouched
    assert "not an ad" in (checks.check_cad(envelope(content), "found_cookie=Ad_id=-1&Ad_weight=0&Expired=1") or "")


# ------------------------------------------------------------------ stored iterations


def connection_score(
    requests: int = 100, line_s: float = 30.0, rate_bps: float = 400_000, errors_by_class: dict[int, int] | None = None
) -> dict[str, Any]:
    """A connection's score: requests spread over the file classes 35/50/14/1, all static."""
    per_class = [35, 50, 14, 1]
    class_requests = [0] * 20
    class_errors = [0] * 20
    for c, n in enumerate(per_class):
        class_requests[c] = n * requests // 100
    for c, n in (errors_by_class or {}).items():
        class_errors[12 + c] = n  # cad/classC
    return {
        "client": 0, "requests": requests, "errors": sum(class_errors), "bytes": int(rate_bps * line_s / 8),
        "line_us": int(line_s * 1e6), "class_requests": class_requests, "class_errors": class_errors,
        "rps": requests / line_s, "throughput_Bps": 0.0,
    }  # fmt: skip


def stored_iteration(index: int, scores: list[dict[str, Any]], post_failures: list[str] | None = None) -> Any:
    classes = {
        name: {"requests": sum(s["class_requests"][i] for s in scores), "errors": sum(s["class_errors"][i] for s in scores),
               "bytes": 0, "latency_us": {"mean": 2000.0}}
        for i, name in enumerate(class_names())
    }  # fmt: skip
    figures = {
        "settings": Specweb99().model_dump(mode="json"),
        "conforming_length": False,
        "post_log": {"records": 10, "sent": 10, "missing": 0, "failures": post_failures or []},
    }
    n = len(scores)
    requests = sum(s["requests"] for s in scores)
    return mix(
        index, n, requests / 30, client_scores=scores, classes=classes, specweb99=figures, threads_per_client=1,
        connections=n, window_s=30.0, requests=requests,
    )  # fmt: skip


def test_a_connection_conforms_at_320_kbit_and_a_valid_iteration_says_so() -> None:
    scores = [connection_score() for _ in range(19)] + [connection_score(rate_bps=300_000)]
    it = iteration(stored_iteration(1, scores))
    assert (it.requested, it.valid, it.invalid, it.conforming) == (20, 20, 0, 19)
    assert it.is_valid  # 19 of 20 = 95%
    assert dict(it.cumulative)[400_000] == pytest.approx(19 / 20) and dict(it.cumulative)[300_000] == 1.0
    assert [round(r.share, 2) for r in it.classes] == [0.35, 0.5, 0.14, 0.01]


def test_too_few_conforming_connections_and_a_lost_post_make_it_invalid_by_name() -> None:
    scores = [connection_score() for _ in range(18)] + [connection_score(rate_bps=300_000)] * 2
    it = iteration(stored_iteration(1, scores, ["POST log: 3 of 10 POSTs missing (30.0% > 1%)"]))
    assert it.failures == (
        "conforming connections: 18 of 20 (90.0%) at >= 320 kbit/s, must be >= 95%",
        "POST log: 3 of 10 POSTs missing (30.0% > 1%)",
    )


def test_errors_over_one_percent_in_a_class_make_a_connection_invalid() -> None:
    # A target that drops the ad substitution: custom-ad GETs of class 1 and 2 files fail validation.
    scores = [connection_score(errors_by_class={1: 6, 2: 2}) for _ in range(20)]
    it = iteration(stored_iteration(1, scores))
    assert it.invalid == 20 and it.conforming == 0
    assert any(
        f.startswith("invalid connections: 20 of 20 (class 1 errors over 1%; class 2 errors over 1%)")
        for f in it.failures
    )
    assert "errors by operation: cad/class1 120, cad/class2 40" in it.failures


def test_the_result_is_the_median_iteration_and_invalid_if_any_iteration_is() -> None:
    good = [connection_score() for _ in range(20)]
    slower = [connection_score() for _ in range(19)] + [connection_score(rate_bps=100_000)]
    meta = RunMeta(suite="specweb99", target="t", profile="full", repeat_index=0, config={}, factors={}, host={})
    mixes = [stored_iteration(1, good), stored_iteration(2, slower), stored_iteration(3, good)]
    result = specweb99_result(RunDetail("r", meta, "complete", None, 0.0, 1.0, mixes))
    assert result.median is not None and result.median.conforming == 20
    assert result.valid and result.verdict() == "VALID (not a conforming run length)"
    mixes[1] = stored_iteration(2, slower, ["POST log: an entry out of order (record numbers must rise strictly)"])
    result = specweb99_result(RunDetail("r", meta, "complete", None, 0.0, 1.0, mixes))
    assert result.verdict() == "INVALID" and result.failures == [
        "iteration 2: POST log: an entry out of order (record numbers must rise strictly)"
    ]
