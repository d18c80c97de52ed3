"""Published data re-analysed: crest's analysis must reproduce what the seed reports printed.

The tables are transcribed in tests/data/published/*.csv (each cites its
source in its first line); python/crest/analysis/published_data/ ships the
same files to users.
"""

from __future__ import annotations

import filecmp
import math
from pathlib import Path
from typing import Any

import pytest
from scipy import stats as scipy_stats

from crest.analysis import (
    PUBLISHED_DATA_DIR,
    Configuration,
    analyze,
    configurations,
    interval_from_summary,
    load_published_runs,
    peak_table,
    percent_improvement,
    points_from_run,
    preferred_load_axis,
    read_csv,
    scaling,
    store_published,
    summarize,
)
from crest.store import Store

DATA = Path(__file__).parent / "data" / "published"


def within_rounding(value: float, printed: str) -> bool:
    """Whether `value` rounds to the number as printed (half a unit of its last digit)."""
    decimals = len(printed.split(".")[1]) if "." in printed else 0
    return abs(value - float(printed)) <= 0.5 * 10.0**-decimals + 1e-9


def test_every_file_cites_its_source_and_ships_to_users() -> None:
    files = sorted(p.name for p in DATA.glob("*.csv"))
    assert files == ["kornecki-2k-figure2.csv", "mindcraft-webbench.csv", "veritest-peaks.csv"]
    for name in files:
        assert (DATA / name).read_text(encoding="utf-8").startswith("# source: ")
        assert filecmp.cmp(DATA / name, PUBLISHED_DATA_DIR / name, shallow=False), (
            f"{name} differs from the shipped copy"
        )


# -- Kornecki et al. (seeds/002), figure 2: the 2^4 design ---------------------------------------

# The paper's letters: A buffer, B workload, C clients, D memory.
KORNECKI_COLUMNS = {"A": "buffer_bytes", "B": "workload", "C": "clients", "D": "memory_MB"}
# Figure 2's last row: each term's share of the variation, in percent, as printed.
KORNECKI_VARIATION = {
    "A": "0.99007", "B": "18.042", "C": "75.38", "D": "2.48967", "AB": "0.658", "AC": "0.14466", "AD": "0.0315",
    "BC": "1.512", "BD": "0.0103", "CD": "0.2015", "ABC": "0.271", "ABD": "0.008", "ACD": "0.047", "BCD": "0.2105",
    "ABCD": "0.003",
}  # fmt: skip
# Figure 2's "effects" row, as printed.
KORNECKI_EFFECTS = {
    "A": "2878.75", "B": "12289", "C": "25119", "D": "4665", "AB": "-2348", "AC": "1100", "AD": "513.75",
    "BC": "3557.5", "BD": "293.75", "CD": "1298.8", "ABC": "-1506", "ABD": "-263", "ACD": "630", "BCD": "1327.5",
    "ABCD": "-161",
}  # fmt: skip
# Misprints, each contradicted by the paper's own figures: the D effect is 4665 where its
# column sum (73040 / 16) and its share of variation (2.48967%) both give 4565; the AC share
# is 0.14466% where its effect (1100) gives 0.14456%.
KORNECKI_MISPRINTS = {("effect", "D"): 4565.0, ("variation", "AC"): 0.14456}


def kornecki_term(letters: str) -> str:
    return ":".join(KORNECKI_COLUMNS[c] for c in letters)


def kornecki() -> Any:
    return analyze(read_csv(DATA / "kornecki-2k-figure2.csv").rows, "rps")


def test_kornecki_allocation_of_variation() -> None:
    result = kornecki()
    assert result.replications == 1 and result.ci95 is None
    for letters, printed in KORNECKI_VARIATION.items():
        value = result.variation_pct[kornecki_term(letters)]
        if ("variation", letters) in KORNECKI_MISPRINTS:
            assert value == pytest.approx(KORNECKI_MISPRINTS["variation", letters], abs=5e-6)
            assert value == pytest.approx(float(printed), abs=1.1e-4)  # one digit off
        else:
            assert within_rounding(value, printed), (letters, value, printed)
    # The text: buffer 1%, workload 18%, clients 75.5%, memory 2.5%; interactions below 1%
    # except workload × clients at 1.5%.
    shares = {letters: result.variation_pct[kornecki_term(letters)] for letters in KORNECKI_VARIATION}
    assert [round(shares[t]) for t in "ABD"] == [1, 18, 2] and round(shares["D"], 1) == 2.5
    assert shares["C"] == pytest.approx(75.5, abs=0.15)
    assert round(shares["BC"], 1) == 1.5
    assert all(v < 1.0 for t, v in shares.items() if len(t) > 1 and t != "BC")


def test_kornecki_effects() -> None:
    result = kornecki()
    assert result.effects["mean"] == 91025.0
    # crest's low level of workload is "dynamic" (it sorts first); the paper's is static,
    # so every term with workload (B) has the opposite sign.
    assert result.levels["workload"] == ("dynamic", "static")
    for letters, printed in KORNECKI_EFFECTS.items():
        value = result.effects[kornecki_term(letters)] * (-1 if "B" in letters else 1)
        if ("effect", letters) in KORNECKI_MISPRINTS:
            assert value == KORNECKI_MISPRINTS["effect", letters]
        else:
            assert within_rounding(value, printed), (letters, value, printed)


def test_kornecki_paired_difference_interval() -> None:
    # Section 3: 12 experiments × 3 repetitions, requests/s differences IIS − Apache:
    # mean 29,559.7, sd 25,011.9, "95% confidence interval" (22,702.3, 36,417.1).
    mean, sd, n = 29_559.7, 25_011.9, 36
    # The printed interval is mean ± 1.645 s/√n: the normal table's 95th percentile, so a
    # two-sided 90% interval, not the t 95% one the text names.
    z = 1.645
    assert z == pytest.approx(float(scipy_stats.norm.ppf(0.95)), abs=5e-4)
    assert within_rounding(mean - z * sd / math.sqrt(n), "22702.3")
    assert within_rounding(mean + z * sd / math.sqrt(n), "36417.1")
    # The throughput differences the same way: (130,202,929.1, 207,075,701.1) from mean
    # 168,639,315.1 and sd 140,193,508.1 (to within a byte/s of the rounded sd).
    half = z * 140_193_508.1 / math.sqrt(n)
    assert 168_639_315.1 - half == pytest.approx(130_202_929.1, abs=1.0)
    assert 168_639_315.1 + half == pytest.approx(207_075_701.1, abs=1.0)
    # crest's t interval at 95% is wider, and still excludes 0: the same verdict.
    low, high = interval_from_summary(mean, sd, n)
    assert (round(low), round(high)) == (21097, 38023)
    assert low > 0


# -- Mindcraft (seeds/001), appendix 2: the WebBench ladders -------------------------------------


def mindcraft() -> dict[str, Configuration]:
    runs = load_published_runs(DATA / "mindcraft-webbench.csv", "mindcraft-1999")
    return {c.factors["server"]: c for c in configurations(runs)}


def test_mindcraft_iis_is_not_saturated() -> None:
    iis = mindcraft()["IIS 4"]
    (points,) = iis.trial_points("threads")
    s = summarize(points)
    # "The peak performance for Windows NT Server 4.0/IIS 4 was 3,771 requests per second at 288 threads"
    assert (s.peak_rps, s.peak_rps_load) == (3771.0, 288.0)
    # "we probably did not reach the maximum performance levels possible"
    assert (s.saturated, s.shape, s.verdict) == (False, "rising", "not saturated — add load")
    assert (s.peak_throughput_Bps, s.peak_throughput_load) == (22.4e6, 288.0)


def test_mindcraft_apache_collapses_past_its_peak() -> None:
    apache = mindcraft()["Apache 1.3.4"]
    (points,) = apache.trial_points("threads")
    s = summarize(points)
    # "Linux/Apache 1.3.4 reached a peak of 1,000 requests per second at 160 threads"
    assert (s.peak_rps, s.peak_rps_load) == (1000.0, 160.0)
    # "the performance of Linux with Apache drops to 7% of the peak level"
    # ("from 1,000 requests per second at 160 threads to 68 requests per second at 224 threads")
    assert (s.saturated, s.shape) == (True, "collapse")
    assert s.past_peak_ratio == 68 / 1000 and round(100 * s.past_peak_ratio) == 7


def test_mindcraft_comparisons() -> None:
    configs = mindcraft()
    iis, apache = (configs[k].trial_points("threads")[0] for k in ("IIS 4", "Apache 1.3.4"))
    # "a peak performance level that was almost 3.8 times that of Linux/Apache"
    table = peak_table([configs["IIS 4"], configs["Apache 1.3.4"]], load_axis="threads")
    assert round(table.improvement("server=IIS 4", "server=Apache 1.3.4") / 100 + 1, 1) == 3.8
    # "Windows NT Server/IIS is 140% faster than Linux/Apache at 160 threads"
    at_160 = [percent_improvement(a.rps, b.rps) for a, b in zip(iis, apache) if a.load == 160]
    assert [round(x, -1) for x in at_160] == [140.0]
    # "Windows NT Server/IIS can handle over 1.8 times the load of Linux/Apache"
    assert table.rows[0].peak_rps_load / table.rows[1].peak_rps_load == 1.8


def test_mindcraft_through_the_store(tmp_path: Path) -> None:
    runs = load_published_runs(DATA / "mindcraft-webbench.csv", "mindcraft-1999")
    with Store(tmp_path / "crest.db") as store:
        ids = store_published(store, runs)
        stored = store.select(["mindcraft-1999"])
    assert [d.id for d in stored] == ids and len(ids) == 2
    for detail in stored:
        assert (detail.status, detail.meta.suite, detail.meta.profile) == ("complete", "published", "published")
        assert detail.meta.target == "published:mindcraft-webbench.csv"
        assert preferred_load_axis(detail) == "threads"
    summaries = {d.meta.factors["server"]: summarize(points_from_run(d, "threads")) for d in stored}
    assert summaries["IIS 4"].verdict == "not saturated — add load"
    assert (summaries["Apache 1.3.4"].peak_rps_load, summaries["Apache 1.3.4"].shape) == (160.0, "collapse")


# -- VeriTest (seeds/000), figures 2, 4 and 8: peak tables ---------------------------------------

COLUMNS = [("DL380", 2), ("DL760", 1), ("DL760", 2), ("DL760", 4), ("DL760", 8)]
# "Percent Improvement with Windows Server 2003 over …", per column (None: N/A).
VERITEST_IMPROVEMENTS = {
    "static": {  # figure 2
        "TUX 2.1": [14, 12, 22, 51, 161],
        "Apache 1.3.23": [276, 271, 206, 276, 300],
        "Apache 2.0.40": [168, None, None, None, None],
    },
    "cgi": {  # figure 4
        "TUX 2.1": [58, 4, 42, 70, 4],
        "Apache 1.3.23": [76, 32, 77, 63, 12],
        "Apache 2.0.40": [50, None, None, None, None],
    },
    "ecommerce": {  # figure 8
        "TUX 2.1": [64, 52, 101, 57, 14],
        "Apache 1.3.23": [85, 73, 96, 78, 20],
        "Apache 2.0.40": [58, None, None, None, None],
    },
}


def veritest(workload: str) -> list[Configuration]:
    runs = load_published_runs(DATA / "veritest-peaks.csv", "veritest-2003")
    return configurations([r for r in runs if r.meta.factors["workload"] == workload])


@pytest.mark.parametrize("workload", list(VERITEST_IMPROVEMENTS))
def test_veritest_percent_improvements(workload: str) -> None:
    configs = veritest(workload)
    table = peak_table(configs)
    label = {(c.factors["server"], c.factors["system"], c.factors["cpus"]): c.label for c in configs}
    checked = 0
    for other, printed in VERITEST_IMPROVEMENTS[workload].items():
        for (system, cpus), percent in zip(COLUMNS, printed):
            if percent is None:
                assert (other, system, cpus) not in label
                continue
            value = table.improvement(label["IIS 6.0", system, cpus], label[other, system, cpus])
            assert within_rounding(value, str(percent)), (workload, other, system, cpus, value, percent)
            checked += 1
    assert checked == 11


def test_veritest_tux_on_eight_processors() -> None:
    # "the static test results actually decreased approximately 23 percent compared to the
    # results generated using TUX ... using four processors": 4P is 23% above 8P.
    configs = {(c.factors["server"], c.factors["system"], c.factors["cpus"]): c for c in veritest("static")}
    table = peak_table([configs["TUX 2.1", "DL760", 4], configs["TUX 2.1", "DL760", 8]])
    assert round(table.improvement_pct[0][1]) == 23
    rows = scaling([c for (server, system, _), c in configs.items() if server == "TUX 2.1" and system == "DL760"])
    assert [r.cpus for r in rows] == [1, 2, 4, 8]
    assert rows[-1].speedup < rows[-2].speedup  # TUX scaled backwards from 4 to 8 processors


def test_veritest_peaks_are_published_peaks_without_a_curve() -> None:
    (config, *_) = veritest("static")
    (points,) = config.trial_points()
    assert len(points) == 1 and points[0].load == 0.0
    summary = summarize(points)
    # No load was published: no saturation to judge, and every output shows a dash, not "0 clients".
    assert (summary.shape, summary.saturated) == ("published peak", False)
    assert "gives no load" in summary.verdict
