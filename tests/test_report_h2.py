"""The report's HTTP/2 (and HTTP/3) section: one row per such mix with crest.analysis.h2's figures, in every format."""

from __future__ import annotations

from dataclasses import replace

from analysis_records import run
from crest.report import build_report, render
from crest.store import RunDetail
from test_report_build import check_schema
from test_store import H2


def http2_run(run_id: str = "h2run", repeat_index: int = 0) -> RunDetail:
    """A three-mix ladder whose last two mixes spoke HTTP/2 (the first HTTP/1.1)."""
    detail = run([1000.0, 1800.0, 2000.0], run_id=run_id, repeat_index=repeat_index)
    detail.mixes[1:] = [replace(m, h2={**H2, "resets": m.index - 1}) for m in detail.mixes[1:]]
    return detail


def test_http2_mixes_get_a_row_each() -> None:
    doc = build_report([http2_run()])
    check_schema(doc)
    rows = [(r["run_id"], r["trial"], r["mix"], r["load"]) for r in doc["h2"]]
    assert rows == [("h2run", 1, 1, 2.0), ("h2run", 1, 2, 3.0)]  # the HTTP/1.1 mix has none
    row = doc["h2"][1]
    assert row["configuration"] == doc["configurations"][0]["label"] and row["configuration_index"] == 0
    assert row["streams_in_use_mean"] == H2["streams_in_use_sum"] / H2["streams_opened"]
    assert (row["streams_in_use_max"], row["goaways"], row["resets"], row["refused"]) == (10, 72, 1, 594)
    assert row["hpack_ratio_response"] == H2["response_header_raw_bytes"] / H2["response_header_block_bytes"]
    assert row["hpack_ratio_request"] == H2["request_header_raw_bytes"] / H2["request_header_block_bytes"]


def test_without_http2_there_is_no_key_and_no_section() -> None:
    doc = build_report([run([1000.0, 1800.0])])
    assert "h2" not in doc
    assert 'id="h2"' not in render(doc, "html") and "## HTTP/2" not in render(doc, "md")


def test_every_format_shows_the_section() -> None:
    doc = build_report([http2_run(), http2_run("h2run2", 1)])
    check_schema(doc)
    assert len(doc["h2"]) == 4
    html = render(doc, "html")
    assert '<a href="#h2">HTTP/2</a>' in html and '<h2 id="h2">HTTP/2</h2>' in html
    section = html.split('<h2 id="h2">', 1)[1].split("</table>", 1)[0]
    assert section.count("<tr><td>") == 4
    assert '<td class="num">9.4</td><td class="num">10</td>' in section
    assert '<td class="num">1.93×</td><td class="num">2.94×</td>' in section
    assert '<td class="num verdict-warn">1</td><td class="num">594</td>' in section  # resets stand out
    markdown = render(doc, "md")
    assert "## HTTP/2" in markdown
    assert "| 2 | h2run2 | 2 | 3 | 9.4 | 10 | 1.93× | 2.94× | 72 | 1 | 594 |" in markdown


def http3_run(run_id: str = "h3run", repeat_index: int = 0) -> RunDetail:
    """http2_run's ladder spoken over HTTP/3 (the run's workload says so; the counters are the same)."""
    detail = http2_run(run_id, repeat_index)
    config = {"suite": {"name": "s", "workload": {"http_version": "3", "streams": 10, "keepalive": True}}}
    return replace(detail, meta=replace(detail.meta, config=config))


def test_an_http3_run_is_labelled_http3_with_qpack() -> None:
    doc = build_report([http3_run()])
    check_schema(doc)
    assert [r["http_version"] for r in doc["h2"]] == ["3", "3"]
    assert {r["http_version"] for r in build_report([http2_run()])["h2"]} == {"2"}  # no version recorded: HTTP/2
    markdown = render(doc, "md")
    assert "## HTTP/3" in markdown and "## HTTP/2" not in markdown
    assert "| QPACK responses | QPACK requests |" in markdown and "HPACK" not in markdown
    html = render(doc, "html")
    assert '<a href="#h2">HTTP/3</a>' in html and '<h2 id="h2">HTTP/3</h2>' in html
    assert "QPACK responses" in html and "HPACK" not in html
    rows = {r["field"]: r.get("value") for r in doc["disclosure"]["clients"][0]["rows"]}
    assert (rows["HTTP version"], rows["HTTP/3 streams per connection"]) == ("3", "10")


def test_a_comparison_of_http2_with_http3_says_which_row_spoke_which() -> None:
    doc = build_report([http2_run(), http3_run()])
    check_schema(doc)
    markdown = render(doc, "md")
    assert "## HTTP/2 and HTTP/3" in markdown and "| HPACK/QPACK responses |" in markdown
    assert "| configuration | trial | run | mix | HTTP | clients | streams in use |" in markdown
    assert "| h2run | 1 | h2run | 2 | 2 | 3 | 9.4 |" in markdown  # mix 2 of each: HTTP 2, then HTTP 3
    assert "| h3run | 1 | h3run | 2 | 3 | 3 | 9.4 |" in markdown
    html = render(doc, "html")
    assert '<h2 id="h2">HTTP/2 and HTTP/3</h2>' in html and "<th>HTTP</th>" in html
