"""Bad suite files: every rule gives one exact line naming the file, the dotted key, the rule and the value."""

from __future__ import annotations

from pathlib import Path

import pytest

from crest.errors import ConfigError
from crest.suite import SuiteError, fileset_names, load_suite

BASE = """\
name = "test-suite"
description = "A suite for tests."
source = "nowhere (seed 000)"
repeat = 1

[workload]
fileset = "webbench"
http_version = "1.0"
keepalive = false

[[workload.classes]]
name = "static"
kind = "static"
weight = 80

[[workload.classes]]
name = "cgi"
kind = "cgi"
weight = 20

[ladder]
start = 1
step = 4
stop = 60
threads_per_client = 1

[timing]
length_s = 300
ramp_up_s = 30
ramp_down_s = 30
"""


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Load "suite.toml" relative to the working directory, so messages start with exactly "suite.toml:".
    monkeypatch.chdir(tmp_path)


def _load(text: str) -> None:
    Path("suite.toml").write_text(text, encoding="utf-8")
    load_suite("suite.toml")


def _edit(*replacements: tuple[str, str]) -> str:
    text = BASE
    for old, new in replacements:
        assert old in text, old
        text = text.replace(old, new, 1)
    return text


def _error(text: str) -> SuiteError:
    with pytest.raises(SuiteError) as info:
        _load(text)
    return info.value


def test_the_base_file_is_valid() -> None:
    _load(BASE)


@pytest.mark.parametrize(
    ("replacements", "message"),
    [
        pytest.param(
            [("threads_per_client = 1", "threads_per_client = 0")],
            "suite.toml: ladder.threads_per_client: must be ≥ 1 (got 0)",
            id="threads-per-client",
        ),
        pytest.param(
            [("weight = 20", "weight = 0")],
            "suite.toml: workload.classes[1].weight: must be > 0 (got 0)",
            id="weight-zero",
        ),
        pytest.param(
            [("weight = 20", "weight = -2.5")],
            "suite.toml: workload.classes[1].weight: must be > 0 (got -2.5)",
            id="weight-negative",
        ),
        pytest.param(
            [("repeat = 1", "repeat = 0")],
            "suite.toml: repeat: must be ≥ 1 (got 0)",
            id="repeat",
        ),
        pytest.param(
            [('name = "cgi"', 'name = "static"')],
            "suite.toml: workload.classes[1].name: must be unique within the workload (got 'static', also classes[0])",
            id="duplicate-class",
        ),
        pytest.param(
            [('kind = "cgi"', 'kind = "php"')],
            "suite.toml: workload.classes[1].kind: must be 'static', 'cgi', 'inproc', 'fastcgi', 'webstone-cgi',"
            " 'url', 'specweb99', 'specweb99-get' or 'loadfile' (got 'php')",
            id="kind",
        ),
        pytest.param(
            [('fileset = "webbench"\n', "")],
            "suite.toml: workload.fileset: required because class 'static' is static (got nothing)",
            id="fileset-required",
        ),
        pytest.param(
            [('kind = "static"', 'kind = "inproc"')],
            "suite.toml: workload.fileset: must be omitted: no class is static (got 'webbench')",
            id="fileset-without-static",
        ),
        pytest.param(
            [("keepalive = false", "keepalive = false\nfileset_connections = 100")],
            "suite.toml: workload.fileset_connections: only fileset 'specweb99' scales with connections"
            " (got 100 with fileset 'webbench')",
            id="fileset-connections",
        ),
        pytest.param(
            [("weight = 20", "weight = 20\nsize_bytes = 512")],
            "suite.toml: workload.classes[1].size_bytes: only kind 'webstone-cgi' takes a response size"
            " (got 512 with kind 'cgi')",
            id="size-bytes",
        ),
        pytest.param(
            [('http_version = "1.0"', "http_version = 1.0")],
            "suite.toml: workload.http_version: must be '1.0', '1.1', '2' or '3' (got 1.0)",
            id="http-version-float",
        ),
        pytest.param(
            [('http_version = "1.0"', 'http_version = "4"')],
            "suite.toml: workload.http_version: must be '1.0', '1.1', '2' or '3' (got '4')",
            id="http-version-unknown",
        ),
        pytest.param(
            [('http_version = "1.0"', 'http_version = "3"')],
            "suite.toml: workload.keepalive: HTTP/3 connections persist: leave keepalive out or set it to true",
            id="http3-keepalive",
        ),
        pytest.param(
            [("keepalive = false", "keepalive = true\nstreams = 8")],
            "suite.toml: workload.streams: needs HTTP/2 or HTTP/3 (got 8 with http_version 1.0)",
            id="streams-without-http2-or-3",
        ),
        pytest.param(
            [("keepalive = false", 'keepalive = "no"')],
            "suite.toml: workload.keepalive: must be true or false (got 'no')",
            id="bool",
        ),
        pytest.param(
            [("threads_per_client = 1", 'threads_per_client = "4"')],
            "suite.toml: ladder.threads_per_client: must be an integer (got '4')",
            id="integer-type",
        ),
        pytest.param(
            [("start = 1", "start = 1.0")],
            "suite.toml: ladder.start: must be an integer (got 1.0)",
            id="integer-from-float",
        ),
        pytest.param(
            [("start = 1\n", "clients = [1, 2]\nstart = 1\n")],
            "suite.toml: ladder: define exactly one of clients or start, step and stop (got clients and start, step, stop)",
            id="ladder-both",
        ),
        pytest.param(
            [("start = 1\nstep = 4\nstop = 60\n", "")],
            "suite.toml: ladder: define exactly one of clients or start, step and stop"
            " (got neither; missing start, step, stop)",
            id="ladder-neither",
        ),
        pytest.param(
            [("stop = 60\n", "")],
            "suite.toml: ladder: define exactly one of clients or start, step and stop"
            " (got only start, step; missing stop)",
            id="ladder-partial",
        ),
        pytest.param(
            [("start = 1", "start = 70")],
            "suite.toml: ladder.stop: must be ≥ start (got 60 < 70)",
            id="ladder-stop-below-start",
        ),
        pytest.param(
            [("start = 1\nstep = 4\nstop = 60\n", "clients = [1, 8, 8, 4]\n")],
            "suite.toml: ladder.clients[2]: must be greater than the entry before it (got 8 after 8); "
            "suite.toml: ladder.clients[3]: must be greater than the entry before it (got 4 after 8)",
            id="clients-increasing",
        ),
        pytest.param(
            [("start = 1\nstep = 4\nstop = 60\n", "clients = [0, 4]\n")],
            "suite.toml: ladder.clients[0]: must be ≥ 1 (got 0)",
            id="clients-positive",
        ),
        pytest.param(
            [("start = 1\nstep = 4\nstop = 60\n", "clients = []\n")],
            "suite.toml: ladder.clients: must list at least 1 load point (got [])",
            id="clients-empty",
        ),
        pytest.param(
            [
                (
                    "threads_per_client = 1\n",
                    "threads_per_client = 1\n\n[[ladder.overrides]]\nfrom_clients = 92\nthreads_per_client = 0\n",
                )
            ],
            "suite.toml: ladder.overrides[0].threads_per_client: must be ≥ 1 (got 0)",
            id="override-threads",
        ),
        pytest.param(
            [
                (
                    "threads_per_client = 1\n",
                    "threads_per_client = 1\n\n[[ladder.overrides]]\nfrom_clients = 92\nthreads_per_client = 15\n",
                )
            ],
            "suite.toml: ladder.overrides[0].from_clients: matches no load point: the largest is 60 clients (got 92)",
            id="override-beyond-ladder",
        ),
        pytest.param(
            [("ramp_up_s = 30", "ramp_up_s = 150"), ("ramp_down_s = 30", "ramp_down_s = 150")],
            "suite.toml: timing: the window (length_s − ramp_up_s − ramp_down_s) must be > 0 (got 300 − 150 − 150 = 0)",
            id="window",
        ),
        pytest.param(
            [("ramp_up_s = 30", "ramp_up_s = 2.5")],
            "suite.toml: timing.ramp_up_s: must be a whole number of seconds (got 2.5)",
            id="whole-seconds",
        ),
        pytest.param(
            [("length_s = 300\n", "")],
            "suite.toml: timing.length_s: required key is missing",
            id="missing-key",
        ),
        pytest.param(
            [("ramp_down_s = 30", "ramp_down_s = 30\ndelay_s = 280")],
            "suite.toml: timing.delay_s: must be < length_s − ramp_down_s so every client starts before the ramp-down"
            " (got 280 with length_s − ramp_down_s = 270)",
            id="delay",
        ),
        pytest.param(
            [("ramp_down_s = 30", "ramp_down_s = 30\nthink_time_s = nan")],
            "suite.toml: timing.think_time_s: must be a finite number (got nan)",
            id="nan",
        ),
        pytest.param(
            [('name = "test-suite"', 'name = "Test Suite"')],
            "suite.toml: name: must start with a lowercase letter or digit and use only lowercase letters,"
            " digits, '-', '_' and '.' (got 'Test Suite')",
            id="name",
        ),
        pytest.param(
            [('description = "A suite for tests."', 'description = ""')],
            "suite.toml: description: must not be empty",
            id="empty-description",
        ),
        pytest.param(
            [
                ('[[workload.classes]]\nname = "static"', '[workload.classes]\nname = "static"'),
                ('[[workload.classes]]\nname = "cgi"\nkind = "cgi"\nweight = 20\n', ""),
            ],
            "suite.toml: workload.classes: must be an array (got a table)",
            id="classes-not-array",
        ),
    ],
)
def test_each_rule_gives_one_exact_line(replacements: list[tuple[str, str]], message: str) -> None:
    error = _error(_edit(*replacements))
    assert str(error) == message
    assert isinstance(error, ConfigError)
    assert "\n" not in str(error)


def test_unknown_keys_are_rejected_at_every_level() -> None:
    assert str(_error(_edit(("repeat = 1", 'repeat = 1\ncolour = "red"')))) == "suite.toml: unknown key 'colour'"
    error = _error(_edit(("threads_per_client = 1", "threads_per_client = 1\nstpe = 4")))
    assert str(error) == "suite.toml: ladder: unknown key 'stpe': did you mean 'step' or 'stop'?"
    error = _error(_edit(("weight = 20", "weight = 20\nwieght = 3")))
    assert str(error) == "suite.toml: workload.classes[1]: unknown key 'wieght': did you mean 'weight'?"


def test_a_misspelled_required_key_is_named_with_its_likely_spelling() -> None:
    """The README walk: a misspelled key got no "did you mean"."""
    error = _error(_edit(("length_s = 300", "lenght_s = 300")))
    assert error.problems == [
        "suite.toml: timing.length_s: required key is missing",
        "suite.toml: timing: unknown key 'lenght_s': did you mean 'length_s'?",
    ]


def test_a_missing_table_names_the_keys_it_needs() -> None:
    """The README walk: "timing: required key is missing" did not name length_s."""
    text = _edit(("[timing]", "[timing_old]"))
    problems = _error(text).problems
    assert "suite.toml: timing: required table is missing: add [timing] with length_s" in problems


def test_the_old_receive_buffer_key_names_its_new_name() -> None:
    error = _error(_edit(("keepalive = false", "keepalive = false\nreceive_buffer_bytes = 4096")))
    assert str(error) == (
        "suite.toml: workload.receive_buffer_bytes: renamed: write read_buffer_bytes (the bytes the engine"
        " reads per call, WebBench's receive buffer; it was applied as the socket's SO_RCVBUF)"
    )
    assert _error(_edit(("keepalive = false", "keepalive = false\nread_buffer_bytes = 0"))).problems == [
        "suite.toml: workload.read_buffer_bytes: must be ≥ 1 (got 0)"
    ]


def test_several_problems_are_reported_together_one_line_each() -> None:
    error = _error(_edit(("threads_per_client = 1", "threads_per_client = 0"), ("weight = 20", "weight = 0")))
    assert error.problems == [
        "suite.toml: workload.classes[1].weight: must be > 0 (got 0)",
        "suite.toml: ladder.threads_per_client: must be ≥ 1 (got 0)",
    ]
    assert str(error) == "; ".join(error.problems)


def test_an_empty_file_names_every_missing_key() -> None:
    error = _error("")
    assert error.problems == [
        *(f"suite.toml: {key}: required key is missing" for key in ("name", "description", "source")),
        "suite.toml: workload: required table is missing: add [workload]",
        "suite.toml: ladder: required table is missing: add [ladder]",
        "suite.toml: timing: required table is missing: add [timing] with length_s",
    ]


def test_unknown_fileset_lists_the_known_ones() -> None:
    error = _error(_edit(('fileset = "webbench"', 'fileset = "wbtree"')))
    assert str(error) == f"suite.toml: workload.fileset: must be one of {', '.join(fileset_names())} (got 'wbtree')"
    assert "webbench" in fileset_names() and "specweb99" in fileset_names()


def test_toml_syntax_error_names_line_and_column() -> None:
    error = _error(_edit(("repeat = 1", "repeat 1")))
    assert str(error) == (
        "suite.toml: TOML syntax error: Expected '=' after a key in a key/value pair (at line 4, column 8)"
    )


def test_not_utf8_and_missing_files() -> None:
    Path("suite.toml").write_bytes(b'name = "\xff"\n')
    with pytest.raises(SuiteError, match=r"^suite\.toml: not UTF-8 text \(byte 8\): save the file as UTF-8$"):
        load_suite("suite.toml")
    with pytest.raises(SuiteError, match=r"^nope\.toml: cannot read the suite file: No such file or directory$"):
        load_suite("nope.toml")


def test_unknown_name_lists_the_builtins() -> None:
    with pytest.raises(
        SuiteError,
        match=r"^no built-in suite or file named 'veritest': use a suite \.toml file or one of veritest-static, ",
    ):
        load_suite("veritest")


def test_a_path_without_toml_suffix_loads_when_it_is_a_file() -> None:
    Path("mysuite").write_text(BASE, encoding="utf-8")
    assert load_suite("mysuite").name == "test-suite"
    assert load_suite("./mysuite").name == "test-suite"


def test_errors_name_the_path_as_given(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "s.toml"
    path.parent.mkdir()
    path.write_text(_edit(("repeat = 1", "repeat = 0")), encoding="utf-8")
    with pytest.raises(SuiteError) as info:
        load_suite(str(path))
    assert str(info.value) == f"{path}: repeat: must be ≥ 1 (got 0)"
