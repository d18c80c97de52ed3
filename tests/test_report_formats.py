"""The renderers: HTML (self-contained, escaped), Markdown, CSV and JSON; write_report and format choice."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from crest.errors import ConfigError
from crest.report import build_report, render, report_format, write_report
from crest.report.csv import COLUMNS
from crest.report.html import build_charts
from crest.report.markdown import md
from crest.store import Store
from report_lab import THREE, Curve, store_lab
from test_report_build import check_schema, select

EVIL = "<script>alert(1)</script>"
QUOTES = "\"double\" 'single' & amp"


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("report") / "lab.db"
    store_lab(db, trials=2)
    return db


@pytest.fixture(scope="module")
def doc(lab: Path) -> dict[str, Any]:
    return build_report(select(lab, "exp-1"))


@pytest.fixture(scope="module")
def evil_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two configurations whose every target- or file-given string is hostile."""
    db = tmp_path_factory.mktemp("evil") / "lab.db"
    curves = [
        Curve({"server": EVIL, "note": QUOTES}, 20_000, 16, warnings={3: [f"target said {EVIL} & {QUOTES}"]},
              server={"name": EVIL, "version": QUOTES, "config_text": f"{EVIL}\n</pre><b>x</b>"}),
        Curve({"server": "plain", "note": QUOTES}, 15_000, 16),
    ]  # fmt: skip
    ids = store_lab(db, curves=curves, trials=1, suite=f"suite{EVIL}")
    with Store(db) as store:  # an error kind and status text as a hostile target could make them
        detail = store.run(ids[0])
        run = store.create_run(dataclasses.replace(detail.meta, repeat_index=1, target=f"http://x/{EVIL}"))
        for mix in detail.mixes:
            store.add_mix(run, dataclasses.replace(mix, errors={EVIL: 3}, status={EVIL: 1}))
        store.finish_run(run, "failed", f"target died: {EVIL}")
    return db


@pytest.fixture(scope="module")
def evil_doc(evil_db: Path) -> dict[str, Any]:
    return build_report(select(evil_db, "exp-1"))


# -- HTML ----------------------------------------------------------------------------------


class _Collector(HTMLParser):
    """Every tag with its attributes, and the text of <script> and <style> elements."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.raw: list[str] = []
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in = tag if tag in ("script", "style") else None

    def handle_endtag(self, tag: str) -> None:
        self._in = None

    def handle_data(self, data: str) -> None:
        if self._in:
            self.raw.append(data)


def parse(html: str) -> _Collector:
    collector = _Collector()
    collector.feed(html)
    collector.close()
    return collector


def test_html_is_self_contained(doc: dict[str, Any]) -> None:
    html = render(doc, "html")
    page = parse(html)
    for tag, attrs in page.tags:
        for name in ("src", "href", "xlink:href", "action", "srcset", "poster", "data"):
            value = attrs.get(name)
            assert value is None or value.startswith("#"), f"<{tag} {name}={value!r}> loads something"
        assert tag not in ("link", "iframe", "object", "embed", "img", "base")
    code = "\n".join(page.raw)
    assert not re.search(r"https?:|//[a-z]|url\(|@import|fetch\(|XMLHttpRequest|import\(", code), (
        "scripts/styles reach out"
    )
    (csp,) = [a["content"] for t, a in page.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    assert csp is not None and "default-src 'none'" in csp and "script-src 'sha256-" in csp
    assert "unsafe-inline" not in csp.split("script-src")[1].split(";")[0]
    # Only the target URLs of the runs may look like URLs, and only as text.
    urls = set(re.findall(r"https?://[^\s<\"']+", html))
    assert urls <= {f"http://127.0.0.1:{8080 + i}/" for i in range(3)}, urls


def test_html_has_every_chart_and_table(doc: dict[str, Any]) -> None:
    html = render(doc, "html")
    charts = build_charts(doc)
    assert [c.svg.split('id="')[1].split('"')[0] for c in charts] == [
        "chart-peaks", "chart-rps", "chart-throughput", "chart-latency-p50", "chart-latency-p90", "chart-latency-p99",
        "chart-latency-p999", "chart-errors", "chart-cpu", "chart-fairness",
    ]  # fmt: skip
    assert f'data-charts="{len(charts)}"' in html
    assert html.count('<svg class="chart ') == len(charts)
    assert 'class="band"' not in html  # 2 trials each: too few for an interval, so no band to shade
    for heading in ("Peaks", "Charts", "Comparison", "Percent improvement at the peak", "Paired-difference test (req/s)",
                    "Requests/s at each load", "Load points", "Every mix", "Runs and host", "Servers"):  # fmt: skip
        assert f">{heading}<" in html, heading
    assert "@media print" in html
    assert doc["summary"]["headline"].replace("'", "&#39;") in html
    assert "worker_processes 2;" in html  # the server configuration is shown


def test_html_one_configuration_without_monitor_or_errors(tmp_path: Path) -> None:
    db = tmp_path / "lab.db"
    (run_id,) = store_lab(db, curves=[THREE[0]], trials=1)
    with Store(db) as store:
        detail = store.run(run_id)
        config = {**detail.meta.config, "server": {"name": "custom", "workers": 4}}  # no version, no config text
        bare = store.create_run(dataclasses.replace(detail.meta, factors={"server": "bare"}, config=config))
        for mix in detail.mixes:  # imported data may lack latencies; an empty window has a NaN req/s
            rps = float("nan") if mix.index == 3 else mix.rps
            store.add_mix(bare, dataclasses.replace(mix, monitor={}, client_scores=[], latency_us={}, rps=rps))
        store.finish_run(bare, "complete")
    doc = build_report(select(db, bare))
    check_schema(doc)
    assert doc["configurations"][0]["points"][3]["rps"] is None
    html = render(doc, "html")
    assert "nan" not in html.lower().replace("nanoseconds", "")
    for fmt in ("md", "csv", "json"):
        render(doc, fmt)
    ids = [c.svg.split('id="')[1].split('"')[0] for c in build_charts(doc)]
    assert ids == ["chart-rps", "chart-throughput", "chart-errors"]
    assert re.search(r"<td>custom</td><td>–</td>\s*<td>workers: 4</td>", html)
    assert "no errors at any load" in html
    assert ">Comparison<" not in html and 'class="band"' not in html


def test_html_escapes_everything_from_targets_and_files(evil_doc: dict[str, Any]) -> None:
    check_schema(evil_doc)
    html = render(evil_doc, "html")
    assert EVIL not in html and "<b>x</b>" not in html
    assert html.count("<script") == 2  # the page's own two
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&#34;double&#34; &#39;single&#39; &amp; amp" in html
    page = parse(html)
    assert [t for t, _ in page.tags].count("script") == 2 and "b" not in [t for t, _ in page.tags]
    for _, attrs in page.tags:  # no quote broke out of an attribute to add one
        assert not any(name.startswith("on") or "'" in name or '"' in name for name in attrs)
    labels = {a["data-label"] for t, a in page.tags if "data-label" in a}
    # The failed run has its own target URL, so it is a configuration of its own (labels then name
    # the run); the text survives, literally.
    assert {label.split(" (")[0] for label in labels} == {f"server={EVIL}", "server=plain"}


def test_charts_escape_labels_in_svg(evil_doc: dict[str, Any]) -> None:
    for chart in build_charts(evil_doc):
        assert EVIL not in chart.svg and "'single'" not in chart.svg


# -- Markdown ---------------------------------------------------------------------------------


def test_markdown(doc: dict[str, Any]) -> None:
    text = render(doc, "md")
    lines = text.splitlines()
    assert lines[0] == f"# {doc['title']}"
    assert f"**{doc['summary']['headline']}**" in text
    for heading in ("## Peaks", "## Percent improvement at the peak (row over column)", "## Paired-difference test (req/s)",
                    "## Requests/s at each load", "## Load points: server=nginx", "## Runs"):  # fmt: skip
        assert heading in lines, heading
    peaks = lines[lines.index("## Peaks") + 2 :]
    assert peaks[0].startswith("| configuration | trials | peak req/s |")
    assert peaks[2].startswith("| server=nginx | 2 | ")
    widths = {line.count("|") for line in peaks[:5]}
    assert len(widths) == 1  # every row has as many cells as the header
    assert "| server=nginx | server=apache | 20 | +" in text


def test_markdown_escapes(evil_doc: dict[str, Any]) -> None:
    text = render(evil_doc, "md")
    assert EVIL not in text and "<b>" not in text
    assert r"\<script\>alert(1)\</script\>" in text
    assert md("a|b\nc_d") == r"a\|b c\_d"
    for line in text.splitlines():
        if line.startswith("| server="):
            assert line.count(" | ") + 2 == line.count("|") - line.count(r"\|")


# -- CSV ----------------------------------------------------------------------------------------


def test_csv_one_row_per_mix_with_stable_columns(doc: dict[str, Any]) -> None:
    text = render(doc, "csv")
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == [name for name, _ in COLUMNS]
    assert rows[0][:6] == ["configuration", "run_id", "trial", "mix", "load", "clients"]
    assert len(rows) == 1 + 3 * 2 * 10
    records = list(csv.DictReader(io.StringIO(text)))
    first = records[0]
    assert (first["configuration"], first["trial"], first["mix"], first["load"]) == ("server=nginx", "1", "0", "1")
    mix = doc["mixes"][0]
    assert float(first["rps"]) == mix["rps"] and float(first["latency_p99_us"]) == mix["latency_us"]["p99"]
    assert float(first["throughput_Mbps"]) == pytest.approx(mix["throughput_Bps"] * 8 / 1e6)
    assert first["client_bound"] == "no" and first["errors_by_kind"] == ""
    erring = [r for r in records if r["errors_by_kind"]]
    assert erring and re.fullmatch(r"timeout=\d+;read=\d+", erring[-1]["errors_by_kind"])


def test_csv_defuses_formulas_and_keeps_text(evil_doc: dict[str, Any]) -> None:
    doc = json.loads(json.dumps(evil_doc))
    doc["mixes"][0]["configuration"] = '=HYPERLINK("x")'
    doc["mixes"][0]["verdicts"] = [{"kind": "note", "message": "-1+1"}, {"kind": "note", "message": "ok"}]
    records = list(csv.DictReader(io.StringIO(render(doc, "csv"))))
    assert records[0]["configuration"] == '\'=HYPERLINK("x")'
    assert records[0]["warnings"] == "'-1+1; ok"
    assert any(EVIL in r["configuration"] for r in records)  # CSV is data: text stays as it was


# -- JSON and writing ---------------------------------------------------------------------------


def test_json_is_the_document(doc: dict[str, Any]) -> None:
    text = render(doc, "json")
    assert json.loads(text) == doc
    check_schema(json.loads(text))


@pytest.mark.parametrize(
    ("name", "fmt", "expected"),
    [("r.html", None, "html"), ("r.HTM", None, "html"), ("r.md", None, "md"), ("r.csv", None, "csv"),
     ("r.json", None, "json"), ("r", None, "html"), ("r.txt", "md", "md"), ("r.html", "JSON", "json"),
     ("r.x", "markdown", "md")],
)  # fmt: skip
def test_format_from_option_or_suffix(name: str, fmt: str | None, expected: str) -> None:
    assert report_format(fmt, Path(name)) == expected


def test_format_errors_are_one_line() -> None:
    with pytest.raises(ConfigError, match=r"^unknown report format 'pdf': use one of html, md, csv, json$"):
        report_format("pdf", None)
    with pytest.raises(ConfigError, match=r"^cannot tell the report format from 'r\.pdf': .* or pass --format$"):
        report_format(None, Path("r.pdf"))


def test_write_report(lab: Path, tmp_path: Path) -> None:
    details = select(lab, "exp-1")
    for suffix, probe in ((".html", "<!DOCTYPE html>"), (".md", "# webbench-static"), (".csv", "configuration,run_id"),
                          (".json", '"schema_version": 2')):  # fmt: skip
        path = write_report(details, tmp_path / "out" / f"report{suffix}")
        assert path == tmp_path / "out" / f"report{suffix}" and probe in path.read_text()
    path = write_report(details, tmp_path / "plain", "md", title="Mine")
    assert path.read_text().startswith("# Mine\n")
