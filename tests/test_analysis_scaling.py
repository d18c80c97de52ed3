"""crest.analysis.scaling: speedup and efficiency over CPU counts, grouped by the other factors."""

from __future__ import annotations

import pytest

from analysis_records import run
from crest.analysis import configurations, scaling
from crest.errors import ConfigError


def test_speedup_and_efficiency_per_group() -> None:
    details = [
        run([100.0], factors={"server": "nginx", "cpus": 1}),
        run([180.0], factors={"server": "nginx", "cpus": 2}),
        run([300.0], factors={"server": "nginx", "cpus": 4}),
        run([50.0], factors={"server": "apache", "cpus": 2}),
        run([90.0], factors={"server": "apache", "cpus": 4}),
        run([1.0], factors={"server": "caddy"}),  # no cpus factor: left out
    ]
    rows = scaling(configurations(details))
    assert [(r.group_label, r.cpus) for r in rows] == [
        ("server=nginx", 1.0), ("server=nginx", 2.0), ("server=nginx", 4.0), ("server=apache", 2.0), ("server=apache", 4.0),
    ]  # fmt: skip
    assert [r.speedup for r in rows] == pytest.approx([1.0, 1.8, 3.0, 1.0, 1.8])
    assert [r.efficiency for r in rows] == pytest.approx([1.0, 0.9, 0.75, 1.0, 0.9])
    assert [r.base_cpus for r in rows] == [1.0, 1.0, 1.0, 2.0, 2.0]
    assert rows[0].label == "server=nginx cpus=1" and rows[0].peak_rps == 100.0


def test_cpus_sort_numerically_and_a_single_group_is_named_by_its_factors() -> None:
    details = [run([400.0], factors={"server": "h2o", "cpus": 16}), run([100.0], factors={"server": "h2o", "cpus": 2})]
    rows = scaling(configurations(details))
    assert [(r.group_label, r.cpus, r.speedup, r.efficiency) for r in rows] == [
        ("server=h2o", 2.0, 1.0, 1.0), ("server=h2o", 16.0, 4.0, 0.5),
    ]  # fmt: skip
    assert scaling(configurations([run([1.0], factors={"cpus": 1})]))[0].group_label == "all"


def test_errors() -> None:
    with pytest.raises(ConfigError, match="no configuration has a cpus factor"):
        scaling(configurations([run([1.0], factors={"server": "x"})]))
    with pytest.raises(ConfigError, match="has cpus='many': cpus must be a positive number"):
        scaling(configurations([run([1.0], factors={"cpus": "many"})]))
