"""build_report over real stored runs: what the document holds for one, repeated and compared configurations.

Every document built here is also validated against the committed JSON Schema.
"""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from analysis_records import run
from crest.errors import ConfigError
from crest.report import build_report, render
from crest.report.html import build_charts
from crest.store import RunDetail, RunMeta, Store
from report_lab import THREE, Curve, store_lab

SCHEMA = json.loads(files("crest").joinpath("schemas/report.schema.json").read_text())


def check_schema(doc: dict[str, Any]) -> None:
    jsonschema.validate(doc, SCHEMA, cls=jsonschema.Draft202012Validator)
    json.dumps(doc, allow_nan=False)  # strict JSON: no NaN anywhere


def select(db: Path, *names: str) -> list[RunDetail]:
    with Store(db) as store:
        return store.select(list(names))


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_one_configuration_one_trial(tmp_path: Path) -> None:
    db = tmp_path / "lab.db"
    (run_id,) = store_lab(db, curves=[THREE[1]], trials=1)
    doc = build_report(select(db, run_id))
    check_schema(doc)
    assert doc["comparison"] is None and doc["scaling"] is None
    (config,) = doc["configurations"]
    assert config["label"] == "server=apache cpus=2" and config["trials"] == 1
    assert config["server"]["name"] == "apache"
    assert len(config["points"]) == 10 and all(p["rps_ci95"] is None and p["n"] == 1 for p in config["points"])
    assert config["peak"]["rps_ci95"] is None and config["peak"]["rps"] == max(p["rps"] for p in config["points"])
    assert config["summary"]["shape"] in ("plateau", "graceful degradation", "rising")
    assert config["fairness"] is not None and len(config["fairness"]["clients"]) == config["fairness"]["load"]
    assert len(doc["mixes"]) == 10 and len(doc["runs"]) == 1
    assert doc["summary"]["headline"].startswith("server=apache cpus=2 peaked at ")
    assert doc["title"] == "webbench-static: server=apache cpus=2"


def test_repeats_give_confidence_intervals(tmp_path: Path) -> None:
    db = tmp_path / "lab.db"
    store_lab(db, curves=[THREE[0]], trials=3)
    doc = build_report(select(db, "exp-1"), title="three trials")
    check_schema(doc)
    (config,) = doc["configurations"]
    assert config["trials"] == 3 and doc["title"] == "three trials"
    for point in config["points"]:
        assert point["n"] == 3
        lo, hi = point["rps_ci95"]
        assert lo < point["rps"] < hi
        assert point["throughput_Bps_ci95"] is not None and point["rps_sd"] > 0
    assert config["peak"]["n"] == 3 and len(config["peak"]["trial_peaks"]) == 3
    assert config["peak"]["rps_ci95"] is not None
    assert "mean of 3 trials, 95% CI" in doc["summary"]["headline"]
    assert {c["trial"] for c in config["fairness"]["clients"]} == {1, 2, 3}
    assert render(doc, "html").count('class="band"') == 2  # req/s and throughput, shaded by their intervals


def test_trials_peaking_at_one_load_need_no_note_on_the_mean_curve() -> None:
    details = [run(rps, factors={"server": "a"}, repeat_index=i, run_id=f"a{i}")
               for i, rps in enumerate(([1000.0, 5000.0, 3000.0], [1000.0, 4400.0, 2000.0]))]  # fmt: skip
    doc = build_report(details)
    (config,) = doc["configurations"]
    assert (config["peak"]["rps"], config["peak"]["load"]) == (4700.0, 2.0) and not config["peak"]["trials_peak_apart"]
    findings = " ".join(doc["summary"]["findings"])
    assert "the mean curve peaks at" not in findings  # its peak is the mean of theirs: nothing to explain
    assert ("Each trial's own peak req/s (the peaks above are the tops of the mean curves over trials): server=a"
            " 4,400–5,000 at 2 clients.") in findings  # fmt: skip


def test_two_trials_are_too_few_for_an_interval_and_every_output_says_so(tmp_path: Path) -> None:
    db = tmp_path / "lab.db"
    store_lab(db, curves=[THREE[0]], trials=2)
    doc = build_report(select(db, "exp-1"))
    check_schema(doc)
    (config,) = doc["configurations"]
    assert config["peak"]["rps_ci95"] is None and all(p["rps_ci95"] is None for p in config["points"])
    assert (
        "(mean of 2 trials, too few for an interval: --repeat 3 or more; run-to-run CV 0.8%)"
        in doc["summary"]["headline"]
    )
    assert "95% CI" not in doc["summary"]["headline"]
    assert any("so none is shown; --repeat 3 or more gives one" in w for w in doc["summary"]["warnings"])
    markdown = render(doc, "md")
    assert "too few (n<3)" in markdown
    html = render(doc, "html")
    assert 'class="band"' not in html and "no band below 3 trials" in html and "(too few trials for a CI)" in html


def test_two_or_more_configurations_are_compared(tmp_path: Path) -> None:
    db = tmp_path / "lab.db"
    store_lab(db, trials=2)
    doc = build_report(select(db, "exp-1"))
    check_schema(doc)
    cmp = doc["comparison"]
    labels = [c["label"] for c in doc["configurations"]]
    assert labels == ["server=nginx", "server=apache", "server=lighttpd"]  # only what differs
    assert cmp["ranking"][0] == "server=nginx"
    assert len(cmp["improvement_pct"]) == 6 and len(cmp["paired"]) == 3
    nginx_over_apache = next(
        g for g in cmp["improvement_pct"] if g["a"] == "server=nginx" and g["b"] == "server=apache"
    )
    peaks = {c["label"]: c["peak"]["rps"] for c in doc["configurations"]}
    assert nginx_over_apache["pct"] == pytest.approx((peaks["server=nginx"] / peaks["server=apache"] - 1) * 100)
    first = cmp["paired"][0]
    assert (first["a"], first["b"], first["n"]) == ("server=nginx", "server=apache", 20)
    assert first["significant"] and first["verdict"] == "significant" and first["ci95"][0] > 0
    assert len(cmp["by_load"]) == 10 and cmp["by_load"][0]["leader_gain_pct"][0] is None
    assert doc["summary"]["headline"].startswith("server=nginx had the highest peak")
    assert any("significant" in line for line in doc["summary"]["findings"])
    collapse = next(c for c in doc["configurations"] if c["label"] == "server=lighttpd")
    assert collapse["summary"]["shape"] == "collapse"
    assert any("collapsed" in w for w in doc["summary"]["warnings"])
    assert any("errors above 1%" in w for w in doc["summary"]["warnings"])


def test_equal_configurations_are_not_significantly_different(tmp_path: Path) -> None:
    db = tmp_path / "lab.db"
    twins = [Curve({"server": "a"}, 20_000, 16, noise=0.05), Curve({"server": "b"}, 20_000, 16, noise=0.05)]
    store_lab(db, curves=twins, trials=2, seed=3)
    doc = build_report(select(db, "exp-1"))
    check_schema(doc)
    (paired,) = doc["comparison"]["paired"]
    lo, hi = paired["ci95"]
    assert lo < 0 < hi and paired["verdict"] == "not significant" and not paired["significant"]
    assert any("not significant" in line and "cannot tell them apart" in line for line in doc["summary"]["findings"])


def test_cpus_varying_gives_scaling(tmp_path: Path) -> None:
    db = tmp_path / "lab.db"
    curves = [Curve({"server": "nginx", "cpus": n}, 15_000 * n**0.9, 8 * n) for n in (1, 2, 4)]
    store_lab(db, curves=curves, trials=1, loads=(1, 2, 4, 8, 16, 32, 64))
    doc = build_report(select(db, "exp-1"))
    check_schema(doc)
    rows = doc["scaling"]
    assert [r["cpus"] for r in rows] == [1, 2, 4]
    assert rows[0]["speedup"] == pytest.approx(1.0) and rows[0]["efficiency"] == pytest.approx(1.0)
    assert 1.5 < rows[1]["speedup"] < 2.1 and rows[2]["speedup"] > rows[1]["speedup"]
    assert any(line.startswith("Scaling (") for line in doc["summary"]["findings"])


def test_no_scaling_when_cpus_is_the_same_everywhere(tmp_path: Path) -> None:
    db = tmp_path / "lab.db"
    store_lab(db, curves=THREE[:2], trials=1)
    assert build_report(select(db, "exp-1"))["scaling"] is None


def test_load_axis_threads(tmp_path: Path) -> None:
    db = tmp_path / "lab.db"
    store_lab(db, curves=[THREE[0]], trials=1)
    doc = build_report(select(db, "exp-1"), load_axis="threads")
    check_schema(doc)
    assert doc["load_axis"] == "threads"
    assert [p["load"] for p in doc["configurations"][0]["points"]][:3] == [2, 8, 16]
    assert "threads" in doc["summary"]["headline"]


def test_bad_input_is_one_line_config_error(tmp_path: Path) -> None:
    db = tmp_path / "lab.db"
    store_lab(db, curves=[THREE[0]], trials=1)
    with pytest.raises(ConfigError, match="unknown load axis 'cpus': use one of clients, threads, connections"):
        build_report(select(db, "exp-1"), load_axis="cpus")
    with Store(db) as store:
        empty = store.create_run(RunMeta("s", "http://127.0.0.1:1/", "quick", 0, {}, {}, {}))
        store.finish_run(empty, "failed", "target died")
    with pytest.raises(ConfigError, match=r"no stored mix in the runs given .*: pick runs that measured"):
        build_report(select(db, empty))


def test_a_run_without_mixes_is_listed_as_skipped(tmp_path: Path) -> None:
    db = tmp_path / "lab.db"
    (run_id,) = store_lab(db, curves=[THREE[0]], trials=1)
    with Store(db) as store:
        empty = store.create_run(RunMeta("s", "http://127.0.0.1:1/", "quick", 0, {}, {}, {}))
        store.finish_run(empty, "interrupted", "Ctrl-C")
    doc = build_report(select(db, run_id, empty))
    check_schema(doc)
    assert doc["skipped_runs"] == [empty]
    assert any(empty in w and "left out" in w for w in doc["summary"]["warnings"])


def test_an_interrupted_run_is_warned_about(tmp_path: Path) -> None:
    db = tmp_path / "lab.db"
    (run_id,) = store_lab(db, curves=[THREE[0]], trials=1)
    with Store(db) as store:
        store.reopen_run(run_id)
        store.finish_run(run_id, "interrupted", "Ctrl-C during mix 10")
    doc = build_report(select(db, run_id))
    check_schema(doc)
    assert any("is interrupted (Ctrl-C during mix 10)" in w for w in doc["summary"]["warnings"])


def test_configurations_without_a_common_load_are_not_comparable(tmp_path: Path) -> None:
    db = tmp_path / "lab.db"
    store_lab(db, curves=[THREE[0]], trials=1, loads=(1, 2, 4))
    store_lab(db, curves=[THREE[1]], trials=1, loads=(8, 16, 32), seed=8)
    with Store(db) as store:
        ids = [r.id for r in store.runs()]
    doc = build_report(select(db, *ids))
    check_schema(doc)
    (paired,) = doc["comparison"]["paired"]
    assert paired["verdict"] == "not comparable" and paired["n"] == 0 and "no load point in common" in paired["note"]
    assert any("no load point in common, so no paired test" in line for line in doc["summary"]["findings"])
    assert [r["load"] for r in doc["comparison"]["by_load"]] == [1, 2, 4, 8, 16, 32]


def test_the_peak_is_the_top_of_the_mean_curve_everywhere_the_report_names_it() -> None:
    # Trial 1 peaks at 2 clients (5,000 req/s), trial 2 at 3 clients (4,400): the mean curve 1,000, 3,500, 3,700
    # peaks at 3 clients; the mean of the trials' own peaks (4,700, at no load) must appear nowhere.
    details = [run(rps, factors={"server": "a"}, repeat_index=i, run_id=f"a{i}")
               for i, rps in enumerate(([1000.0, 5000.0, 3000.0], [1000.0, 2000.0, 4400.0]))]  # fmt: skip
    details.append(run([1000.0, 3000.0, 3500.0], factors={"server": "b"}, run_id="b0"))
    doc = build_report(details)
    check_schema(doc)
    a = next(c for c in doc["configurations"] if c["label"] == "server=a")
    curve = [(p["load"], p["rps"]) for p in a["points"]]
    top = max(curve, key=lambda point: point[1])
    peak = a["peak"]
    assert (peak["load"], peak["rps"]) == top == (3.0, 3700.0)
    assert (peak["n"], peak["rps_ci95"]) == (2, a["points"][2]["rps_ci95"])
    assert peak["throughput_Bps"] == max(p["throughput_Bps"] for p in a["points"])
    assert (peak["trial_peaks"], peak["trial_peak_loads"]) == ([5000.0, 4400.0], [2.0, 3.0])
    assert (peak["trial_peaks_min"], peak["trial_peaks_max"]) == (4400.0, 5000.0)
    assert (a["summary"]["peak_rps"], a["summary"]["peak_rps_load"]) == (3700.0, 3.0)
    assert a["fairness"]["load"] == 3.0
    assert doc["summary"]["headline"].startswith("server=a had the highest peak: 3,700 req/s")
    # The trials peaked at different loads, which is why the mean curve's 3,700 is below both: one line says so.
    assert peak["trials_peak_apart"]
    assert ("server=a: the mean curve peaks at 3,700 req/s at 3 clients, below every trial's own peak (trial 1"
            " 5,000 req/s at 2 clients, trial 2 4,400 req/s at 3 clients), because the trials peaked at different"
            " loads") in " ".join(doc["summary"]["findings"])  # fmt: skip
    (rps_chart,) = [c for c in build_charts(doc) if "chart-rps" in c.svg]
    assert "server=a: peak 3,700 req/s at 3" in rps_chart.svg
    markdown = render(doc, "markdown")
    assert "| server=a | 2 | 3,700 |" in markdown and "4,400–5,000 at 2–3 clients" in markdown


def test_the_peak_sentence_takes_every_figure_from_its_one_mix() -> None:
    """The README walk: "peaked at 16,508 req/s (255.2 MB/s) at 36 clients", where 255.2 MB/s was the mix of
    32 clients and the 36-client mix moved 253.91 MB/s."""
    detail = run([16_000.0, 16_400.0, 16_508.0], loads=[28, 32, 36])
    for m, mbps in zip(detail.mixes, (240.0, 255.2, 253.91)):
        m.throughput_Bps = mbps * 1e6
    doc = build_report([detail])
    check_schema(doc)
    (config,) = doc["configurations"]
    assert (config["peak"]["load"], config["peak"]["load_throughput_Bps"]) == (36.0, 253.91e6)
    assert (config["peak"]["throughput_Bps"], config["peak"]["throughput_load"]) == (255.2e6, 32.0)  # its own peak
    assert "peaked at 16,508 req/s and 253.9 MB/s at 36 clients" in doc["summary"]["headline"]


def test_repeats_report_the_run_to_run_spread_and_trials_that_disagree() -> None:
    agree = [run([1000.0, 2000.0, 1900.0], factors={"server": "a"}, repeat_index=i, run_id=f"a{i}")
             for i in range(3)]  # fmt: skip
    for detail, scale in zip(agree, (1.0, 1.02, 0.98)):
        for m in detail.mixes:
            m.rps *= scale
    apart = [run([1000.0 * s, 2000.0 * s, 1900.0 * s], factors={"server": "b"}, repeat_index=i, run_id=f"b{i}")
             for i, s in enumerate((1.0, 0.8, 1.0))]  # fmt: skip
    doc = build_report(agree + apart)
    check_schema(doc)
    a, b = (next(c for c in doc["configurations"] if c["label"] == f"server={x}") for x in "ab")
    assert a["peak"]["rps_cv"] == pytest.approx(0.02) and a["trials_apart"] is None
    assert b["trials_apart"]["low_trial"] == 2 and b["trials_apart"]["explained"] is False
    warnings = " ".join(doc["summary"]["warnings"])
    assert "server=b: its trials disagree: trial 2 peaked at 1,600 req/s and trial 1 at 2,000 req/s, 25% apart" in (
        warnings
    )
    assert "server=a: its trials disagree" not in warnings
    markdown = render(doc, "markdown")
    assert "run-to-run CV" in markdown and "| 2.0% |" in markdown
    single = build_report(agree)
    assert "run-to-run CV 2.0%" in single["summary"]["headline"]
