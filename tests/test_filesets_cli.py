"""`crest fileset generate|verify` through the real CLI entry point (crest.cli.main.main) in a subprocess.

Until the lead wires the command into crest.cli.main, the subprocess adds it
the way main would (app.add_typer(fileset.app, name="fileset")); once it is
wired, the same script runs main unchanged.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration  # crest.cli.main imports the compiled engine

_WIRING = """
import sys
from crest.cli import main as m
from crest.cli.fileset import app as fileset_app
m._register()
if not any(g.name == "fileset" for g in m.app.registered_groups):
    m.app.add_typer(fileset_app, name="fileset")
sys.exit(m.main(sys.argv[1:]))
"""


def run_crest(*args: str) -> subprocess.CompletedProcess[str]:
    """Run `crest ARGS` with the fileset command available; captured text output, no stdin."""
    return subprocess.run(
        [sys.executable, "-c", _WIRING, *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "120"},
        check=False,
    )


def assert_one_error_line(result: subprocess.CompletedProcess[str], fragment: str) -> None:
    assert result.returncode == 2, result
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("crest: error: ")
    assert fragment in lines[0]
    assert result.stdout == ""


def test_generate_then_verify_round_trip(tmp_path: Path) -> None:
    root = tmp_path / "docroot"
    result = run_crest("fileset", "generate", "webstone", str(root))
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        f"webstone: 5 files, 5.82 MB (5,817,375 bytes) in {root} (wrote 5, kept 0); "
        f"manifest {root}/crest-manifest.json\n"
    )
    again = run_crest("fileset", "generate", "webstone", str(root))
    assert "(wrote 0, kept 5)" in again.stdout
    checked = run_crest("fileset", "verify", str(root))
    assert (checked.returncode, checked.stdout, checked.stderr) == (0, "ok: 5 files intact\n", "")


def test_verify_tampered_tree_exits_1(tmp_path: Path) -> None:
    assert run_crest("fileset", "generate", "webcat-webstone", str(tmp_path)).returncode == 0
    with open(tmp_path / "webcat" / "33K.html", "r+b") as f:
        f.seek(5000)
        f.write(b"#")
    (tmp_path / "webcat" / "1K.html").unlink()
    result = run_crest("fileset", "verify", str(tmp_path))
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "webcat/1K.html: missing",
        "webcat/33K.html: content differs at byte 5000",
        f"damaged: 2 of 18 files; repair with `crest fileset generate --full-check webcat-webstone {tmp_path}`",
    ]
    repaired = run_crest("fileset", "generate", "--full-check", "webcat-webstone", str(tmp_path))
    assert "(wrote 2, kept 16)" in repaired.stdout
    assert run_crest("fileset", "verify", str(tmp_path)).returncode == 0


def test_verify_shows_first_20_problems(tmp_path: Path) -> None:
    assert run_crest("fileset", "generate", "sizes", str(tmp_path)).returncode == 0
    for path in (tmp_path / "sizes").iterdir():
        path.unlink()
    result = run_crest("fileset", "verify", str(tmp_path))
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert len(lines) == 22
    assert lines[0] == "sizes/1.html: missing"
    assert lines[20] == "… and 2 more"
    assert lines[21].startswith("damaged: 22 of 22 files")


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["generate", "specweb2005", "DIR"], "unknown fileset 'specweb2005': choose one of specweb99, specweb96,"),
        (["generate", "webstone", "DIR", "--connections", "10"], "--connections applies only to specweb99"),
        (["generate", "specweb99", "DIR", "--connections", "0"], "invalid --connections '0': must be at least 1"),
        (["generate", "specweb99", "DIR", "--connections", "lots"], "invalid --connections 'lots'"),
        (["verify", "DIR"], "has no crest-manifest.json: create a fileset there with `crest fileset generate NAME"),
    ],
)
def test_bad_input_is_one_line_exit_2(tmp_path: Path, args: list[str], fragment: str) -> None:
    target = tmp_path / "target"
    target.mkdir()
    result = run_crest("fileset", *[str(target) if a == "DIR" else a for a in args])
    assert_one_error_line(result, fragment)
    assert list(target.iterdir()) == []  # nothing written


def test_directory_with_another_fileset_exits_2(tmp_path: Path) -> None:
    assert run_crest("fileset", "generate", "webstone", str(tmp_path)).returncode == 0
    result = run_crest("fileset", "generate", "sizes", str(tmp_path))
    assert_one_error_line(result, f"{tmp_path} holds the webstone fileset, not sizes")
    assert not (tmp_path / "sizes").exists()
