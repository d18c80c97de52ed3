"""Kornecki et al. (seed 002) as one command each: the shipped 2^4 screening design (`crest doe
kornecki-screening`), planned here without sending a request, and the paper's paired-difference interval
(`crest compare --interval normal90`), from its shipped summaries and through a real store."""

from __future__ import annotations

import itertools
import json
import math
import statistics
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest

from analysis_records import mix, run
from crest.analysis import PUBLISHED_DATA_DIR, read_csv
from crest.analysis.stats import interval_from_summary, interval_method
from crest.cli.main import main
from crest.experiment.design import BUILTIN_DESIGNS, load_design, plan_design, with_overrides
from crest.report import build_report, render
from crest.store import RunDetail, Store
from crest.suite import load_suite

SCHEMA = json.loads(files("crest").joinpath("schemas/report.schema.json").read_text())
CLIENTS = (1, 2, 4, 8, 16, 32)
MiB = 1 << 20


def crest(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


# -- the paper's interval, from the shipped summaries ---------------------------------------------


def test_the_shipped_summaries_give_the_printed_intervals_as_normal90() -> None:
    table = read_csv(PUBLISHED_DATA_DIR / "kornecki-paired-differences.csv")
    assert (PUBLISHED_DATA_DIR / "kornecki-paired-differences.csv").read_text().startswith("# source: ")
    rows = {r["metric"]: r for r in table.rows}
    assert set(rows) == {"rps", "throughput_Bps"}
    normal90 = interval_method("normal90")
    assert (normal90.confidence, normal90.quantile) == (0.90, 1.645)

    def interval(metric: str, name: str = "normal90") -> tuple[float, float]:
        r, method = rows[metric], interval_method(name)
        return interval_from_summary(float(r["mean_diff"]), float(r["sd"]), int(r["n"]), method.confidence,
                                     method.quantile)  # fmt: skip

    def printed(metric: str) -> tuple[float, float]:
        return float(rows[metric]["printed_ci_low"]), float(rows[metric]["printed_ci_high"])

    # req/s: 29,559.7 ± 1.645 × 25,011.9 / 6 = 29,559.7 ± 6,857.4, printed (22,702.3, 36,417.1)
    low, high = interval("rps")
    assert (round(low, 1), round(high, 1)) == printed("rps") == (22_702.3, 36_417.1)
    # throughput: 168,639,315.1 ± 38,436,386.8 = (130,202,928.3, 207,075,701.9); the paper prints
    # (130,202,929.1, 207,075,701.1), the mean ± 38,436,386 exactly: the half-width with its fraction dropped.
    low, high = interval("throughput_Bps")
    assert (low, high) == pytest.approx(printed("throughput_Bps"), abs=1.0)
    assert (round(low, 1), round(high, 1)) == (130_202_928.3, 207_075_701.9)
    half = 1.645 * float(rows["throughput_Bps"]["sd"]) / 6
    mean = float(rows["throughput_Bps"]["mean_diff"])
    assert (round(mean - math.floor(half), 1), round(mean + math.floor(half), 1)) == printed("throughput_Bps")
    # crest's default, Student's t at 95% (t[0.975; 35] = 2.030), is wider; both exclude 0, as the paper's verdict
    t_low, t_high = interval("rps", "t95")
    assert (round(t_low, 1), round(t_high, 1)) == (21_096.9, 38_022.5)
    assert 0 < t_low < 22_702.3 and t_high > 36_417.1


def test_an_unknown_interval_name_is_one_line() -> None:
    from crest.errors import ConfigError

    with pytest.raises(ConfigError, match=r"^unknown interval 't99': use t95 \(.*\) or normal90 \(normal at 90%"):
        interval_method("t99")


# -- crest compare --interval normal90 on 36 stored pairs -----------------------------------------


def with_mean_and_sd(n: int, m: float, sd: float) -> list[float]:
    """n values whose mean is m and whose sample sd is sd (up to rounding)."""
    raw = list(range(n))
    rm, rs = statistics.fmean(raw), statistics.stdev(raw)
    return [m + sd * (v - rm) / rs for v in raw]


def kornecki_store(db: Path) -> list[str]:
    """IIS and Apache × static and dynamic × 3 trials × 6 client counts: IIS − Apache over the 36 pairs has
    the paper's mean and sd, of req/s and of bytes/s."""
    rps_diffs = with_mean_and_sd(36, 29_559.7, 25_011.9)
    bps_diffs = with_mean_and_sd(36, 168_639_315.1, 140_193_508.1)
    ids, k = [], 0
    with Store(db) as store:
        for workload in ("static", "dynamic"):
            for trial in range(3):
                for server in ("iis", "apache"):
                    detail: RunDetail = run([0.0] * 6, CLIENTS, {"server": server, "workload": workload}, trial,
                                            suite=f"kornecki-detail-{workload}")  # fmt: skip
                    extra = (rps_diffs, bps_diffs) if server == "iis" else ([0.0] * 36, [0.0] * 36)
                    detail.mixes = [
                        mix(i, c, 50_000.0 + 1000 * i + extra[0][k + i], throughput_Bps=1e9 + 1e7 * i + extra[1][k + i])
                        for i, c in enumerate(CLIENTS)
                    ]
                    run_id = store.create_run(detail.meta)
                    for m in detail.mixes:
                        store.add_mix(run_id, m)
                    store.finish_run(run_id, "complete")
                    ids.append(run_id)
                k += 6
    return ids


def test_compare_interval_normal90_prints_the_papers_interval(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "crest.db"
    ids = kornecki_store(db)
    code, out, err = crest(capsys, "compare", *ids, "--db", str(db), "-o", str(tmp_path / "r.html"),
                           "--interval", "normal90")  # fmt: skip
    assert (code, err) == (0, "")
    pooled = [line for line in out.splitlines() if line.startswith("server=iis") and "36" in line.split()]
    assert len(pooled) == 2, out  # req/s and throughput, pooled over both workloads
    assert "+22,702 to +36,417" in pooled[0] and "significant" in pooled[0]
    assert "90% CI (z = 1.645)" in out and "95% CI " not in out.split("paired-difference test", 1)[1]
    page = (tmp_path / "r.html").read_text()
    assert "90% CI (z = 1.645) of A − B" in page and "mean ± 1.645 · s/√n" in page

    with Store(db) as store:
        details = store.select(ids)
    doc = build_report(details, interval="normal90")
    jsonschema.validate(doc, SCHEMA, cls=jsonschema.Draft202012Validator)
    assert doc["paired_interval"] == {
        "name": "normal90", "confidence": 0.9, "critical_value": 1.645, "label": "90% CI (z = 1.645)",
        "method": "normal at 90%: mean ± 1.645 · s/√n",
    }  # fmt: skip
    rps, bps = doc["pooled"]["tests"]
    assert (rps["n"], rps["interval"], rps["pairs_by_level"]) == (36, "normal90", {"static": 18, "dynamic": 18})
    assert (round(rps["ci95"][0], 1), round(rps["ci95"][1], 1)) == (22_702.3, 36_417.1)
    assert bps["metric"] == "throughput_Bps" and bps["ci95"] == pytest.approx((130_202_929.1, 207_075_701.1), abs=1.0)
    assert all(p["interval"] == "normal90" for p in doc["comparison"]["paired"])
    assert "| 90% CI (z = 1.645) |" in render(doc, "md")
    assert any("(90% CI (z = 1.645) " in line for line in doc["summary"]["findings"])

    default = build_report(details)
    assert default["paired_interval"]["name"] == "t95" and default["paired_interval"]["critical_value"] is None
    assert default["pooled"]["tests"][0]["ci95"] == pytest.approx((21_096.9, 38_022.5), abs=0.05)


def test_compare_refuses_an_unknown_interval_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = crest(capsys, "compare", "exp-1", "--db", str(tmp_path / "none.db"), "--interval", "t99")
    assert (code, out) == (2, "")
    assert err.startswith("crest: error: unknown interval 't99': use t95 (") and err.count("\n") == 1


# -- crest doe kornecki-screening, planned --------------------------------------------------------


def test_the_screening_design_plans_16_runs_of_2_minutes() -> None:
    assert "kornecki-screening" in BUILTIN_DESIGNS
    d = load_design("kornecki-screening")
    levels = {"receive_buffer": [4096, 8192], "workload": ["kornecki-screening-static", "kornecki-screening-dynamic"],
              "clients": [1, 2], "memory": ["128M", "256M"]}  # fmt: skip
    assert d.factor_levels == levels  # A buffer, B workload, C clients, D memory, in the paper's order
    assert (d.profile, d.server, d.replications, d.response) == ("full", "builtin", 1, "peak_rps")
    assert "(seed 002)" in d.source and "receive buffer" in d.notes
    plan, rows = plan_design(d, store_path=Path("unused.db"))
    assert len(plan.configurations) == len(plan.trials) == 16
    assert {tuple(r.values()) for r in rows} == set(itertools.product(*levels.values()))
    for configuration, row in zip(plan.configurations, rows):
        request = configuration.request
        assert request.factors == row and request.server == "builtin"
        assert request.memory_bytes == {"128M": 128, "256M": 256}[row["memory"]] * MiB
        assert request.suite.name == row["workload"]
        assert request.suite.workload.read_buffer_bytes == row["receive_buffer"]
        mixes = request.suite.mixes(request.profile)
        assert [(m.clients, m.threads_per_client, m.timing.length_s) for m in mixes] == [(row["clients"], 1, 120)]
    assert (plan.mixes(), plan.load_s()) == (16, 16 * 120)  # 32 minutes under load, as the paper's 16 × 2 min

    quick = with_overrides(d, server="nginx", profile="quick")
    plan, _ = plan_design(quick, store_path=Path("unused.db"))
    assert plan.load_s() == 16 * 4 and {c.request.server for c in plan.configurations} == {"nginx"}


def test_the_screening_suites_are_the_detail_suites_at_2_minutes() -> None:
    for workload in ("static", "dynamic"):
        screening, detail = load_suite(f"kornecki-screening-{workload}"), load_suite(f"kornecki-detail-{workload}")
        assert screening.workload == detail.workload
        assert (screening.timing.length_s, screening.ladder.clients, screening.repeat) == (120, [1, 2], 1)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["nosuch"],
            "no built-in design or file named 'nosuch': give a design .toml file or one of kornecki-screening",
        ),
        (["kornecki-screening", "--server", "nginx,apache-event"], "--server nginx,apache-event: a design runs on one"),
        (["kornecki-screening", "--profile", "fast"], "unknown --profile 'fast': use one of quick, standard, full"),
        (["--analyze", "x.csv", "--profile", "quick"], "--server and --profile choose how a DESIGN runs"),
    ],
)
def test_doe_by_name_refuses_bad_input_in_one_line(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = crest(capsys, "doe", *args, "--db", str(tmp_path / "r.db"))
    assert (code, out) == (2, "")
    assert err.startswith(f"crest: error: {message}") and err.count("\n") == 1
    assert not (tmp_path / "r.db").exists()


def test_a_server_factor_cannot_be_replaced_by_server(tmp_path: Path) -> None:
    from crest.errors import ConfigError

    path = tmp_path / "d.toml"
    path.write_text('suite = "veritest-static"\n[factors]\nserver = ["nginx", "builtin"]\ncpus = [1, 2]\n')
    with pytest.raises(ConfigError, match=r"makes server a factor \(nginx, builtin\): drop --server"):
        with_overrides(load_design(path), server="lighttpd")
