"""`crest suites` (table, one suite, --json, --profile) on a throwaway typer app, and docs/suites.md kept in step."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from crest.cli.suites import suites_command
from crest.suite import SuiteError, builtin_names, builtin_suites, parse_toml

DOCS = Path(__file__).resolve().parents[1] / "docs" / "suites.md"


def _app() -> typer.Typer:
    app = typer.Typer(add_completion=False)
    app.command("suites")(suites_command)

    @app.command("other")
    def other() -> None:  # a second command, so "suites" stays a subcommand as in crest
        """Unused."""

    return app


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(_app(), ["suites", *args], env={"COLUMNS": "250"})
    assert result.exit_code == 0, (result.output, result.exception)
    return result.stdout


def test_json_lists_every_builtin_with_exactly_the_agreed_keys() -> None:
    data = json.loads(_invoke("--json"))
    assert [d["name"] for d in data] == builtin_names()
    for item, suite in zip(data, builtin_suites(), strict=True):
        assert set(item) == {"name", "description", "source", "mixes", "workload"}
        assert (item["description"], item["source"]) == (suite.description, suite.source)
        assert [m["clients"] for m in item["mixes"]] == [m.clients for m in suite.mixes()]
        assert [m.get("size_bytes") for m in item["mixes"]] == [m.size_bytes for m in suite.mixes()]
        assert item["workload"]["classes"][0]["name"] == suite.workload.classes[0].name


def test_json_mixes_carry_threads_connections_and_timing() -> None:
    data = {d["name"]: d for d in json.loads(_invoke("--json"))}
    mt = {m["clients"]: m for m in data["veritest-static-mt"]["mixes"]}
    assert (mt[88]["threads_per_client"], mt[96]["threads_per_client"], mt[96]["connections"]) == (10, 15, 1440)
    assert mt[1]["index"] == 1
    assert mt[1]["timing"] == {
        "length_s": 300,
        "ramp_up_s": 30,
        "ramp_down_s": 30,
        "delay_s": 0,
        "think_time_s": 0,
        "window_s": 240,
    }
    mindcraft = data["mindcraft-webbench"]
    assert len(mindcraft["mixes"]) == 10
    assert mindcraft["workload"]["read_buffer_bytes"] == 4096


def test_json_with_quick_profile_has_two_second_windows() -> None:
    data = json.loads(_invoke("--json", "--profile", "quick"))
    windows = {m["timing"]["window_s"] for d in data for m in d["mixes"]}
    assert windows == {2}


def test_table_lists_every_builtin_with_its_source() -> None:
    out = _invoke()
    for name in builtin_names():
        assert name in out
    assert "VeriTest 2003 (seed 000)" in out and "Mindcraft 1999 (seed 001)" in out
    assert "1, 16, 32 … 144 × 2" in out
    assert "1, 8, 16 … 120 × 10 (15 from 96)" in out


def test_one_suite_shows_its_details_and_notes() -> None:
    out = _invoke("zeus-noncached")
    assert out.startswith("suite:       zeus-noncached\n")
    assert "notes:" in out and "page cache" in out
    out = _invoke("veritest-static", "--profile", "standard")
    assert "60 s (6 s ramp-up, 6 s ramp-down, 48 s window)" in out


def test_a_tls_suite_says_its_key_resumption_and_route() -> None:
    out = _invoke("veritest-ecommerce")
    assert ("tls:         RSA 2048 key, session resumption offered; with a role map and no tls target, every TLS"
            " class to the dynamic target") in out  # fmt: skip
    assert "tls:" not in _invoke("veritest-static")
    data = {d["name"]: d for d in json.loads(_invoke("--json"))}
    assert data["veritest-ecommerce"]["workload"]["tls"] == {"key": "rsa2048", "resumption": True, "route": "dynamic"}
    assert "the target restarted before the mix at 128 clients" in _invoke("mindcraft-webbench-restart")


def test_one_suite_file_is_validated(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\n', encoding="utf-8")
    result = CliRunner().invoke(_app(), ["suites", str(bad)])
    assert isinstance(result.exception, SuiteError)
    assert str(result.exception).startswith(f"{bad}: description: required key is missing; ")


def test_unknown_profile_is_a_suite_error() -> None:
    result = CliRunner().invoke(_app(), ["suites", "--profile", "slow"])
    assert isinstance(result.exception, SuiteError)
    assert str(result.exception) == "unknown profile 'slow': expected one of quick, standard, full"


# ---------------------------------------------------------------- docs/suites.md


def test_docs_list_every_builtin_suite() -> None:
    text = DOCS.read_text(encoding="utf-8").split("## Built-in suites", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^\| `([a-z0-9.-]+)` \|", text, flags=re.MULTILINE)
    assert listed == builtin_names()


def test_the_docs_full_example_is_a_valid_suite() -> None:
    text = DOCS.read_text(encoding="utf-8")
    blocks = re.findall(r"```toml\n(.*?)```", text, flags=re.DOTALL)
    suite = parse_toml(blocks[0], "docs/suites.md")
    mixes = suite.mixes()
    assert [m.threads_per_client for m in mixes if m.clients in (88, 96)] == [10, 15]
    assert suite.workload.shares()["ssl-cgi"] == pytest.approx(0.04)
