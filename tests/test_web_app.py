"""The web app without a socket: its token, its headers, the results browser over a real store opened
read-only (lists, filters, the report, the comparison, experiments, capacity searches, a running run's
ladder) and the live page's event stream over a real Hub. Requests go straight into the ASGI app
(tests/web_client.py); the browser tests are test_web_browser.py's.
"""

from __future__ import annotations

import json
import random
import re
import sqlite3
import time
from pathlib import Path

import pytest

from crest.observe.hub import Hub
from crest.store import RunMeta, Store, StoreError
from crest.web.app import PAGE_CSP, build_app, cookie_name
from crest.web.state import State
from report_lab import HOST, THREE, make_mix, store_lab
from support import run_cli_in_process
from web_client import SERVER, Client

TOKEN = "s3cret-token"


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """exp-1 (nginx, apache, lighttpd at cpus=2, two trials each), a capacity search and a running run."""
    db = tmp_path_factory.mktemp("web") / "crest.db"
    store_lab(db, trials=2)
    with Store(db) as store:
        rng = random.Random(3)
        capacity = {"rule": "p99<500ms", "axis": "clients", "start": 1, "factor": 2, "precision": 0.5,
                    "confirm": 1, "max_load": 8}  # fmt: skip
        run = store.create_run(RunMeta("webbench-static", "http://127.0.0.1:8080/", "quick", 0,
                                       {"suite": {"name": "webbench-static"}, "capacity": capacity,
                                        "options": {"server": "nginx"}}, {"server": "nginx"}, dict(HOST)))  # fmt: skip
        for i, load in enumerate((1, 2, 4)):
            store.add_mix(run, make_mix(THREE[0], i, load, 3, rng))
        store.finish_run(run, "complete")
        running = store.create_run(RunMeta("webstone", "http://127.0.0.1:8081/", "quick", 0,
                                           {"suite": {"name": "webstone"}, "experiment": "exp-2"},
                                           {"server": "lighttpd"}, dict(HOST)))  # fmt: skip
        for i, load in enumerate((1, 4)):
            store.add_mix(running, make_mix(THREE[2], i, load, 4, rng))
    return db


def client(db: Path | None = None, hub: Hub | None = None) -> Client:
    return Client(build_app(State(hub=hub, db=db, token=TOKEN)))


def signed_in(db: Path | None = None, hub: Hub | None = None) -> Client:
    c = client(db, hub)
    assert c.get(f"/?token={TOKEN}").status == 303
    return c


def run_ids(html: str) -> list[str]:
    return re.findall(r'<tr data-run="([^"]+)"', html)


# -- the token -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/", "/runs", "/live", "/live/events", "/static/live.js", "/runs/x", "/nowhere"])
def test_every_path_needs_the_token(lab: Path, path: str) -> None:
    c = client(lab, Hub())
    for url in (path, f"{path}?token=wrong", f"{path}?token="):
        answer = c.get(url)
        assert answer.status == 403, url
        assert "token" in answer.text and answer.header("set-cookie") is None
    c.cookies[cookie_name(SERVER[1])] = "wrong"
    assert c.get(path).status == 403


def test_the_token_in_the_url_sets_a_strict_httponly_cookie_the_next_requests_use(lab: Path) -> None:
    c = client(lab)
    first = c.get(f"/runs?token={TOKEN}")
    assert first.status == 200
    cookie = first.header("set-cookie") or ""
    assert cookie.startswith(f"{cookie_name(SERVER[1])}={TOKEN};")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
    assert c.get("/runs").status == 200  # the cookie alone
    assert c.get("/static/live.js").status == 200
    # Another crest page on this machine (another port) has a cookie of its own name.
    other = client(lab)
    other.cookies[cookie_name(SERVER[1] + 1)] = TOKEN
    assert other.get("/runs").status == 403


def test_pages_forbid_anything_from_elsewhere(lab: Path) -> None:
    c = signed_in(lab, Hub())
    for path in ("/runs", "/live", "/experiments"):
        answer = c.get(path)
        assert answer.header("content-security-policy") == PAGE_CSP
        assert answer.header("x-content-type-options") == "nosniff"
        assert "http://" not in answer.text and "https://" not in answer.text  # nothing fetched from outside
    assert "default-src 'none'" in PAGE_CSP and "script-src 'self'" in PAGE_CSP
    # A stored report keeps its own policy (its scripts by hash) in its <meta>.
    report = c.get(f"/runs/{run_ids(c.get('/runs').text)[-1]}")
    assert report.status == 200 and 'http-equiv="Content-Security-Policy"' in report.text
    assert "script-src 'self'" not in (report.header("content-security-policy") or "")


# -- the results browser, read-only ----------------------------------------------------------------------------------


def test_runs_are_listed_newest_first_and_filtered_by_suite_server_factor_and_status(lab: Path) -> None:
    c = signed_in(lab)
    page = c.get("/runs").text
    ids = run_ids(page)
    assert len(ids) == 8
    statuses = re.findall(r'<tr data-run="[^"]+" data-status="([^"]+)"', page)
    assert statuses[0] == "running"  # the newest: it was stored last
    nginx = run_ids(c.get("/runs?server=nginx").text)
    assert len(nginx) == 3  # two trials and the capacity search
    assert run_ids(c.get("/runs?server=nginx&suite=webstone").text) == []
    assert len(run_ids(c.get("/runs?factor=cpus%3D2").text)) == 6
    assert len(run_ids(c.get("/runs?status=running").text)) == 1
    assert len(run_ids(c.get("/runs?experiment=exp-1").text)) == 6
    assert "no run matches" in c.get("/runs?suite=nothing").text
    # The filters offer what the store holds.
    assert '<option value="lighttpd"' in page and '<option value="server=apache"' in page


def test_a_run_is_its_report_and_a_running_run_its_ladder_so_far(lab: Path) -> None:
    c = signed_in(lab)
    running = run_ids(c.get("/runs?status=running").text)[0]
    ladder = c.get(f"/runs/{running}")
    assert ladder.status == 200 and '<meta http-equiv="refresh"' in ladder.text
    assert 'id="peak"' in ladder.text and "<svg" in ladder.text and ladder.text.count('<tr class="best">') == 1
    so_far = c.get(f"/runs/{running}/report")
    assert so_far.status == 200 and "<title>" in so_far.text and 'href="/runs"' in so_far.text
    done = run_ids(c.get("/runs?server=apache").text)[0]
    report = c.get(f"/runs/{done[:-1]}")  # a unique start of an id names it, as in `crest show`
    assert report.status == 200 and "refresh" not in report.text and "apache" in report.text
    missing = c.get("/runs/19990101-0000-ffff")
    assert missing.status == 404 and "no run" in missing.text


def test_compare_reports_the_ticked_runs_with_paired_tests(lab: Path) -> None:
    c = signed_in(lab)
    nginx, apache = (
        run_ids(c.get("/runs?server=nginx&experiment=exp-1").text),
        run_ids(c.get("/runs?server=apache").text),
    )
    page = c.get("/compare?" + "&".join(f"run={i}" for i in nginx + apache))
    assert page.status == 200
    assert "nginx" in page.text and "apache" in page.text and "paired" in page.text.lower()
    experiment = c.get("/compare?run=exp-1")  # an experiment id names all its runs
    assert experiment.status == 200 and "lighttpd" in experiment.text
    nothing = c.get("/compare")
    assert nothing.status == 400 and "tick" in nothing.text


def test_experiments_and_capacity_searches_have_their_own_lists(lab: Path) -> None:
    c = signed_in(lab)
    experiments = c.get("/experiments").text
    assert re.findall(r'data-experiment="([^"]+)"', experiments) == ["exp-2", "exp-1"]
    assert "/compare?run=exp-1" in experiments
    capacity = c.get("/capacity").text
    assert len(re.findall(r'<tr data-run="', capacity)) == 1 and "nginx" in capacity


def test_the_browser_never_writes_the_store(lab: Path, tmp_path: Path) -> None:
    db = tmp_path / "copy.db"
    with sqlite3.connect(lab) as source, sqlite3.connect(db) as copy:
        source.backup(copy)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("copy.db") and p.is_file()}
    c = signed_in(db)
    ids = run_ids(c.get("/runs").text)
    for path in ("/experiments", "/capacity", f"/runs/{ids[0]}", f"/runs/{ids[-1]}", "/compare?run=exp-1"):
        assert c.get(path).status == 200, path
    assert (tmp_path / "copy.db").read_bytes() == before["copy.db"]
    assert not (tmp_path / "copy.db-reserve").exists()  # a writer's reserve: the browser is none
    with Store(db, read_only=True) as store, pytest.raises(StoreError, match="readonly"):
        store.finish_run(ids[0], "failed")


def test_a_running_run_shows_each_mix_its_writer_commits(tmp_path: Path) -> None:
    db = tmp_path / "crest.db"
    rng = random.Random(5)
    with Store(db) as writer:  # another process's run, as far as the browser can tell
        run = writer.create_run(RunMeta("webstone", "http://127.0.0.1:8081/", "quick", 0, {}, {"server": "nginx"},
                                        dict(HOST)))  # fmt: skip
        c = signed_in(db)
        counts = []
        for i, load in enumerate((1, 4, 8)):
            writer.add_mix(run, make_mix(THREE[0], i, load, 3, rng))
            page = c.get(f"/runs/{run}").text
            counts.append(len(re.findall(r"<tr(?: class=\"best\")?>\s*<td class=\"num\">", page)))
        writer.finish_run(run, "complete")
        assert counts == [1, 2, 3]
        assert "refresh" not in c.get(f"/runs/{run}").text  # complete: its report


def test_a_missing_or_foreign_store_is_one_line_and_never_created(tmp_path: Path) -> None:
    missing = tmp_path / "none" / "crest.db"
    c = signed_in(missing)
    page = c.get("/runs")
    assert page.status == 200 and "No runs yet" in page.text
    assert not missing.parent.exists()
    with pytest.raises(StoreError, match="no results file"):
        Store(missing, read_only=True)
    foreign = tmp_path / "other.db"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE t (x)")
    with pytest.raises(StoreError, match="not a crest results file"):
        Store(foreign, read_only=True)
    assert signed_in(foreign).get("/runs").status == 500


def test_without_a_store_or_a_run_the_pages_say_what_serves_them(lab: Path) -> None:
    live_only = signed_in(None, Hub())
    assert live_only.get("/").header("location") == "/live"
    assert live_only.get("/runs").status == 404
    browser_only = signed_in(lab)
    assert browser_only.get("/").header("location") == "/runs"
    page = browser_only.get("/live")
    assert page.status == 404 and "--ui" in page.text


# -- the live page's stream ------------------------------------------------------------------------------------------


def frames(n_samples: int) -> list[dict[str, object]]:
    head = {"t": 1.0, "run_id": "r1", "repeat": 0, "configuration": "server=builtin"}
    out: list[dict[str, object]] = [{"type": "run-started", **head, "mixes": 1, "about": {"suite": "s"}},
                                    {"type": "mix-started", **head, "mix": 1, "mixes": 1, "clients": 4}]  # fmt: skip
    out += [{"type": "sample", **head, "mix": 1, "clients": 4, "rps": 100.0 + i} for i in range(n_samples)]
    return out


def events(text: str) -> list[dict[str, str]]:
    """The stream's events: each one's fields (event, id, data); pings (comments) left out."""
    found = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if line and not line.startswith(":"))
        if "data" in fields:
            found.append(fields)
    return found


def test_the_stream_sends_every_frame_numbered_then_the_end_once_the_hub_closes(lab: Path) -> None:
    hub = Hub()
    for frame in frames(3):
        hub.publish(frame)
    hub.close()
    got = events(signed_in(None, hub).get("/live/events", until=b"event: end").text)
    assert [e["event"] for e in got] == ["frame"] * 5 + ["end"]
    assert [e["id"] for e in got] == ["1", "2", "3", "4", "5", "5"]
    assert json.loads(got[2]["data"])["rps"] == 100.0


def test_a_returning_browser_gets_only_what_it_missed(lab: Path) -> None:
    hub = Hub()
    for frame in frames(4):
        hub.publish(frame)
    c = signed_in(None, hub)
    # EventSource sends Last-Event-ID when it reconnects; a hub still open streams on (read until frame 6).
    got = events(c.get("/live/events", {"Last-Event-ID": "3"}, until=b"id: 6").text)
    assert [e["id"] for e in got] == ["4", "5", "6"]
    assert c.get("/live/events", {"Last-Event-ID": "garbage"}, until=b"id: 6").text.count("event: frame") == 6


def test_the_stream_goes_back_to_the_loop_between_frames() -> None:
    """Between two frames of a burst the event loop runs what is due (a lost connection's callback): so a
    browser gone mid-burst is written to once, not once per frame left."""
    import asyncio

    from crest.web.live import stream

    hub = Hub()
    for frame in frames(40):
        hub.publish(frame)
    hub.close()

    async def ticks_at_each_frame() -> list[int]:
        loop, ticks, at = asyncio.get_running_loop(), [0], []

        def tick() -> None:
            ticks[0] += 1
            if len(at) < 42:
                loop.call_soon(tick)

        loop.call_soon(tick)
        async for _ in stream(hub, 0, State(hub=hub, db=None, token="t")):
            at.append(ticks[0])
        return at

    at = asyncio.run(ticks_at_each_frame())
    assert len(at) == 43 and all(later > earlier for earlier, later in zip(at[:42], at[1:42]))


@pytest.mark.integration
@pytest.mark.timeout(30)
def test_a_browser_gone_during_a_burst_leaves_the_terminal_quiet() -> None:
    """The README walk: after a --ui tab disconnected the run printed `socket.send() raised exception.` 28
    times (asyncio's log of each write to a lost transport past the fifth). The browser resets its connection
    while the stream's loop is busy with 40 frames due; nothing is logged."""
    import logging
    import socket
    import struct
    import threading
    from urllib.parse import urlsplit

    from crest.web.serve import serve_ui

    logged: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            logged.append(record.getMessage())

    hub = Hub()
    armed, inside, gone = threading.Event(), threading.Event(), threading.Event()
    since = hub.since

    def held_since(seen: int) -> list[tuple[int, dict[str, object]]]:
        if armed.is_set():  # the loop is busy (here: held) while the browser goes away
            armed.clear()
            inside.set()
            gone.wait(10)
        return since(seen)

    hub.since = held_since  # type: ignore[method-assign]
    keep = Keep()
    logging.getLogger("asyncio").addHandler(keep)
    served = serve_ui(hub, None)
    try:
        parts = urlsplit(served.url)
        browser = socket.create_connection((str(parts.hostname), int(parts.port or 0)), timeout=10)
        browser.sendall(f"GET /live/events?{parts.query} HTTP/1.1\r\nHost: crest\r\n\r\n".encode())
        assert browser.recv(64).startswith(b"HTTP/1.1 200")
        for frame in frames(40):
            hub.publish(frame)
        armed.set()
        assert inside.wait(10)
        browser.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # a reset, as a tab
        browser.close()
        gone.set()
        deadline = time.monotonic() + 10
        while served._state.streams and time.monotonic() < deadline:  # the stream ends: the server noticed
            time.sleep(0.01)
        assert served._state.streams == 0
    finally:
        hub.close()
        served.stop()
        logging.getLogger("asyncio").removeHandler(keep)
    assert [m for m in logged if "socket.send()" in m] == []


# -- addresses and the command ---------------------------------------------------------------------------------------


def test_crest_ui_refuses_a_bad_address_in_one_line() -> None:
    out = run_cli_in_process("ui", "--address", "localhost")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and "HOST:PORT" in out.stderr
