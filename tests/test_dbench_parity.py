"""crest and dbench (docs/fileservers.md#crest-and-dbench): what a pass of a loadfile counts (operations and
the sizes ReadX and WriteX ask for) is the same whichever names are looked up; `resolve_names` reaches the
engine from a suite (`crest bench --resolve-names` and its refusals: test_bench_files.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crest import _engine
from crest.errors import ConfigError
from crest.runner.binding import Bound
from crest.runner.request import RunRequest
from crest.runner.specs import mix_spec
from crest.suite.loader import parse_toml

# Every kind of path operation once; a short read (536 of 4096 bytes) still counts the 4096 asked for,
# as dbench counts it: 65536 + 4096 + 4096 bytes a pass.
LOADFILE = r"""Deltree "\clients\client1" NT_STATUS_OK
Mkdir "\clients" NT_STATUS_OK
NTCreateX "\clients\client1" 0x1 0x2 1 NT_STATUS_OK
Close 1 NT_STATUS_OK
NTCreateX "\clients\client1\f.doc" 0x40 0x5 2 NT_STATUS_OK
WriteX 2 0 65536 65536 NT_STATUS_OK
ReadX 2 0 4096 4096 NT_STATUS_OK
ReadX 2 65000 4096 536 NT_STATUS_OK
Close 2 NT_STATUS_OK
QUERY_PATH_INFORMATION "\clients\client1\F.DOC" 1004 NT_STATUS_OK
FIND_FIRST "\clients\client1\*.DOC" 260 1366 1 NT_STATUS_OK
Rename "\clients\client1\f.doc" "\clients\client1\g.doc" NT_STATUS_OK
Unlink "\clients\client1\g.doc" 0x6 NT_STATUS_OK
"""
LINES = len(LOADFILE.splitlines())
BYTES_PER_PASS = 65536 + 4096 + 4096

SUITE = """
name = "parity"
description = "one mix of a loadfile"
source = "tests"

[workload.loadfile]
resolve_names = "{mode}"

[[workload.classes]]
name = "disk-mix"
kind = "loadfile"
weight = 1

[ladder]
clients = [2]

[timing]
length_s = 12
ramp_up_s = 2
ramp_down_s = 0
"""


def passes(directory: Path, loadfile: Path, mode: str, count: int) -> dict[str, object]:
    config = {
        "url": f"file://{directory}", "connections": 2, "max_requests": 2 * count * LINES,
        "loadfile": {"path": str(loadfile), "cleanup": True, "resolve_names": mode},
    }  # fmt: skip
    run = _engine.start_run(json.dumps(config))
    while (text := run.wait(1.0)) is None:
        pass
    report: dict[str, object] = json.loads(text)
    return report


def test_a_pass_counts_the_same_operations_and_bytes_whichever_names_are_looked_up(tmp_path: Path) -> None:
    loadfile = tmp_path / "parity.txt"
    loadfile.write_text(LOADFILE)
    reports = {}
    for mode in ("queries", "every-path"):
        target = tmp_path / mode
        target.mkdir()
        reports[mode] = passes(target, loadfile, mode, count=3)
    for mode, report in reports.items():
        assert report["requests"] == 2 * 3 * LINES, mode
        assert report["bytes"] == 2 * 3 * BYTES_PER_PASS, mode
        assert sum(dict(report["errors"]).values()) == 0, (mode, report["errors"])  # type: ignore[call-overload]
    counts = {m: {k: c["requests"] for k, c in dict(r["classes"]).items()} for m, r in reports.items()}  # type: ignore[call-overload]
    assert counts["queries"] == counts["every-path"]


def test_a_suite_sends_its_resolve_names_to_the_engine_and_refuses_an_unknown_one() -> None:
    for mode in ("queries", "every-path"):
        request = RunRequest(suite=parse_toml(SUITE.format(mode=mode)), target="file:///tmp")
        bound = Bound(url="file:///tmp", tls_url=None, insecure=False, table=None)  # type: ignore[arg-type]
        mix = request.suite.mixes("full")[0]
        spec = mix_spec(request, bound, mix, 0, 1, 1)
        assert spec.loadfile is not None and spec.loadfile["resolve_names"] == mode
        assert spec.window_s == (2.0, 12.0)
    with pytest.raises(ConfigError, match="resolve_names"):
        parse_toml(SUITE.format(mode="all"))
