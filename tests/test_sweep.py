"""A content-length sweep end to end: `crest run` against the built-in target, then `crest weighted`.

One mix per size, every response of a mix exactly that size, the sizes stored
with the mixes, and the weighted figure equal to the hand computation from them.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crest.filesets import generate
from support import run_cli
from test_report_sweep import hand_weighted_Mbps

pytestmark = pytest.mark.integration

SIZES = (500, 5_000, 50_000, 500_000)  # one per SPECweb99 class
SUITE = f"""
name = "tiny-sweep"
description = "one mix per content length of the sizes fileset"
source = "crest tests"
[workload]
fileset = "sizes"
[[workload.classes]]
name = "static"
kind = "static"
weight = 1
[ladder]
clients = [1]
threads_per_client = 2
sizes_bytes = {list(SIZES)}
[timing]
length_s = 1
ramp_up_s = 0
ramp_down_s = 0
"""
WAIT_S = 120.0


@pytest.fixture(scope="module")
def fileset() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="crest-sweep-"))
    root.chmod(0o755)
    generate("sizes", root / "www")
    yield root / "www"
    shutil.rmtree(root, ignore_errors=True)


def test_sweep_run_and_weighted_throughput(tmp_path: Path, fileset: Path) -> None:
    suite = tmp_path / "sweep.toml"
    suite.write_text(SUITE)
    db = tmp_path / "r.db"
    # --no-nap (the engine always blocks) rides along: it changes how crest waits, never what it counts.
    out = run_cli("run", str(suite), "--server", "builtin", "--fileset", str(fileset), "-q", "--db", str(db),
                  "--no-nap", timeout_s=WAIT_S)  # fmt: skip
    assert out.returncode == 0, out.stderr
    with sqlite3.connect(db) as conn:
        ((run_id, status, config_json),) = conn.execute("SELECT id, status, config_json FROM runs").fetchall()
        rows = conn.execute(
            "SELECT idx, responses, body_bytes, throughput_Bps, errors_json, size_bytes, verdicts_json FROM mixes WHERE run_id = ? ORDER BY idx",
            (run_id,),
        ).fetchall()
        naps = [n for (n,) in conn.execute("SELECT naps FROM mixes WHERE run_id = ?", (run_id,))]
    assert status == "complete"
    assert json.loads(config_json)["options"]["nap"] is False and naps == [0] * len(SIZES)
    assert len(rows) == len(SIZES)
    throughput: dict[int, float] = {}
    for (_, responses, body_bytes, tput, errors_json, stored_size, verdicts_json), size in zip(rows, SIZES):
        assert stored_size == size
        # Typed; an idle target at the peak is the analysis's verdict, never stored by the runner. What the
        # runner stores of the host (the engine or the shared cores used up, a noisy host) each holds by its
        # own figures: it is there because this host did that in this mix, not by chance.
        for verdict in json.loads(verdicts_json):
            assert _holds(verdict), verdict
        assert {k: n for k, n in json.loads(errors_json).items() if n} == {}
        assert responses > 0
        assert body_bytes == responses * size, f"mix of {size} B: {body_bytes} body bytes over {responses} responses"
        throughput[size] = tput
    hand = hand_weighted_Mbps(throughput)  # each class's mean over its byte range, lengths uniform in it
    shown = run_cli("weighted", run_id, "--db", str(db), timeout_s=WAIT_S)
    assert shown.returncode == 0, shown.stderr
    assert f"{hand:,.2f}" in shown.stdout, shown.stdout
    bad = run_cli("weighted", run_id, "--db", str(db), "--weights", "class0=1,class9=0", timeout_s=WAIT_S)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "class9" in bad.stderr


def _holds(verdict: dict[str, Any]) -> bool:
    """Whether a stored verdict of the host is one its own figures call for (crest.host.monitor's thresholds)."""
    from crest.host import monitor

    kind, f = verdict["kind"], verdict
    if kind == "client_bound":
        return bool(f["engine_cpu_util_pct"] >= monitor.CLIENT_BOUND_PCT)
    if kind == "host_cpu_bound":
        return bool(f["host_cpu_util_pct"] >= monitor.HOST_CPU_BOUND_PCT)
    if kind == "noisy_host":
        return bool(
            f["steal_cores"] > monitor.STEAL_CORES_NOISY
            or f["engine_runq_wait_pct"] > monitor.ENGINE_RUNQ_WAIT_NOISY_PCT
        )
    return False  # target_idle, or anything else: never stored with a sweep's mix
