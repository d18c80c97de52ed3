"""Removing what a killed crest left of its targets: run directories (`crest-target-PID-*`) and cgroups
(`crest-PID-*`) whose crest is gone, with any server process still running from them.

A crest killed with SIGKILL cannot clean up; the servers its main thread started die with it
(PR_SET_PDEATHSIG, see process.py), but a target started elsewhere (a cluster node's actor) may live on,
and the directories and cgroups stay. The next target crest starts reaps them, as the next client network
reaps a dead one's (crest.network.clean). Owns only removal, by the owner's pid in the name: what a live
crest made is never touched. Never prints.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from crest.servers.cgroup import ROOT, Cgroup, own_parents

# A run directory is tempfile's name for `crest-target-PID-`; a cgroup is Cgroup's `crest-PID-HEX`.
SITE_PREFIX = "crest-target-"
_SITE = re.compile(rf"{SITE_PREFIX}(\d+)-")
_CGROUP = re.compile(r"crest-(\d+)-[0-9a-f]+$")


@dataclass
class Reaped:
    """What a reap removed: run directories and cgroups by path, server processes by pid."""

    sites: list[str] = field(default_factory=list)
    cgroups: list[str] = field(default_factory=list)
    killed: list[int] = field(default_factory=list)


def reap_dead(base: Path | None = None, cgroup_root: Path = ROOT) -> Reaped:
    """Remove every run directory and cgroup whose crest is no longer running, stopping what still runs
    from them first."""
    done = Reaped()
    base = Path(tempfile.gettempdir()) if base is None else base
    for root in _owned_by_dead(base.glob(f"{SITE_PREFIX}*"), _SITE):
        done.killed += _kill_all(_running_from(root))
        shutil.rmtree(root, ignore_errors=True)
        done.sites.append(str(root))
    for parent in own_parents(cgroup_root):
        for cg in _owned_by_dead(parent.glob("crest-*"), _CGROUP):
            done.killed += _kill_all(_members(cg))
            Cgroup.remove_dir(cg)
            done.cgroups.append(str(cg))
    return done


def _owned_by_dead(paths: Iterable[Path], pattern: re.Pattern[str]) -> list[Path]:
    found = []
    for path in sorted(paths):
        m = pattern.match(path.name)
        if m and path.is_dir() and not alive(int(m.group(1))):
            found.append(path)
    return found


def alive(pid: int) -> bool:
    """Whether process `pid` still runs (a zombie has ended; one not ours to read counts as running)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
    except psutil.AccessDenied:
        return True


def running_named(name: str) -> list[int]:
    """The pids of the processes named `name` that still run: a zombie keeps its name until its parent (or a
    container's PID 1, which may never) reaps it."""
    return [
        p.pid
        for p in psutil.process_iter(["name", "status"])
        if p.info["name"] == name and p.info["status"] != psutil.STATUS_ZOMBIE
    ]


def _running_from(root: Path) -> list[psutil.Process]:
    """Processes whose command line names the directory (every server is started with its config there),
    or that hold a file open in it. The second finds a server's workers whose master is gone: an nginx
    worker's command line is "nginx: worker process", but its logs are open under the run directory."""
    text = str(root)
    inside = text + os.sep
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if any(text in arg for arg in proc.info["cmdline"] or []) or any(
                f.path.startswith(inside) for f in proc.open_files()
            ):
                found.append(proc)
        except psutil.Error:
            continue
    return found


def _members(cg: Path) -> list[psutil.Process]:
    found = []
    try:
        pids = [int(p) for p in (cg / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []
    for pid in pids:
        try:
            found.append(psutil.Process(pid))
        except psutil.Error:
            continue
    return found


def _kill_all(procs: list[psutil.Process]) -> list[int]:
    """SIGKILL: what a dead crest left has no one to shut it down gracefully for."""
    killed = []
    for proc in procs:
        if proc.pid == os.getpid():
            continue
        try:
            proc.send_signal(signal.SIGKILL)
            killed.append(proc.pid)
        except psutil.Error:
            continue
    deadline = time.monotonic() + 5
    for proc in procs:
        try:
            proc.wait(max(0.0, deadline - time.monotonic()))
        except psutil.Error:
            continue
    return killed
