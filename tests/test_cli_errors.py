"""Bad input to the real CLI: one `crest: error:` line, exit code 2, no traceback, and no traffic."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from crest.cli.main import COMMANDS
from support import SilentListener, run_cli_in_process


def assert_one_error_line(stderr: str, fragment: str) -> None:
    assert "Traceback" not in stderr
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("crest: error: "), stderr
    assert fragment in lines[0]


@pytest.mark.integration  # a listening socket
@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["-d", "10x"], "invalid --duration '10x': expected a number with a unit, e.g. 10s"),
        (["-c", "1", "-t", "4"], "-c/--connections (1) must be >= -t/--threads (4)"),
        (["--rate", "100", "--think-time", "1s"], "--rate and --think-time conflict"),
        (["--pipeline", "4", "--http", "1.0"], "pipelining (--pipeline 4) needs HTTP/1.1 with keep-alive"),
        (["-H", "no colon here"], "invalid header 'no colon here': expected 'Name: value'"),
        (["--rate", "0"], "invalid --rate '0': must be greater than 0"),
        (["--http", "4"], "invalid --http '4': expected 1.0, 1.1, 2 or 3"),
        (["--streams", "8"], "--streams (8) needs HTTP/2 or HTTP/3: set --http to 2 or 3, or drop --streams"),
        # The listener's URL is http://: HTTP/3 is QUIC, always encrypted, so the fix is https://.
        (["--http", "3"], "HTTP/3 runs over QUIC, which is always encrypted: http://127.0.0.1:"),
        (["--http", "3", "--streams", "8"], "needs https://"),
        (["--http", "2", "--pipeline", "4"], "--pipeline does not apply to HTTP/2: use --streams"),
        (["--source-addrs", "10.0.0.1"], "is not a loopback address"),
        (["--bogus-option"], "No such option: --bogus-option"),
        (["--recv-buffer", "4096"], "use --read-buffer BYTES (bytes per read, WebBench's receive buffer)"),
        (["--read-buffer", "0"], "invalid --read-buffer '0': give a size such as 512M"),
        (["--socket-rcvbuf", "lots"], "invalid --socket-rcvbuf 'lots'"),
    ],
)
def test_bad_input_sends_nothing(silent_listener: SilentListener, args: list[str], fragment: str) -> None:
    result = run_cli_in_process("bench", *args, silent_listener.url)
    assert result.returncode == 2
    assert_one_error_line(result.stderr, fragment)
    assert result.stdout == ""
    assert silent_listener.connections() == 0  # validation happens before any connection


def test_bad_url() -> None:
    result = run_cli_in_process("bench", "foo")
    assert result.returncode == 2
    assert_one_error_line(result.stderr, "invalid URL 'foo': expected http://host[:port]/path or https://")


def test_unreachable_port(closed_port: int) -> None:
    result = run_cli_in_process("bench", "-d", "1s", f"http://127.0.0.1:{closed_port}/")
    assert result.returncode == 2
    assert_one_error_line(
        result.stderr,
        f"cannot connect to 127.0.0.1:{closed_port} (connection refused): is the target running? check the URL",
    )
    assert result.stdout == ""


def test_serve_missing_docroot() -> None:
    result = run_cli_in_process("serve", "--docroot", "/nonexistent/crest-docroot")
    assert result.returncode == 2
    assert_one_error_line(result.stderr, "docroot '/nonexistent/crest-docroot' is not a directory")


def test_missing_url_is_a_usage_error() -> None:
    result = run_cli_in_process("bench", "-d", "1s")
    assert result.returncode == 2
    assert_one_error_line(result.stderr, "Missing argument")


def test_help_is_plain_and_complete() -> None:
    top = run_cli_in_process("--help")
    assert top.returncode == 0
    for command in ("bench", "serve", "version"):
        assert command in top.stdout
    bench = run_cli_in_process("bench", "--help")
    assert bench.returncode == 0
    for option in ("--connections", "--duration", "--rate", "--http", "--no-keepalive", "--json"):
        assert option in bench.stdout
    assert "╭" not in bench.stdout  # no Rich boxes


HELP_PAGES = [*(name for name in COMMANDS if not COMMANDS[name].group), "fileset generate", "fileset verify",
              "network plan", "network clean"]  # fmt: skip


@pytest.mark.parametrize("name", HELP_PAGES)
def test_every_value_in_help_is_named(name: str) -> None:
    """--help names each value (URL, NAME, N, PATH, KEY=VALUE), never typer's Python types (<str>, <int range>)."""
    result = run_cli_in_process(*name.split(), "--help")
    assert result.returncode == 0, result.stderr
    assert not re.search(r"<[a-z][a-z \[\]]*>", result.stdout), result.stdout
    assert "[[" not in result.stdout.splitlines()[0]  # the usage line: [SUITE], not [[SUITE]]


@pytest.mark.parametrize("name", ["run", "capacity", "specweb99"])
def test_profile_defaults_to_full_everywhere_and_says_how_long(name: str) -> None:
    text = " ".join(run_cli_in_process(name, "--help").stdout.split())
    option = text[re.search(r"--profile (smoke\|)?quick\|standard\|full", text).start() :][:400]  # type: ignore[union-attr]
    assert "[default: full]" in option and re.search(r"full \(the [a-z' ]+, the default: (about )?\d", option), option


def test_server_options_are_spelled_as_crest_servers_lists_them() -> None:
    assert "max_request_workers=400" in " ".join(run_cli_in_process("run", "--help").stdout.split())


def test_no_arguments_prints_help_and_exits_2() -> None:
    result = run_cli_in_process()
    assert result.returncode == 2
    assert result.stdout.startswith("Usage: crest")
    assert "Traceback" not in result.stderr


@pytest.mark.integration  # a listening socket
def test_serve_port_in_use(silent_listener: SilentListener, docroot: Path) -> None:
    port = silent_listener.sock.getsockname()[1]
    result = run_cli_in_process("serve", "--docroot", str(docroot), "--port", str(port))
    assert result.returncode == 2
    assert_one_error_line(result.stderr, f"127.0.0.1:{port}")
    assert result.stdout == ""


def test_the_specweb99_suite_is_run_by_its_own_command() -> None:
    """crest run would run its mixes without the kit's harness and judge them all INVALID: it points to
    crest specweb99 instead, before anything starts."""
    result = run_cli_in_process("run", "specweb99", "--server", "builtin", "--profile", "quick")
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "needs the kit's harness around each iteration: run it with crest specweb99 --connections N" in result.stderr
