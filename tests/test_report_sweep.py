"""Reports of content-length sweeps: weighted throughput per configuration and the throughput-vs-length chart."""

from __future__ import annotations

import csv
import io
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import crest.report.html as report_html
from crest.report import build_report, render
from crest.store import RunMeta, Store
from report_lab import THREE, make_mix
from test_report_browser import CHROMIUM, dump_dom
from test_report_build import check_schema, select

SIZES = (100, 500, 2_000, 50_000, 500_000, 5_000_000)
# Throughput (B/s) by size for configuration A; B is half as fast. Trial 2 is 10% faster than trial 1.
A = {100: 1e6, 500: 3e6, 2_000: 6e6, 50_000: 9e6, 500_000: 10e6, 5_000_000: 11e6}


def hand_weighted_Mbps(values: dict[int, float]) -> float:
    """Zeus' figure computed another way: the curve through the points sampled in the middle of every byte of each class
    (lengths uniform within it) and averaged, then weighted 35/50/14/1 %."""
    sizes = sorted(values)
    means = [
        float(np.mean(np.interp(np.arange(low, high) + 0.5, sizes, [values[s] for s in sizes])))
        for low, high in ((0, 1024), (1024, 10_240), (10_240, 102_400), (102_400, 1_024_000))
    ]
    return (0.35 * means[0] + 0.5 * means[1] + 0.14 * means[2] + 0.01 * means[3]) * 8 / 1e6


def store_sweeps(db: Path) -> None:
    with Store(db) as store:
        for c, (server, scale) in enumerate((("a", 1.0), ("b", 0.5))):
            for trial in range(2):
                config: dict[str, Any] = {"suite": {"name": "zeus-cached"}, "options": {}, "experiment": "sweep-1"}
                run_id = store.create_run(RunMeta(
                    suite="zeus-cached", target=f"http://127.0.0.1:{8080 + c}/", profile="quick", repeat_index=trial,
                    config=config, factors={"server": server}, host={},
                ))  # fmt: skip
                for index, size in enumerate(SIZES, start=1):
                    mix = make_mix(THREE[0], index, 1, len(SIZES), random.Random(index))
                    value = A[size] * scale * (1.0 + 0.1 * trial)
                    store.add_mix(run_id, replace(mix, throughput_Bps=value, size_bytes=size))
                store.finish_run(run_id, "complete")


@pytest.fixture(scope="module")
def doc(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    db = tmp_path_factory.mktemp("sweep") / "lab.db"
    store_sweeps(db)
    return build_report(select(db, "sweep-1"))


def test_document_carries_the_weighted_throughput(doc: dict[str, Any]) -> None:
    check_schema(doc)
    sweep = doc["sweep"]
    assert sweep["note"] is None
    a, b = sweep["configurations"]
    trials_a = [hand_weighted_Mbps({s: v * f for s, v in A.items()}) for f in (1.0, 1.1)]
    assert a["trial_Mbps"] == pytest.approx(trials_a)
    assert a["weighted_Mbps"] == pytest.approx(sum(trials_a) / 2)
    assert b["weighted_Mbps"] == pytest.approx(a["weighted_Mbps"] / 2)
    assert a["weighted_Mbps_ci95"] is None  # 2 trials: too few for an interval
    assert "too few (n<3)" in render(doc, "md")
    assert a["excluded_sizes"] == [5_000_000]
    assert [p["size_bytes"] for p in a["points"]] == list(SIZES)
    assert a["points"][0]["throughput_Bps"] == pytest.approx(1.05e6)
    assert [p["class"] for p in a["points"]] == ["class0", "class0", "class1", "class2", "class3", None]
    assert {m["size_bytes"] for m in doc["mixes"]} == set(SIZES)


def test_sweeps_are_compared_size_by_size(doc: dict[str, Any]) -> None:
    """A sweep's x is content length: points pair by size, and peaks do not claim saturation."""
    assert doc["load_axis"] == "size"
    for c in doc["configurations"]:
        assert sorted(p["load"] for p in c["points"]) == sorted(SIZES)
        assert c["summary"]["shape"] == "content-length sweep" and c["summary"]["past_peak_ratio"] is None
    (paired,) = doc["comparison"]["paired"]
    assert paired["n"] == 2 * len(SIZES)  # every size of both trials, matched
    assert not any("saturated" in w for w in doc["summary"]["warnings"])


def test_ordinary_reports_have_no_sweep_key(tmp_path: Path) -> None:
    from report_lab import store_lab

    db = tmp_path / "lab.db"
    store_lab(db, curves=[THREE[0]], trials=1)
    plain = build_report(select(db, "exp-1"))
    assert "sweep" not in plain
    assert all("size_bytes" not in m for m in plain["mixes"])
    assert "chart-sweep" not in render(plain, "html")
    assert "size_bytes" not in render(plain, "csv").splitlines()[0]


def test_html_markdown_csv_show_the_sweep(doc: dict[str, Any]) -> None:
    page = render(doc, "html")
    assert 'id="chart-sweep"' in page or "chart-sweep" in page
    assert "weighted throughput" in page
    a = doc["sweep"]["configurations"][0]
    assert f"{a['weighted_Mbps']:,.2f} Mbit/s" in page
    charts = report_html.build_charts(doc)
    assert charts[0].group == "Content length"
    markdown = render(doc, "md")
    assert "## Throughput vs content length (Mbit/s)" in markdown
    assert "weighted Mbit/s" in markdown and f"{a['weighted_Mbps']:,.2f}" in markdown
    rows = list(csv.DictReader(io.StringIO(render(doc, "csv"))))
    assert [int(r["size_bytes"]) for r in rows[:6]] == list(SIZES)


@pytest.mark.integration
@pytest.mark.skipif(not CHROMIUM.exists(), reason="apt-get install -y chromium")
def test_sweep_page_renders_in_a_browser(doc: dict[str, Any], tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(render(doc, "html"), encoding="utf-8")
    body, _, console = dump_dom(page, tmp_path / "profile")
    expected = len(report_html.build_charts(doc))
    assert body.get("data-charts-ready") == str(expected)
    assert "data-script-errors" not in body
    assert console == []
