"""HAR recordings as page-load workloads, without a server: reading a HAR (pages, their requests in the order
they started, resource classes), refusals as one line (exit 2), a bare HAR and [workload.har] as suites, the
request table and pages the engine gets, and the engine's RunConfig of a page-load mix."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from crest.errors import ConfigError
from crest.load.runspec import RunSpec
from crest.replay.har import RESOURCE_CLASSES, parse_har, read_har
from crest.runner.binding import bind
from crest.runner.request import RunRequest
from crest.runner.specs import mix_spec
from crest.runner.table import har_table
from crest.suite import SuiteError, load_file, load_suite
from support import run_cli_in_process


def entry(url: str, at: str, *, kind: str | None = None, mime: str = "text/plain", status: int = 200,
          size: int = 100, page: str | None = "page_1", method: str = "GET", connection: str = "1") -> dict[str, Any]:  # fmt: skip
    e: dict[str, Any] = {
        "startedDateTime": f"2026-11-27T21:00:{at}Z", "time": 1.5, "connection": connection,
        "request": {"method": method, "url": url, "httpVersion": "HTTP/1.1", "headers": []},
        "response": {"status": status, "httpVersion": "HTTP/1.1", "bodySize": size,
                     "content": {"size": size, "mimeType": mime}},
    }  # fmt: skip
    if kind is not None:
        e["_resourceType"] = kind
    if page is not None:
        e["pageref"] = page
    return e


SITE = "http://www.example.com"


def har_doc(*entries: dict[str, Any], pages: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    if pages is None:
        pages = [{"id": "page_1", "title": f"{SITE}/", "startedDateTime": "2026-11-27T21:00:00.000Z",
                  "pageTimings": {"onContentLoad": 120.5, "onLoad": 240.25}}]  # fmt: skip
    return {"log": {"version": "1.2", "creator": {"name": "crest-test", "version": "1"}, "pages": pages,
                    "entries": list(entries)}}  # fmt: skip


# A page as Chromium records it: the document, then its stylesheet, script, image and font, in the order
# they started (the file lists them out of order, as HAR writers may).
PAGE = har_doc(
    entry(f"{SITE}/app.js", "00.050", kind="script", connection="2"),
    entry(f"{SITE}/", "00.000123456", kind="document", mime="text/html"),
    entry(f"{SITE}/style.css", "00.040", kind="stylesheet"),
    entry(f"{SITE}/img/a.png?v=2", "00.060", kind="image", size=2048),
    entry(f"{SITE}/font.woff2", "00.070", mime="font/woff2"),
    entry(f"{SITE}/api/items", "00.080", kind="fetch", method="post", status=201),
    entry(f"{SITE}/cached.css", "00.090", mime="text/css", status=304),
    entry("https://cdn.example.net/lib.js", "00.055", kind="script"),
)


def write_har(tmp_path: Path, doc: Any = PAGE, name: str = "page.har") -> Path:
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def test_a_har_reads_as_pages_of_requests_in_the_order_they_started() -> None:
    har = parse_har(PAGE, "page.har")
    assert har.creator == "crest-test 1"
    assert [e.target for e in har.entries] == ["/", "/style.css", "/app.js", "/lib.js", "/img/a.png?v=2",
                                               "/font.woff2", "/api/items", "/cached.css"]  # fmt: skip
    assert [e.resource for e in har.entries] == ["document", "stylesheet", "script", "script", "image", "font",
                                                 "xhr", "stylesheet"]  # fmt: skip
    assert har.entries[0].started_s == 0.0 and har.entries[1].started_s == pytest.approx(0.039877, abs=1e-6)
    assert (har.entries[4].body_bytes, har.entries[6].method, har.entries[3].host) == (2048, "POST", "cdn.example.net")
    (page,) = har.pages
    assert (page.name, page.class_name, page.on_load_ms, page.on_content_load_ms) == ("/", "page:/", 240.25, 120.5)
    assert page.entries == tuple(range(8))
    assert har.classes() == (*RESOURCE_CLASSES, "page:/")
    assert har.facts()["resource_requests"]["script"] == 2 and har.facts()["hosts"] == 2


def test_entries_without_pages_make_a_page_and_pages_are_named_by_their_documents_path() -> None:
    bare = har_doc(entry(f"{SITE}/a.html", "01.000", page=None, mime="text/html"),
                   entry(f"{SITE}/b.css", "01.100", page=None), pages=[])  # fmt: skip
    (page,) = parse_har(bare).pages
    assert (page.name, page.entries, page.on_load_ms) == ("/a.html", (0, 1), None)
    two = har_doc(entry(f"{SITE}/", "00.000", page="p1"), entry(f"{SITE}/", "05.000", page="p2"),
                  entry(f"{SITE}/x", "05.100", page="p2"),
                  pages=[{"id": "p2", "title": "again"}, {"id": "p1", "title": "first"}])  # fmt: skip
    har = parse_har(two)
    assert [(p.name, p.title, p.entries) for p in har.pages] == [("/", "first", (0,)), ("/#2", "again", (1, 2))]


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("<html>", "not a HAR file: not JSON"),
        ({"log": {"version": "1.2"}}, "not a HAR file: no log.entries list"),
        ({"log": {"entries": []}}, "log.entries is empty"),
        (
            har_doc({"startedDateTime": "2026-11-27T21:00:00Z", "request": {"method": "GET"}}),
            "log.entries[0]: no request.url",
        ),
        (har_doc(entry("ftp://x/y", "00.000")), "is not an http(s) URL"),
        (
            har_doc(entry(f"{SITE}/", "00.000"), {**entry(f"{SITE}/", "00.000"), "startedDateTime": "yesterday"}),
            "log.entries[1]: startedDateTime 'yesterday' is not an ISO 8601 time",
        ),
    ],
)
def test_a_bad_har_is_one_line_exit_2(tmp_path: Path, text: Any, fragment: str) -> None:
    path = write_har(tmp_path, text)
    with pytest.raises(ConfigError, match=None) as raised:
        read_har(path)
    assert fragment in str(raised.value) and "\n" not in str(raised.value)
    result = run_cli_in_process("run", str(path), "--target", "http://127.0.0.1:1")
    assert result.returncode == 2, result
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("crest: error: ") and fragment in lines[0], result.stderr


def test_a_bare_har_is_a_suite_of_one_browser_loading_its_pages(tmp_path: Path) -> None:
    path = write_har(tmp_path, name="recording.json")
    suite = load_suite(str(path))  # by its content: JSON whose first key is "log"
    har = suite.workload.har
    assert har is not None and har.file == str(path) and har.connections == 6
    assert (suite.workload.http_version, suite.workload.keepalive, suite.ladder.client_counts()) == ("1.1", True, [1])
    caddy = tmp_path / "caddy.log"
    caddy.write_text('{"level":"info","ts":1700000000.1,"logger":"http.log.access","request":{}}\n')
    from crest.suite.loader import looks_like_har

    assert not looks_like_har(str(caddy))


def suite_text(har: str, extra: str = "", ladder: str = "clients = [2]") -> str:
    return (f'name = "h"\ndescription = "d"\nsource = "s"\n[workload]\nhttp_version = "1.1"\nkeepalive = true\n'
            f'{extra}[workload.har]\n{har}\n[ladder]\n{ladder}\n[timing]\nlength_s = 10\n')  # fmt: skip


def test_a_suites_har_is_read_relative_to_the_suite_and_refused_where_it_cannot_be(tmp_path: Path) -> None:
    write_har(tmp_path)
    suite_file = tmp_path / "pages.toml"
    suite_file.write_text(suite_text('file = "page.har"\nthink_s = 2\nhosts = { "cdn.example.net" = "skip" }'))
    suite = load_file(suite_file)
    assert suite.workload.har is not None and suite.workload.har.file == str(tmp_path / "page.har")
    refusals = {
        suite_text('file = "missing.har"'): "workload.har.file: no HAR file at",
        suite_text('file = "page.har"', 'fileset = "webbench"\n'): "workload.fileset: must be omitted",
        suite_text('file = "page.har"', ladder="clients = [2]\nthreads_per_client = 2"): "threads_per_client",
        suite_text('file = "page.har"\nhosts = { "a" = "ftp://x" }'): "must be a URL with no path",
        suite_text('file = "page.har"').replace('"1.1"', '"1.0"'): "over HTTP/1.1 (six connections)",
        suite_text('file = "page.har"') + "think_time_s = 1\n": "workload.har.think_s",
    }
    for text, fragment in refusals.items():
        suite_file.write_text(text)
        with pytest.raises(SuiteError) as raised:
            load_file(suite_file)
        assert fragment in str(raised.value), str(raised.value)


def test_the_table_sends_each_request_to_the_target_or_its_hosts_url_with_its_class_and_status() -> None:
    har = parse_har(PAGE, "page.har")
    table, pages = har_table(har, "http://127.0.0.1:8080/", {"cdn.example.net": "http://127.0.0.1:9090"})
    assert [r["url"] for r in table.requests][:4] == [
        "http://127.0.0.1:8080/", "http://127.0.0.1:8080/style.css", "http://127.0.0.1:8080/app.js",
        "http://127.0.0.1:9090/lib.js",
    ]  # fmt: skip
    assert [table.classes[r["class"]] for r in table.requests] == [e.resource for e in har.entries]
    assert [r.get("expect_status") for r in table.requests] == [200, 200, 200, 200, 200, 200, 201, None]
    assert table.requests[6]["method"] == "POST"
    assert pages == [{"name": "/", "class": table.classes.index("page:/"), "entries": list(range(8))}]
    skipped, pages = har_table(har, "http://t", {"cdn.example.net": "skip"})
    assert len(skipped.requests) == 7 and pages[0]["entries"] == list(range(7))
    with pytest.raises(ConfigError, match="its document's host www.example.com is skipped"):
        har_table(har, "http://t", {"www.example.com": "skip"})


def test_a_page_load_mix_gives_each_client_six_connections_in_one_thread(tmp_path: Path) -> None:
    write_har(tmp_path)
    suite_file = tmp_path / "pages.toml"
    suite_file.write_text(suite_text('file = "page.har"\nthink_s = 0.5', ladder="clients = [1, 3]"))
    suite = load_file(suite_file)
    request = RunRequest(suite=suite, target="http://127.0.0.1:8080", engine_threads=2)
    bound = bind(request, None, "http://127.0.0.1:8080", None)
    one, three = (mix_spec(request, bound, mix, 0, 2, 2) for mix in suite.mixes())
    assert (one.connections, one.connections_per_client, one.threads) == (6, 6, 1)
    assert (three.connections, three.connections_per_client, three.threads) == (18, 6, 2)
    config = three.to_config()
    assert config["pages"]["think_s"] == 0.5 and config["pages"]["pages"][0]["entries"][0] == 0
    assert config["classes"][-1] == "page:/"
    h2 = suite.with_protocol("2")
    spec = mix_spec(RunRequest(suite=h2, target="http://127.0.0.1:8080"), bind(
        RunRequest(suite=h2, target="http://127.0.0.1:8080"), None, "http://127.0.0.1:8080", None), h2.mixes()[1], 0, 2, 2)  # fmt: skip
    assert (spec.connections, spec.connections_per_client, spec.streams) == (3, 1, 6)
    assert isinstance(spec, RunSpec)


def test_a_capacity_search_of_a_har_grows_browsers_not_a_rate(tmp_path: Path) -> None:
    path = write_har(tmp_path)
    result: subprocess.CompletedProcess[str] = run_cli_in_process(
        "capacity", str(path), "--target", "http://127.0.0.1:1", "--rule", "p99<1s", "--axis", "rate"
    )
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1, result.stderr
    assert "search it with --axis clients" in result.stderr


def test_the_site_of_a_har_has_each_recorded_file_with_its_size_and_sends_dynamic_requests_to_crests_page(
    tmp_path: Path,
) -> None:
    from crest.replay.har_site import plan_har_site
    from crest.replay.site import check_site, write_planned

    har = parse_har(PAGE, "page.har")
    site = plan_har_site(har)
    # The query string and the POST are dynamic; the 304 from the browser's cache is a file too.
    assert {f.url_path: f.size for f in site.files} == {"/": 100, "/style.css": 100, "/app.js": 100,
                                                      "/lib.js": 100, "/font.woff2": 100, "/cached.css": 100}  # fmt: skip
    assert sorted(d["target"] for d in site.dynamic) == ["/api/items", "/img/a.png?v=2"]
    written = write_planned(site, tmp_path / "site")
    assert (
        check_site(tmp_path / "site", written.site) == [] and (tmp_path / "site" / "index.html").stat().st_size == 100
    )
    table, _ = har_table(har, "http://t:1", {}, "http://t:1/cgi-bin/crest-bytes")
    assert table.requests[4]["url"] == "http://t:1/cgi-bin/crest-bytes?size=2048"
    assert (table.requests[6]["url"], table.requests[6]["method"]) == ("http://t:1/cgi-bin/crest-bytes?size=100", "GET")
    # The CDN's request keeps its own host's URL when mapped, its path otherwise.
    assert table.requests[3]["url"] == "http://t:1/lib.js"


def test_page_loads_are_read_from_each_mixs_page_classes() -> None:
    from analysis_records import mix
    from crest.analysis.pages import page_loads

    page = {"requests": 40, "errors": 2, "rps": 4.0, "latency_us": {"p50": 12_000.0, "p99": 30_000.0, "max": 41_000.0}}
    classes = {"document": {"requests": 42, "rps": 4.2}, "page:/index.html": page,
               "page:/b": {"requests": 0, "errors": 3, "rps": 0.0, "latency_us": {}}}  # fmt: skip
    rows = page_loads([mix(1, 1, 50.0, classes=classes), mix(2, 2, 90.0)])
    assert [(r.mix, r.page, r.loads, r.loads_per_s, r.p50_us, r.p99_us, r.failed) for r in rows] == [
        (1, "/b", 0, 0.0, None, None, 3), (1, "/index.html", 40, 4.0, 12_000.0, 30_000.0, 2),
    ]  # fmt: skip


def test_a_recorded_post_goes_with_its_body_over_http1_only() -> None:
    post = entry(f"{SITE}/api/items", "00.010", kind="fetch", method="POST", status=201)
    post["request"]["postData"] = {"mimeType": "application/json", "text": '{"n": 1}'}
    har = parse_har(har_doc(entry(f"{SITE}/", "00.000", kind="document"), post))
    table, _ = har_table(har, "http://t:1", {})
    assert (table.requests[1]["method"], table.requests[1]["body"]) == ("POST", '{"n": 1}')
    assert "body" not in table.requests[0]
    h2, _ = har_table(har, "http://t:1", {}, bodies=False)
    assert "body" not in h2.requests[1]
