"""Fractional --cpus: ceil(N) cores pinned plus a CFS quota of N × period for the target.

The values parse into cores and a quota (whole numbers: no quota, as before);
bad values are one-line exit-2 errors before anything starts; with a real
cgroup the kernel holds the quota while the target runs, the target's CPU
over a saturating mix is half a core at --cpus 0.5, the run stores the quota,
and no cgroup is left afterwards.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from crest.errors import ConfigError
from crest.filesets import generate
from crest.report import narrative
from crest.servers import cpus as cpu_split
from crest.servers.base import ServerSettings, Target
from crest.servers.cgroup import Cgroup
from crest.servers.reap import alive
from crest.servers.registry import adapter
from support import run_cli, static_suite

SUITE = static_suite(
    "quota", "one saturating mix against a target under a CPU quota", [16], threads_per_client=2, length_s=5
)
WAIT_S = 90.0


def test_whole_numbers_pin_only_and_fractions_add_a_quota() -> None:
    half, one_and_half, two = cpu_split.parse("0.5,1.5,2")
    period = cpu_split.PERIOD_US
    assert (half.cpus, half.cores, half.quota) == (0.5, 1, cpu_split.CpuQuota(period // 2, period))
    assert (one_and_half.cores, one_and_half.quota) == (2, cpu_split.CpuQuota(3 * period // 2, period))
    assert (two.cpus, two.cores, two.quota) == (2, 2, None)
    assert isinstance(two.cpus, int) and cpu_split.share("1.0").cpus == 1
    assert half.metadata() == {"cpus": 0.5, "cores": 1, "quota_us": period // 2, "period_us": period}
    split = cpu_split.split(0.5, cores=[0, 1])
    assert (split.target, split.engine) == ((0,), (1,))
    assert cpu_split.split(1.5, cores=[0, 1]).target == (0, 1)


@pytest.mark.parametrize(
    "text,needle",
    [("0", "positive"), ("-0.5", "positive"), ("half", "positive"), ("nan", "positive"), ("inf", "positive"),
     ("0.01", "smallest share"), ("0.5,0.5", "repeats"), ("0.5,", "empty item")],
)  # fmt: skip
def test_bad_cpus_values_are_refused(text: str, needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        cpu_split.parse(text)


def test_more_cpus_than_cores_is_refused() -> None:
    with pytest.raises(ConfigError, match="give at most 2"):
        cpu_split.split(2.5, cores=[0, 1])


def _cpu_cgroups() -> Cgroup:
    """A quota cgroup as crest makes it, or skip with the reason this machine cannot have one."""
    if os.geteuid() != 0:
        pytest.skip("a CPU quota needs a writable cgroup tree: run the tests as root")
    try:
        return Cgroup(cpu_quota=cpu_split.share("0.5").quota)
    except ConfigError as exc:
        pytest.skip(f"no cgroup cpu controller here: {exc}")


def _crest_cgroups(cgroup: Cgroup) -> set[Path]:
    """crest's cgroups (`crest-PID-HEX`) beside `cgroup` made by this process or by a crest that is gone:
    another test's, beside this one under pytest-xdist, have a live owner and are not this test's to count."""
    me = os.getpid()
    return {
        p
        for p in cgroup.path.parent.glob("crest-*")
        if not (owner := _owner(p.name)) or owner == me or not alive(owner)
    }


def _owner(name: str) -> int:
    parts = name.split("-")
    return int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else 0


@pytest.fixture(scope="module")
def fileset() -> Iterator[Path]:
    """The suite's files where servers that drop to www-data can read them (tmp_path is private to root)."""
    root = Path(tempfile.mkdtemp(prefix="crest-test-"))
    root.chmod(0o755)
    generate("webcat-large-filemix", root / "fileset")
    yield root / "fileset"
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.integration
def test_the_kernel_holds_the_quota_while_the_target_runs(fileset: Path) -> None:
    probe = _cpu_cgroups()
    before = _crest_cgroups(probe)
    share = cpu_split.share("0.5")
    assert share.quota is not None
    split = cpu_split.split(share.cpus)
    settings = ServerSettings(docroot=fileset, cpus=split.target, workers=1, cpu_quota=share.quota)
    with Target(adapter("builtin"), settings) as target:
        assert target.cgroup is not None
        assert target.cgroup.quota_text() == f"{share.quota.quota_us} {share.quota.period_us}"
        members = {int(p) for f in target.cgroup.procs_files for p in f.read_text().split()}
        assert set(target.pids()) <= members
        cgroup_dirs = set(target.cgroup.dirs.values())
        assert target.metadata()["cpu_quota"] == {"quota_us": share.quota.quota_us, "period_us": share.quota.period_us}
    assert not any(d.exists() for d in cgroup_dirs)
    assert _crest_cgroups(probe) == before


@pytest.mark.integration
def test_a_memory_limit_and_a_quota_share_one_cleanup(fileset: Path) -> None:
    _cpu_cgroups()
    share = cpu_split.share("1.5")
    settings = ServerSettings(
        docroot=fileset, cpus=cpu_split.split(share.cpus).target, memory_bytes=256 << 20, cpu_quota=share.quota
    )
    target = Target(adapter("builtin"), settings)
    try:
        target.start()
    except ConfigError as exc:
        pytest.skip(f"no cgroup memory controller here: {exc}")
    try:
        assert target.cgroup is not None and set(target.cgroup.dirs) == {"memory", "cpu"}
        limit_file = "memory.max" if target.cgroup.version == 2 else "memory.limit_in_bytes"
        assert int((target.cgroup.dirs["memory"] / limit_file).read_text()) == 256 << 20
        assert target.cgroup.quota_text() == f"{3 * cpu_split.PERIOD_US // 2} {cpu_split.PERIOD_US}"
        cgroup_dirs = set(target.cgroup.dirs.values())
    finally:
        target.stop()
    assert not any(d.exists() for d in cgroup_dirs)


@pytest.mark.integration
@pytest.mark.alone
def test_half_a_cpu_gives_the_target_half_a_core_and_is_stored(tmp_path: Path, fileset: Path) -> None:
    probe = _cpu_cgroups()
    if len(cpu_split.available()) < 2:
        pytest.skip("needs 2 cores: one for the target's half, one for the load engine")
    before = _crest_cgroups(probe)
    suite, db = tmp_path / "quota.toml", tmp_path / "r.db"
    suite.write_text(SUITE)
    frames = tmp_path / "frames.jsonl"
    out = run_cli("run", str(suite), "--server", "builtin", "--cpus", "0.5", "--profile", "full", "--repeat", "1",
                  "--fileset", str(fileset), "--db", str(db), "-q", "--jsonl", str(frames), timeout_s=WAIT_S)  # fmt: skip
    assert out.returncode == 0, out.stderr
    # What a watcher saw (--jsonl): the run by its configuration, and each second's target CPU under the quota.
    seen = [json.loads(line) for line in frames.read_text().splitlines()]
    assert seen[0]["type"] == "run-started" and seen[0]["configuration"] == "server=builtin cpus=0.5"
    assert seen[-1]["type"] == "run-finished" and seen[-1]["status"] == "complete"
    samples = [f for f in seen if f["type"] == "sample"]
    assert samples and all(f["rps"] > 0 for f in samples)
    assert max(f["target_cpu_pct"] for f in samples) < 65, samples  # % of one core, held to half a core
    assert _crest_cgroups(probe) == before, "the run left its cgroup behind"
    with sqlite3.connect(db) as conn:
        run_id, factors, config = conn.execute("SELECT id, factors_json, config_json FROM runs").fetchone()
        (monitor,) = conn.execute("SELECT monitor_json FROM mixes").fetchone()
    assert json.loads(factors) == {"server": "builtin", "cpus": 0.5}
    period = cpu_split.PERIOD_US
    assert json.loads(config)["cpus"] == {"target": [0], "engine": [1], "cpus": 0.5, "cores": 1,
                                          "quota_us": period // 2, "period_us": period}  # fmt: skip
    target = json.loads(monitor)["target"]
    used = (target["cpu_user_s"] + target["cpu_system_s"]) / json.loads(monitor)["span_s"]
    assert 0.45 <= used <= 0.55, f"the target used {used:.3f} CPUs over the window at --cpus 0.5: {monitor}"
    shown = run_cli("show", run_id, "--db", str(db))
    assert shown.returncode == 0, shown.stderr
    assert f"0.5 CPU (CFS quota {period // 2} µs every {period} µs)" in shown.stdout


@pytest.mark.integration
def test_bad_cpus_are_one_line_before_anything_starts(tmp_path: Path, fileset: Path) -> None:
    suite = tmp_path / "quota.toml"
    suite.write_text(SUITE)
    too_many = str(len(cpu_split.available()) + 0.5)
    for value, needle in [("0.01", "smallest share"), (too_many, "give at most"), ("x", "positive number")]:
        out = run_cli("run", str(suite), "--server", "builtin", "--cpus", value, "--fileset", str(fileset),
                      "--db", str(tmp_path / "r.db"))  # fmt: skip
        assert out.returncode == 2, (value, out.stderr)
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("crest: error:") and needle in lines[0], (value, out.stderr)
    db = tmp_path / "r.db"
    assert not db.exists() or sqlite3.connect(db).execute("SELECT COUNT(*) FROM runs").fetchone() == (0,)


def test_the_report_says_a_quota_adds_latency_only_when_a_configuration_had_one() -> None:
    quota = {"quota_us": 5000, "period_us": 10000}
    configs = [{"label": "cpus=0.5", "server": {"cpu_quota": quota}}, {"label": "cpus=1", "server": {"cpu_quota": None}},
               {"label": "external", "server": None}]  # fmt: skip
    (line,) = narrative._cpu_quota(configs)
    assert line.startswith("cpus=0.5 ran under a CPU quota") and "10 ms period" in line and "cpus=1," not in line
    assert narrative._cpu_quota(configs[1:]) == []
