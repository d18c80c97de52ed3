"""`crest runs` and `crest show` in-process (CliRunner on the two command functions) over a real store file."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner, Result

from crest import verdicts
from crest.cli.runs import runs_command, show_command
from crest.store import Store, StoreError
from test_store import H2, make_meta, make_mix

# The two commands as the lead registers them in crest.cli.main.
app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
app.command("runs")(runs_command)
app.command("show")(show_command)


def invoke(*args: str) -> Result:
    # A fixed width: the table layout must not depend on the terminal the tests run in.
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200", "NO_COLOR": "1"})


def ok(*args: str) -> str:
    result = invoke(*args)
    assert result.exit_code == 0, (result.output, result.exception)
    return result.stdout


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "lab" / "crest.db"


@pytest.fixture
def lab(db: Path) -> dict[str, str]:
    """Two runs: 'done' (3 mixes, complete) and, newer, 'cut' (1 mix, interrupted)."""
    with Store(db) as store:
        done = store.create_run(make_meta())
        for index in range(3):
            store.add_mix(done, make_mix(index))
        store.finish_run(done, "complete")
        cut = store.create_run(make_meta(suite="mindcraft", profile="full", target="http://127.0.0.1:9000/"))
        store.add_mix(cut, make_mix(0))
        store.finish_run(cut, "interrupted", "Ctrl-C during mix 1")
    return {"done": done, "cut": cut}


# -- crest runs ---------------------------------------------------------------------------


def test_runs_json_lists_newest_first(db: Path, lab: dict[str, str]) -> None:
    runs = json.loads(ok("runs", "--db", str(db), "--json"))
    assert [r["id"] for r in runs] == [lab["cut"], lab["done"]]
    cut, done = runs
    assert {k: cut[k] for k in ("suite", "target", "profile", "status", "mixes", "reason")} == {
        "suite": "mindcraft", "target": "http://127.0.0.1:9000/", "profile": "full", "status": "interrupted",
        "mixes": 1, "reason": "Ctrl-C during mix 1",
    }  # fmt: skip
    assert (done["status"], done["mixes"], done["peak_rps"], done["reason"]) == ("complete", 3, make_mix(2).rps, None)
    assert isinstance(done["started_at"], float)


def test_runs_table(db: Path, lab: dict[str, str]) -> None:
    out = ok("runs", "--db", str(db))
    lines = out.splitlines()
    assert re.match(r"\s*id\s+kind\s+experiment\s+suite\s+configuration\s+status\s+mixes\s+result\s+started", lines[0])
    (cut_line,) = [line for line in lines if lab["cut"] in line]
    (done_line,) = [line for line in lines if lab["done"] in line]
    assert lines.index(cut_line) < lines.index(done_line)  # newest first
    # The fixture's mixes carry a content length: a size sweep, whose result is its peak throughput.
    assert re.search(
        r"sweep\s+-\s+mindcraft\s+server=builtin cpus=2\s+interrupted\s+1\s+0\.5 Mbit/s\s+\d{4}-\d\d-\d\d \d\d:\d\d",
        cut_line,
    )
    assert re.search(r"webbench-static\s+server=builtin cpus=2\s+complete\s+3\s+4\.3 Mbit/s\s", done_line)


def test_runs_of_a_missing_file_says_how_to_start_and_creates_nothing(db: Path) -> None:
    out = ok("runs", "--db", str(db))
    assert out == f"no runs yet in {db}: start one with `crest run SUITE --target URL`\n"
    assert json.loads(ok("runs", "--db", str(db), "--json")) == []
    assert not db.exists() and not db.parent.exists()


def test_runs_of_an_empty_file(db: Path) -> None:
    Store(db).close()
    assert ok("runs", "--db", str(db)).startswith(f"no runs yet in {db}:")
    assert json.loads(ok("runs", "--db", str(db), "--json")) == []


def test_runs_default_db_is_in_the_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert ok("runs") == "no runs yet in crest-results/crest.db: start one with `crest run SUITE --target URL`\n"
    with Store() as store:
        run_id = store.create_run(make_meta())
    assert [r["id"] for r in json.loads(ok("runs", "--json"))] == [run_id]


# -- crest show ---------------------------------------------------------------------------


def test_show_json_shape(db: Path, lab: dict[str, str]) -> None:
    shown = json.loads(ok("show", lab["done"], "--db", str(db), "--json"))
    assert {k: shown[k] for k in ("id", "status", "suite", "target", "profile", "reason")} == {
        "id": lab["done"], "status": "complete", "suite": "webbench-static", "target": "http://127.0.0.1:8080/",
        "profile": "quick", "reason": None,
    }  # fmt: skip
    assert shown["host"]["hostname"] == "lab1"
    assert shown["factors"] == {"server": "builtin", "cpus": 2}
    assert [m["index"] for m in shown["mixes"]] == [0, 1, 2]  # ladder order
    for index, mix in enumerate(shown["mixes"]):
        want = make_mix(index)
        assert {k: mix[k] for k in ("clients", "threads", "window_s", "requests", "rps", "throughput_Bps")} == {
            "clients": want.clients, "threads": want.threads_per_client, "window_s": want.window_s,
            "requests": want.requests, "rps": want.rps, "throughput_Bps": want.throughput_Bps,
        }  # fmt: skip
        assert mix["errors"] == index + 2  # the total over kinds, as an int
        assert mix["errors_by_kind"] == want.errors
        assert (mix["latency_us"]["p50"], mix["latency_us"]["p99"]) == (want.latency_us["p50"], want.latency_us["p99"])
        assert "histogram_b64" not in mix
        assert mix["verdicts"] == [v.to_json() for v in want.verdicts]  # kind, message and figures
        moved = ("size_bytes", "client_cpu_s", "connections_opened", "access_log_requests", "naps")
        assert {k: mix[k] for k in moved} == {
            "size_bytes": want.size_bytes, "client_cpu_s": want.client_cpu_s,
            "connections_opened": want.connections_opened, "access_log_requests": want.access_log_requests,
            "naps": want.naps,
        }  # fmt: skip
    assert shown["mixes"][0]["verdicts"][0]["kind"] == "client_bound"


def test_show_says_when_the_target_idled_at_the_peak(db: Path) -> None:
    """The analysis judges the peak (the runner stores only each mix's CPU figures)."""
    with Store(db) as store:
        run_id = store.create_run(make_meta())
        for index in range(3):
            idle = {"target": {"cpu_util_pct": 40.0, "cores": 2}, "target_idle_pct": 60.0} if index == 2 else {}
            store.add_mix(run_id, make_mix(index, monitor=idle, verdicts=[]))
        store.finish_run(run_id, "complete")
    out = ok("show", run_id, "--db", str(db))
    assert "  warning: target idle at the peak (load 9) (60% idle): something other than the target's CPU" in out
    assert "warning: mix" not in out


def test_show_accepts_a_unique_prefix(db: Path, lab: dict[str, str]) -> None:
    shown = json.loads(ok("show", lab["cut"][:-1], "--db", str(db), "--json"))
    assert (shown["id"], shown["status"], shown["reason"]) == (lab["cut"], "interrupted", "Ctrl-C during mix 1")
    assert len(shown["mixes"]) == 1


def test_show_text(db: Path, lab: dict[str, str]) -> None:
    out = ok("show", lab["done"], "--db", str(db))
    assert out.startswith(f"Run {lab['done']}\n")
    assert "  kind      size sweep\n  setup     server=builtin cpus=2\n" in out
    assert "  suite     webbench-static (profile quick, trial 1)\n" in out
    assert "  target    http://127.0.0.1:8080/\n" in out
    assert "  status    complete\n" in out
    assert "  host      lab1 · 6.1.0 · Xeon · 8 CPUs · Python 3.11.7 · crest 0.1.0 · engine 0.1.0\n" in out
    assert "  factors   server=builtin, cpus=2\n" in out
    assert re.search(r"mix\s+clients\s+threads\s+conns\s+window\s+requests\s+req/s\s+MB/s\s+p50\s+p99\s+errors", out)
    rows = [line.split() for line in out.splitlines() if re.match(r"\s+\d+\s+\d+\s+2\s", line)]
    assert rows == [
        ["0", "1", "2", "2", "20s", "1,000", "50.0", "0.06", "800us", "4.00ms", "2"],
        ["1", "5", "2", "10", "20s", "5,000", "250.0", "0.30", "801us", "4.00ms", "3"],
        ["2", "9", "2", "18", "20s", "9,000", "450.0", "0.54", "802us", "4.00ms", "4"],
    ]
    assert "  Peak      450.0 req/s at 9 clients × 2 threads (mix 2)\n" in out
    assert "  warning: mix 0: client-bound: the load engine used 97% of its 1 core(s) in the window," in out
    assert "  warning: mix 0: the mix was cut short\n" in out
    assert "HTTP/2" not in out  # HTTP/1.x mixes have no HTTP/2 table


def test_show_tables_the_http2_mixes(db: Path) -> None:
    with Store(db) as store:
        run_id = store.create_run(make_meta())
        store.add_mix(run_id, make_mix(0))
        store.add_mix(run_id, make_mix(1, h2=H2))
        store.finish_run(run_id, "complete")
    out = ok("show", run_id, "--db", str(db))
    lines = out.splitlines()
    title = next(i for i, line in enumerate(lines) if line.strip() == "HTTP/2")
    assert lines[title + 1].split() == [
        "mix", "streams", "mean", "streams", "max", "HPACK", "resp", "HPACK", "req", "GOAWAYs", "resets", "refused",
    ]  # fmt: skip
    assert lines[title + 3].split() == ["1", "9.4", "10", "1.93×", "2.94×", "72", "0", "594"]  # only the HTTP/2 mix
    assert lines[title + 4].startswith("  warning:")
    assert json.loads(ok("show", run_id, "--db", str(db), "--json"))["mixes"][1]["h2"] == H2  # as stored


def test_show_titles_an_http3_runs_table_http3_with_qpack(db: Path) -> None:
    config = {"suite": {"name": "webbench-static", "workload": {"http_version": "3", "streams": 10}}}
    with Store(db) as store:
        run_id = store.create_run(make_meta(config=config))
        store.add_mix(run_id, make_mix(0, h2=H2))
        store.finish_run(run_id, "complete")
    out = ok("show", run_id, "--db", str(db))
    lines = out.splitlines()
    title = next(i for i, line in enumerate(lines) if line.strip() == "HTTP/3")
    assert lines[title + 1].split()[5:9] == ["QPACK", "resp", "QPACK", "req"]
    assert "HTTP/2" not in out and "HPACK" not in out


def test_show_interrupted_run_names_the_reason(db: Path, lab: dict[str, str]) -> None:
    assert "  status    interrupted (Ctrl-C during mix 1)\n" in ok("show", lab["cut"], "--db", str(db))


def test_show_a_run_without_mixes(db: Path) -> None:
    with Store(db) as store:
        run_id = store.create_run(make_meta())
    out = ok("show", run_id, "--db", str(db))
    assert "  status    running\n" in out
    assert out.endswith("\n  no mixes stored yet\n")
    assert json.loads(ok("show", run_id, "--db", str(db), "--json"))["mixes"] == []


def test_show_unknown_run_is_one_line_error(db: Path, lab: dict[str, str]) -> None:
    result = invoke("show", "nope", "--db", str(db))
    assert isinstance(result.exception, StoreError)
    assert str(result.exception) == f"no run 'nope' in {db}: see `crest runs --db {db}`"


def test_show_without_a_file_is_the_same_error_and_creates_nothing(db: Path) -> None:
    result = invoke("show", "nope", "--db", str(db))
    assert isinstance(result.exception, StoreError)
    assert str(result.exception) == f"no run 'nope' in {db}: see `crest runs --db {db}`"
    assert not db.parent.exists()


# -- hostile strings ------------------------------------------------------------------------

HOSTILE: dict[str, Any] = {
    "suite": "[bold red]evil[/bold red] :smile:",
    "target": "http://x/\x1b[2J\x1b]0;pwned\x07[link=http://evil]",
    "profile": "[/]",
}


def test_strings_from_the_store_are_printed_as_text(db: Path) -> None:
    with Store(db) as store:
        # An external target: its URL is the run's configuration label in `crest runs`.
        config = {"options": {"server": None, "target": HOSTILE["target"]}}
        run_id = store.create_run(
            make_meta(**HOSTILE, config=config, host={"hostname": "[blink]h[/blink]"}, factors={"[x]": "[/y]"})
        )
        store.add_mix(
            run_id, make_mix(0, verdicts=[verdicts.engine_error("[red]status 500[/red] from \x1b[31mtarget")])
        )
        store.finish_run(run_id, "failed", "target said [bold]no[/bold]\r\n")
    listing = ok("runs", "--db", str(db))
    shown = ok("show", run_id, "--db", str(db))
    for out in (listing, shown):
        assert "[bold red]evil[/bold red] :smile:" in out  # markup and emoji codes stay literal
        assert "\x1b" not in out and "\x07" not in out  # no escape sequence reaches the terminal
        assert "http://x/\\x1b[2J\\x1b]0;pwned\\x07[link=http://evil]" in out
    assert "(profile [/], trial 1)" in shown
    assert "  status    failed (target said [bold]no[/bold]\\r\\n)\n" in shown
    assert "  host      [blink]h[/blink]\n" in shown
    assert "  factors   [x]=[/y]\n" in shown
    assert "  warning: mix 0: [red]status 500[/red] from \\x1b[31mtarget\n" in shown
    # JSON carries the strings exactly; json.dumps escapes the control characters.
    assert json.loads(ok("show", run_id, "--db", str(db), "--json"))["target"] == HOSTILE["target"]
    assert "\x1b" not in ok("runs", "--db", str(db), "--json")


def test_show_says_when_the_trials_of_its_configuration_disagree(db: Path) -> None:
    """Two trials of one configuration (one experiment) whose peaks are 25% apart with no noisy-host verdict."""
    config = {**make_meta().config, "experiment": "exp1"}
    with Store(db) as store:
        ids = []
        for trial, scale in enumerate((1.0, 0.8)):
            run_id = store.create_run(make_meta(repeat_index=trial, config=config))
            for index in range(3):
                store.add_mix(run_id, make_mix(index, rps=scale * 50.0 * (1 + 4 * index), verdicts=[]))
            store.finish_run(run_id, "complete")
            ids.append(run_id)
        other = store.create_run(make_meta(config=config, factors={"server": "nginx", "cpus": 2}))  # another one
        store.add_mix(other, make_mix(0, rps=1.0, verdicts=[]))
        store.finish_run(other, "complete")
    out = " ".join(ok("show", ids[0], "--db", str(db)).split())
    assert (
        "warning: its trials disagree: trial 2 peaked at 360 req/s and trial 1 at 450 req/s, 25% apart (more than"
        " the 10% run-to-run noise crest allows one configuration), and no noisy-host verdict explains it"
    ) in out
