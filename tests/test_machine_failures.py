"""Failures of the machine, not of the input: one `crest: error:` line naming what failed, exit 1, never a
traceback; during `crest run` the finished mixes stay stored and `--resume` completes the run.

Real conditions only: the engine refused file descriptors (RLIMIT_NOFILE used up in a child process), and
the results disk filling up (a small tmpfs mounted by the test; needs root, skipped otherwise). A failure while
cleaning up after such an error (keeping a started target's logs) is told after it, never instead of it."""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from crest.filesets import generate
from support import SilentListener, run_cli, static_suite, wait_until

pytestmark = pytest.mark.integration

WAIT_S = 60.0

# A child that uses up its file descriptors but `free`, after the preflight's imports, then runs `crest bench`:
# the preflight's connect needs one descriptor and closes it; the engine then needs an epoll and an eventfd.
_NO_FDS_LEFT = """
import os, resource, sys
from crest.cli.main import load_command, main
load_command("bench")
import crest.cli.bench, crest.load.client, crest.load.preflight
resource.setrlimit(resource.RLIMIT_NOFILE, (256, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
held = []
while True:
    try:
        held.append(os.open(os.devnull, os.O_RDONLY))
    except OSError:
        break
for _ in range(int(sys.argv[2])):
    os.close(held.pop())
# A POST: the preflight sends no request for it, so the engine is what meets the missing descriptors.
sys.exit(main(["bench", "-c", "1", "-t", "1", "-d", "1s", "-q", "-m", "POST", "--body", "x", sys.argv[1]]))
"""


@pytest.mark.parametrize("free_fds", [1, 2])
def test_an_engine_refused_its_event_loop_is_a_machine_error(silent_listener: SilentListener, free_fds: int) -> None:
    result = subprocess.run(
        [sys.executable, "-c", _NO_FDS_LEFT, silent_listener.url, str(free_fds)],
        capture_output=True, text=True, timeout=WAIT_S, check=False,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    [line] = result.stderr.splitlines()
    assert line.startswith("crest: error: cannot start the engine: cannot "), line
    assert line.endswith("Too many open files (os error 24)"), line


# 2 s mixes without ramps: the disk is filled within milliseconds of mix 1 being stored, so mix 2 is still running.
SUITE = static_suite("disk-fills", "three short mixes", [1, 2, 3], length_s=2, ramp_s=0)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 4 MiB tmpfs: a results disk that a test can fill."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    mount = tmp_path / f"disk-{uuid.uuid4().hex[:6]}"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(disk: Path) -> Path:
    """Write to `disk` until it is full; returns the filler file."""
    filler = disk / "filler"
    block = b"\0" * 65536
    with open(filler, "wb", buffering=0) as f:
        try:
            while True:
                f.write(block)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
        try:
            while True:
                f.write(b"\0" * 512)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    return filler


def _rows(db: Path, sql: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return conn.execute(sql).fetchall()


@pytest.fixture(scope="module")
def fileset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fileset")
    generate("webcat-large-filemix", root)
    return root


@pytest.fixture(scope="module")
def target(fileset: Path) -> Iterator[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "crest", "serve", "--docroot", str(fileset), "--port", "0", "--threads", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    yield proc.stdout.readline().strip().rstrip("/")
    proc.terminate()
    proc.wait(10)
    proc.stdout.close()


def test_a_disk_that_fills_during_a_run_fails_it_in_one_line_and_resume_completes_it(
    tmp_path: Path, small_disk: Path, target: str
) -> None:
    db = small_disk / "crest.db"
    suite = tmp_path / "suite.toml"
    suite.write_text(SUITE)
    proc = subprocess.Popen(
        [sys.executable, "-m", "crest", "run", str(suite), "--target", target, "--db", str(db), "-q"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip

    def first_mix_stored() -> bool:
        assert proc.poll() is None, "crest run ended before it stored its first mix"
        try:
            return bool(_rows(db, "SELECT COUNT(*) FROM mixes")[0][0] >= 1)
        except sqlite3.Error:
            return False

    # Once the first mix is stored, fill the disk while the second one runs (2 s).
    wait_until(first_mix_stored, WAIT_S, "the first mix stored")
    filler = _fill(small_disk)
    _, err = proc.communicate(timeout=WAIT_S)
    [(run_id, status, reason)] = _rows(db, "SELECT id, status, reason FROM runs")
    assert proc.returncode == 1, err
    assert "Traceback" not in err
    assert err.splitlines() == [
        f"crest: error: cannot store mix 2: the disk holding {db} is full (No space left on device):"
        f" free space, then crest run --resume {run_id} --db {db}"
    ]
    # Failed: the store gave up its reserve (crest.db-reserve) to write that.
    assert (status, reason) == (
        "failed",
        f"cannot store mix 2: the disk holding {db} is full (No space left on device)",
    )
    assert _rows(db, "SELECT idx FROM mixes") == [(1,)]

    filler.unlink()
    result = run_cli("run", "--resume", str(run_id), "--db", str(db), "-q", timeout_s=WAIT_S)
    assert result.returncode == 0, result.stderr
    assert _rows(db, "SELECT status FROM runs") == [("complete",)]
    assert [i for (i,) in _rows(db, "SELECT idx FROM mixes ORDER BY idx")] == [1, 2, 3]


def test_a_full_disk_before_a_run_blames_the_disk_not_the_file(tmp_path: Path, small_disk: Path, target: str) -> None:
    db = small_disk / "crest.db"
    suite = tmp_path / "suite.toml"
    suite.write_text(SUITE)
    _fill(small_disk)
    result = run_cli("run", str(suite), "--target", target, "--db", str(db), "-q", timeout_s=WAIT_S)
    assert result.returncode == 1, result.stderr
    assert result.stderr.splitlines() == [
        f"crest: error: cannot open {db}: the disk holding {db} is full (No space left on device):"
        " free space and try again"
    ]
    assert "not a usable crest results file" not in result.stderr


@pytest.mark.timeout(120)
def test_a_failure_cleaning_up_after_a_full_disk_is_told_after_it(
    tmp_path: Path, small_disk: Path, fileset: Path
) -> None:
    db = small_disk / "crest.db"
    # Where the started target's logs are kept (crest-results/logs/RUN) cannot be made: the copy fails.
    (small_disk / "logs").write_text("a file where the logs directory would be\n")
    suite = tmp_path / "suite.toml"
    suite.write_text(static_suite("disk-fills-server", "two short mixes", [1, 2], length_s=2, ramp_s=0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "crest", "run", str(suite), "--server", "builtin", "--fileset", str(fileset),
         "--db", str(db), "-q"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip

    def first_mix_stored() -> bool:
        assert proc.poll() is None, "crest run ended before it stored its first mix"
        try:
            return bool(_rows(db, "SELECT COUNT(*) FROM mixes")[0][0] >= 1)
        except sqlite3.Error:
            return False

    wait_until(first_mix_stored, WAIT_S, "the first mix stored")
    _fill(small_disk)
    _, err = proc.communicate(timeout=WAIT_S)
    [(run_id, status, reason)] = _rows(db, "SELECT id, status, reason FROM runs")
    assert proc.returncode == 1, err
    assert "Traceback" not in err
    first, also = err.splitlines()
    assert first == (
        f"crest: error: cannot store mix 2: the disk holding {db} is full (No space left on device):"
        f" free space, then crest run --resume {run_id} --db {db}"
    )
    assert also.startswith(f"crest: also: cannot keep the target's logs in {small_disk}/logs/{run_id}: "), also
    assert "Not a directory" in also
    # Nothing lost: the server's log stays where it wrote it, and the line says where.
    kept = Path(also.rsplit(": they stay in ", 1)[1])
    assert (kept / "server.log").is_file()
    shutil.rmtree(kept.parent)
    assert (status, reason) == (
        "failed",
        f"cannot store mix 2: the disk holding {db} is full (No space left on device)",
    )
    assert _rows(db, "SELECT idx FROM mixes") == [(1,)]
