"""crest.analysis.group: runs grouped into configurations and labelled by what differs."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from analysis_records import run
from crest.analysis import configurations
from crest.store import RunDetail


def test_equal_factors_are_trials_of_one_configuration() -> None:
    details = [
        run([1.0], factors={"server": "nginx", "cpus": 2}, repeat_index=1, run_id="n1"),
        run([1.0], factors={"server": "apache", "cpus": 2}, run_id="a0"),
        run([1.0], factors={"cpus": 2, "server": "nginx"}, repeat_index=0, run_id="n0"),
    ]
    configs = configurations(details)
    assert [c.label for c in configs] == ["server=nginx", "server=apache"]
    assert [[t.id for t in c.trials] for c in configs] == [["n0", "n1"], ["a0"]]
    assert configs[0].factors == {"server": "nginx", "cpus": 2}
    assert len(configs[0].trial_points()) == 2


def test_label_names_every_differing_factor_in_first_seen_order() -> None:
    details = [
        run([1.0], factors={"server": "nginx", "cpus": 1, "memory": "1G"}),
        run([1.0], factors={"server": "nginx", "cpus": 2, "memory": "1G"}),
        run([1.0], factors={"server": "apache", "cpus": 2, "memory": "1G"}),
    ]
    assert [c.label for c in configurations(details)] == [
        "server=nginx cpus=1",
        "server=nginx cpus=2",
        "server=apache cpus=2",
    ]


def test_a_missing_factor_shows_as_none() -> None:
    details = [run([1.0], factors={"server": "nginx", "cpus": 2}), run([1.0], factors={"server": "nginx"})]
    assert [c.label for c in configurations(details)] == ["cpus=2", "cpus=none"]


def test_without_factors_the_target_tells_configurations_apart() -> None:
    details = [
        run([1.0], target="http://10.0.0.1/", run_id="x"),
        run([1.0], target="http://10.0.0.2/", run_id="y"),
        run([1.0], target="http://10.0.0.1/", repeat_index=1, run_id="z"),
    ]
    configs = configurations(details)
    assert [c.label for c in configs] == ["http://10.0.0.1/", "http://10.0.0.2/"]
    assert [t.id for t in configs[0].trials] == ["x", "z"]


def test_suites_tell_configurations_apart_and_label_them() -> None:
    details = [run([1.0], suite="static", run_id="s"), run([1.0], suite="cgi", run_id="c")]
    assert [c.label for c in configurations(details)] == ["static", "cgi"]


def test_one_configuration_is_labelled_by_its_factors_or_suite_and_target() -> None:
    assert configurations([run([1.0], factors={"server": "nginx", "cpus": 2})])[0].label == "server=nginx cpus=2"
    assert configurations([run([1.0])])[0].label == "webbench-static on http://127.0.0.1:8080/"


def test_equal_labels_get_the_run_id() -> None:
    # Same factors but different suites: the factors do not tell them apart, so the ids do.
    details = [
        run([1.0], factors={"server": "nginx"}, suite="a", run_id="id-a"),
        run([1.0], factors={"server": "apache"}, suite="a", run_id="id-b"),
        run([1.0], factors={"server": "nginx"}, suite="b", run_id="id-c"),
    ]
    labels = [c.label for c in configurations(details)]
    assert labels == ["server=nginx (id-a)", "server=apache (id-b)", "server=nginx (id-c)"]


def test_no_runs() -> None:
    assert configurations([]) == []


def _stored(detail: RunDetail, digest: str, version: str = "Apache/2.4.71", **options: Any) -> RunDetail:
    """The run as crest run stores a provisioned one: its options, its server's version and configuration digest."""
    config = {"options": {"server": "apache-event", "server_options": {}, **options},
              "server": {"name": "apache-event", "version": version, "config_text": "…",
                         "config_sha256": digest}}  # fmt: skip
    return replace(detail, meta=replace(detail.meta, config=config))


def test_different_server_options_are_different_configurations() -> None:
    details = [
        run([1.0], factors={"server": "apache-event", "MaxRequestWorkers": "150"}, run_id="a"),
        run([1.0], factors={"server": "apache-event", "MaxRequestWorkers": "400"}, run_id="b"),
        run([1.0], factors={"server": "apache-event", "MaxRequestWorkers": "150"}, repeat_index=1, run_id="c"),
    ]
    configs = configurations(details)
    assert [c.label for c in configs] == ["MaxRequestWorkers=150", "MaxRequestWorkers=400"]
    assert [[t.id for t in c.trials] for c in configs] == [["a", "c"], ["b"]]


def test_equal_factors_but_different_server_configuration_are_not_trials() -> None:
    factors = {"server": "apache-event"}
    details = [
        _stored(run([1.0], factors=factors, run_id="a"), "aaaaaaaa11"),
        _stored(run([1.0], factors=factors, run_id="b"), "bbbbbbbb22"),
        _stored(run([1.0], factors=factors, repeat_index=1, run_id="c"), "aaaaaaaa11"),
    ]
    configs = configurations(details)
    assert [[t.id for t in c.trials] for c in configs] == [["a", "c"], ["b"]]
    assert [c.label for c in configs] == ["server_config=aaaaaaaa", "server_config=bbbbbbbb"]


def test_an_upgraded_server_is_another_configuration() -> None:
    factors = {"server": "apache-event"}
    details = [
        _stored(run([1.0], factors=factors, run_id="a"), "aaaaaaaa11", version="Apache/2.4.71"),
        _stored(run([1.0], factors=factors, run_id="b"), "aaaaaaaa11", version="Apache/2.4.72"),
        _stored(run([1.0], factors=factors, repeat_index=1, run_id="c"), "aaaaaaaa11", version="Apache/2.4.71"),
    ]
    configs = configurations(details)
    assert [[t.id for t in c.trials] for c in configs] == [["a", "c"], ["b"]]
    assert [c.label for c in configs] == ["server_version=Apache/2.4.71", "server_version=Apache/2.4.72"]


def test_equal_factors_but_different_stored_settings_are_not_trials() -> None:
    factors = {"server": "apache-event"}
    details = [
        _stored(run([1.0], factors=factors, run_id="a"), "d", access_log=False, seed=1),
        _stored(run([1.0], factors=factors, run_id="b"), "d", access_log=True, seed=1),
        _stored(run([1.0], factors=factors, repeat_index=1, run_id="c"), "d", access_log=False, seed=2),
    ]
    configs = configurations(details)
    # The seed is how a trial drew its requests, not a setting: a and c are trials of one configuration.
    assert [[t.id for t in c.trials] for c in configs] == [["a", "c"], ["b"]]
    assert [c.label for c in configs] == ["access_log=false", "access_log=true"]


def test_an_engine_that_never_napped_is_another_configuration_and_older_runs_are_not() -> None:
    factors = {"server": "apache-event"}
    details = [
        _stored(run([1.0], factors=factors, run_id="a"), "d", nap=True),
        _stored(run([1.0], factors=factors, run_id="b"), "d", nap=False),
        _stored(run([1.0], factors=factors, repeat_index=1, run_id="c"), "d"),  # stored before the option existed
    ]
    configs = configurations(details)
    assert [[t.id for t in c.trials] for c in configs] == [["a", "c"], ["b"]]
    assert [c.label for c in configs] == ["nap=true", "nap=false"]
