"""`crest fileset generate|verify` through the real CLI (crest.cli.main.main, in-process): output, exit codes, files."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from support import run_cli_in_process


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
    result = run_cli_in_process("fileset", "generate", "webstone", str(root))
    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        f"webstone: 5 files, 5.82 MB (5,817,375 bytes) in {root} (wrote 5, kept 0); "
        f"manifest {root}/crest-manifest.json\n"
    )
    again = run_cli_in_process("fileset", "generate", "webstone", str(root))
    assert "(wrote 0, kept 5)" in again.stdout
    checked = run_cli_in_process("fileset", "verify", str(root))
    assert (checked.returncode, checked.stdout, checked.stderr) == (0, "ok: 5 files intact\n", "")


def test_verify_tampered_tree_exits_1(tmp_path: Path) -> None:
    assert run_cli_in_process("fileset", "generate", "webcat-webstone", str(tmp_path)).returncode == 0
    with open(tmp_path / "webcat" / "33K.html", "r+b") as f:
        f.seek(5000)
        f.write(b"#")
    (tmp_path / "webcat" / "1K.html").unlink()
    result = run_cli_in_process("fileset", "verify", str(tmp_path))
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "webcat/1K.html: missing",
        "webcat/33K.html: content differs at byte 5000",
        f"damaged: 2 of 18 files; repair with `crest fileset generate --full-check webcat-webstone {tmp_path}`",
    ]
    repaired = run_cli_in_process("fileset", "generate", "--full-check", "webcat-webstone", str(tmp_path))
    assert "(wrote 2, kept 16)" in repaired.stdout
    assert run_cli_in_process("fileset", "verify", str(tmp_path)).returncode == 0


def test_verify_shows_first_20_problems(tmp_path: Path) -> None:
    assert run_cli_in_process("fileset", "generate", "sizes", str(tmp_path)).returncode == 0
    for path in (tmp_path / "sizes").iterdir():
        path.unlink()
    result = run_cli_in_process("fileset", "verify", str(tmp_path))
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
    result = run_cli_in_process("fileset", *[str(target) if a == "DIR" else a for a in args])
    assert_one_error_line(result, fragment)
    assert list(target.iterdir()) == []  # nothing written


def test_directory_with_another_fileset_exits_2(tmp_path: Path) -> None:
    assert run_cli_in_process("fileset", "generate", "webstone", str(tmp_path)).returncode == 0
    result = run_cli_in_process("fileset", "generate", "sizes", str(tmp_path))
    assert_one_error_line(result, f"{tmp_path} holds the webstone fileset, not sizes")
    assert not (tmp_path / "sizes").exists()
