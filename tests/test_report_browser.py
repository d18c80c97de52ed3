"""The HTML report in a real browser: headless Debian Chromium renders it, screenshots it and dumps its DOM.

Checks that the charts drew (coloured pixels in the screenshot, the page's
charts-ready marker equal to its chart count) and that the page's scripts
logged nothing and raised nothing. A page with a deliberately failing script
proves the checks can fail. Skipped when Chromium is missing.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import crest.report.html as report_html
from crest.report import build_report, render
from crest.report.svg import PALETTE
from report_lab import Curve, store_lab
from report_png import read_png
from test_report_build import select

CHROMIUM = Path("/usr/bin/chromium")
BROWSER_TIMEOUT_S = 90.0
WINDOW = (1280, 2400)
# Where a copy of the screenshot goes when set (CI keeps it as an artifact).
SCREENSHOT_ENV = "CREST_REPORT_SCREENSHOT"

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason="apt-get install -y chromium"),
    pytest.mark.integration,  # runs chromium
]


def chromium(page: Path, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run headless Chromium on a file (as root: no sandbox), hermetic: nothing resolves, nothing syncs."""
    profile.mkdir(parents=True, exist_ok=True)
    command = [
        str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-default-apps", "--disable-extensions", "--hide-scrollbars", "--mute-audio",
        "--host-resolver-rules=MAP * ~NOTFOUND", f"--user-data-dir={profile}",
        "--enable-logging=stderr", "--v=0", *args, page.as_uri(),
    ]  # fmt: skip
    return subprocess.run(
        command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=BROWSER_TIMEOUT_S, check=False
    )


def console_lines(stderr: str) -> list[str]:
    """The page's console output and uncaught errors, as Chromium logs them with --enable-logging=stderr."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


class _BodyAttrs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.body: dict[str, str | None] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "body" and self.body is None:
            self.body = dict(attrs)


def body_attributes(dom: str) -> dict[str, str | None]:
    parser = _BodyAttrs()
    parser.feed(dom)
    parser.close()
    assert parser.body is not None, f"no <body> in the dumped DOM: {dom[:300]!r}"
    return parser.body


def dump_dom(page: Path, profile: Path) -> tuple[dict[str, str | None], str, list[str]]:
    result = chromium(page, profile, "--virtual-time-budget=2000", "--dump-dom")
    assert result.returncode == 0, result.stderr[-2000:]
    return body_attributes(result.stdout), result.stdout, console_lines(result.stderr)


@pytest.fixture(scope="module")
def doc(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """3 configurations × 2 trials × 10 load points, stored in a real store."""
    db = tmp_path_factory.mktemp("browser") / "lab.db"
    store_lab(db, trials=2)
    return build_report(select(db, "exp-1"))


@pytest.fixture(scope="module")
def wide_doc(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """6 configurations of 4 factors each × 2 trials: labels as long as a multi-configuration run's."""
    db = tmp_path_factory.mktemp("browser-wide") / "lab.db"
    settings = [(server, cpus) for server in ("apache-event", "nginx", "lighttpd") for cpus in (1, 2)]
    curves = [
        Curve({"server": server, "cpus": cpus, "max_request_workers": str(150 * cpus),
               "network": "webcat-10mbit" if cpus == 1 else "webcat-100mbit,subnets=2"}, 20_000 + 3_000 * i, 16)
        for i, (server, cpus) in enumerate(settings)
    ]  # fmt: skip
    store_lab(db, curves=curves, trials=2)
    return build_report(select(db, "exp-1"))


@pytest.fixture
def page(doc: dict[str, Any], tmp_path: Path) -> Path:
    path = tmp_path / "report.html"
    path.write_text(render(doc, "html"), encoding="utf-8")
    return path


def test_screenshot_shows_the_charts(page: Path, tmp_path: Path) -> None:
    shot = tmp_path / "report.png"
    result = chromium(page, tmp_path / "profile", f"--screenshot={shot}", f"--window-size={WINDOW[0]},{WINDOW[1]}")
    assert result.returncode == 0 and shot.exists(), result.stderr[-2000:]
    assert console_lines(result.stderr) == []
    if os.environ.get(SCREENSHOT_ENV):
        shutil.copyfile(shot, os.environ[SCREENSHOT_ENV])
    image = read_png(shot)[:, :, :3].astype(np.int16)
    assert image.shape[:2] == (WINDOW[1], WINDOW[0])
    white = (image >= 250).all(axis=2)
    assert 0.03 < 1 - white.mean() < 0.6, "the page is (nearly) blank or (nearly) solid"
    # Each configuration's colour covers real area: lines, marks and bands, not just a legend swatch.
    for colour in PALETTE[:3]:
        rgb = np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)], dtype=np.int16)
        close = (np.abs(image - rgb).max(axis=2) <= 24).sum()
        assert close > 3000, f"{colour} covers only {close} pixels"
    # The charts sit below the summary: the lower half of the window holds coloured ink too.
    lower = image[WINDOW[1] // 2 :]
    coloured = (lower.max(axis=2) - lower.min(axis=2)) > 60
    assert coloured.sum() > 20_000


def test_charts_ready_and_no_script_errors(doc: dict[str, Any], page: Path, tmp_path: Path) -> None:
    body, dom, console = dump_dom(page, tmp_path / "profile")
    expected = len(report_html.build_charts(doc))
    assert expected == 10  # the peak bar chart leads the nine curves and strips
    assert body.get("data-charts") == str(expected)
    assert body.get("data-charts-ready") == str(expected)
    assert "data-script-errors" not in body
    assert console == []
    assert dom.count('class="chart ') == expected


def test_a_failing_script_is_caught(doc: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The negative control: a script that logs and throws shows up in the DOM marker and the console lines."""
    original: Callable[[str], str] = report_html._asset

    def broken(name: str) -> str:
        text = original(name)
        return 'console.error("logged on purpose");\nthrow new Error("boom");\n' + text if name == "report.js" else text

    monkeypatch.setattr(report_html, "_asset", broken)
    path = tmp_path / "broken.html"
    path.write_text(render(doc, "html"), encoding="utf-8")
    body, dom, console = dump_dom(path, tmp_path / "profile")
    assert body.get("data-script-errors") == "1" and "data-charts-ready" not in body
    assert "boom" in dom  # shown to the reader too
    assert any("Uncaught Error: boom" in line for line in console)
    assert any("logged on purpose" in line for line in console)


PROBE = """
(function () {
  var svg = document.getElementById("chart-rps");
  var box = svg.getBoundingClientRect();
  svg.dispatchEvent(new MouseEvent("mousemove", {clientX: box.left + box.width * 0.6, clientY: box.top + box.height / 2, bubbles: true}));
  var tip = document.querySelector(".tip");
  document.body.setAttribute("data-probe-tip", tip.style.display + "|" + tip.textContent);
  document.querySelector('.legend button[data-series="1"]').click();
  var hidden = document.querySelectorAll('svg.chart .series.off[data-series="1"]').length;
  document.body.setAttribute("data-probe-hidden", String(hidden));
  // Sideways scrolling at this width: the page's, and any table's inside its scrolling wrapper (details opened).
  document.querySelectorAll("details").forEach(function (d) { d.open = true; });
  var wide = [];
  if (document.documentElement.scrollWidth > window.innerWidth) wide.push("page " + document.documentElement.scrollWidth);
  document.querySelectorAll(".table-wrap, pre, dl").forEach(function (el) {
    if (el.scrollWidth > el.clientWidth + 1) {
      var head = el.previousElementSibling;
      while (head && !/^H[23]$/.test(head.tagName)) head = head.previousElementSibling;
      wide.push((head ? head.textContent : el.tagName) + " " + el.scrollWidth + ">" + el.clientWidth);
    }
  });
  document.body.setAttribute("data-probe-wide", wide.join("; "));
})();
"""


def test_hover_read_out_and_legend_toggle(
    wide_doc: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The enhancements run: a pointer over a chart shows every configuration's value, a legend click hides one;
    and at 1,280 px the report of six long-labelled configurations scrolls sideways nowhere (its tables wrap)."""
    doc = wide_doc
    original: Callable[[str], str] = report_html._asset
    monkeypatch.setattr(report_html, "_asset", lambda name: original(name) + (PROBE if name == "report.js" else ""))
    path = tmp_path / "probe.html"
    path.write_text(render(doc, "html"), encoding="utf-8")
    result = chromium(path, tmp_path / "profile", "--virtual-time-budget=2000", f"--window-size={WINDOW[0]},{WINDOW[1]}",
                      "--dump-dom")  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    body, console = body_attributes(result.stdout), console_lines(result.stderr)
    assert console == [] and "data-script-errors" not in body
    assert body.get("data-probe-wide") == ""
    display, _, text = (body.get("data-probe-tip") or "").partition("|")
    assert display == "block"
    assert all(f"{c['label']}: " in text for c in doc["configurations"]), text
    assert re.match(r"\d+ clients" + re.escape(doc["configurations"][0]["label"]), text), text  # the load, then values
    charts_with_series = len(report_html.build_charts(doc))
    assert body.get("data-probe-hidden") == str(charts_with_series)


def test_injected_markup_does_not_run(tmp_path: Path) -> None:
    """Hostile labels and warnings render as text; had escaping failed, the CSP would still block them."""
    db = tmp_path / "lab.db"
    from report_lab import Curve

    payload = '<script>document.body.setAttribute("data-pwned", "1")</script><img src=x onerror="document.title=1">'
    store_lab(db, curves=[Curve({"server": payload}, 10_000, 8, warnings={2: [payload]}), Curve({"server": "ok"}, 9_000, 8)],
              trials=1)  # fmt: skip
    path = tmp_path / "evil.html"
    path.write_text(render(build_report(select(db, "exp-1")), "html"), encoding="utf-8")
    body, dom, console = dump_dom(path, tmp_path / "profile")
    assert "data-pwned" not in body and "data-script-errors" not in body and console == []
    assert body.get("data-charts-ready") == body.get("data-charts")
    assert "&lt;script&gt;document.body.setAttribute" in dom
