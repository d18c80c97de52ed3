"""File-operation runs (dbench's loadfile) through the lab: the engine against a real directory, a file
suite through `crest run`, bad input refused before any load, and NetBench's published tables re-analysed."""

from __future__ import annotations

import json
import socket
import sqlite3
import time
from pathlib import Path

import pytest

from crest import _engine
from crest.analysis.published import PUBLISHED_DATA_DIR
from crest.load import fanout
from crest.load.runspec import RunSpec
from support import run_cli, run_cli_in_process

# Each client writes its own file and reads part of it back: 100 + 50 bytes written, 64 read per pass.
LOADFILE = r"""# a tiny NetBench-style loadfile: every client in its own tree
Deltree "\clients\client1" NT_STATUS_OK
Mkdir "\clients" NT_STATUS_OK
NTCreateX "\clients\client1" 0x1 0x2 1 NT_STATUS_OK
Close 1 NT_STATUS_OK
NTCreateX "\clients\client1\data.doc" 0x40 0x5 2 NT_STATUS_OK
WriteX 2 0 100 100 NT_STATUS_OK
WriteX 2 100 50 50 NT_STATUS_OK
ReadX 2 0 64 64 NT_STATUS_OK
Close 2 NT_STATUS_OK
QUERY_PATH_INFORMATION "\clients\client1\DATA.DOC" 1004 NT_STATUS_OK
NTCreateX "\clients\client1\missing" 0x40 0x1 3 NT_STATUS_OBJECT_NAME_NOT_FOUND
"""

SUITE = """
name = "tiny-disk-mix"
description = "two load points of a tiny loadfile"
source = "tests"

[workload.loadfile]
path = "{loadfile}"

[[workload.classes]]
name = "disk-mix"
kind = "loadfile"
weight = 1

[ladder]
clients = [1, 3]

[timing]
length_s = 2
ramp_up_s = 0
ramp_down_s = 0
"""


@pytest.fixture
def loadfile(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.txt"
    path.write_text(LOADFILE)
    return path


# Operation lines of LOADFILE: a count-bounded run of 3 × this is one pass per client.
LINES = sum(1 for line in LOADFILE.splitlines() if line and not line.startswith("#"))


def engine_run(url: str, loadfile: Path, **extra: object) -> dict[str, object]:
    """One pass of the loadfile per client (a count-bounded run, so the trees' last state is known)."""
    config = {
        "url": url, "connections": 3, "duration_s": 20.0, "max_requests": 3 * LINES,
        "loadfile": {"path": str(loadfile), **extra},
    }  # fmt: skip
    run = _engine.start_run(json.dumps(config))
    while (text := run.wait(1.0)) is None:
        pass
    report: dict[str, object] = json.loads(text)
    return report


def test_each_client_works_in_its_own_tree_and_moves_the_bytes_it_counts(tmp_path: Path, loadfile: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    report = engine_run(f"file://{work}", loadfile, cleanup=False)
    assert report["errors"] and not any(report["errors"].values())  # type: ignore[union-attr]
    classes = report["classes"]
    assert isinstance(classes, dict)
    writes, reads = classes["WriteX"], classes["ReadX"]
    # Bytes are the data the operations moved: WriteX's sizes and ReadX's size asked for, nothing else.
    assert report["bytes"] == writes["bytes"] + reads["bytes"]
    assert report["requests"] == 3 * LINES
    assert (writes["bytes"], reads["bytes"]) == (3 * 150, 3 * 64)
    assert classes["QUERY_PATH_INFORMATION"]["requests"] > 0, "found without case, as Samba resolves names"
    # client1 → client<id> from 0: three trees, each holding only its own file, written whole.
    trees = sorted(p.name for p in (work / "clients").iterdir())
    assert trees == ["client0", "client1", "client2"]
    for tree in trees:
        assert [p.name for p in (work / "clients" / tree).iterdir()] == ["data.doc"]
        assert (work / "clients" / tree / "data.doc").stat().st_size == 150


def test_engines_sharing_a_run_number_their_clients_globally(tmp_path: Path, loadfile: Path) -> None:
    """Clients dealt over two engines (as over cluster nodes or client subnets) keep their own trees:
    client0 … client3 on the shared target, and the merged bytes are the bytes on it."""
    work = tmp_path / "work"
    work.mkdir()
    spec = RunSpec(url=f"file://{work}", connections=4, threads=2, duration_s=20.0, max_requests=4 * LINES,
                   loadfile={"path": str(loadfile), "cleanup": False})  # fmt: skip
    shares = fanout.deal(4, 2)
    specs = fanout.share_specs(spec, shares, "engines", "fewer engines")
    assert [s.loadfile["first_client"] for s in specs if s.loadfile] == [0, 2]
    at = time.time() + 0.2
    runs = [fanout.start_part(s.to_config(), at) for s in specs]
    reports = []
    for run in runs:
        while (text := run.wait(1.0)) is None:
            pass
        reports.append(json.loads(text))
    merged = fanout.merge(reports, shares, "the engines' results")
    assert not any(merged["errors"].values()), merged["error_notes"]
    trees = sorted(p.name for p in (work / "clients").iterdir())
    assert trees == ["client0", "client1", "client2", "client3"]
    on_disk = sum((work / "clients" / t / "data.doc").stat().st_size for t in trees)
    assert merged["classes"]["WriteX"]["bytes"] == on_disk == 4 * 150


def test_cleanup_deletes_the_workspace(tmp_path: Path, loadfile: Path) -> None:
    report = engine_run(f"file://{tmp_path}", loadfile, cleanup=True)
    assert report["requests"]
    assert not (tmp_path / "clients").exists()


def _lab(tmp_path: Path, loadfile: Path, length_s: int = 2) -> tuple[Path, Path, Path]:
    """An empty target directory, the tiny file suite (mixes of `length_s`) and where its results go."""
    work = tmp_path / "work"
    work.mkdir()
    suite = tmp_path / "tiny.toml"
    suite.write_text(SUITE.format(loadfile=loadfile).replace("length_s = 2", f"length_s = {length_s}"))
    return work, suite, tmp_path / "r.db"


@pytest.mark.integration  # a crest process of its own, two mixes of load
@pytest.mark.timeout(90)
def test_a_file_suite_runs_through_the_lab_and_leaves_nothing(tmp_path: Path, loadfile: Path) -> None:
    work, suite, db = _lab(tmp_path, loadfile)
    done = run_cli("run", str(suite), "--target", f"file://{work}", "--db", str(db), "-q")
    assert done.returncode == 0, done.stderr
    assert "Throughput peak" in done.stdout and "Mbit/s" in done.stdout
    assert "peak ops/s" in done.stdout and "peak req/s" not in done.stdout  # a file run counts operations
    assert "WriteX" in done.stdout  # the operation kinds at the peak
    assert not (work / "clients").exists(), "the workspace is deleted after the last mix"
    shown = run_cli_in_process("show", "--json", "--db", str(db), done.stdout.split("(run ")[1].split(")")[0])
    mixes = json.loads(shown.stdout)["mixes"]
    assert [m["clients"] for m in mixes] == [1, 3]
    assert all(m["throughput_Bps"] > 0 and m["classes"]["WriteX"]["requests"] > 0 for m in mixes)


@pytest.mark.integration
@pytest.mark.timeout(120)
def test_a_capacity_search_of_a_file_suite_keeps_to_its_error_rule(tmp_path: Path, loadfile: Path) -> None:
    """crest capacity of a loadfile suite: each probe a stored mix of whole dbench clients, judged by its rule."""
    work, suite, db = _lab(tmp_path, loadfile)
    done = run_cli("capacity", str(suite), "--target", f"file://{work}", "--rule", "errors<1%", "--max", "2",
                   "--confirm", "1", "--db", str(db), "-q")  # fmt: skip
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(db) as conn:
        probes = conn.execute("SELECT clients, requests, throughput_Bps FROM mixes ORDER BY idx").fetchall()
    assert [p[0] for p in probes] == [1, 2, 2] and all(p[1] > 0 and p[2] > 0 for p in probes)
    assert not (work / "clients").exists()


@pytest.mark.integration
@pytest.mark.timeout(120)
def test_a_design_of_a_file_suite_runs_each_combination(tmp_path: Path, loadfile: Path) -> None:
    """crest doe with a loadfile suite against a directory: one run per level, the response its throughput."""
    work, suite, db = _lab(tmp_path, loadfile, length_s=1)
    design = tmp_path / "design.toml"
    design.write_text(f'suite = "{suite}"\ntarget = "file://{work}"\nresponse = "peak_throughput_Bps"\n'
                      "[factors]\nclients = [1, 2]\n")  # fmt: skip
    done = run_cli("doe", str(design), "--db", str(db), "--json", "-q")
    assert done.returncode == 0, done.stderr
    assert set(json.loads(done.stdout)["effects"]) == {"mean", "clients"}
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT m.clients, m.throughput_Bps FROM mixes m ORDER BY m.clients").fetchall()
    assert [r[0] for r in rows] == [1, 2] and all(r[1] > 0 for r in rows)
    assert not (work / "clients").exists()


@pytest.mark.parametrize(
    ("args", "wanted"),
    [
        (["--loadfile", "/nonexistent/client.txt"], "cannot read loadfile /nonexistent/client.txt"),
        (["--target", "file:///nonexistent-dir"], "cannot use /nonexistent-dir as the file target"),
        (["--target", "smb://u@127.0.0.1:{port}/share"], "cannot connect to 127.0.0.1:"),
        (["--target", "smb://u:pw@127.0.0.1/share"], "password in the URL"),
        (["--target", "http://127.0.0.1:1/"], "expected file:///DIR or smb://"),
    ],
)
def test_bad_file_targets_are_one_line_and_exit_2_before_any_load(
    tmp_path: Path, args: list[str], wanted: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("CREST_SMB_PASSWORD", "pw")
    args = [a.format(port=port) for a in args]
    if "--target" not in args:
        args += ["--target", f"file://{tmp_path}"]
    db = tmp_path / "r.db"
    done = run_cli_in_process("run", "mindcraft-netbench", "--profile", "quick", "--db", str(db), *args)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and wanted in lines[0], done.stderr
    assert not (tmp_path / "clients").exists()
    assert not db.exists() or "no runs" in run_cli_in_process("runs", "--db", str(db)).stdout.lower()


def test_a_web_suite_refuses_a_file_target(tmp_path: Path) -> None:
    done = run_cli_in_process(
        "run", "veritest-static", "--target", f"file://{tmp_path}", "--db", str(tmp_path / "r.db")
    )
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_netbench_tables_are_reanalysed_by_throughput(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    done = run_cli_in_process(
        "import", str(PUBLISHED_DATA_DIR / "mindcraft-netbench.csv"), "--name", "nb", "--db", str(db)
    )
    assert done.returncode == 0, done.stderr
    nt, samba = done.stdout.split()
    shown = run_cli_in_process("show", samba, "--db", str(db)).stdout
    # NetBench's Mbit/s are 2^20 bits: the seed's 114.6 at 48 clients, then down to 87.0 at 144.
    assert "peak 120.2 Mbit/s at 48 clients" in shown and "NetBench's 2^20-bit Mbit/s: 114.6" in shown
    assert "graceful degradation" in shown and "87.0" in shown
    shown = run_cli_in_process("show", nt, "--db", str(db)).stdout
    assert "at 112 clients" in shown and "286.7" in shown and "plateau" in shown
