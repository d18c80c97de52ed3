#!/usr/bin/env python3
"""Measure `crest check` on this machine: an A/A test and a real regression (issue 42).

A/A: the same configuration (the built-in target at --cpus 1, a small ladder of short mixes) run
--runs times; the first three are one `crest run --repeat 3` experiment, the baseline, and every later
run is checked against it under `rps>-0%,p99<+0%` and under the default rules. A run that did not change
fails a check only by noise, so the share of checks that exit 1 is the gate's false-alarm rate; a check
that exits 3 (every load of a rule measured on a noisy host) is counted apart: undecided, not an alarm.
Regression: the same suite at --cpus 0.8 (a fifth of the target's CPU taken away), checked against the
same baseline under `rps>-5%` and the default rules: each run should fail.

Usage: .venv/bin/python scripts/aa_gate.py [--runs 20] [--slow-runs 2] [--dir DIR] [--recheck]
Prints one line per check and a summary; writes every check's JSON under DIR/checks/. `--recheck` runs
nothing and judges the runs an earlier invocation stored in DIR again (the gate is analysis alone). Needs root (the
CPU quota is a cgroup) and 2 cores. About 25 s per run on a 2-core VM.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SUITE = """
name = "aa-gate"
description = "five short mixes for an A/A test of crest check"
source = "scripts/aa_gate.py"
[workload]
fileset = "webcat-large-filemix"
http_version = "1.1"
keepalive = true
[[workload.classes]]
name = "static"
kind = "static"
weight = 1
[ladder]
clients = [1, 2, 4, 6, 8]
threads_per_client = 1
[timing]
length_s = 2
ramp_up_s = 0
ramp_down_s = 0
"""
STRICT = "rps>-0%,p99<+0%"
DEFAULT = None  # crest check's default rules


def crest(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "crest", *args], capture_output=True, text=True, check=False)


def run(suite: Path, fileset: Path, db: Path, cpus: str, repeat: int = 1) -> str:
    """One `crest run` (of `repeat` trials); its experiment id."""
    out = crest("run", str(suite), "--server", "builtin", "--cpus", cpus, "--fileset", str(fileset), "--db", str(db),
                "--repeat", str(repeat), "-q")  # fmt: skip
    if out.returncode != 0:
        sys.exit(f"crest run failed ({out.returncode}): {out.stderr.strip()}")
    listed = json.loads(crest("runs", "--db", str(db), "--json").stdout)
    return str(listed[0]["experiment"])


def check(run_id: str, baseline: str, db: Path, rules: str | None, out_dir: Path, tag: str) -> dict[str, Any]:
    args = ["check", run_id, "--baseline", baseline, "--db", str(db), "--json", "-"]
    if rules is not None:
        args += ["--rule", rules]
    out = crest(*args)
    if out.returncode not in (0, 1, 3):
        sys.exit(f"crest check failed ({out.returncode}): {out.stderr.strip()}")
    doc: dict[str, Any] = json.loads(out.stdout)
    (out_dir / f"{tag}.json").write_text(out.stdout)
    return doc


def _limit(limit: float | None) -> str:
    return "-" if limit is None else f"{limit:+.1f}"


def summary_line(tag: str, doc: dict[str, Any]) -> str:
    rules = ", ".join(f"{r['rule']} {r['change']:+.1f} (fails past {_limit(r['limit'])}, on"
                      f" {r['judged_on_mixes']} mixes) {r['verdict']}" for r in doc["rules"])  # fmt: skip
    return f"{tag}: exit {doc['exit_code']}: {rules}"


def stored(db: Path) -> tuple[str, list[str], list[str]]:
    """An earlier invocation's store: the baseline experiment, the A/A run ids and the --cpus 0.8 run ids, oldest
    first."""
    runs = sorted(json.loads(crest("runs", "--db", str(db), "--json").stdout), key=lambda r: (r["started_at"], r["id"]))
    baseline = str(runs[0]["experiment"])
    later = [r for r in runs if r["experiment"] != baseline]
    same = [str(r["id"]) for r in later if r["factors"].get("cpus") == 1]
    slow = [str(r["id"]) for r in later if r["factors"].get("cpus") == 0.8]
    return baseline, same, slow


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="runs of the A/A configuration, the baseline's 3 included")
    parser.add_argument("--slow-runs", type=int, default=2, help="runs at --cpus 0.8 checked against the baseline")
    parser.add_argument("--dir", type=Path, default=None, help="where the db, fileset and check JSON go")
    parser.add_argument("--recheck", action="store_true",
                        help="run nothing: judge the runs an earlier invocation stored in --dir again")  # fmt: skip
    ns = parser.parse_args()
    if ns.recheck and ns.dir is None:
        sys.exit("--recheck needs the --dir of an earlier invocation")
    root = ns.dir or Path(tempfile.mkdtemp(prefix="crest-aa-"))
    root.mkdir(parents=True, exist_ok=True)
    root.chmod(0o755)
    fileset, suite, db, checks = root / "fileset", root / "aa-gate.toml", root / "crest.db", root / "checks"
    checks.mkdir(exist_ok=True)
    if ns.recheck:
        baseline, same, slow = stored(db)
        aa_runs: Iterator[str] = iter(same)
        slow_runs: Iterator[str] = iter(slow)
        print(f"baseline: experiment {baseline}; rechecking {len(same)} A/A and {len(slow)} slow runs in {root}")
    else:
        suite.write_text(SUITE)
        if crest("fileset", "generate", "webcat-large-filemix", str(fileset)).returncode != 0:
            sys.exit("cannot generate the fileset")
        baseline = run(suite, fileset, db, "1", repeat=3)
        print(f"baseline: experiment {baseline} (3 trials at --cpus 1); dir {root}", flush=True)
        aa_runs = (run(suite, fileset, db, "1") for _ in range(ns.runs - 3))
        slow_runs = (run(suite, fileset, db, "0.8") for _ in range(ns.slow_runs))
    noisy = 0  # checks whose run or baseline had mixes with a noisy-host verdict
    failed = {"strict": 0, "default": 0}
    undecided = {"strict": 0, "default": 0}
    rules_failed = {"strict": 0, "default": 0}
    checked = 0
    for i, run_id in enumerate(aa_runs):
        checked += 1
        for name, rules in (("strict", STRICT), ("default", DEFAULT)):
            doc = check(run_id, baseline, db, rules, checks, f"aa-{i + 4:02d}-{name}")
            failed[name] += doc["exit_code"] == 1
            undecided[name] += doc["exit_code"] == 3
            noisy += name == "strict" and any("noisy-host" in w for w in doc["warnings"])
            rules_failed[name] += doc["regressions"]
            print(summary_line(f"A/A run {i + 4} {name}", doc), flush=True)
    caught, caught_default, slow_undecided, slowed = 0, 0, 0, 0
    for i, run_id in enumerate(slow_runs):
        slowed += 1
        doc = check(run_id, baseline, db, "rps>-5%", checks, f"slow-{i + 1}-rps")
        default = check(run_id, baseline, db, DEFAULT, checks, f"slow-{i + 1}-default")
        caught += doc["exit_code"] == 1
        caught_default += default["exit_code"] == 1
        slow_undecided += default["exit_code"] == 3
        print(summary_line(f"--cpus 0.8 run {i + 1} rps>-5%", doc), flush=True)
        print(summary_line(f"--cpus 0.8 run {i + 1} default", default), flush=True)
    print(f"A/A: {checked} runs checked against the baseline at 95%; {noisy} with noisy-host mixes on a side")
    for name, rules in (("strict", STRICT), ("default", "peak_rps>-5%,p99<+10%,errors<+1pp")):
        print(f"  {rules}: {failed[name]} of {checked} checks failed ({failed[name] / max(checked, 1):.1%});"
              f" {rules_failed[name]} rule failures; {undecided[name]} undecided (exit 3)")  # fmt: skip
    print(
        f"regression (--cpus 0.8 against --cpus 1): rps>-5% caught {caught} of {slowed},"
        f" the default rules caught {caught_default} ({slow_undecided} undecided)"
    )


if __name__ == "__main__":
    main()
