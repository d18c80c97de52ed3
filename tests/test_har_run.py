"""Issue 32's HAR test: Chromium (over its DevTools protocol) loads a local page served by the built-in target and
the test records what it fetched as a HAR; `crest run page.har --server builtin` then replays it, and every one of
the page's requests reaches the target, the document first, with the page's load time as its class."""

from __future__ import annotations

import json
import re
import signal
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from browser import CHROMIUM, Browser
from crest.replay.har import read_har
from crest.store import Store
from support import run_cli, start_cli

pytestmark = pytest.mark.integration  # starts the built-in target, Chromium and a crest run

# A page of 2 stylesheets, 2 scripts and 3 images (the images need not be valid: the browser fetches them).
PAGE = """<!doctype html>
<html><head><title>crest HAR page</title>
<link rel="stylesheet" href="css/a.css"><link rel="stylesheet" href="css/b.css">
<script src="js/a.js"></script><script src="js/b.js"></script>
<link rel="icon" href="data:,">
</head><body><h1>HAR</h1>
<img src="img/1.png" alt="1"><img src="img/2.png" alt="2"><img src="img/3.png" alt="3">
</body></html>
"""
FILES = {"css/a.css": "h1 { color: #123; }\n", "css/b.css": "img { width: 8px; }\n" * 20,
         "js/a.js": "window.a = 1;\n", "js/b.js": "window.b = 2;\n" * 50,
         "img/1.png": "x" * 300, "img/2.png": "y" * 3000, "img/3.png": "z" * 30000}  # fmt: skip
# The built-in target's access log: address, [Unix seconds with µs], "request line", status, body bytes.
LINE = re.compile(r'^\S+ \[(\d+\.\d+)\] "(\S+) (\S+) [^"]*" (\d{3}) (\d+)')


def iso(wall_s: float) -> str:
    return datetime.fromtimestamp(wall_s, tz=timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


def record_har(browser: Browser, url: str) -> dict[str, Any]:
    """Load `url` in `browser` and write down what it fetched, as a HAR 1.2 document built from the Network
    domain's events (requestWillBeSent, responseReceived, dataReceived, loadingFinished) and the page's
    load events (domContentEventFired, loadEventFired)."""
    browser.send("Network.enable")
    browser.send("Network.setCacheDisabled", cacheDisabled=True)
    browser.events.clear()
    browser.open(url)
    for _ in range(100):  # the load event may come after the page says it is complete
        if any(e.get("method") == "Page.loadEventFired" for e in browser.events):
            break
        browser.evaluate("1")
    sent: dict[str, dict[str, Any]] = {}
    wall_base: float | None = None  # wall time minus monotonic timestamp, from the first request
    page_times: dict[str, float] = {}
    for event in browser.events:
        method, p = event.get("method"), event.get("params", {})
        if method == "Network.requestWillBeSent" and p["request"]["url"].startswith("http"):
            if wall_base is None:
                wall_base = p["wallTime"] - p["timestamp"]
            sent[p["requestId"]] = {"request": p["request"], "type": p.get("type", "Other"), "at": p["timestamp"],
                                    "size": 0, "response": None, "end": None}  # fmt: skip
        elif method == "Network.responseReceived" and p["requestId"] in sent:
            sent[p["requestId"]]["response"] = p["response"]
        elif method == "Network.dataReceived" and p["requestId"] in sent:
            sent[p["requestId"]]["size"] += p["dataLength"]
        elif method == "Network.loadingFinished" and p["requestId"] in sent:
            sent[p["requestId"]]["end"] = p["timestamp"]
        elif method in ("Page.loadEventFired", "Page.domContentEventFired"):
            page_times.setdefault(method, p["timestamp"])
    assert wall_base is not None and sent, "the browser fetched nothing"
    first = min(r["at"] for r in sent.values())
    entries = []
    for r in sorted(sent.values(), key=lambda r: r["at"]):
        response = r["response"] or {}
        entries.append({
            "pageref": "page_1", "startedDateTime": iso(wall_base + r["at"]),
            "time": ((r["end"] or r["at"]) - r["at"]) * 1000, "_resourceType": r["type"].lower(),
            "connection": str(response.get("connectionId", "")),
            "request": {"method": r["request"]["method"], "url": r["request"]["url"], "httpVersion": "HTTP/1.1",
                        "headers": [], "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0},
            "response": {"status": response.get("status", 0), "statusText": response.get("statusText", ""),
                         "httpVersion": response.get("protocol", ""), "headers": [], "cookies": [],
                         "content": {"size": r["size"], "mimeType": response.get("mimeType", "")},
                         "redirectURL": "", "headersSize": -1, "bodySize": r["size"]},
            "cache": {}, "timings": {"send": 0, "wait": 0, "receive": 0},
        })  # fmt: skip
    timings = {"onContentLoad": (page_times["Page.domContentEventFired"] - first) * 1000,
               "onLoad": (page_times["Page.loadEventFired"] - first) * 1000}  # fmt: skip
    page = {"id": "page_1", "title": url, "startedDateTime": iso(wall_base + first), "pageTimings": timings}
    return {"log": {"version": "1.2", "creator": {"name": "crest tests (Chromium DevTools)", "version": "1"},
                    "pages": [page], "entries": entries}}  # fmt: skip


@pytest.mark.timeout(60)
def test_a_har_recorded_by_chromium_replays_with_the_pages_requests(tmp_path: Path) -> None:
    if not CHROMIUM.exists():
        pytest.skip("chromium is not installed: apt-get install -y chromium")
    www = tmp_path / "www"
    for name, text in {"index.html": PAGE, **FILES}.items():
        (www / name).parent.mkdir(parents=True, exist_ok=True)
        (www / name).write_text(text)
    server = start_cli("serve", "--docroot", str(www), "--threads", "1")
    try:
        assert server.stdout is not None
        base = server.stdout.readline().strip().rstrip("/")
        with Browser(tmp_path / "profile") as browser:
            har = record_har(browser, f"{base}/index.html")
    finally:
        server.send_signal(signal.SIGTERM)
        server.communicate(timeout=10)
    recording = tmp_path / "page.har"
    recording.write_text(json.dumps(har, indent=1))
    recorded = read_har(recording)
    paths = sorted(e.target for e in recorded.entries)
    assert paths == sorted(["/index.html", *(f"/{n}" for n in FILES)]), paths
    (page,) = recorded.pages
    assert page.name == "/index.html" and recorded.entries[page.entries[0]].resource == "document"
    assert page.on_load_ms is not None and page.on_load_ms > 0

    db = tmp_path / "crest.db"
    result = run_cli("run", str(recording), "--server", "builtin", "--access-log", "--profile", "quick",
                     "--db", str(db), "-q")  # fmt: skip
    assert result.returncode == 0, result.stderr
    with Store(db) as store:
        (run,) = store.runs()
        detail = store.run(run.id)
    assert detail.status == "complete"
    (mix,) = detail.mixes
    assert mix.error_count == 0 and mix.connections == 6
    # The page's load time is its class's latency; its requests are in their resource classes.
    loads = mix.classes["page:/index.html"]
    assert loads["requests"] >= 1 and 0 < loads["latency_us"]["p50"] < 1_000_000
    # Each load fetched the page's 3 images (a load cut by the window's edges may count on one side only).
    assert mix.classes["image"]["requests"] >= 3 * (loads["requests"] - 1)
    # Every request of the page reached the target, each page load beginning with its document.
    lines = [LINE.match(line) for line in (db.parent / "logs" / run.id / "access.log").read_text().splitlines()]
    arrived = [m[3] for m in lines if m]
    assert set(arrived) == set(paths) and arrived[0] == "/index.html"
    loads_begun = arrived.count("/index.html")
    assert all(arrived.count(p) in (loads_begun, loads_begun - 1) for p in paths)
