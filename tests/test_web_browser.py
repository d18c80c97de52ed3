"""The live page and the results browser in Debian's headless Chromium, driven over its DevTools protocol
(tests/browser.py).

One real run feeds both tests: `crest run --ui --jsonl` on the built-in target, two trials of a two-mix
ladder. The browser watches it live through the URL crest prints (requests/s changes between two reads, the
page says the run ended and keeps its last state after the process is gone; crest listened on 127.0.0.1
only). The run's frames, replayed into a Hub in this process, then show that a reload rebuilds the history
and that the peak and each verdict appear; its store is what the results browser browses. Screenshots of
every page go to $CREST_UI_SCREENSHOTS when set (else the test's tmp dir). Skipped without Chromium.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest

from browser import CHROMIUM, Browser
from crest import verdicts
from crest.errors import ConfigError
from crest.filesets import generate
from crest.observe.hub import Hub
from crest.report import fmt
from crest.web.serve import serve_ui
from support import static_suite

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason="apt-get install -y chromium"),
    pytest.mark.integration,  # a real run, a browser, sockets
]
SUITE = static_suite("watched", "two short mixes to watch", [1, 4], length_s=2, ramp_s=0)
SHOTS_ENV = "CREST_UI_SCREENSHOTS"


@dataclass
class Watched:
    db: Path
    frames: list[dict[str, Any]]
    browser: Browser
    shots: Path
    seen_live: dict[str, Any]  # what the browser read while the run ran


def _live_url(proc: subprocess.Popen[str], deadline: float) -> str:
    assert proc.stderr is not None
    lines = []
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        lines.append(line)
        if line.startswith("live: "):
            return line.removeprefix("live: ").strip()
    raise AssertionError("crest run printed no live: line: " + "".join(lines)[-2000:])


@pytest.fixture(scope="module")
def watched(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Watched]:
    root = Path(tempfile.mkdtemp(prefix="crest-test-"))
    root.chmod(0o755)
    shots = Path(os.environ.get(SHOTS_ENV) or tmp_path_factory.mktemp("shots"))
    shots.mkdir(parents=True, exist_ok=True)
    generate("webcat-large-filemix", root / "fileset")
    (root / "watched.toml").write_text(SUITE)
    db, frames = root / "crest.db", root / "frames.jsonl"
    browser = Browser(root / "profile")
    proc = subprocess.Popen(
        [sys.executable, "-m", "crest", "run", str(root / "watched.toml"), "--server", "builtin", "--profile", "full",
         "--repeat", "2", "--fileset", str(root / "fileset"), "--db", str(db), "--jsonl", str(frames), "--ui", "-q"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        url = _live_url(proc, time.monotonic() + 60)
        said: list[str] = []  # the rest of its stderr, read as it comes so that a full pipe never stalls it
        reader = threading.Thread(target=lambda: said.extend(proc.stderr or []), name="crest-run-stderr", daemon=True)
        reader.start()
        listening = {c.laddr for c in psutil.Process(proc.pid).net_connections("inet") if c.status == "LISTEN"}
        browser.open(url)
        first = browser.wait_for("/[0-9]/.test(document.getElementById('current-rps').textContent) && "
                                 "[document.getElementById('current-rps').textContent, document.body.dataset.frames]")  # fmt: skip
        # The next second's figure: a later frame whose rate reads differently.
        second = browser.wait_for(
            f"document.body.dataset.frames > {first[1]} && document.getElementById('current-rps').textContent !== "
            f"{json.dumps(first[0])} && document.getElementById('current-rps').textContent"
        )
        browser.screenshot(shots / "live-running.png")
        browser.wait_for("document.body.dataset.ended === 'true'", timeout_s=60)
        assert proc.wait(timeout=30) == 0, "".join(said)
        reader.join(timeout=10)
        seen = {"first": first[0], "second": second, "listening": listening, "url": url}
        seen.update(after={k: browser.text(k) for k in ("status", "peak", "current-rps")},
                    mixes=browser.evaluate("document.querySelectorAll('#mixes tbody tr').length"))  # fmt: skip
        browser.screenshot(shots / "live-ended.png")
        yield Watched(db, [json.loads(line) for line in frames.read_text().splitlines()], browser, shots, seen)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for thread in threading.enumerate():
            if thread.name == "crest-run-stderr":
                thread.join(timeout=10)  # at the end of its pipe once the process is gone
        if proc.stderr is not None:
            proc.stderr.close()
        browser.close()
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.timeout(120)
def test_the_live_page_follows_a_real_run_survives_a_reload_and_shows_the_peak_and_verdicts(
    watched: Watched,
) -> None:
    seen, browser = watched.seen_live, watched.browser
    # During the run: the rate changed between two reads; crest listened on loopback alone.
    assert seen["first"] != seen["second"]
    assert seen["listening"] and {a.ip for a in seen["listening"]} == {"127.0.0.1"}
    assert seen["url"].startswith("http://127.0.0.1:") and "/live?token=" in seen["url"]
    # After it: the page kept its state (the process is gone), the peak of the second trial's ladder.
    finished = [f for f in watched.frames if f["type"] == "mix-finished"]
    last_run = finished[-1]["run_id"]
    peak = max((f for f in finished if f["run_id"] == last_run), key=lambda f: f["rps"])
    assert seen["after"]["status"] == "ended: complete"
    shown_peak = fmt.rps(peak["rps"])  # as the report writes it
    assert seen["after"]["peak"] == shown_peak
    assert seen["mixes"] == 2

    # The same frames replayed into a hub here: the browser comes back half way, then sees the rest.
    hub = Hub()
    frames = [dict(f) for f in watched.frames]
    verdict = verdicts.note("a verdict drawn for this test: the list shows each one as it comes")
    last = max(i for i, f in enumerate(frames) if f["type"] == "mix-finished")
    frames[last]["verdicts"] = [*frames[last]["verdicts"], verdict.to_json()]  # a real run's depend on the host
    served = serve_ui(hub, watched.db)
    try:
        assert served.host == "127.0.0.1" and served.is_loopback
        with pytest.raises(ConfigError, match="in use"):
            serve_ui(None, None, "127.0.0.1", served.port)
        half = next(i for i, f in enumerate(frames) if f["type"] == "run-started" and i > 0)  # the second trial
        for frame in frames[:half]:
            hub.publish(frame)
        browser.open(served.url)
        browser.wait_for(f"document.body.dataset.frames === '{half}'")
        before = browser.evaluate("document.querySelectorAll('#mixes tbody tr').length")
        browser.reload()  # a new EventSource from frame 1: the whole history again
        browser.wait_for(f"document.body.dataset.frames === '{half}'")
        assert browser.evaluate("document.querySelectorAll('#mixes tbody tr').length") == before == 2
        for frame in frames[half:]:
            hub.publish(frame)
        hub.close()
        browser.wait_for("document.body.dataset.ended === 'true'")
        assert browser.text("peak") == shown_peak
        assert browser.text("peak-at").startswith(f"req/s at {peak['clients']} client")
        shown = browser.evaluate("[...document.querySelectorAll('#verdicts li')].map(li => li.dataset.kind)")
        drawn = [v["kind"] for f in frames if f["type"] == "mix-finished" for v in f["verdicts"]]
        assert shown == drawn and "note" in shown
        assert "a verdict drawn for this test" in browser.text("verdicts")
        assert browser.evaluate("document.querySelectorAll('#chart-ladder .peak').length") == 2  # one per trial
        assert browser.problems() == []
        browser.screenshot(watched.shots / "live-replayed.png")
    finally:
        served.stop()


@pytest.mark.timeout(120)
def test_the_results_browser_lists_reports_and_compares_the_stored_runs(watched: Watched) -> None:
    browser = watched.browser
    ui = subprocess.Popen(
        [sys.executable, "-m", "crest", "ui", "--db", str(watched.db)],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert ui.stdout is not None
        url = ui.stdout.readline().strip()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/runs\?token=[\w-]+", url), url
        base = url.split("/runs")[0]
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{base}/runs", timeout=10)
        assert refused.value.code == 403
        refused.value.close()
        browser.open(url)
        rows = browser.evaluate("[...document.querySelectorAll('#runs tbody tr')].map(r => r.dataset.status)")
        assert rows == ["complete", "complete"]
        browser.screenshot(watched.shots / "runs.png")
        # Tick both and compare: the report of the two trials, as `crest compare` writes it.
        browser.evaluate("document.querySelectorAll('#runs input[type=checkbox]').forEach(b => b.checked = true)")
        browser.evaluate("document.getElementById('compare').click()")
        browser.wait_for("location.pathname === '/compare' && document.readyState === 'complete'")
        assert "watched" in browser.evaluate("document.title")
        assert browser.evaluate("document.querySelectorAll('svg.chart').length") > 0
        browser.screenshot(watched.shots / "compare.png", full_page=False)
        browser.open(f"{base}/experiments")
        assert browser.evaluate("document.querySelectorAll('#experiments tbody tr[data-experiment]').length") == 1
        browser.screenshot(watched.shots / "experiments.png")
        assert browser.problems() == []
        ui.send_signal(2)  # Ctrl-C
        assert ui.wait(timeout=20) == 0
        assert ui.stderr is not None
        assert ui.stderr.read().strip().splitlines() == [
            "crest: open the URL above in a browser; Ctrl-C stops it",
            "crest: ui stopped",
        ]
    finally:
        if ui.poll() is None:
            ui.kill()
            ui.wait()
        for pipe in (ui.stdout, ui.stderr):
            if pipe is not None:
                pipe.close()
