"""The suite runner against real targets: every mix stored with its window,
Ctrl-C keeps finished mixes and resume completes the run, and a target that
dies mid-run fails the run with the reason while keeping what was measured."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from crest.filesets import generate
from support import default_sigint, run_cli, run_cli_in_process, static_suite

# Long enough to be caught mid-run; each test bounds its waits by these.
WAIT_S = 60.0


@pytest.fixture(scope="module")
def fileset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fileset")
    generate("webcat-large-filemix", root)
    return root


def _suite(tmp_path: Path, length: int) -> Path:
    path = tmp_path / "suite.toml"
    path.write_text(
        static_suite("test-ladder", "three small mixes for tests", [1, 2, 3], threads_per_client=2, length_s=length)
    )
    return path


@pytest.fixture
def target(fileset: Path) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "crest", "serve", "--docroot", str(fileset), "--port", "0", "--threads", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    proc.url = proc.stdout.readline().strip().rstrip("/")  # type: ignore[attr-defined]
    yield proc
    if proc.poll() is None:
        proc.terminate()
        proc.wait(10)
    proc.stdout.close()


def _rows(db: Path, sql: str, *args: object) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql, args).fetchall()


def _wait_for_mixes(db: Path, n: int) -> None:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if db.exists():
            try:
                if _rows(db, "SELECT COUNT(*) FROM mixes")[0][0] >= n:
                    return
            except sqlite3.OperationalError:
                pass
        time.sleep(0.1)
    pytest.fail(f"no {n} mixes stored within {WAIT_S}s")


@pytest.mark.integration
def test_every_mix_is_stored_with_its_window(tmp_path: Path, target: subprocess.Popen[str], fileset: Path) -> None:
    db = tmp_path / "crest.db"
    result = run_cli("run", str(_suite(tmp_path, 4)), "--target", target.url, "--db", str(db), "-q")  # type: ignore[attr-defined]
    assert result.returncode == 0, result.stderr
    assert "Peak" in result.stdout
    runs = json.loads(run_cli("runs", "--db", str(db), "--json").stdout)
    assert [(r["suite"], r["status"], r["mixes"]) for r in runs] == [("test-ladder", "complete", 3)]
    shown = json.loads(run_cli("show", runs[0]["id"], "--db", str(db), "--json").stdout)
    assert [m["clients"] for m in shown["mixes"]] == [1, 2, 3]
    for mix in shown["mixes"]:
        assert mix["threads"] == 2
        assert mix["window_s"] == pytest.approx(2.0)
        assert mix["requests"] > 0 and mix["errors"] == 0
        assert mix["rps"] == pytest.approx(mix["requests"] / 2.0)
        # Ramps are cut: the window's requests are those of seconds 1 and 2 only.
        timeline = mix["timeline"]
        assert mix["requests"] == sum(b["requests"] for b in timeline if 1 <= b["second"] < 3)
        assert len(mix["client_scores"]) == mix["clients"]
        assert sum(c["requests"] for c in mix["client_scores"]) == mix["requests"]
        assert mix["classes"]["static"]["requests"] == mix["requests"]


@pytest.mark.integration
def test_interrupt_keeps_finished_mixes_and_resume_completes(tmp_path: Path, target: subprocess.Popen[str]) -> None:
    db = tmp_path / "crest.db"
    proc = subprocess.Popen(
        [sys.executable, "-m", "crest", "run", str(_suite(tmp_path, 3)), "--target", target.url, "--db", str(db), "-q"],  # type: ignore[attr-defined]
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint,
    )  # fmt: skip
    _wait_for_mixes(db, 1)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=WAIT_S)
    assert proc.returncode == 130, err
    assert "--resume" in err
    [(run_id, status)] = _rows(db, "SELECT id, status FROM runs")
    assert status == "interrupted"
    stored = _rows(db, "SELECT idx FROM mixes ORDER BY idx")
    assert 1 <= len(stored) < 3
    result = run_cli("run", "--resume", run_id, "--db", str(db), "-q")
    assert result.returncode == 0, result.stderr
    assert _rows(db, "SELECT status FROM runs") == [("complete",)]
    assert [i for (i,) in _rows(db, "SELECT idx FROM mixes ORDER BY idx")] == [1, 2, 3]


@pytest.mark.integration
def test_a_target_that_dies_fails_the_run_and_keeps_what_was_measured(
    tmp_path: Path, target: subprocess.Popen[str]
) -> None:
    db = tmp_path / "crest.db"
    proc = subprocess.Popen(
        [sys.executable, "-m", "crest", "run", str(_suite(tmp_path, 3)), "--target", target.url, "--db", str(db), "-q"],  # type: ignore[attr-defined]
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint,
    )  # fmt: skip
    _wait_for_mixes(db, 1)
    target.kill()
    target.wait(10)
    out, err = proc.communicate(timeout=WAIT_S)
    assert proc.returncode == 1, (out, err)
    assert "crest: error:" in err and "target" in err
    [(status, reason)] = _rows(db, "SELECT status, reason FROM runs")
    assert status == "failed"
    assert "mix" in reason
    assert _rows(db, "SELECT COUNT(*) FROM mixes")[0][0] >= 1


def test_a_target_down_at_start_is_an_error_before_any_run_is_recorded(tmp_path: Path, closed_port: int) -> None:
    db = tmp_path / "crest.db"
    result = run_cli_in_process(
        "run", str(_suite(tmp_path, 3)), "--target", f"http://127.0.0.1:{closed_port}", "--db", str(db)
    )
    assert result.returncode == 2
    assert result.stderr.startswith("crest: error: cannot connect")
    assert len(result.stderr.strip().splitlines()) == 1
    assert not db.exists() or _rows(db, "SELECT COUNT(*) FROM runs") == [(0,)]


def test_a_bad_suite_file_names_the_file_key_and_rule(tmp_path: Path, closed_port: int) -> None:
    path = tmp_path / "suite.toml"
    path.write_text(static_suite("test-ladder", "three small mixes for tests", [1, 2, 3], threads_per_client=0))
    result = run_cli_in_process("run", str(path), "--target", f"http://127.0.0.1:{closed_port}")
    assert result.returncode == 2
    assert result.stderr.startswith("crest: error: ")
    assert result.stderr.strip().endswith("suite.toml: ladder.threads_per_client: must be ≥ 1 (got 0)")
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.integration
def test_a_run_in_which_no_request_succeeded_is_failed_and_exits_1(tmp_path: Path, fileset: Path) -> None:
    # Every file answers 200 with its size (so the preflight's GET passes) but another first line, so with
    # --validate-content every response of every mix fails its check: the run measured nothing.
    wrong = tmp_path / "wrong"
    for path in fileset.rglob("*"):
        if path.is_file():
            copy = wrong / path.relative_to(fileset)
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy.write_bytes(b"x" * path.stat().st_size)
    proc = subprocess.Popen(
        [sys.executable, "-m", "crest", "serve", "--docroot", str(wrong), "--port", "0", "--threads", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    try:
        url = proc.stdout.readline().strip().rstrip("/")
        suite = tmp_path / "suite.toml"
        suite.write_text(static_suite("test-ladder", "two short mixes", [1, 2], length_s=2, ramp_s=0))
        db = tmp_path / "crest.db"
        result = run_cli("run", str(suite), "--target", url, "--validate-content", "--db", str(db), "-q")
    finally:
        proc.terminate()
        proc.wait(10)
        proc.stdout.close()
    assert result.returncode == 1, result.stderr
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith("crest: error: no request succeeded in any of its 2 mixes (")
    [(status, reason)] = _rows(db, "SELECT status, reason FROM runs")
    assert status == "failed" and reason.startswith("no request succeeded")
    assert _rows(db, "SELECT COUNT(*) FROM mixes")[0][0] == 2  # what was measured stays
