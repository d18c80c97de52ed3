"""`crest bench file:///DIR`: dbench's loadfile replayed by -c clients for -d seconds against a directory,
with the file-server summary (operations, ops/s, MB/s, each operation's latency); HTTP-only options and
file-only ones on the wrong kind of target are one line, exit 2, before anything runs. The SMB share's
bench is tests/test_fileops_samba.py's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support import run_cli, run_cli_in_process
from test_fileops import LOADFILE


@pytest.mark.integration
@pytest.mark.timeout(60)
def test_a_directory_bench_prints_the_file_server_summary_and_cleans_up(tmp_path: Path) -> None:
    loadfile = tmp_path / "tiny.txt"
    loadfile.write_text(LOADFILE)
    target = tmp_path / "target"
    target.mkdir()
    done = run_cli("bench", f"file://{target}", "-c", "3", "-d", "1s", "--loadfile", str(loadfile))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert f"Running 1s test @ file://{target}\n  3 clients replaying {loadfile}" in out
    assert "ops/s" in out and "MB/s" in out and "Errors      none" in out
    assert "WriteX" in out and "ReadX" in out  # the operations table
    assert list(target.iterdir()) in ([], [target / "clients"]) and not list(target.glob("clients/client*"))
    done = run_cli("bench", f"file://{target}", "-c", "2", "-d", "1s", "--loadfile", str(loadfile), "--json")
    report = json.loads(done.stdout)
    assert report["url"] == f"file://{target}" and report["connections"] == 2
    assert report["requests"] > 0 and set(report["classes"]) >= {"WriteX", "ReadX", "Close"}


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["file:///tmp", "--http", "2"], "--http is for HTTP targets; a file target (file://) replays a loadfile"),
        (["file:///tmp", "-H", "X: y"], "--header is for HTTP targets"),
        (["smb://u@127.0.0.1/s", "--rate", "10"], "--rate is for HTTP targets; a file target (smb://)"),
        (["http://127.0.0.1:1/", "--loadfile", "x.txt"], "--loadfile is for file targets"),
        (["http://127.0.0.1:1/", "--password-file", "pw"], "--password-file is for file targets"),
        (["http://127.0.0.1:1/", "--skip-cleanup"], "--skip-cleanup is for file targets"),
        (["file:///tmp", "--password-file", "pw"], "--password-file is for smb:// targets"),
        (
            ["file:///tmp", "--network", "subnets=2"],
            "'file:///tmp' is this machine's directory, which no client network",
        ),
        (["file:///tmp", "--nodes", "2"], "--nodes places the load on a cluster's nodes: add --cluster"),
        (["file://host/dir"], "invalid file target 'file://host/dir': expected file:///DIR or smb://"),
        # dbench's name lookups (crest and dbench: docs/fileservers.md) are a file:///DIR setting
        (["http://127.0.0.1:1/", "--resolve-names", "every-path"], "--resolve-names is for file targets"),
        (["file:///tmp", "--resolve-names", "all"], "--resolve-names all: use one of queries, every-path"),
        (
            ["smb://u@127.0.0.1:1/s", "--password-file", "pw", "--resolve-names", "every-path"],
            "--resolve-names every-path is for file:///DIR targets",
        ),
    ],
)
def test_options_of_the_other_kind_of_target_are_one_line_exit_2(args: list[str], said: str, tmp_path: Path) -> None:
    pw = tmp_path / "pw"
    pw.write_text("x\n")
    pw.chmod(0o600)
    args = [str(pw) if a == "pw" else a for a in args]
    done = run_cli_in_process("bench", *args, "-d", "1s")
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("crest: error: ") and said in line, line
