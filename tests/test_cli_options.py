"""Every command that reaches a target takes the shared options (crest.cli.target_options.SHARED): this walks
each command's options and fails when one lacks a shared option it does not refuse for a reason stated
below. A new command, or a new shared option, must either take it or state why not. docs/architecture.md's
composition table says the same to users."""

from __future__ import annotations

import pytest

from crest.cli.main import load_command
from crest.cli.target_options import SHARED

COMMANDS = ("run", "bench", "capacity", "specweb99", "doe")

# (command, option): why that command does not take it. "not yet" names what is missing, not a law.
LACKS = {
    **{("bench", o): "crest bench loads a URL it is given: it starts no server, so it has no server settings"
       for o in ("--target", "--server", "--cpus", "--memory", "--server-opt", "--access-log", "--target-node")},
    **{("doe", o): "a design file declares its target or server and their settings, fixed or as factors"
       " (docs/analysis.md)" for o in ("--target", "--cpus", "--memory", "--server-opt")},
    **{("doe", o): "http and streams are a design's factors or its suite's (docs/analysis.md)"
       for o in ("--http", "--streams")},
    ("specweb99", "--http"): "SPECweb99's conformance is a per-connection bit rate over HTTP/1.1 keep-alive; over"
    " HTTP/2 or HTTP/3 the streams share a connection, which the kit does not define",
    ("specweb99", "--streams"): "as --http: the kit defines no streams",
    ("specweb99", "--preflight"): "the harness validates every operation on the target before the first iteration,"
    " as the kit's run rules require: those requests are its preflight, and it cannot run without them",
    ("doe", "--preflight"): "not yet: a design's runs take the preflight as crest run does by default",
}  # fmt: skip


def _options(command: str) -> set[str]:
    return {opt for param in load_command(command).params for opt in param.opts}


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_takes_every_shared_option_or_says_why_not(command: str) -> None:
    has = _options(command)
    missing = [o for o in SHARED if o not in has and (command, o) not in LACKS]
    assert not missing, f"crest {command} lacks {missing}: take them (target_options) or state why in LACKS"
    stale = [o for (c, o) in LACKS if c == command and o in has]
    assert not stale, f"crest {command} now takes {stale}: drop them from LACKS"


def test_the_shared_options_read_alike_everywhere() -> None:
    """One declaration: a shared option's help is the same text in every command that takes it."""
    helps: dict[str, set[str]] = {}
    for command in ("run", "capacity", "specweb99"):
        for param in load_command(command).params:
            for opt in param.opts:
                if opt in SHARED and opt not in ("--network",):  # run's --network repeats to compare
                    helps.setdefault(opt, set()).add(str(getattr(param, "help", "")))
    assert {o: h for o, h in helps.items() if len(h) > 1} == {}


def test_every_test_the_composition_table_names_exists() -> None:
    """docs/architecture.md's composition table cites a test for each working cell: each must exist."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent
    text = (root.parent / "docs" / "architecture.md").read_text()
    table = text[text.index("## What composes with what") :]
    cited, module = [], ""
    for m in re.finditer(r"(test_\w+\.py)?::(test_\w+)", table):
        module = m.group(1) or module  # ", ::test_b" names another test of the same file
        cited.append((module, m.group(2)))
    assert len(cited) >= 15
    missing = [f"{f}::{t}" for f, t in cited if f"def {t}(" not in (root / f).read_text()]
    assert missing == []
