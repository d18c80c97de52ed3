"""File runs against Samba through crest's own SMB2 client: what lands on the share is what crest counted,
a quick NetBench ladder runs through the lab, a refused login is one line before any load, and Ctrl-C
leaves no smbd behind."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from crest import _engine
from crest.filesets.cache import empty_docroot
from crest.network import netns
from crest.servers.base import ServerSettings, Target
from crest.servers.reap import running_named
from crest.servers.registry import adapter
from support import load_running, run_cli, start_cli, wait_until
from test_fileops import LOADFILE, SUITE

pytestmark = pytest.mark.integration
WAIT_S = 30.0


@pytest.fixture(scope="module")
def samba_target() -> Iterator[Target]:
    a = adapter("samba")
    if not a.installed():
        pytest.skip("apt-get install samba smbclient")
    target = Target(a, ServerSettings(docroot=empty_docroot(), kinds=frozenset({"loadfile"})))
    target.start()
    try:
        yield target
    finally:
        target.stop()


def _password(target: Target) -> str:
    assert target.secret_file is not None
    return Path(target.secret_file).read_text().strip()


def _smbd_pids() -> set[int]:
    return set(running_named("smbd"))


@pytest.mark.timeout(60)
def test_bytes_on_the_share_are_what_crest_counted(samba_target: Target, tmp_path: Path) -> None:
    loadfile = tmp_path / "tiny.txt"
    loadfile.write_text(LOADFILE)
    lines = sum(1 for line in LOADFILE.splitlines() if line and not line.startswith("#"))
    config = {
        "url": samba_target.url, "connections": 3, "threads": 2, "duration_s": 20.0, "max_requests": 3 * lines,
        "loadfile": {"path": str(loadfile), "password": _password(samba_target), "cleanup": False},
    }  # fmt: skip
    run = _engine.start_run(json.dumps(config))
    while (text := run.wait(1.0)) is None:
        pass
    report = json.loads(text)
    assert not any(report["errors"].values()), report["error_notes"]
    classes = report["classes"]
    # One pass each: every operation once per client, each met as the loadfile expects.
    assert report["requests"] == 3 * lines
    assert classes["WriteX"]["bytes"] == 3 * 150 and classes["ReadX"]["bytes"] == 3 * 64
    assert report["bytes"] == 3 * (150 + 64)
    share = samba_target.site.share_dir
    trees = sorted(p.name for p in (share / "clients").iterdir())
    assert trees == ["client0", "client1", "client2"]
    for tree in trees:
        files = list((share / "clients" / tree).iterdir())
        assert [f.name for f in files] == ["data.doc"] and files[0].stat().st_size == 150


@pytest.mark.timeout(120)
@pytest.mark.alone
def test_a_quick_netbench_ladder_against_samba(tmp_path: Path) -> None:
    if not adapter("samba").installed():
        pytest.skip("apt-get install samba smbclient")
    loadfile = tmp_path / "tiny.txt"
    loadfile.write_text(LOADFILE)
    suite = tmp_path / "tiny.toml"
    suite.write_text(SUITE.format(loadfile=loadfile))
    db = tmp_path / "r.db"
    before = _smbd_pids()
    done = run_cli("run", str(suite), "--server", "samba", "--db", str(db), "-q", timeout_s=90)
    assert done.returncode == 0, done.stderr
    assert "Throughput peak" in done.stdout and "WriteX" in done.stdout
    with sqlite3.connect(db) as conn:
        errors = [json.loads(e) for (e,) in conn.execute("SELECT errors_json FROM mixes ORDER BY idx")]
    assert len(errors) == 2 and not any(v for e in errors for v in e.values())
    assert _smbd_pids() <= before, "the target's smbd processes are gone"


def test_a_refused_password_is_one_line_before_any_load(samba_target: Target, tmp_path: Path) -> None:
    secret = tmp_path / "pw"
    secret.write_text("not-the-password\n")
    secret.chmod(0o600)
    db = tmp_path / "r.db"
    share = samba_target.site.share_dir
    before = sorted(str(p) for p in share.rglob("*"))
    done = run_cli("run", "mindcraft-netbench", "--target", samba_target.url, "--password-file", str(secret),
                   "--profile", "quick", "--db", str(db))  # fmt: skip
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "wrong user or password" in lines[0], done.stderr
    assert sorted(str(p) for p in share.rglob("*")) == before, "nothing was sent"
    secret.chmod(0o644)
    done = run_cli("run", "mindcraft-netbench", "--target", samba_target.url, "--password-file", str(secret),
                   "--profile", "quick", "--db", str(db))  # fmt: skip
    assert done.returncode == 2 and "chmod 600" in done.stderr


@pytest.mark.timeout(60)
@pytest.mark.parametrize("network", [None, "subnets=2,rtt=10ms"])
@pytest.mark.netns
def test_crest_bench_of_a_share_prints_the_file_server_summary(
    samba_target: Target, tmp_path: Path, network: str | None
) -> None:
    """`crest bench smb://…` as a dbench user would run it: clients replay the loadfile for a duration, the
    password from a file only its owner reads, one JSON object out; and from two client subnets through
    the delay line (Samba here listens on loopback: the network forwards to it)."""
    if network is not None and (os.geteuid() != 0 or not netns.has_net_admin() or shutil.which("nft") is None):
        pytest.skip("--network needs root with CAP_NET_ADMIN and nftables: apt-get install -y nftables")
    loadfile = tmp_path / "tiny.txt"
    loadfile.write_text(LOADFILE)
    secret = tmp_path / "pw"
    secret.write_text(_password(samba_target) + "\n")
    secret.chmod(0o600)
    trees = samba_target.site.share_dir / "clients"
    before = sorted(trees.glob("client*"))  # another test of this module keeps its trees
    done = run_cli("bench", samba_target.url, "-c", "2", "-d", "2s", "--loadfile", str(loadfile), "--password-file",
                   str(secret), "--json", *(["--network", network] if network else []))  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["requests"] > 0 and report["classes"]["WriteX"]["requests"] > 0
    if network is not None:  # one client on each subnet, every SMB round trip through the 10 ms line
        assert [s["clients"] for s in report["subnets"]["shares"]] == [1, 1]
        assert report["network"]["delay_line"]["packets"] > 0 and report["latency_us"]["p50"] >= 10_000
    assert _password(samba_target) not in done.stdout + done.stderr
    # Each of its two clients removed its own tree at the end (client0, client1), and no other.
    assert sorted(trees.glob("client*")) == [p for p in before if p.name not in ("client0", "client1")]


@pytest.mark.timeout(90)
@pytest.mark.alone
def test_ctrl_c_leaves_no_smbd(tmp_path: Path) -> None:
    if not adapter("samba").installed():
        pytest.skip("apt-get install samba smbclient")
    before = _smbd_pids()
    frames = tmp_path / "frames.jsonl"
    proc = start_cli("run", "mindcraft-netbench", "--server", "samba", "--profile", "quick",
                     "--db", str(tmp_path / "r.db"), "-q", "--jsonl", str(frames))  # fmt: skip
    try:
        # Inside the first mix: a live sample of it with operations answered by the smbd crest started.
        wait_until(lambda: proc.poll() is not None or load_running(frames), WAIT_S, "the first mix's load")
        assert proc.poll() is None, proc.communicate()[1]
        assert _smbd_pids() - before, "crest's smbd is not running"
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=WAIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130
    wait_until(lambda: not (_smbd_pids() - before), 10, "every smbd crest started gone")
