"""crest.experiment.plan plans every experiment: value lists become configurations (server options
included, stored as factors), trials interleave, one id per invocation; crest.experiment.design maps a design
file (server options as factors) onto the same planner. Planning only: nothing starts or sends."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from crest.cli.main import main
from crest.cli.target_options import server_options
from crest.errors import ConfigError
from crest.experiment.design import load_design, plan_design
from crest.experiment.plan import combinations, configure, plan, plan_runs
from crest.runner.trials import RunRequest
from crest.suite import Suite, load_suite, parse_toml
from crest.units import format_span

SUITE = """
name = "plan-tiny"
description = "one short mix"
source = "crest tests"
repeat = {repeat}
[workload]
http_version = "1.0"
[[workload.classes]]
name = "page"
kind = "inproc"
weight = 1
[ladder]
clients = [2]
[timing]
length_s = 2
ramp_up_s = 1
ramp_down_s = 0
"""


def _suite(repeat: int = 1) -> Suite:
    return parse_toml(SUITE.format(repeat=repeat), "plan-tiny.toml")


def _base(repeat: int | None = None) -> RunRequest:
    return RunRequest(suite=_suite(), target=None, server="apache-event", repeat=repeat)


def test_combinations_vary_the_first_axis_slowest() -> None:
    assert combinations({"server": ["a", "b"], "cpus": [1, 2]}) == [
        {"server": "a", "cpus": 1},
        {"server": "a", "cpus": 2},
        {"server": "b", "cpus": 1},
        {"server": "b", "cpus": 2},
    ]
    assert combinations({}) == [{}]


def test_server_option_lists_are_configurations_stored_as_factors() -> None:
    axes = {"cpus": [1, 2], "MaxRequestWorkers": ["150", "400"], "KeepAlive": ["On"]}
    p = plan_runs(_base(repeat=2), [(_suite(), {})], axes, options=["MaxRequestWorkers", "KeepAlive"])
    assert p.experiment.startswith("x")
    requests = [c.request for c in p.configurations]
    assert [(r.cpus, r.server_options) for r in requests] == [
        (1, {"MaxRequestWorkers": "150", "KeepAlive": "On"}),
        (1, {"MaxRequestWorkers": "400", "KeepAlive": "On"}),
        (2, {"MaxRequestWorkers": "150", "KeepAlive": "On"}),
        (2, {"MaxRequestWorkers": "400", "KeepAlive": "On"}),
    ]
    assert requests[1].factors == {"cpus": 1, "MaxRequestWorkers": "400", "KeepAlive": "On"}
    assert {r.experiment for r in requests} == {p.experiment}
    # Trials outermost: every configuration's first trial, then every second one.
    assert [(t.index, t.configuration) for t in p.trials] == [(i, c) for i in range(2) for c in range(4)]


def test_trials_interleave_by_each_configurations_own_repeat_count() -> None:
    p = plan([_base(), RunRequest(suite=_suite(repeat=3), target=None, server="nginx")], prefix="doe")
    assert p.experiment.startswith("doe")
    assert [(t.index, t.configuration) for t in p.trials] == [(0, 0), (0, 1), (1, 1), (2, 1)]


def test_a_plan_says_how_many_mixes_and_how_long_under_load_before_it_runs() -> None:
    p = plan([_base(), RunRequest(suite=_suite(repeat=3), target=None, server="nginx")], prefix="x")
    assert p.mixes() == 4 and p.load_s() == 8.0  # 4 trials of one 2 s mix
    veritest = RunRequest(suite=load_suite("veritest-static"), target="http://127.0.0.1:1")
    full = plan([veritest], prefix="x")
    assert full.mixes() == 32 and format_span(full.load_s()) == "2 h 40 min"  # 2 trials × 16 mixes × 300 s
    assert format_span(plan([replace(veritest, profile="quick")], prefix="x").load_s()) == "2 min"


def test_configure_maps_target_levels_and_keeps_the_rest_as_factors() -> None:
    external = configure(RunRequest(suite=_suite(), target="http://127.0.0.1:1"), {"server": "external"})
    assert external.server is None and external.target == "http://127.0.0.1:1"
    assert external.factors == {"server": "external"}
    r = configure(_base(), {"memory": "256M", "clients": 4, "GOGC": 50}, options=["GOGC"])
    assert r.memory_bytes == 256 << 20 and r.server_options == {"GOGC": "50"}
    assert r.factors == {"memory": "256M", "clients": 4, "GOGC": "50"}


def test_a_server_option_named_like_a_factor_is_refused() -> None:
    with pytest.raises(ConfigError, match="--server-opt cpus has the name of a factor"):
        plan_runs(_base(), [(_suite(), {})], {"cpus": ["1"]}, options=["cpus"])
    with pytest.raises(ConfigError, match="--server-opt workload"):
        plan_runs(_base(), [(_suite(), {"workload": "static"})], {"workload": ["x"]}, options=["workload"])


def test_server_opt_values_split_on_commas_and_an_escaped_comma_stays() -> None:
    assert server_options(["MaxRequestWorkers=150,400", "open_file_cache=max=10\\,inactive=60s"]) == {
        "MaxRequestWorkers": ["150", "400"],
        "open_file_cache": ["max=10,inactive=60s"],
    }
    assert server_options([" K = 1 , 2 "]) == {"K": ["1", "2"]}


@pytest.mark.parametrize(
    ("opts", "fragment"),
    [
        (["K=1", "K=2"], "--server-opt K is given twice: give its values once, comma-separated, e.g. K=150,400"),
        (["K=1,,2"], "has an empty item"),
        (["K=1,"], "has an empty item"),
        (["K=1,1"], "repeats a value"),
        (["K"], "give KEY=VALUE"),
    ],
)
def test_ambiguous_server_opt_is_one_line_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, opts: list[str], fragment: str
) -> None:
    args = [a for o in opts for a in ("--server-opt", o)]
    code = main(["run", "nosuch-suite", "--server", "builtin", *args, "--db", str(tmp_path / "r.db")])
    out, err = capsys.readouterr()
    assert code == 2, err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("crest: error: ") and fragment in lines[0], err
    assert out == "" and not (tmp_path / "r.db").exists()


def test_resume_with_no_nap_is_one_line_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code = main(["run", "--resume", "20261126-2100-abcd", "--no-nap", "--db", str(tmp_path / "r.db")])
    out, err = capsys.readouterr()
    assert code == 2, err
    assert err == "crest: error: --resume continues a stored run with its own engine settings: drop --no-nap\n"
    assert out == "" and not (tmp_path / "r.db").exists()


# -- design files ---------------------------------------------------------------------------------

DESIGN = """
suite = "{suite}"
server = "apache-event"
replications = 2
{extra}
[factors]
keepalive = [false, true]
{factors}
"""


def _design(tmp_path: Path, factors: str, extra: str = "") -> Path:
    suite = tmp_path / "suite.toml"
    suite.write_text(SUITE.format(repeat=1))
    path = tmp_path / "design.toml"
    path.write_text(DESIGN.format(suite=suite, factors=factors, extra=extra))
    return path


@pytest.mark.parametrize(
    "factors",
    [
        '"server_opt.MaxRequestWorkers" = [150, 400]',
        "server_opt.MaxRequestWorkers = [150, 400]",
        "[factors.server_opt]\nMaxRequestWorkers = [150, 400]",
    ],
)
def test_design_server_options_are_factors_named_by_their_key(tmp_path: Path, factors: str) -> None:
    d = load_design(_design(tmp_path, factors, extra='[server_opt]\nKeepAliveTimeout = "5"'))
    assert d.factor_levels == {"keepalive": [False, True], "MaxRequestWorkers": [150, 400]}
    assert d.option_factors == ["MaxRequestWorkers"]
    p, rows = plan_design(d, store_path=tmp_path / "r.db")
    assert len(p.configurations) == 4 and len(p.trials) == 8 and p.experiment.startswith("doe")
    assert [(t.index, t.configuration) for t in p.trials[:5]] == [(0, 0), (0, 1), (0, 2), (0, 3), (1, 0)]
    for c, levels in zip(p.configurations, rows):
        r = c.request
        assert r.server_options == {"KeepAliveTimeout": "5", "MaxRequestWorkers": str(levels["MaxRequestWorkers"])}
        assert r.factors == {"KeepAliveTimeout": "5", **levels, "MaxRequestWorkers": str(levels["MaxRequestWorkers"])}
        assert r.suite.workload.keepalive is levels["keepalive"] and r.repeat == 2


@pytest.mark.parametrize(
    ("factors", "extra", "fragment"),
    [
        ('"server_opt.cpus" = [1, 2]', "", "not a design factor's name"),
        ('"server_opt." = [1, 2]', "", "give server_opt.KEY"),
        ("server_opt.KeepAlive = [true, false]", "", "levels are text or numbers"),
        ('server_opt.MaxRequestWorkers = [150, "150"]', "", "two different levels"),
        ("server_opt.MaxRequestWorkers = [150, 400]", "[server_opt]\nMaxRequestWorkers = 100",
         "server_opt.MaxRequestWorkers is both fixed and a factor"),
        ("", "[server_opt]\nKeepAlive = true", "as text or a number"),
        ("nosuch = [1, 2]", "", "unknown factor 'nosuch'"),
    ],
)  # fmt: skip
def test_bad_server_option_factor_is_one_error(tmp_path: Path, factors: str, extra: str, fragment: str) -> None:
    with pytest.raises(ConfigError, match=None) as err:
        load_design(_design(tmp_path, factors, extra))
    assert fragment in str(err.value) and "\n" not in str(err.value)


def test_design_server_options_need_a_server(tmp_path: Path) -> None:
    path = _design(tmp_path, "server_opt.GOGC = [50, 100]")
    path.write_text(path.read_text().replace('server = "apache-event"', 'target = "http://127.0.0.1:1"'))
    with pytest.raises(ConfigError, match="server_opt settings need a server crest starts"):
        load_design(path)


def test_a_design_runs_on_the_cluster_it_is_given(tmp_path: Path) -> None:
    d = load_design(_design(tmp_path, "server_opt.MaxRequestWorkers = [150, 400]"))
    placement = {"cluster": "local:3", "nodes": 2, "target_node": "node3"}
    p, _ = plan_design(d, store_path=tmp_path / "r.db", placement=placement)
    assert {(c.request.cluster, c.request.nodes, c.request.target_node) for c in p.configurations} == {
        ("local:3", 2, "node3")
    }


# -- HTTP/2 and HTTP/3 as factors --------------------------------------------------------------------


def test_design_http_and_streams_factors_set_the_suites_protocol(tmp_path: Path) -> None:
    path = _design(tmp_path, "")
    path.write_text(path.read_text().replace("keepalive = [false, true]", 'http = ["1.1", "2"]\nstreams = [1, 10]'))
    p, rows = plan_design(load_design(path), store_path=tmp_path / "r.db")
    assert len(p.configurations) == 4
    for c, levels in zip(p.configurations, rows):
        w = c.request.suite.workload
        assert w.http_version == levels["http"] and w.keepalive
        # Streams are HTTP/2's and HTTP/3's: the 1.1 configurations run one request at a time per connection.
        assert w.streams == (levels["streams"] if levels["http"] in ("2", "3") else 1)
        assert c.request.factors["http"] == levels["http"]


def test_design_http_factor_takes_http3(tmp_path: Path) -> None:
    path = _design(tmp_path, "")
    path.write_text(path.read_text().replace("keepalive = [false, true]", 'http = ["2", "3"]\nstreams = [1, 10]'))
    p, _ = plan_design(load_design(path), store_path=tmp_path / "r.db")
    got = [(c.request.suite.workload.http_version, c.request.suite.workload.streams) for c in p.configurations]
    assert sorted(got) == [("2", 1), ("2", 10), ("3", 1), ("3", 10)]
    assert all(c.request.suite.workload.keepalive for c in p.configurations)


def test_run_http_versions_are_configurations(tmp_path: Path) -> None:
    from crest.cli.target_options import protocol_axes
    from crest.suite import load_suite

    axes = protocol_axes("1.1,2", "10")
    assert axes == {"http": ["1.1", "2"], "streams": [10]}
    base = RunRequest(suite=load_suite("zeus-cached"), target="http://127.0.0.1:1", store_path=tmp_path / "r.db")
    p = plan_runs(base, [(base.suite, {})], axes)
    protocols = [(c.request.suite.workload.http_version, c.request.suite.workload.streams) for c in p.configurations]
    assert protocols == [("1.1", 1), ("2", 10)]


def test_run_compares_http3_with_streams(tmp_path: Path) -> None:
    from crest.cli.target_options import protocol_axes
    from crest.suite import load_suite

    axes = protocol_axes("1.1,2,3", "10")
    assert axes == {"http": ["1.1", "2", "3"], "streams": [10]}
    assert protocol_axes("3", "4") == {"http": ["3"], "streams": [4]}  # --streams needs 2 or 3, and 3 is one
    base = RunRequest(suite=load_suite("zeus-cached"), target="https://127.0.0.1:1", store_path=tmp_path / "r.db")
    p = plan_runs(base, [(base.suite, {})], axes)
    protocols = [(c.request.suite.workload.http_version, c.request.suite.workload.streams) for c in p.configurations]
    assert protocols == [("1.1", 1), ("2", 10), ("3", 10)]


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--http", "4"], "invalid --http '4': expected 1.0, 1.1, 2 or 3"),
        (["--http", "1.1", "--streams", "4"], "--streams 4 needs HTTP/2 or HTTP/3: add --http 2 or 3"),
        (["--http", "2", "--streams", "0"], "--streams"),
    ],
)
def test_bad_http_flags_are_one_line_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str], fragment: str
) -> None:
    code = main(["run", "zeus-cached", "--server", "builtin", *args, "--db", str(tmp_path / "r.db")])
    out, err = capsys.readouterr()
    assert code == 2, err
    lines = err.splitlines()
    assert len(lines) == 1 and fragment in lines[0], err
    assert out == "" and not (tmp_path / "r.db").exists()
