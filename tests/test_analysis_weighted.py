"""crest.analysis.weighted: SPECweb99 class weights, user weights and their checks."""

from __future__ import annotations

import pytest

from crest.analysis import SPECWEB99_WEIGHTS, parse_weights, weighted_throughput
from crest.analysis.weighted import WEIGHT_SUM_TOLERANCE
from crest.errors import ConfigError


def test_specweb99_weights() -> None:
    assert SPECWEB99_WEIGHTS == {"class0": 0.35, "class1": 0.50, "class2": 0.14, "class3": 0.01}
    values = {"class0": 40.0, "class1": 80.0, "class2": 95.0, "class3": 96.0, "cgi": 1e9}
    # 0.35·40 + 0.5·80 + 0.14·95 + 0.01·96 = 14 + 40 + 13.3 + 0.96; classes without a weight are ignored
    assert weighted_throughput(values) == pytest.approx(68.26)


def test_user_weights() -> None:
    assert weighted_throughput({"small": 10.0, "large": 20.0}, {"small": 0.25, "large": 0.75}) == 17.5


def test_missing_class() -> None:
    with pytest.raises(ConfigError, match="no value for class class3: weighted throughput needs every weighted class"):
        weighted_throughput({"class0": 1.0, "class1": 1.0, "class2": 1.0})


def test_weights_must_sum_to_one_within_the_tolerance() -> None:
    assert WEIGHT_SUM_TOLERANCE == 1e-3
    weighted_throughput({"a": 1.0, "b": 1.0}, {"a": 0.5, "b": 0.5009})
    with pytest.raises(ConfigError, match="class weights sum to 0.9, not 1"):
        weighted_throughput({"a": 1.0, "b": 1.0}, {"a": 0.5, "b": 0.4})
    with pytest.raises(ConfigError, match="negative"):
        weighted_throughput({"a": 1.0, "b": 1.0}, {"a": 1.5, "b": -0.5})
    with pytest.raises(ConfigError, match="no class weights given"):
        weighted_throughput({"a": 1.0}, {})


def test_parse_weights() -> None:
    assert parse_weights("class0=35%, class1=50%,class2=14%,class3=1%") == pytest.approx(SPECWEB99_WEIGHTS)
    assert parse_weights("a=0.5,b=0.5") == {"a": 0.5, "b": 0.5}
    for bad in ("a=0.5,a=0.5", "a", "a=x,b=1", "=1"):
        with pytest.raises(ConfigError, match="invalid class weight"):
            parse_weights(bad)


# ---------------------------------------------------------------- content-length sweeps


def test_size_class_bins_follow_specweb99() -> None:
    from crest.analysis import size_class

    assert [size_class(n) for n in (1, 102, 921, 1023, 1024, 9216, 10239, 10240, 102399, 102400, 921600, 1_023_999)] == [
        "class0", "class0", "class0", "class0", "class1", "class1", "class1", "class2", "class2", "class3",
        "class3", "class3",
    ]  # fmt: skip
    assert size_class(1_024_000) is None and size_class(10_000_000) is None


def test_sweep_weighted_throughput_by_hand() -> None:
    from crest.analysis import sweep_weighted_throughput

    # A curve rising linearly to 1024 B/s at 1 KiB, flat after: class0's mean over [0, 1024) with sizes
    # uniform is 512; every other class is 1024. The 5 MB point has no class but is listed.
    points = [(0, 0.0), (1024, 1024.0), (10_240, 1024.0), (102_400, 1024.0), (1_024_000, 1024.0), (5_000_000, 1024.0)]
    result = sweep_weighted_throughput(points)
    assert result.per_class == pytest.approx({"class0": 512.0, "class1": 1024.0, "class2": 1024.0, "class3": 1024.0})
    assert result.value_Bps == pytest.approx(0.35 * 512 + 0.65 * 1024)
    assert result.value_Mbps == pytest.approx(result.value_Bps * 8 / 1e6)
    assert result.sizes == {"class0": [0], "class1": [1024], "class2": [10_240], "class3": [102_400]}
    assert result.excluded == [1_024_000, 5_000_000]


def test_sweep_sizes_are_uniform_within_a_class_not_log_spaced() -> None:
    from crest.analysis import sweep_weighted_throughput

    # Zeus' sweep lengths are log-spaced: 7 of class 0's 10 points lie under 102 B. A curve equal to the
    # length (flat past 1000 B) has a mean of about 512 over [0, 1024) with lengths uniform; averaging the
    # points would give 188.8. By hand: 1 (flat to 1 B) + (1000² − 1)/2 + 24 × 1000, over 1024.
    lengths = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]
    points = [(n, float(n)) for n in lengths] + [(2000, 1000.0), (20_000, 1000.0), (200_000, 1000.0)]
    result = sweep_weighted_throughput(points)
    assert result.per_class["class0"] == pytest.approx((1 + (1000**2 - 1) / 2 + 24 * 1000) / 1024)
    assert result.per_class["class1"] == result.per_class["class3"] == 1000.0


def test_class_mean_joins_points_with_lines_and_is_flat_beyond_them() -> None:
    from crest.analysis.weighted import class_mean

    assert class_mean([(5, 1.0)], 0, 10) == 1.0
    # flat 2 up to 2 B, a line to 4 at 4 B, flat 4 to 10 B: (4 + 6 + 24) / 10
    assert class_mean([(2, 2.0), (4, 4.0)], 0, 10) == pytest.approx(3.4)
    # a point beyond the class still sets its edge: the line from 0 at 0 B to 20 at 20 B averages 5 over [0, 10)
    assert class_mean([(0, 0.0), (20, 20.0)], 0, 10) == pytest.approx(5.0)


def test_sweep_repeated_sizes_average_first() -> None:
    from crest.analysis import sweep_weighted_throughput

    # 100 B measured twice (10, 30 → 20): the same curve as 20 measured once.
    twice = sweep_weighted_throughput(
        [(100, 10.0), (100, 30.0), (500, 40.0), (2000, 8.0)], {"class0": 0.5, "class1": 0.5}
    )
    once = sweep_weighted_throughput([(100, 20.0), (500, 40.0), (2000, 8.0)], {"class0": 0.5, "class1": 0.5})
    assert twice.value_Bps == pytest.approx(once.value_Bps)


def test_sweep_missing_class_is_named() -> None:
    from crest.analysis import sweep_weighted_throughput

    with pytest.raises(ConfigError, match=r"no content length measured in class2 \(10,240–102,399 B\), class3"):
        sweep_weighted_throughput([(100, 1.0), (2000, 1.0)])
    # Weights that omit the classes: fine, and the unweighted sizes are excluded.
    result = sweep_weighted_throughput(
        [(100, 4.0), (1000, 4.0), (2000, 2.0), (9000, 2.0), (50_000, 7.0)], {"class0": 0.5, "class1": 0.5}
    )
    assert result.excluded == [50_000]
    # flat 4 to 1000 B, then the line toward 2 at 2000 B for the last 24 B
    assert result.per_class["class0"] == pytest.approx(4.0 - 2.0 * (24 / 1000) / 2 * 24 / 1024)


def test_sweep_rejects_bad_throughput() -> None:
    from crest.analysis import sweep_weighted_throughput

    with pytest.raises(ConfigError, match="throughput at 100 bytes is nan"):
        sweep_weighted_throughput([(100, float("nan"))])


def test_sweep_points_from_a_stored_run() -> None:
    from analysis_records import mix, run
    from crest.analysis import sweep_points

    detail = run([1.0, 2.0, 3.0])
    with pytest.raises(ConfigError, match="is not a content-length sweep"):
        sweep_points(detail)
    detail.mixes = [
        mix(1, 1, 5.0, size_bytes=1000),
        mix(2, 2, 9.0, size_bytes=1000),  # same size at more clients: the peak counts
        mix(3, 1, 7.0, size_bytes=10),
    ]
    assert sweep_points(detail) == [(10, 7000.0), (1000, 9000.0)]
