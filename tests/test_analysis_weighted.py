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
