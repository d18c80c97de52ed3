"""Scripted sessions without a server: [workload.script] suites and their refusals, the CSV of users, the
engine's `script` config a mix gets (through the binding and mix_spec), and a fan-out's virtual users
keeping their global CSV rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from crest.errors import ConfigError
from crest.load.fanout import Share, share_specs
from crest.load.runspec import RunSpec
from crest.runner.binding import bind
from crest.runner.request import RunRequest
from crest.runner.specs import mix_spec
from crest.suite import SuiteError, load_file, parse_suite
from crest.suite.describe import workload_text
from crest.suite.script import read_users

STEPS = """
[[workload.script.steps]]
name = "login"
method = "POST"
path = "/login"
body = "u={{user}}&p={{pass}}"
headers = { Content-Type = "application/x-www-form-urlencoded" }
expect_status = 200
extract = [{ name = "token", regex = "token=(\\\\w+)" }, { name = "id", json = "/data/id" }]

[[workload.script.steps]]
name = "home"
path = "/home/{{id}}?t={{token}}"
think_s = 0.5
"""


def suite_text(script: str = 'users = "users.csv"\n', steps: str = STEPS, extra: str = "") -> str:
    return (f'name = "s"\ndescription = "d"\nsource = "s"\n[workload]\nhttp_version = "1.1"\nkeepalive = true\n'
            f'{extra}[workload.script]\n{script}{steps}\n[ladder]\nclients = [3]\n[timing]\nlength_s = 10\n')  # fmt: skip


def write_suite(tmp_path: Path, text: str, users: str | None = "user,pass\nalice,a1\nbob,b2\n") -> Path:
    if users is not None:
        (tmp_path / "users.csv").write_text(users)
    (tmp_path / "suite.toml").write_text(text)
    return tmp_path / "suite.toml"


def test_a_script_suite_reads_its_users_beside_it_and_its_steps_are_the_classes(tmp_path: Path) -> None:
    suite = load_file(write_suite(tmp_path, suite_text()))
    script = suite.workload.script
    assert script is not None
    assert script.users == str(tmp_path / "users.csv")
    assert script.classes == ("login", "home")
    assert suite.workload.classes == []
    assert workload_text(suite.workload).startswith("a script of 2 steps (login, home), users from users.csv")
    engine = script.engine()
    assert engine["variables"] == ["user", "pass"]
    assert engine["users"] == [["alice", "a1"], ["bob", "b2"]]
    assert engine["steps"][0] == {
        "name": "login", "method": "POST", "path": "/login", "body": "u={{user}}&p={{pass}}",
        "headers": [["Content-Type", "application/x-www-form-urlencoded"]], "think_s": 0.0, "expect_status": 200,
        "extract": [{"name": "token", "regex": "token=(\\w+)"}, {"name": "id", "json": "/data/id"}],
    }  # fmt: skip
    assert engine["steps"][1]["think_s"] == 0.5


def test_a_mix_of_a_script_is_the_engines_script_with_the_steps_as_classes(tmp_path: Path) -> None:
    suite = load_file(write_suite(tmp_path, suite_text()))
    request = RunRequest(suite=suite, target="http://127.0.0.1:8080")
    bound = bind(request, None, "http://127.0.0.1:8080", None)
    spec = mix_spec(request, bound, suite.mixes()[0], 1, 1, 1)
    config = spec.to_config()
    assert config["url"] == "http://127.0.0.1:8080"
    assert config["classes"] == ["login", "home"]
    assert config["requests"] == []
    assert config["script"]["users"] == [["alice", "a1"], ["bob", "b2"]]
    assert config["script"]["first_user"] == 0
    assert config["connections"] == 3


def test_a_fan_out_numbers_each_shares_users_from_its_first_global_one() -> None:
    script = {"steps": [], "variables": [], "users": [], "first_user": 0}
    spec = RunSpec(url="http://h", connections=6, script=script)
    shares = share_specs(spec, [Share(0, 0, 2), Share(1, 2, 4)], "load nodes", "fewer --nodes")
    assert [s.script["first_user"] for s in shares if s.script] == [0, 2]
    again = share_specs(shares[1], [Share(0, 0, 1), Share(1, 1, 3)], "subnets", "fewer subnets")
    assert [s.script["first_user"] for s in again if s.script] == [2, 3]


@pytest.mark.parametrize(
    ("script", "steps", "extra", "want"),
    [
        ("", STEPS.replace('name = "home"', 'name = "login"'), "", "workload.script.steps[1].name: must be unique"),
        ("", STEPS.replace('name = "home"', 'name = "Home"'), "", "workload.script.steps[1].name: must start with"),
        ("", STEPS.replace('json = "/data/id"', 'json = "/data/id", regex = "x"'), "",
         "give exactly one of regex and json"),
        ("", STEPS.replace("expect_status = 200", "expect_status = 99"), "", "expect_status"),
        ("", STEPS.replace("think_s = 0.5", "think_s = -1.0"), "", "think_s"),
        ("", "", "", "workload.script.steps: "),
        ("", STEPS, 'fileset = "webbench"\n', "workload.fileset: must be omitted: a script's steps name the paths"),
        ("", STEPS, '[[workload.classes]]\nname = "a"\nkind = "url"\nweight = 1\n',
         "workload.classes: a script's classes are its steps: remove [[workload.classes]]"),
        ("", STEPS, 'selection = "once"\n', "workload.selection: must be omitted: each virtual user plays"),
    ],
)  # fmt: skip
def test_a_script_suite_refuses_what_does_not_fit(
    tmp_path: Path, script: str, steps: str, extra: str, want: str
) -> None:
    text = suite_text(script, steps)
    if extra.startswith("[[workload.classes]]"):
        text = text.replace("[workload.script]", extra + "[workload.script]")
    elif extra:
        text = text.replace("keepalive = true\n", "keepalive = true\n" + extra)
    with pytest.raises(SuiteError) as caught:
        load_file(write_suite(tmp_path, text, users=None))
    assert want in str(caught.value)
    assert "\n" not in str(caught.value)


def test_http_2_is_refused_for_now(tmp_path: Path) -> None:
    text = suite_text("", STEPS).replace('http_version = "1.1"', 'http_version = "2"')
    with pytest.raises(SuiteError, match="workload.http_version: a script is sent over HTTP/1.x for now"):
        load_file(write_suite(tmp_path, text, users=None))


def test_a_missing_or_malformed_users_csv_is_one_line_before_anything_starts(tmp_path: Path) -> None:
    path = write_suite(tmp_path, suite_text('users = "nobody.csv"\n'), users=None)
    with pytest.raises(SuiteError, match=r"workload.script.users: no file .*nobody.csv: give the path of a CSV"):
        load_file(path)
    path = write_suite(tmp_path, suite_text(), users="user,pass\nalice\n")
    with pytest.raises(SuiteError, match=r"users.csv line 2: 1 values where the header names 2 columns"):
        load_file(path)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("", "has no header row"),
        ("user\n", "has a header but no rows"),
        ("a,b\n1,2\n3\n", "line 3: 1 values where the header names 2 columns"),
    ],
)
def test_read_users_refusals(tmp_path: Path, text: str, want: str) -> None:
    (tmp_path / "u.csv").write_text(text)
    with pytest.raises(ConfigError, match=want):
        read_users(tmp_path / "u.csv")


def test_read_users_takes_quoted_values_and_skips_blank_lines(tmp_path: Path) -> None:
    (tmp_path / "u.csv").write_text('name, mail\n"Doe, Jane",jane@x\n\nbob,"b@x"\n')
    assert read_users(tmp_path / "u.csv") == (["name", "mail"], [["Doe, Jane", "jane@x"], ["bob", "b@x"]])


def test_a_script_and_a_replay_are_not_one_workload() -> None:
    data = {
        "name": "s", "description": "d", "source": "s", "ladder": {"clients": [1]}, "timing": {"length_s": 5},
        "workload": {"replay": {"log": "/x.log"}, "script": {"steps": [{"name": "a", "path": "/"}]}},
    }  # fmt: skip
    with pytest.raises(SuiteError, match=r"workload.script: give \[workload.script\] or \[workload.replay\], not both"):
        parse_suite(data, "suite")
