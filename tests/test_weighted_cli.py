"""`crest weighted`: the Zeus arithmetic on a CSV table or stored sweep runs; one-line errors (exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_analysis_cli import assert_usage_error, cli
from test_report_sweep import A, hand_weighted_Mbps, store_sweeps


def _csv(tmp_path: Path, text: str) -> str:
    path = tmp_path / "sweep.csv"
    path.write_text(text)
    return str(path)


def test_csv_in_mbps(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = _csv(
        tmp_path, "# Zeus-style sweep\nsize_bytes,throughput_Mbps\n100,10\n2000,60\n50000,90\n500000,100\n5000000,1\n"
    )
    code, out, err = cli(capsys, "weighted", "--csv", path)
    assert code == 0, err
    # Each class's mean of the curve through the points, lengths uniform in it; 5,000,000 B is in no class.
    Bps = {size: mbps * 1e6 / 8 for size, mbps in ((100, 10), (2000, 60), (50_000, 90), (500_000, 100), (5_000_000, 1))}
    assert f"{hand_weighted_Mbps(Bps):,.2f}" == "50.65"
    assert "50.65" in out and "5,000,000" in out


def test_csv_in_bytes_per_second_with_weights(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = _csv(tmp_path, "size_bytes,throughput_Bps\n100,1000000\n500,3000000\n2000,2000000\n")
    code, out, err = cli(capsys, "weighted", "--csv", path, "--weights", "class0=50%,class1=50%")
    assert code == 0, err
    # class0 over [0, 1024): 1 to 100 B, the line to 3 at 500 B, then toward 2 at 2000 B (2.6507 at 1024 B):
    # (100 + 800 + 524 × (3 + 2.6507) / 2) / 1024 = 2.3247 MB/s; class1: (976 × (2.6507 + 2) / 2 + 8240 × 2) / 9216
    # = 2.0344 MB/s; half each: 2.1796 MB/s = 17.44 Mbit/s (the mean of the points would say 16.00).
    assert "17.44" in out


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("bytes,throughput_Mbps\n1,1\n", "has no size_bytes column"),
        ("size_bytes,rate\n1,1\n", "needs exactly one throughput column"),
        ("size_bytes,throughput_Mbps\nbig,1\n", "size_bytes must be an integer"),
        ("size_bytes,throughput_Mbps\n100,1\n", "no content length measured in class1"),
    ],
)
def test_csv_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, fragment: str) -> None:
    assert_usage_error(cli(capsys, "weighted", "--csv", _csv(tmp_path, text)), fragment)


def test_stored_runs_per_run_and_configuration(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = tmp_path / "lab.db"
    store_sweeps(db)
    code, out, err = cli(capsys, "weighted", "sweep-1", "--db", str(db))
    assert code == 0, err
    assert f"{hand_weighted_Mbps(A):,.2f}" in out
    assert "per configuration" in out and "server=a" in out
    assert "too few (n<3)" in out  # 2 trials: no interval, and the table says why


def test_not_a_sweep_and_bad_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from report_lab import store_lab

    db = tmp_path / "lab.db"
    store_lab(db, trials=1)
    assert_usage_error(cli(capsys, "weighted", "exp-1", "--db", str(db)), "is not a content-length sweep")
    assert_usage_error(cli(capsys, "weighted", "--csv", "x.csv", "exp-1"), "not both")
    assert_usage_error(cli(capsys, "weighted", "exp-1", "--db", str(db), "--weights", "class0=2"), "sum to 2")


def test_baseline_indexes_weighted_throughput(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = tmp_path / "lab.db"
    store_sweeps(db)  # b is half as fast as a at every length, in both trials
    code, out, err = cli(capsys, "weighted", "sweep-1", "--db", str(db), "--baseline", "a")
    assert code == 0, err
    assert "% of server=a" in out and "index (server=a=1.00)" in out
    line_b = next(line for line in out.splitlines() if line.startswith("server=b"))
    assert "50.00" in line_b and "0.5000" in line_b
    assert_usage_error(cli(capsys, "weighted", "sweep-1", "--db", str(db), "--baseline", "c"), "no configuration 'c'")
    assert_usage_error(cli(capsys, "weighted", "--csv", "x.csv", "--baseline", "a"), "name runs, not --csv")
