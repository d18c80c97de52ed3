"""The seed-style comparisons in the report document, the HTML page and `crest compare`: paired throughput,
the pooled test over workloads, --best-of, --baseline and the servers × CPUs pivot, on a real SQLite store."""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest

from analysis_records import run
from crest.cli.main import main
from crest.report import build_report, render
from crest.store import RunDetail, Store

SCHEMA = json.loads(files("crest").joinpath("schemas/report.schema.json").read_text())
LOADS = [1, 4, 8, 12]


def stored(db: Path, runs: list[RunDetail]) -> list[str]:
    ids = []
    with Store(db) as store:
        for detail in runs:
            run_id = store.create_run(detail.meta)
            for m in detail.mixes:
                store.add_mix(run_id, m)
            store.finish_run(run_id, "complete")
            ids.append(run_id)
    return ids


def veritest(db: Path) -> list[str]:
    """iis on 1 and 2 CPUs with the single- and multi-threaded static suites; apache with the single only."""
    runs = []
    for cpus, scale in ((1, 1.0), (2, 2.0)):
        for trial in range(2):
            f = {"server": "iis", "cpus": cpus}
            runs.append(
                run([100 * scale, 200 * scale, 250 * scale, 240 * scale], LOADS, f, trial, suite="veritest-static")
            )
            runs.append(
                run([90 * scale, 210 * scale, 300 * scale, 320 * scale], LOADS, f, trial, suite="veritest-static-mt4")
            )
            runs.append(run([80 * scale, 150 * scale, 160 * scale, 150 * scale], LOADS, {"server": "apache", "cpus": cpus},
                            trial, suite="veritest-static"))  # fmt: skip
    return stored(db, runs)


def kornecki(db: Path) -> list[str]:
    runs = []
    for workload, gain in (("static", 10.0), ("dynamic", 20.0)):
        for trial in range(2):
            for server, extra in (("iis", gain + trial), ("apache", 0.0)):
                f = {"server": server, "workload": workload}
                runs.append(run([100 + extra, 200 + extra], [1, 2], f, trial, suite=f"kornecki-detail-{workload}"))
    return stored(db, runs)


def details(db: Path, ids: list[str]) -> list[RunDetail]:
    with Store(db) as store:
        return store.select(ids)


def test_best_of_baseline_and_pivot_in_the_document(tmp_path: Path) -> None:
    db = tmp_path / "crest.db"
    doc = build_report(details(db, veritest(db)), best_of=True, baseline="server=apache cpus=1")
    jsonschema.validate(doc, SCHEMA, cls=jsonschema.Draft202012Validator)
    assert [c["label"] for c in doc["configurations"]] == [
        "server=iis cpus=1", "server=apache cpus=1", "server=iis cpus=2", "server=apache cpus=2"]  # fmt: skip
    assert doc["configurations"][0]["trials"] == 2
    assert doc["configurations"][0]["peak"]["rps"] == pytest.approx(320.0)  # mt4 at 12 clients
    iis1, _ = doc["best_of"]
    assert iis1["suites"] == ["veritest-static", "veritest-static-mt4"]
    assert [(p["load"], p["suite"]) for p in iis1["points"]] == [
        (1, "veritest-static"), (4, "veritest-static-mt4"), (8, "veritest-static-mt4"), (12, "veritest-static-mt4")]  # fmt: skip
    peaks = doc["peaks"]
    assert peaks["baseline"] == "server=apache cpus=1"
    assert [b["ratio"] for b in peaks["bars"]] == pytest.approx([2.0, 1.0, 4.0, 2.0])  # 320, 160, 640, 320 ÷ 160
    assert peaks["pivot"] == {
        "column_factor": "cpus", "columns": [1, 2],
        "rows": [{"label": "server=iis", "rps": [320.0, 640.0], "configurations": ["server=iis cpus=1", "server=iis cpus=2"]},
                 {"label": "server=apache", "rps": [160.0, 320.0], "configurations": ["server=apache cpus=1", "server=apache cpus=2"]}],
    }  # fmt: skip
    tp = doc["comparison"]["paired_throughput"][0]
    assert tp["metric"] == "throughput_Bps" and tp["n"] == 8  # 4 loads × 2 trials, bytes/s = 1000 × req/s
    page = render(doc, "html")
    assert 'id="chart-peaks"' in page and "index (server=apache cpus=1 = 1.00)" in page
    assert "Better of the suites" in page and "cpus=2</th>" in page


def test_pooled_test_over_workloads_in_the_document(tmp_path: Path) -> None:
    db = tmp_path / "crest.db"
    doc = build_report(details(db, kornecki(db)))
    jsonschema.validate(doc, SCHEMA, cls=jsonschema.Draft202012Validator)
    assert doc["pooled"]["factor"] == "workload"
    rps = doc["pooled"]["tests"][0]
    # diffs: static 10, 10 (trial 0), 11, 11 (trial 1); dynamic 20, 20, 21, 21: mean 15.5
    assert (rps["a"], rps["b"], rps["n"], rps["metric"]) == ("server=iis", "server=apache", 8, "rps")
    assert rps["pairs_by_level"] == {"static": 4, "dynamic": 4}
    assert rps["mean_diff"] == pytest.approx(15.5)
    assert "Pooled over workload" in render(doc, "html")


def test_compare_options_in_the_terminal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "crest.db"
    ids = veritest(db)
    code = main(
        ["compare", *ids, "--db", str(db), "-o", str(tmp_path / "r.html"), "--best-of", "--baseline", "apache cpus=1"]
    )
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err.startswith("crest: error: no configuration 'apache cpus=1': give a label") and err.count("\n") == 1
    code = main(["compare", *ids, "--db", str(db), "-o", str(tmp_path / "r.html"), "--best-of",
                 "--baseline", "server=apache cpus=1"])  # fmt: skip
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    lines = out.splitlines()
    # The pivot of peaks by CPU count, grouped by server with the improvement row under it (VeriTest's figure 2).
    assert any(line.split() == ["iis", "320", "640"] for line in lines)
    assert any(line.split() == ["iis", "over", "apache", "+100%", "+100%"] for line in lines)
    assert any(line.split() == ["server=iis", "cpus=1", "veritest-static-mt4", "4,", "8,", "12"] for line in lines)
    assert any("index: peak ÷ the peak of server=apache cpus=1 (= 1.00)" in line for line in lines)
    assert any("paired-difference test of throughput, MB/s (A − B)" in line for line in lines)
