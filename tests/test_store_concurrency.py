"""The store under real concurrency: a writer killed with SIGKILL, readers beside a writing process or thread."""

from __future__ import annotations

import dataclasses
import json
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from crest.store import RunDetail, Store
from test_store import make_meta, make_mix

# Only stops a hang; each wait normally ends in well under a second.
WAIT_S = 30.0

# A runner stand-in: opens the store, creates a run (or uses argv's), stores mixes,
# reports each one on stdout once add_mix has returned, then waits to be killed.
WRITER = """
import json, sys, time
from pathlib import Path
from crest.store import MixRecord, RunMeta, Store
from crest.verdicts import Verdict
path, meta_json, mix_json, count, pause_s = sys.argv[1:6]
mix = json.loads(mix_json)
mix["verdicts"] = [Verdict.from_json(v) for v in mix["verdicts"]]
store = Store(Path(path))
run_id = store.create_run(RunMeta(**json.loads(meta_json)))
print(run_id, flush=True)
sys.stdin.readline()  # "go"
for index in range(int(count)):
    store.add_mix(run_id, MixRecord(**{**mix, "index": index}))
    print(index, flush=True)
    time.sleep(float(pause_s))
print("done", flush=True)
sys.stdin.readline()  # never answered: the test kills us here
"""

# Takes the write lock and inserts a mix without committing, then waits to be killed.
UNCOMMITTED = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
conn.execute("INSERT INTO mixes (run_id, idx, clients, threads_per_client, connections, started_at, ended_at,"
             " window_s, requests, responses, bytes, body_bytes, errors_json, latency_us_json, status_json,"
             " classes_json, clients_json, timeline_json, histogram_b64, monitor_json, verdicts_json)"
             " VALUES (?, 5, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, '{}', '{}', '{}', '{}', '[]', '[]', '', '{}', '[]')",
             (sys.argv[2],))
print("inserted", flush=True)
sys.stdin.readline()
"""


def start_writer(db: Path, count: int, pause_s: float = 0.0) -> subprocess.Popen[str]:
    meta_json = json.dumps(dataclasses.asdict(make_meta()))
    mix = make_mix(0)
    mix_json = json.dumps({**dataclasses.asdict(mix), "verdicts": [v.to_json() for v in mix.verdicts]})
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db), meta_json, mix_json, str(count), str(pause_s)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def kill(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=WAIT_S)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read() if proc.stderr else ""
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()


@pytest.mark.integration
def test_mixes_survive_sigkill_of_the_writer(tmp_path: Path) -> None:
    db = tmp_path / "crest.db"
    proc = start_writer(db, count=3)
    try:
        assert proc.stdout is not None and proc.stdin is not None
        run_id = proc.stdout.readline().strip()
        proc.stdin.write("go\n")
        proc.stdin.flush()
        assert [proc.stdout.readline().strip() for _ in range(4)] == ["0", "1", "2", "done"]
        assert Path(f"{db}-wal").stat().st_size > 0  # the mixes are in the WAL, not yet checkpointed
    finally:
        kill(proc)
    with Store(db) as store:
        detail = store.run(run_id)
        assert [m.index for m in detail.mixes] == [0, 1, 2]
        # The writer stores copies of mix 0 under new indexes.
        assert detail.mixes == [dataclasses.replace(make_mix(0), index=i) for i in range(3)]
        # Nobody finished it; its writer is gone, so it reads as interrupted (the file still says running).
        assert (detail.status, detail.reason) == (
            "interrupted",
            f"its crest (pid {proc.pid}) ended without finishing it",
        )
        assert store.next_mix_index(run_id) == 3
        store.finish_run(run_id, "interrupted", "writer killed")  # and the file is writable again
        assert store.runs()[0].status == "interrupted"


@pytest.mark.integration
def test_an_uncommitted_mix_vanishes_with_its_killed_writer(tmp_path: Path) -> None:
    db = tmp_path / "crest.db"
    with Store(db) as store:
        run_id = store.create_run(make_meta())
        store.add_mix(run_id, make_mix(0))
    proc = subprocess.Popen(
        [sys.executable, "-c", UNCOMMITTED, str(db), run_id],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "inserted", proc.stderr.read() if proc.stderr else ""
    finally:
        kill(proc)
    with Store(db) as store:
        assert [m.index for m in store.run(run_id).mixes] == [0]
        store.add_mix(run_id, make_mix(1))  # the dead writer's lock is gone
        assert store.next_mix_index(run_id) == 2


@pytest.mark.integration
def test_readers_see_whole_mixes_while_a_process_writes(tmp_path: Path) -> None:
    db = tmp_path / "crest.db"
    count = 150
    proc = start_writer(db, count=count, pause_s=0.002)
    try:
        assert proc.stdout is not None and proc.stdin is not None
        run_id = proc.stdout.readline().strip()
        seen: list[int] = []
        with Store(db) as reader:
            proc.stdin.write("go\n")
            proc.stdin.flush()
            deadline = time.monotonic() + WAIT_S
            while (not seen or seen[-1] < count) and time.monotonic() < deadline:
                detail = reader.run(run_id)
                assert_ladder_prefix(detail)
                (summary,) = reader.runs()
                assert summary.mixes >= len(detail.mixes)  # later snapshot, never fewer
                seen.append(len(detail.mixes))
        assert seen[-1] == count
        assert seen == sorted(seen)
        assert len(set(seen)) > 2, "the reader never saw the run in progress"
    finally:
        kill(proc)


def assert_ladder_prefix(detail: RunDetail) -> None:
    assert [m.index for m in detail.mixes] == list(range(len(detail.mixes)))


def test_an_open_read_does_not_block_the_writer(tmp_path: Path) -> None:
    db = tmp_path / "crest.db"
    with Store(db) as store:
        run_id = store.create_run(make_meta())
        store.add_mix(run_id, make_mix(0))
        reader = sqlite3.connect(str(db), isolation_level=None)
        try:
            reader.execute("BEGIN")
            assert reader.execute("SELECT COUNT(*) FROM mixes").fetchone()[0] == 1
            started = time.monotonic()
            store.add_mix(run_id, make_mix(1))  # would wait for the reader without WAL
            assert time.monotonic() - started < 5.0
            assert reader.execute("SELECT COUNT(*) FROM mixes").fetchone()[0] == 1  # its snapshot holds
            reader.execute("COMMIT")
            assert reader.execute("SELECT COUNT(*) FROM mixes").fetchone()[0] == 2
        finally:
            reader.close()


def test_one_store_shared_by_threads(tmp_path: Path) -> None:
    errors: list[BaseException] = []
    mixes = 30  # each read parses every stored mix: keep the run short
    with Store(tmp_path / "crest.db") as store:
        run_id = store.create_run(make_meta())

        def write() -> None:
            try:
                for index in range(mixes):
                    store.add_mix(run_id, make_mix(index))
            except BaseException as exc:
                errors.append(exc)

        def read() -> None:
            try:
                for _ in range(mixes):
                    assert_ladder_prefix(store.run(run_id))
                    store.runs()
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=write)] + [threading.Thread(target=read) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=WAIT_S)
        assert errors == []
        assert store.next_mix_index(run_id) == mixes


@pytest.mark.integration
@pytest.mark.timeout(120)
def test_two_runs_writing_one_results_file_both_keep_every_mix(tmp_path: Path) -> None:
    # Two crest processes, one results file: WAL and the busy timeout let both commit each mix.
    from crest.filesets import generate
    from support import run_cli, static_suite

    fileset = tmp_path / "fs"
    generate("webcat-large-filemix", fileset)
    target = subprocess.Popen(
        [sys.executable, "-m", "crest", "serve", "--docroot", str(fileset), "--port", "0", "--threads", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    assert target.stdout is not None
    try:
        url = target.stdout.readline().strip().rstrip("/")
        db = tmp_path / "shared.db"
        runs = []
        for name in ("one", "two"):
            suite = tmp_path / f"{name}.toml"
            suite.write_text(static_suite(name, "three short mixes", [1, 2, 3], length_s=1, ramp_s=0))
            runs.append(subprocess.Popen(
                [sys.executable, "-m", "crest", "run", str(suite), "--target", url, "--db", str(db), "-q"],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            ))  # fmt: skip
        for proc in runs:
            _, err = proc.communicate(timeout=WAIT_S * 2)
            assert proc.returncode == 0, err
        listed = json.loads(run_cli("runs", "--db", str(db), "--json").stdout)
        assert sorted((r["suite"], r["status"], r["mixes"]) for r in listed) == [
            ("one", "complete", 3), ("two", "complete", 3)
        ]  # fmt: skip
    finally:
        target.terminate()
        target.wait(10)
        target.stdout.close()
