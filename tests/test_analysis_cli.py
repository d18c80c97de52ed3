"""`crest doe --analyze` and `crest import` through crest.cli.main.main: output, JSON and one-line errors (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crest.cli.main import main
from crest.store import Store
from support import run_cli

DATA = Path(__file__).parent / "data" / "published"
KORNECKI = DATA / "kornecki-2k-figure2.csv"


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def assert_usage_error(result: tuple[int, str, str], fragment: str) -> None:
    code, out, err = result
    assert code == 2, (out, err)
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("crest: error: "), err
    assert fragment in lines[0], err
    assert "Traceback" not in err and out == ""


def csv_file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "data.csv"
    path.write_text(text, encoding="utf-8")
    return str(path)


# -- crest doe --------------------------------------------------------------------------------------


def test_doe_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "doe", "--analyze", str(KORNECKI), "--response", "rps")
    assert (code, err) == (0, "")
    assert "2^k design of rps: 16 combinations × 1 replication = 16 experiments" in out
    lines = out.splitlines()
    assert any(line.split() == ["workload", "dynamic", "static"] for line in lines)
    assert any(line.split() == ["clients", "25,118.75", "75.38"] for line in lines)
    assert any(line.split() == ["mean", "91,025"] for line in lines)
    assert any(line.split() == ["buffer_bytes:workload:clients:memory_MB", "161.25", "<0.01"] for line in lines)


def test_doe_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "doe", "--analyze", str(KORNECKI), "--response", "rps", "--json")
    assert code == 0
    data = json.loads(out)
    assert {"effects", "variation_pct", "ci95", "replications"} <= set(data)
    assert (data["ci95"], data["replications"], data["effects"]["mean"]) == (None, 1, 91025.0)
    assert data["variation_pct"]["clients"] == pytest.approx(75.38, abs=0.005)
    assert data["levels"]["memory_MB"] == [128, 256]


def test_doe_replicated_has_intervals(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rows = "".join(f"{m},{c},{y}\n" for (m, c), ys in {(4, 1): (15, 18, 12), (16, 1): (45, 48, 51),
                   (4, 2): (25, 28, 19), (16, 2): (75, 75, 81)}.items() for y in ys)  # fmt: skip
    path = csv_file(tmp_path, "memory,cache,mips\n" + rows)
    code, out, _ = cli(capsys, "doe", "--analyze", path, "--response", "mips", "--json")
    data = json.loads(out)
    assert (code, data["replications"]) == (0, 3)
    assert data["ci95"]["memory"] == [pytest.approx(19.123, abs=1e-3), pytest.approx(23.877, abs=1e-3)]
    assert data["variation_pct"]["error"] == pytest.approx(1.45, abs=0.005)
    code, out, _ = cli(capsys, "doe", "--analyze", path, "--response", "mips")
    assert "95% CI" in out and "[19.123, 23.877]" in out
    assert any(line.split() == ["error", "1.45"] for line in out.splitlines())


def test_doe_fractional_with_generator(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rows = [(a, b, c, (a + b + c) % 2) for c in (0, 1) for b in (0, 1) for a in (0, 1)]
    path = csv_file(tmp_path, "A,B,C,D,y\n" + "".join(f"{a},{b},{c},{d},{10 + 2 * d}\n" for a, b, c, d in rows))
    code, out, _ = cli(capsys, "doe", "--analyze", path, "--response", "y", "--generator", "D=ABC", "--json")
    data = json.loads(out)
    assert code == 0
    assert data["effects"]["D"] == 1.0 and data["aliases"]["D"] == ["A:B:C"]
    assert data["variation_pct"]["D"] == 100.0


@pytest.mark.parametrize(
    ("text", "args", "fragment"),
    [
        (
            "memory,cache,mips\n4,1,15\n16,1,45\n4,2,25\n16,2,75\n64,2,80\n",
            ["--response", "mips"],
            "factor 'memory' has 3 levels (4, 16, 64): a two-level design needs exactly two",
        ),
        (
            "memory,cache,mips\n4,1,15\n16,1,45\n4,2,25\n16,2,75\n",
            ["--response", "rps"],
            "no response column 'rps': the columns are memory, cache, mips",
        ),
        (
            "memory,cache,mips\n4,1,15\n16,1,45\n4,2,25\n16,2,75\n4,1,16\n",
            ["--response", "mips"],
            "unbalanced design: memory=16 cache=1 appears 1 times but memory=4 cache=1 2",
        ),
        (
            "memory,cache,mips\n4,1,15\n16,1,45\n4,2,25\n",
            ["--response", "mips"],
            "the data lacks the combination memory=16 cache=2",
        ),
        (
            "memory,cache,mips\n4,1,15\n16,1,45\n4,2,x\n16,2,75\n",
            ["--response", "mips"],
            "data row 3: response 'mips' is 'x', not a number",
        ),
        ("memory,cache,mips\n4,1,15\n", [], "--analyze needs --response COLUMN: one of memory, cache, mips"),
        ("memory,cache,mips\n4,1,15\n", ["--response", "mips", "--factors", "memory,disk"], "no factor column 'disk'"),
        ("memory,cache,mips\n4,1,15\n", ["--response", "mips", "--generator", "X=AB"], "invalid generator 'X=AB'"),
        ("memory,cache\n4,1,15\n", ["--response", "mips"], "data.csv:2: 3 fields but the header has 2"),
    ],
)
def test_doe_bad_input(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, args: list[str], fragment: str
) -> None:
    assert_usage_error(cli(capsys, "doe", "--analyze", csv_file(tmp_path, text), *args), fragment)


def test_doe_without_data_or_with_a_design(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert_usage_error(
        cli(capsys, "doe"), "nothing to do: give a DESIGN.toml to run, or --analyze DATA.csv --response COLUMN"
    )
    assert_usage_error(cli(capsys, "doe", str(tmp_path / "design.toml")), "cannot read design")
    assert_usage_error(
        cli(capsys, "doe", "design.toml", "--analyze", str(KORNECKI)), "give either a DESIGN to run or --analyze"
    )
    assert_usage_error(cli(capsys, "doe", "--analyze", str(tmp_path / "no.csv"), "--response", "y"), "no file")


# -- crest import -----------------------------------------------------------------------------------


def test_import_stores_runs_and_prints_their_ids(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = tmp_path / "lab" / "crest.db"
    code, out, err = cli(capsys, "import", str(DATA / "mindcraft-webbench.csv"), "--name", "mindcraft-1999",
                         "--factor", "os=mixed", "--db", str(db))  # fmt: skip
    assert code == 0
    ids = out.split()
    assert len(ids) == 2
    assert err == "crest: stored 2 runs from mindcraft-webbench.csv as mindcraft-1999\n"
    with Store(db) as store:
        runs = store.select(["mindcraft-1999"])
    assert [r.id for r in runs] == ids
    assert runs[0].meta.factors == {"dataset": "mindcraft-1999", "server": "IIS 4", "os": "mixed"}
    assert runs[0].meta.config["load_axis"] == "threads"
    code, out, _ = cli(capsys, "show", ids[1], "--db", str(db))
    assert code == 0 and "Peak      1,000.0 req/s at 80 clients × 2 threads (mix 5)" in out


def test_import_load_axis(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = tmp_path / "crest.db"
    path = csv_file(tmp_path, "load,rps\n1,10\n2,20\n")
    code, out, _ = cli(capsys, "import", path, "--name", "x", "--load-axis", "threads", "--db", str(db))
    assert code == 0
    with Store(db) as store:
        assert store.run(out.strip()).meta.config["load_axis"] == "threads"


@pytest.mark.parametrize(
    ("text", "args", "fragment"),
    [
        (
            "clients,rps\n1,10\n",
            ["--name", "x", "--factor", "server"],
            "invalid --factor 'server': expected NAME=VALUE",
        ),
        ("clients,rps\n1,10\n", ["--name", "x", "--load-axis", "users"], "invalid load axis 'users'"),
        ("clients,speed\n1,10\n", ["--name", "x"], "has neither a req/s nor a throughput column"),
        ("clients,rps\n1,10\n", ["--name", "a b"], "invalid name 'a b'"),
        ("clients,rps\n1,10\n", [], "Missing option '--name'"),
    ],
)
def test_import_bad_input_stores_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, args: list[str], fragment: str
) -> None:
    db = tmp_path / "lab" / "crest.db"
    assert_usage_error(cli(capsys, "import", csv_file(tmp_path, text), *args, "--db", str(db)), fragment)
    assert not db.exists()


@pytest.mark.integration
def test_subprocess_smoke(tmp_path: Path) -> None:
    result = run_cli("doe", "--analyze", str(KORNECKI), "--response", "rps", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["replications"] == 1
    bad = run_cli("doe", "--analyze", csv_file(tmp_path, "a,b,y\n1,1,1\n2,1,2\n3,2,3\n"), "--response", "y")
    assert bad.returncode == 2
    assert bad.stderr.startswith("crest: error: factor 'a' has 3 levels") and bad.stderr.count("\n") == 1
