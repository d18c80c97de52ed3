"""The one validation gate through the real CLI, in-process: the engine's rules (plan.rs), including those
that once existed only in Rust, reach the user as one `crest: error:` line naming the `crest bench` flag,
exit 2, before any socket is opened (the URL's port is closed: a connection attempt would fail otherwise)."""

from __future__ import annotations

import pytest

from crest.cli import EXIT_USAGE
from crest.cli.main import main

URL = "http://127.0.0.1:9/"  # discard port: nothing listens, and validation never gets that far


@pytest.mark.parametrize(
    ("args", "line"),
    [
        # Rules that were Rust-only before the gate: their messages named engine keys, not flags.
        (["--pipeline", "300"], "--pipeline must be 1 to 256 (got 300)"),
        (["--rate", "100", "--pipeline", "2"], "--rate and --pipeline conflict: pipelining is a closed-loop setting"),
        (["--timeout", "2h"], "invalid --timeout '2h': must be at most 1h"),
        (["-d", "200h"], "-d/--duration must be > 0 and at most a week (got 720000 s)"),
        # Rules that had a copy in Python: now the engine's, worded with the same flags.
        (["-c", "2", "-t", "3"], "-c/--connections (2) must be >= -t/--threads (3): each thread needs a connection"),
        (["-m", "GE T"], "invalid -m/--method 'GE T': expected an HTTP token such as GET or POST"),
        (["-H", "X Y: z"], "invalid -H/--header name 'X Y': expected 'Name: value'"),
        (["--read-buffer", "32M"], "--read-buffer must be 1 B to 16777216 B (16 MiB) (got 33554432)"),
        (["--pipeline", "2", "--no-keepalive"], "pipelining (--pipeline 2) needs HTTP/1.1 with keep-alive"),
    ],
)
def test_engine_rules_are_one_line_naming_the_flag(
    capsys: pytest.CaptureFixture[str], args: list[str], line: str
) -> None:
    assert main(["bench", *args, URL]) == EXIT_USAGE
    out, err = capsys.readouterr()
    assert out == ""
    assert len(err.splitlines()) == 1, err
    assert err.startswith(f"crest: error: {line}"), err
