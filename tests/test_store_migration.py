"""A results file written by store schema 1 (tests/data/crest-v1.db, see its README) opened by this crest.

The file was written by the crest of that schema: two real runs against the
built-in target (a sweep with an access log on shared cores, a ladder) and one
hand-stored run with the warnings those runs did not produce, plus a published
peak. Opening it upgrades it in place: warning texts become typed verdicts,
monitor-JSON values become columns, and every reader works on it.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from crest.analysis import points_from_run, summarize
from crest.report import build_report
from crest.store import SCHEMA_VERSION, RunDetail, Store
from crest.store.migrate import v1_verdict
from test_report_build import check_schema
from test_runs_cli import app

V1 = Path(__file__).parent / "data" / "crest-v1.db"
MOVED = ("size_bytes", "client_cpu_s", "connections_opened", "access_log_requests")


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "crest.db"
    shutil.copyfile(V1, path)
    return path


def dump(path: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT * FROM runs").fetchall() + conn.execute("SELECT * FROM mixes").fetchall()


def v1_rows() -> dict[tuple[str, int], tuple[dict[str, Any], list[str]]]:
    """Each mix's monitor and warnings as schema 1 stored them, read from the fixture with plain SQL."""
    with sqlite3.connect(f"file:{V1}?mode=ro", uri=True) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
        rows = conn.execute("SELECT run_id, idx, monitor_json, warnings_json FROM mixes").fetchall()
    return {(r, i): (json.loads(m), json.loads(w)) for r, i, m, w in rows}


def runs_by_suite(path: Path) -> dict[str, RunDetail]:
    with Store(path) as store:
        return {d.meta.suite: d for d in (store.run(s.id) for s in store.runs())}


def test_opening_upgrades_verdicts_and_columns_in_place(db: Path) -> None:
    before = v1_rows()
    runs = runs_by_suite(db)
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 9
    assert set(runs) == {"tiny-sweep", "tiny-ladder", "hand-written", "published"}
    kinds = {suite: [[v.kind for v in m.verdicts] for m in d.mixes] for suite, d in runs.items()}
    assert kinds == {
        "tiny-sweep": [["cpu_split", "target_idle"], ["cpu_split"]],
        "tiny-ladder": [[], []],
        "hand-written": [["page_cache", "errors", "cut_short", "client_bound"], ["note", "client_bound"]],
        "published": [["peak_only"]],
    }
    for detail in runs.values():
        for mix in detail.mixes:
            monitor, warnings = before[(detail.id, mix.index)]
            assert [v.message for v in mix.verdicts] == warnings  # the words stay; the kind is added
            for name in MOVED:
                assert getattr(mix, name) == monitor.get(name), (detail.meta.suite, mix.index, name)
                assert name not in mix.monitor
    sweep = runs["tiny-sweep"].mixes
    assert [m.size_bytes for m in sweep] == [500, 5000]
    assert all(m.access_log_requests and m.client_cpu_s and m.connections_opened for m in sweep)
    assert all(m.access_log_requests is None and m.size_bytes is None for m in runs["tiny-ladder"].mixes)
    assert all(
        m.cluster is None for d in runs.values() for m in d.mixes
    )  # schema 3: every older mix ran on one machine
    assert all(m.rate_rps is None and m.specweb99 is None for d in runs.values() for m in d.mixes)  # schema 4
    assert all(m.lab is None for d in runs.values() for m in d.mixes)  # schema 5: nothing around earlier mixes
    assert all(m.tls is None for d in runs.values() for m in d.mixes)  # schema 5
    assert all(m.network is None for d in runs.values() for m in d.mixes)  # schema 6: every older mix on loopback
    assert all(m.h2 is None for d in runs.values() for m in d.mixes)  # schema 7: every older mix spoke HTTP/1.x
    bound = runs["hand-written"].mixes[1].verdicts[1]
    assert bound.figures == {"engine_cpu_util_pct": 97.3, "engine_cores": 1}  # from the mix's monitor
    assert runs["tiny-sweep"].mixes[0].verdicts[0].figures == {"target_cores": 2}


def test_opening_twice_changes_nothing(db: Path) -> None:
    first = runs_by_suite(db)
    upgraded = dump(db)
    again = runs_by_suite(db)
    assert dump(db) == upgraded and again == first


def test_readers_work_on_the_upgraded_file(db: Path) -> None:
    runs = runs_by_suite(db)
    sweep, ladder = runs["tiny-sweep"], runs["tiny-ladder"]
    points = points_from_run(sweep, "size")
    assert [p.load for p in points] == [500.0, 5000.0] and points[0].target_idle
    assert [v.kind for v in summarize(points, sweep=True).verdicts] == ["target_idle"]
    # The target was busy at its peak (93%): nothing to say about it.
    assert [v.kind for v in summarize(points_from_run(ladder)).verdicts if v.kind == "target_idle"] == []
    doc = build_report([sweep])
    check_schema(doc)
    assert [v["kind"] for v in doc["configurations"][0]["summary"]["verdicts"]] == ["target_idle"]
    assert [[v["kind"] for v in m["verdicts"]] for m in doc["mixes"]] == [["cpu_split", "target_idle"], ["cpu_split"]]
    assert any("target idle at the peak" in line for line in doc["summary"]["warnings"])

    runner = CliRunner()
    shown = runner.invoke(app, ["show", sweep.id, "--db", str(db)], env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert shown.exit_code == 0, shown.output
    assert "warning: mix 1: target idle: at the peak (mix 1, 11,609 req/s)" in shown.stdout
    shown_json = runner.invoke(app, ["show", sweep.id, "--db", str(db), "--json"])
    mixes = json.loads(shown_json.stdout)["mixes"]
    assert [m["size_bytes"] for m in mixes] == [500, 5000]
    assert mixes[0]["verdicts"][0]["kind"] == "cpu_split" and mixes[0]["verdicts"][0]["message"].startswith(
        "the target has all 2 cores"
    )


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("client-bound: the load engine used 97% of its 1 core(s) in the window", "client_bound"),
        ('status: 3 × e.g. "503 Service Unavailable"', "errors"),
        ("12 connects failed with EADDRNOTAVAIL: the local ports toward this target are used up", "errors"),
        ("status of the moon: fine", "note"),
    ],
)
def test_v1_texts_and_their_kinds(text: str, kind: str) -> None:
    assert v1_verdict(text, {}).kind == kind
