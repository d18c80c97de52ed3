"""Faults that end a run honestly: crest killed mid-run (SIGKILL), and a results file that is damaged or locked.

A killed crest leaves no target behind (its children get SIGTERM from the kernel; the next target crest
starts reaps the run directory and cgroup, and any server that outlived it) and its run reads as
`interrupted` to the next `crest runs` or `crest show` (its owner, stored with the run, is gone), which
`crest run --resume` completes. A results file that is not SQLite, or that another process holds locked,
is one line naming the file and what to do, exit 1, for `crest runs`, `crest show` and `crest run`.
The full disk is tests/test_machine_failures.py's.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

import crest.servers.cgroup
import crest.store.sqlite
from crest.filesets import generate
from crest.servers.reap import reap_dead
from crest.store import Store
from support import run_cli, run_cli_in_process, static_suite, wait_until
from test_store import make_meta

WAIT_S = 60.0


def _set_owner(db: Path, run_id: str, owner: dict[str, object]) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE runs SET owner_json = ? WHERE id = ?", (json.dumps(owner), run_id))


def test_a_running_run_whose_crest_is_gone_reads_as_interrupted(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    with Store(db) as store:
        live = store.create_run(make_meta(suite="live"))  # owned by this process, which is alive
        dead = store.create_run(make_meta(suite="dead"))
        moved = store.create_run(make_meta(suite="moved"))
    with sqlite3.connect(db) as conn:
        [(owner_json,)] = conn.execute("SELECT owner_json FROM runs WHERE id = ?", (live,)).fetchall()
    owner = json.loads(owner_json)
    # The machine booted since (another boot id), and a pid whose process started at another time: both gone.
    _set_owner(db, dead, {**owner, "boot_id": "another-boot"})
    _set_owner(db, moved, {**owner, "started": owner["started"] - 3600})
    with Store(db) as store:
        statuses = {s.suite: (s.status, s.reason) for s in store.runs()}
        assert statuses["live"] == ("running", None)
        gone = ("interrupted", f"its crest (pid {owner['pid']}) ended without finishing it")
        assert statuses["dead"] == statuses["moved"] == gone
        assert (store.run(dead).status, store.run(dead).reason) == gone
    # Another machine's run in a shared file: nothing says its crest is gone.
    _set_owner(db, live, {**owner, "host": "another-host", "boot_id": "another-boot"})
    listed = json.loads(run_cli_in_process("runs", "--db", str(db), "--json").stdout)
    assert {r["suite"]: r["status"] for r in listed} == {
        "live": "running",
        "dead": "interrupted",
        "moved": "interrupted",
    }


def _damaged(tmp_path: Path) -> Path:
    db = tmp_path / "crest.db"
    db.write_bytes(b"\x8f not the pages of an SQLite file \x00\xff" * 200)
    return db


def _suite(tmp_path: Path) -> Path:
    suite = tmp_path / "suite.toml"
    suite.write_text(static_suite("faults", "one short mix", [1], length_s=1, ramp_s=0))
    return suite


def _one_line(args: list[str]) -> str:
    result = run_cli_in_process(*args)
    assert result.returncode == 1, (args, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    [line] = result.stderr.splitlines()
    return line


def test_a_damaged_results_file_is_one_line_naming_it(tmp_path: Path) -> None:
    db = _damaged(tmp_path)
    fix = f"crest: error: {db} is damaged or not an SQLite file (file is not a database): move it aside"
    for args in (["runs"], ["show", "20261127-0101-abcd"], ["run", str(_suite(tmp_path)), "--server", "builtin", "-q"]):
        assert _one_line([*args, "--db", str(db)]).startswith(fix), args
    assert db.read_bytes().startswith(b"\x8f not the pages")  # left as it was


# Another process holding the file: an exclusive lock, as a crest stuck in a write would hold it.
_LOCKER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA locking_mode = EXCLUSIVE")
conn.execute("BEGIN EXCLUSIVE")
conn.execute("UPDATE runs SET reason = reason")
print("locked", flush=True)
sys.stdin.read()
"""


@pytest.fixture
def locked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, str]]:
    """A results file with one run, held locked by another process until the test ends."""
    db = tmp_path / "crest.db"
    with Store(db) as store:
        run_id = store.create_run(make_meta())
    locker = subprocess.Popen(
        [sys.executable, "-c", _LOCKER, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert locker.stdout is not None and locker.stdin is not None
    try:
        assert locker.stdout.readline().strip() == "locked"
        # The lock is held for good: how long crest waits for it is not what this tests.
        monkeypatch.setattr(crest.store.sqlite, "BUSY_TIMEOUT_S", 0.2)
        yield db, run_id
    finally:
        locker.stdin.close()
        locker.wait(WAIT_S)
        locker.stdout.close()


@pytest.mark.integration
@pytest.mark.timeout(60)
def test_a_locked_results_file_is_one_line_naming_it(tmp_path: Path, locked: tuple[Path, str]) -> None:
    db, run_id = locked
    said = f"{db} is locked (database is locked): another crest process is writing it: wait for it to end"
    for args in (["runs"], ["show", run_id], ["run", str(_suite(tmp_path)), "--server", "builtin", "-q"]):
        line = _one_line([*args, "--db", str(db)])
        assert line.startswith("crest: error: ") and said in line, (args, line)


@pytest.fixture(scope="module")
def fileset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fileset")
    generate("webcat-large-filemix", root)
    return root


def _targets_of(pid: int) -> list[psutil.Process]:
    """The built-in targets (`python -m crest serve`) that process `pid` started."""
    return [p for p in psutil.Process(pid).children(recursive=True) if "serve" in p.cmdline()]


def _ended(proc: psutil.Process) -> bool:
    try:
        return proc.status() == psutil.STATUS_ZOMBIE  # gone, waiting for whoever adopted it to reap it
    except psutil.NoSuchProcess:
        return True


@pytest.mark.integration
@pytest.mark.timeout(180)
@pytest.mark.alone
def test_crest_killed_mid_run_leaves_no_target_and_its_run_reads_interrupted(tmp_path: Path, fileset: Path) -> None:
    db = tmp_path / "crest.db"
    suite = tmp_path / "suite.toml"
    suite.write_text(static_suite("killed", "three short mixes", [1, 2, 3], length_s=1, ramp_s=0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "crest", "run", str(suite), "--server", "builtin", "--fileset", str(fileset),
         "--db", str(db), "-q"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip

    def first_mix_stored() -> bool:
        assert proc.poll() is None, "crest run ended before it stored its first mix"
        try:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
                return bool(conn.execute("SELECT COUNT(*) FROM mixes").fetchone()[0] >= 1)
        except sqlite3.Error:
            return False

    try:
        wait_until(first_mix_stored, WAIT_S, "the first mix stored")
        targets = _targets_of(proc.pid)
        assert targets, "crest run started no built-in target"
        proc.send_signal(signal.SIGKILL)
        proc.wait(WAIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(WAIT_S)
        assert proc.stderr is not None
        proc.stderr.close()
    wait_until(lambda: all(_ended(t) for t in targets), WAIT_S, "the killed crest's targets ended")
    left = list(Path(tempfile.gettempdir()).glob(f"crest-target-{proc.pid}-*"))
    assert left, "the killed crest's run directory is named by its pid"

    [listed] = json.loads(run_cli("runs", "--db", str(db), "--json").stdout)
    assert (listed["status"], listed["reason"]) == (
        "interrupted", f"its crest (pid {proc.pid}) ended without finishing it"
    )  # fmt: skip
    shown = run_cli("show", listed["id"], "--db", str(db))
    assert f"interrupted (its crest (pid {proc.pid}) ended without finishing it)" in shown.stdout

    resumed = run_cli("run", "--resume", listed["id"], "--db", str(db), "-q", timeout_s=WAIT_S * 2)
    assert resumed.returncode == 0, resumed.stderr
    [again] = json.loads(run_cli("runs", "--db", str(db), "--json").stdout)
    assert (again["status"], again["mixes"]) == ("complete", 3)
    assert not any(d.exists() for d in left), "the next target crest started reaped the dead one's directory"


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


@pytest.mark.integration
@pytest.mark.timeout(60)
def test_a_dead_crests_run_directory_and_its_server_are_reaped(tmp_path: Path) -> None:
    """What a killed crest's target left (a server that outlived it, its run directory, its cgroup) goes;
    what a live crest made stays."""
    dead, live = tmp_path / f"crest-target-{_dead_pid()}-x1", tmp_path / f"crest-target-{os.getpid()}-x2"
    for d in (dead, live):
        (d / "conf").mkdir(parents=True)
    server = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(120)", str(dead / "conf" / "server.conf")]
    )
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", str(live / "conf" / "x")])
    # A worker whose master is gone names no directory (nginx's: "nginx: worker process"), but its logs are
    # open in it: the dead crest's worker goes, the live one's stays.
    hold = "import os, time; f = open(os.environ['LOG'], 'a'); f.write('up'); f.flush(); time.sleep(120)"
    worker, live_worker = (
        subprocess.Popen([sys.executable, "-c", hold], env={**os.environ, "LOG": str(d / "conf" / "error.log")})
        for d in (dead, live)
    )
    wait_until(lambda: all((d / "conf" / "error.log").exists() for d in (dead, live)), 10, "the workers' logs open")
    cgroups = crest.servers.cgroup.own_parents()
    made = None
    if os.geteuid() == 0 and cgroups:
        made = cgroups[0] / f"crest-{_dead_pid()}-abcdef"
        made.mkdir()
    try:
        reaped = reap_dead(tmp_path)
        assert reaped.sites == [str(dead)] and not dead.exists() and live.exists()
        assert server.pid in reaped.killed and not psutil.pid_exists(server.pid)  # reap_dead waited for it
        assert worker.pid in reaped.killed and not psutil.pid_exists(worker.pid)
        assert bystander.poll() is None and live_worker.poll() is None
        if made is not None:
            assert reaped.cgroups == [str(made)] and not made.exists()
    finally:
        for p in (server, bystander, worker, live_worker):
            p.kill()
            p.wait()
        if made is not None and made.exists():
            made.rmdir()


def test_a_run_its_crest_still_writes_is_not_resumed_beside_it(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    with Store(db) as store:
        run_id = store.create_run(make_meta())
    with sqlite3.connect(db) as conn:
        [(owner_json,)] = conn.execute("SELECT owner_json FROM runs").fetchall()
    parent = psutil.Process().parent()
    assert parent is not None
    # Another live process (this one's parent) owns it: two crests would write the same mixes.
    _set_owner(db, run_id, {**json.loads(owner_json), "pid": parent.pid, "started": parent.create_time()})
    result = run_cli_in_process("run", "--resume", run_id, "--db", str(db))
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [
        f"crest: error: run {run_id} is still running in crest (pid {parent.pid}): let it finish, or stop that"
        " crest (Ctrl-C) and resume it then"
    ]
