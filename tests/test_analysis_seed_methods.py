"""The seeds' analyses crest had lacked, against hand-computed values: paired tests of throughput, the pooled
paired test over workloads (and Kornecki's printed interval), VeriTest's better-of curves, the index against a
baseline (Zeus = 1.00) and the servers × CPUs pivot of peaks."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

import pytest

from analysis_records import mix, run
from crest.analysis import configurations, paired_difference, peak_table
from crest.analysis.bestof import BestOf, best_of
from crest.analysis.grouped import baselines, indexes
from crest.analysis.pivot import peak_pivot
from crest.analysis.pooled import can_pool, pooled_tests, sides
from crest.analysis.stats import interval_from_summary
from crest.errors import ConfigError
from crest.store import RunDetail

KORNECKI_CLIENTS = (1, 2, 4, 8, 16, 32)


def curve(
    rps: Sequence[float],
    throughput: Sequence[float] | None = None,
    loads: Sequence[int] | None = None,
    **kw: object,
) -> RunDetail:
    """A run with these req/s (and, when given, these bytes/s) at these loads."""
    detail = run(rps, loads=loads, **kw)  # type: ignore[arg-type]
    if throughput is not None:
        detail.mixes = [
            mix(m.index, m.clients, m.rps, throughput_Bps=float(t)) for m, t in zip(detail.mixes, throughput)
        ]
    return detail


# -- paired test of throughput --------------------------------------------------------------------


def test_paired_test_of_throughput_differs_bytes_per_second() -> None:
    a = curve([100, 200, 300], [5e6, 7e6, 9e6], factors={"server": "a"}, run_id="a")
    b = curve([90, 180, 260], [4e6, 6e6, 6e6], factors={"server": "b"}, run_id="b")
    ca, cb = configurations([a, b])
    result = paired_difference(ca, cb, "throughput_Bps")
    # diffs 1e6, 1e6, 3e6: mean 5/3 e6, sd √(4/3) e6 = 1.154701e6, t(0.975, 2) = 4.302653
    assert result.metric == "throughput_Bps" and result.n == 3
    assert result.mean_diff == pytest.approx(5e6 / 3)
    assert result.sd == pytest.approx(1.154701e6, rel=1e-6)
    # half = 4.302653 × 1.154701e6 / √3 = 2,868,435: the interval (−1,201,768, 4,535,102) holds 0
    assert result.ci95 == pytest.approx((-1_201_768, 4_535_102), abs=2)
    assert result.verdict == "not significant"
    rps = paired_difference(ca, cb)  # req/s: diffs 10, 20, 40
    assert rps.mean_diff == pytest.approx(70 / 3) and rps.sd == pytest.approx(math.sqrt(700 / 3))


# -- pooled paired test ---------------------------------------------------------------------------


def kornecki_runs(rps_diffs: Sequence[float], bps_diffs: Sequence[float]) -> list[RunDetail]:
    """IIS and Apache × static and dynamic × 6 client counts × 3 repeats; IIS − Apache at pair k is
    diffs[k], pairs in (workload, trial, clients) order."""
    runs = []
    k = 0
    for workload in ("static", "dynamic"):
        for trial in range(3):
            base_rps = [1000.0 * (i + 1) for i in range(6)]
            base_bps = [1e8 * (i + 1) for i in range(6)]
            iis_rps = [r + rps_diffs[k + i] for i, r in enumerate(base_rps)]
            iis_bps = [t + bps_diffs[k + i] for i, t in enumerate(base_bps)]
            k += 6
            suite = f"kornecki-detail-{workload}"
            for server, r, t in (("iis", iis_rps, iis_bps), ("apache", base_rps, base_bps)):
                runs.append(curve(r, t, loads=KORNECKI_CLIENTS, factors={"server": server, "workload": workload},
                                  repeat_index=trial, run_id=f"{server}-{workload}-{trial}", suite=suite))  # fmt: skip
    return runs


def with_mean_and_sd(n: int, m: float, sd: float) -> list[float]:
    """n values whose mean is m and whose sample sd is sd exactly (up to rounding)."""
    raw = list(range(n))
    rm, rs = statistics.fmean(raw), statistics.stdev(raw)
    return [m + sd * (v - rm) / rs for v in raw]


def test_pooled_test_pairs_every_workload_load_and_trial() -> None:
    diffs = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]  # A − B, in (workload, trial, load) order
    runs = []
    for w, workload in enumerate(("static", "dynamic")):
        for trial in range(2):
            d = diffs[4 * w + 2 * trial : 4 * w + 2 * trial + 2]
            runs.append(curve([100 + d[0], 200 + d[1]], factors={"server": "a", "workload": workload},
                              repeat_index=trial, run_id=f"a{w}{trial}"))  # fmt: skip
            runs.append(curve([100, 200], factors={"server": "b", "workload": workload},
                              repeat_index=trial, run_id=f"b{w}{trial}"))  # fmt: skip
    configs = configurations(runs)
    assert len(configs) == 4 and can_pool(configs)
    assert [s.label for s in sides(configs)] == ["server=a", "server=b"]
    rps, throughput = pooled_tests(configs)
    # diffs 1…8: mean 4.5, sd √6 = 2.449490, t(0.975, 7) = 2.364624, half 2.047825
    assert (rps.result.a, rps.result.b, rps.result.n) == ("server=a", "server=b", 8)
    assert rps.levels == ["static", "dynamic"] and rps.pairs_by_level == {"static": 4, "dynamic": 4}
    assert rps.result.mean_diff == pytest.approx(4.5) and rps.result.sd == pytest.approx(math.sqrt(6))
    assert rps.result.ci95 == pytest.approx((2.452175, 6.547825), abs=1e-6)
    assert rps.result.significant
    assert throughput.result.metric == "throughput_Bps"  # the records' bytes/s are 1000 × req/s
    assert throughput.result.mean_diff == pytest.approx(4500.0)


def test_pooled_test_refuses_runs_without_the_factor() -> None:
    configs = configurations([run([1, 2], factors={"server": "a"}, run_id="a"),
                              run([1, 2], factors={"server": "b"}, run_id="b")])  # fmt: skip
    assert not can_pool(configs)
    with pytest.raises(ConfigError, match="no workload factor"):
        pooled_tests(configs)


def test_kornecki_printed_interval_is_the_normal_quantile_at_90_percent() -> None:
    """Seed 002 prints mean 29,559.7, sd 25,011.9 over 36 pairs and calls (22,702.3, 36,417.1) a 95%
    interval; its half-width is 1.645 × sd/√36: the one-sided 95% (two-sided 90%) normal quantile."""
    rps = interval_from_summary(29_559.7, 25_011.9, 36, confidence=0.90, quantile=1.645)
    assert (round(rps[0], 1), round(rps[1], 1)) == (22_702.3, 36_417.1)
    bps = interval_from_summary(168_639_315.1, 140_193_508.1, 36, confidence=0.90, quantile=1.645)
    # the printed sd is itself rounded: the ends agree to 1 B/s in 1.7e8
    assert bps == pytest.approx((130_202_929.1, 207_075_701.1), abs=1.0)
    exact = interval_from_summary(29_559.7, 25_011.9, 36, confidence=0.90, quantile="normal")  # z = 1.644854
    assert exact == pytest.approx((22_702.9, 36_416.5), abs=0.05)
    # crest's default: the two-sided t interval, t(0.975, 35) = 2.030108, half = 8,462.8
    t95 = interval_from_summary(29_559.7, 25_011.9, 36)
    assert t95 == pytest.approx((21_096.9, 38_022.5), abs=0.05)


def test_kornecki_36_pairs_through_the_pooled_test() -> None:
    rps_diffs = with_mean_and_sd(36, 29_559.7, 25_011.9)
    bps_diffs = with_mean_and_sd(36, 168_639_315.1, 140_193_508.1)
    configs = configurations(kornecki_runs(rps_diffs, bps_diffs))
    seed = pooled_tests(configs, confidence=0.90, quantile=1.645)
    rps, bps = seed
    assert (rps.result.a, rps.result.n, rps.pairs_by_level) == ("server=iis", 36, {"static": 18, "dynamic": 18})
    assert rps.result.mean_diff == pytest.approx(29_559.7) and rps.result.sd == pytest.approx(25_011.9)
    assert rps.result.ci95 is not None
    assert (round(rps.result.ci95[0], 1), round(rps.result.ci95[1], 1)) == (22_702.3, 36_417.1)
    assert bps.result.ci95 == pytest.approx((130_202_929.1, 207_075_701.1), abs=1.0)
    default = pooled_tests(configs)[0].result
    assert default.confidence == 0.95
    assert default.ci95 == pytest.approx((21_096.9, 38_022.5), abs=0.05)
    assert default.verdict == "significant"


# -- VeriTest's better of the single- and multi-threaded suites ---------------------------------------


def test_best_of_takes_each_load_from_the_better_suite() -> None:
    loads = [1, 4, 8, 12]
    runs = [
        run([100, 200, 250, 240], loads, {"server": "iis"}, 0, "st0", suite="veritest-static"),
        run([110, 200, 250, 240], loads, {"server": "iis"}, 1, "st1", suite="veritest-static"),
        run([90, 190, 300, 320], loads, {"server": "iis"}, 0, "mt0", suite="veritest-static-mt4"),
        run([90, 230, 300, 330], loads, {"server": "iis"}, 1, "mt1", suite="veritest-static-mt4"),
        run([50, 150, 200, 210], loads, {"server": "apache"}, 0, "ap0", suite="veritest-static"),
        run([50, 150, 200, 210], loads, {"server": "apache"}, 1, "ap1", suite="veritest-static"),
    ]
    merged = best_of(configurations(runs))
    assert [c.label for c in merged] == ["server=iis", "server=apache"]
    iis = merged[0]
    assert isinstance(iis, BestOf) and iis.trial_count() == 2
    # means at 1, 4, 8, 12: static 105, 200, 250, 240; mt4 90, 210, 300, 325
    assert iis.sources() == {1: "veritest-static", 4: "veritest-static-mt4", 8: "veritest-static-mt4",
                             12: "veritest-static-mt4"}  # fmt: skip
    assert [[p.rps for p in t] for t in iis.trial_points()] == [[100, 190, 300, 320], [110, 230, 300, 330]]
    table = peak_table(merged)
    assert table.rows[0].peak_rps == pytest.approx(325.0) and table.rows[0].peak_rps_load == 12
    assert table.improvement("server=iis", "server=apache") == pytest.approx((325 - 210) / 210 * 100)


def test_best_of_leaves_a_single_suite_alone() -> None:
    configs = configurations([run([1, 2], factors={"server": "a"}, run_id="a"),
                              run([3, 4], factors={"server": "b"}, run_id="b")])  # fmt: skip
    assert best_of(configs) == configs


# -- index against a baseline and the pivot of peaks --------------------------------------------------


def test_index_against_a_baseline() -> None:
    configs = configurations([run([100, 200], factors={"server": "zeus"}, run_id="z"),
                              run([150, 120], factors={"server": "tux"}, run_id="t"),
                              run([80, 250], factors={"server": "x15"}, run_id="x")])  # fmt: skip
    table = peak_table(configs)

    def index(name: str) -> list[float | None]:
        return indexes(table.rows, baselines(table.rows, name), table.metric)

    assert index("server=zeus") == pytest.approx([1.0, 0.75, 1.25])
    assert index("tux") == pytest.approx([200 / 150, 1.0, 250 / 150])  # a factor value names it too
    with pytest.raises(ConfigError, match="no configuration 'iis'"):
        index("iis")


def test_pivot_of_peaks_by_server_and_cpus() -> None:
    runs = [
        run([100, 200], factors={"server": "nginx", "cpus": 1}, run_id="n1"),
        run([300, 400], factors={"server": "nginx", "cpus": 2}, run_id="n2"),
        run([90, 150], factors={"server": "apache", "cpus": 1}, run_id="a1"),
        run([250, 260], factors={"server": "apache", "cpus": 4}, run_id="a4"),
    ]
    pivot = peak_pivot(peak_table(configurations(runs)).rows)
    assert pivot is not None
    assert (pivot.column_factor, pivot.columns) == ("cpus", [1, 2, 4])
    assert [(r.label, r.cells) for r in pivot.rows] == [
        ("server=nginx", [200.0, 400.0, None]),
        ("server=apache", [150.0, None, 260.0]),
    ]
    one_cpu_count = configurations([runs[0], runs[2]])
    assert peak_pivot(peak_table(one_cpu_count).rows) is None
