"""What each `crest` command pays for at start-up: a command's modules load only when it runs, so
`crest --help` imports no command and `crest bench` (whose own measurements include the process) imports
neither the runner, the suites, the servers, the store, pydantic nor the heavy libraries of analysis and
reports (scipy, numpy, jinja2)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from crest.cli.main import COMMANDS, load_command

HEAVY = ("scipy", "numpy", "jinja2")
# Modules `crest bench` must never load: the rest of crest and the libraries only its other commands use.
NOT_FOR_BENCH = (
    *HEAVY,
    "pydantic",
    "sqlite3",
    "rich",
    "crest.runner",
    "crest.suite",
    "crest.servers",
    "crest.store",
    "crest.experiment",
    "crest.analysis",
    "crest.report",
    "crest.host.monitor",
)


def loaded_after(code: str) -> list[str]:
    """Run `code` in a fresh interpreter; the names of NOT_FOR_BENCH (or their submodules) it loaded."""
    script = (
        "import sys\n"
        f"{code}\n"
        f"print(','.join(sorted({{m for m in sys.modules for n in {NOT_FOR_BENCH!r} if m == n or m.startswith(n + '.')}})))\n"
        "print(','.join(sorted(m for m in sys.modules if m.startswith('crest.cli.'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    return [*filter(None, lines[-2].split(",")), *filter(None, lines[-1].split(","))]


@pytest.mark.integration
@pytest.mark.timeout(60)
def test_help_imports_no_command() -> None:
    loaded = loaded_after("from crest.cli.main import main\nassert main(['--help']) == 0")
    assert loaded == ["crest.cli.main"], f"`crest --help` imported {loaded}"


@pytest.mark.integration
@pytest.mark.timeout(60)
def test_bench_imports_only_the_engine_path() -> None:
    # A request really goes out (to a socket that never answers, so it ends at the 1 s timeout): the whole
    # path of `crest bench`, from parsing to the engine's report and the failure that follows, is covered.
    # A POST, which the preflight does not send (it would stop a GET here, before the engine).
    code = (
        "import socket\n"
        "from crest.cli.main import main\n"
        "listener = socket.socket(); listener.bind(('127.0.0.1', 0)); listener.listen(8)\n"
        "url = 'http://127.0.0.1:%d/' % listener.getsockname()[1]\n"
        # No request succeeds, so the bench ends with its one error line and exit 1 (after its report).
        "assert main(['bench', '-q', '--json', '-n', '1', '-c', '1', '--timeout', '1s', '-H', 'X-A: b', '-m', 'POST',"
        " '--body', 'x', url]) == 1\n"
    )
    loaded = loaded_after(code)
    assert sorted(loaded) == [
        "crest.cli.bench",
        "crest.cli.cluster_options",
        "crest.cli.engine_options",
        "crest.cli.main",
        "crest.cli.progress",
        "crest.cli.render",
        "crest.cli.watching",
        "crest.cli.width",
    ], f"`crest bench` imported {loaded}"


@pytest.mark.integration
@pytest.mark.timeout(120)
def test_every_command_together_loads_no_heavy_library() -> None:
    # `crest report --help` or `crest run` must not pay for scipy/numpy/jinja2 either: they load when used.
    loaded = loaded_after(
        f"from crest.cli.main import load_command\nfor name in {list(COMMANDS)!r}: load_command(name)"
    )
    assert not [name for name in loaded if name in HEAVY or name.split(".")[0] in HEAVY]


@pytest.mark.parametrize("name", list(COMMANDS))
def test_help_summary_is_the_commands_own(name: str) -> None:
    # `crest --help` lists COMMANDS' summaries without importing the commands: they must say what the
    # commands' own docstrings say, at any terminal width.
    command = load_command(name)
    assert " ".join((command.help or "").split("\n\n")[0].split()) == COMMANDS[name].summary
