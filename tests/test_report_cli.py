"""`crest report` and `crest compare` through crest.cli.main.main (the real entry point) on a real store."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from analysis_records import run
from crest.cli.main import main
from crest.cli.report import default_report_path, print_report_summary
from crest.store import Store
from report_lab import THREE, store_lab
from support import run_cli_in_process


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("cli") / "results" / "crest.db"
    store_lab(db, curves=THREE[:2], trials=2)
    return db


def crest(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_report_writes_html_beside_the_db_and_prints_the_path(lab: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = crest(capsys, "report", "exp-1", "--db", str(lab))
    assert (code, err) == (0, "")
    path = lab.parent / "reports" / "exp-1.html"
    assert out == f"{path}\n"
    assert path.read_text().startswith("<!DOCTYPE html>")


@pytest.mark.parametrize(
    ("fmt", "probe"), [("md", "## Peaks"), ("csv", "configuration,run_id,"), ("json", '"schema_version"')]
)
def test_report_formats_and_output(
    lab: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str, probe: str
) -> None:
    target = tmp_path / f"out.{fmt}"
    code, out, _ = crest(capsys, "report", "exp-1", "--db", str(lab), "-o", str(target), "--title", "T")
    assert (code, out) == (0, f"{target}\n") and probe in target.read_text()
    code, out, _ = crest(capsys, "report", "exp-1", "--db", str(lab), "--format", fmt, "--title", "T")
    # Asked for text without -o: stdout, the same document (made a moment later: its time stamp may differ).
    stamp = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
    assert code == 0 and stamp.sub("T", out) == stamp.sub("T", target.read_text().rstrip("\n") + "\n")
    assert not default_report_path(lab, "exp-1", fmt).exists()


def test_dash_is_stdout_for_every_format(lab: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = crest(capsys, "report", "exp-1", "--db", str(lab), "-o", "-")
    assert (code, err) == (0, "") and out.startswith("<!DOCTYPE html>") and not (lab.parent / "-").exists()
    code, out, err = crest(capsys, "compare", "exp-1", "--db", str(lab), "-o", "-", "--format", "json")
    assert code == 0 and json.loads(out)["schema_version"] and err.splitlines()[-1] == "report: stdout"


def test_default_file_name_covers_every_name(lab: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with Store(lab) as store:
        first, second = (run.id for run in store.runs()[:2])
    code, out, _ = crest(capsys, "report", first, second, "--db", str(lab))
    assert code == 0 and out == f"{lab.parent / 'reports' / f'{first}_{second}.html'}\n"
    many = default_report_path(lab, [f"run-{i:02d}-abcdefgh" for i in range(12)])
    assert len(many.name) < 100 and many.name.startswith("run-00-abcdefgh_and-11-more_")
    assert many != default_report_path(lab, [f"run-{i:02d}-abcdefgh" for i in range(13)])


def test_report_of_one_run_by_id_prefix(lab: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with Store(lab) as store:
        run_id = store.runs()[-1].id
    target = tmp_path / "one.json"
    code, _, _ = crest(capsys, "report", run_id[:-1], "--db", str(lab), "-o", str(target), "--load-axis", "threads")
    doc = json.loads(target.read_text())
    assert code == 0 and doc["runs"][0]["id"] == run_id and doc["load_axis"] == "threads" and doc["comparison"] is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["report", "nope"], "crest: error: no run 'nope' in {db}: see `crest runs --db {db}`"),
        (["report", "exp-1", "--format", "pdf"], "crest: error: unknown report format 'pdf': use one of html, md, csv, json"),
        (["report", "exp-1", "-o", "r.pdf"], "crest: error: cannot tell the report format from 'r.pdf': end the file name"
                                             " in .html, .md, .csv or .json, or pass --format"),
        (["report", "exp-1", "--load-axis", "cpus"], "crest: error: unknown load axis 'cpus': use one of clients, threads,"
                                                     " connections, size, rate"),
        (["compare", "exp-1", "nope"], "crest: error: no run 'nope' in {db}: see `crest runs --db {db}`"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line_and_exit_2(
    lab: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, out, err = crest(capsys, *args, "--db", str(lab))
    assert (code, out) == (2, "")
    assert err == message.format(db=lab) + "\n"


def test_missing_db_is_not_created(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "none" / "crest.db"
    code, _, err = crest(capsys, "compare", "exp-1", "--db", str(db))
    assert code == 2 and err.startswith("crest: error: no run 'exp-1' in ") and not db.parent.exists()


def test_compare_prints_peaks_verdicts_and_the_report(
    lab: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "cmp.html"
    code, out, err = crest(capsys, "compare", "exp-1", "--db", str(lab), "-o", str(target))
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith("server=nginx had the highest peak: ")
    assert any(line.split()[:2] == ["configuration", "trials"] and "server=nginx over it" in line for line in lines)
    (apache,) = [line for line in lines if line.startswith("server=apache ")]
    assert apache.split()[-1].startswith("+") and apache.split()[-1].endswith("%")
    assert any(line.split()[:2] == ["server=nginx", "server=apache"] and line.endswith("significant") for line in lines)
    assert lines[-1] == f"report: {target}"
    assert '<svg class="chart' in target.read_text()


def test_print_report_summary_for_crest_run(lab: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with Store(lab) as store:
        details = store.select(["exp-1"])
    path = print_report_summary(details[:1], tmp_path / "after-run.html")
    out = capsys.readouterr().out
    assert path.exists() and out.splitlines()[-1] == f"report: {path}"
    assert out.startswith("Not saturated: server=nginx cpus=2 peaked at ")  # the limit leads: its curve still rose


def test_the_console_says_why_the_mean_curve_peaks_below_the_trials(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Trial 1 peaks at 2 clients, trial 2 at 3: the mean curve's 3,700 is below both; two trials, no interval.
    details = [run(rps, factors={"server": "a"}, repeat_index=i, run_id=f"a{i}")
               for i, rps in enumerate(([1000.0, 5000.0, 3000.0], [1000.0, 2000.0, 4400.0]))]  # fmt: skip
    print_report_summary(details, tmp_path / "apart.html")
    out = " ".join(capsys.readouterr().out.split())
    assert "mean of 2 trials, too few for an interval: --repeat 3 or more" in out
    assert ("note: server=a: the mean curve peaks at 3,700 req/s at 3 clients, below every trial's own peak (trial 1"
            " 5,000 req/s at 2 clients, trial 2 4,400 req/s at 3 clients), because the trials peaked at different"
            " loads") in out  # fmt: skip
    assert "too few (n<3)" in out and "−" not in out


def test_control_characters_never_reach_the_terminal(tmp_path: Path) -> None:
    db = tmp_path / "crest.db"
    curve = THREE[0].__class__({"server": "evil\x1b[31mred"}, 10_000, 8)
    store_lab(db, curves=[curve], trials=1)
    result = run_cli_in_process("compare", "exp-1", "--db", str(db), "-o", str(tmp_path / "r.html"))
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout and "evil\\x1b[31mred" in result.stdout


def test_commands_are_registered() -> None:
    result = run_cli_in_process("--help")
    assert result.returncode == 0
    assert " report " in result.stdout and " compare " in result.stdout
