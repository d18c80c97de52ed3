"""A machine's cgroup: every process started on it joins, so the machine can be limited (its CPU share
and memory), frozen (a machine that stops answering), and killed whole (a machine's processes die with
it). Owns that; never starts processes (lab.py does, writing the pid to `procs_files` before exec).

cgroup v2: one directory, frozen with cgroup.freeze and killed with cgroup.kill. v1: the freezer
hierarchy holds the membership (and freezes); the limits live in the memory and cpu hierarchies through
crest.servers.cgroup; killing freezes the machine first, so no process forks while its siblings die.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from crest.errors import MachineError
from crest.servers.cgroup import ROOT, Cgroup, own_parents
from crest.servers.cpus import CpuQuota

CFS_PERIOD_US = 100_000
KILL_TIMEOUT_S = 10.0


class MachineCgroup:
    """`MachineCgroup(name, cpus=0.5, memory_bytes=...)`: create(), procs_files, freeze(), thaw(), kill(), remove()."""

    def __init__(self, name: str, *, cpus: float | None = None, memory_bytes: int | None = None,
                 root: Path = ROOT) -> None:  # fmt: skip
        self.name = name
        self.unified = (root / "cgroup.controllers").exists()
        quota = CpuQuota(max(1000, round(cpus * CFS_PERIOD_US)), CFS_PERIOD_US) if cpus is not None else None
        self.limits = Cgroup(memory_bytes=memory_bytes, cpu_quota=quota, root=root) if quota or memory_bytes else None
        if self.unified:
            parent = self.limits.path.parent if self.limits else own_parents(root)[0]
            self.track = parent / name
        else:
            own = _own_freezer()
            self.track = root / "freezer" / own.lstrip("/") / name
        if self.limits is not None:  # the limits' directories carry the machine's name too
            self.limits.dirs = {c: d.parent / name for c, d in self.limits.dirs.items()}

    @property
    def procs_files(self) -> tuple[Path, ...]:
        files = [self.track / "cgroup.procs"]
        if self.limits is not None:
            files += self.limits.procs_files
        return tuple(dict.fromkeys(files))

    def create(self) -> None:
        """Make the directories and set the limits.

        Raises:
            MachineError: no cgroup could be made here (not root, no freezer).
        """
        try:
            if self.limits is not None:
                self.limits.create()
            self.track.mkdir(exist_ok=True)
        except OSError as exc:
            self.remove()
            raise MachineError(
                f"cannot make machine {self.name}'s cgroup {self.track}: {exc.strerror or exc}"
            ) from None

    def pids(self) -> list[int]:
        return pids_in(self.track)

    def freeze(self) -> None:
        """Stop every process of the machine where it is (a machine that hangs)."""
        self._set_frozen(True)

    def thaw(self) -> None:
        self._set_frozen(False)

    def _set_frozen(self, frozen: bool) -> None:
        if self.unified:
            (self.track / "cgroup.freeze").write_text("1\n" if frozen else "0\n")
        else:
            (self.track / "freezer.state").write_text("FROZEN\n" if frozen else "THAWED\n")

    def kill(self) -> None:
        """SIGKILL every process of the machine and wait until they are gone.

        Raises:
            MachineError: a process outlived KILL_TIMEOUT_S.
        """
        kill_all(self.track)

    def remove(self) -> None:
        """Kill what is left and remove the directories."""
        try:
            self.kill()
        except MachineError:
            pass
        Cgroup.remove_dir(self.track)
        if self.limits is not None:
            self.limits.remove()


def pids_in(group: Path) -> list[int]:
    """The processes in a cgroup directory now (none when it is gone)."""
    try:
        return [int(p) for p in (group / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def kill_all(group: Path) -> None:
    """SIGKILL every process in the cgroup directory `group` (v2's cgroup.kill; else frozen first where a
    freezer holds it, so nothing forks while its siblings die) and wait until they are gone.

    Raises:
        MachineError: a process outlived KILL_TIMEOUT_S.
    """
    if not group.is_dir():
        return

    def pids() -> list[int]:
        return pids_in(group)

    if (group / "cgroup.kill").exists():
        (group / "cgroup.kill").write_text("1\n")
    else:
        freezer = group / "freezer.state"
        if freezer.exists():
            freezer.write_text("FROZEN\n")
        for pid in pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if freezer.exists():
            freezer.write_text("THAWED\n")  # a frozen process takes its SIGKILL only once it runs again
    deadline = time.monotonic() + KILL_TIMEOUT_S
    while pids():
        if time.monotonic() > deadline:
            raise MachineError(f"cgroup {group.name}: processes {pids()} outlived SIGKILL")
        time.sleep(0.02)


def remove_dir(group: Path) -> None:
    """Kill what a cgroup directory holds and remove it (a dead lab's, by the path its state file kept)."""
    try:
        kill_all(group)
    except MachineError:
        pass
    Cgroup.remove_dir(group)


def _own_freezer() -> str:
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if "freezer" in controllers.split(","):
            return path
    raise MachineError("this host mounts no cgroup freezer: a lab of machines needs cgroup v2 or v1's freezer")
