"""A target's resource limits through a cgroup (v2, or v1's memory and cpu controllers).

Owns creating the cgroup below crest's own, setting its memory limit and its
CPU quota, reading what it used, and removing it; never starts processes (they
join through `procs_files` before exec, see process.py). On v2 one directory
holds both controllers; on v1 each controller has its own hierarchy, so a
target with both limits gets one directory in each, made and removed together.
"""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path

from crest.errors import ConfigError
from crest.servers.cpus import CpuQuota

ROOT = Path("/sys/fs/cgroup")


class Cgroup:
    """One target's cgroup: `with Cgroup(memory_bytes=..., cpu_quota=...) as cg: ... cg.procs_files`."""

    def __init__(
        self, *, memory_bytes: int | None = None, cpu_quota: CpuQuota | None = None, root: Path = ROOT
    ) -> None:
        self.memory_bytes = memory_bytes
        self.cpu_quota = cpu_quota
        wanted = [c for c, on in (("memory", memory_bytes is not None), ("cpu", cpu_quota is not None)) if on]
        self.flags = " and ".join(_FLAG[c] for c in wanted)
        self.version, parents = _parents(root, wanted)
        name = f"crest-{os.getpid()}-{secrets.token_hex(3)}"
        self.dirs: dict[str, Path] = {c: parent / name for c, parent in parents.items()}

    @property
    def path(self) -> Path:
        """The directory (on v1 the memory controller's when there is a memory limit, else the cpu one's)."""
        return next(iter(self.dirs.values()))

    @property
    def procs_files(self) -> tuple[Path, ...]:
        """The files a process writes its pid to, to join (one per directory)."""
        return tuple(dict.fromkeys(d / "cgroup.procs" for d in self.dirs.values()))

    def create(self) -> None:
        """Make the cgroup and set its limits.

        Raises:
            ConfigError: not permitted here (no write access to the cgroup tree), with the fix.
        """
        try:
            if self.version == 2:
                _enable_controllers(self.path.parent, list(self.dirs))
            for d in dict.fromkeys(self.dirs.values()):
                d.mkdir()
            if self.memory_bytes is not None:
                d = self.dirs["memory"]
                if self.version == 2:
                    (d / "memory.max").write_text(f"{self.memory_bytes}\n")
                    # No swap either, so the limit bounds what the target keeps, not just what is resident.
                    swap = d / "memory.swap.max"
                    if swap.exists():
                        swap.write_text("0\n")
                else:
                    (d / "memory.limit_in_bytes").write_text(f"{self.memory_bytes}\n")
            if self.cpu_quota is not None:
                d, q = self.dirs["cpu"], self.cpu_quota
                if self.version == 2:
                    (d / "cpu.max").write_text(f"{q.quota_us} {q.period_us}\n")
                else:
                    # The period first: the kernel checks the quota against the period in force.
                    (d / "cpu.cfs_period_us").write_text(f"{q.period_us}\n")
                    (d / "cpu.cfs_quota_us").write_text(f"{q.quota_us}\n")
        except OSError as exc:
            self.remove()
            raise ConfigError(
                f"{self.flags} needs a cgroup under {self.path.parent} but creating it failed ({exc.strerror or exc}):"
                f" run crest as root or with a delegated cgroup, or run without {self.flags}"
            ) from None

    def quota_text(self) -> str | None:
        """The quota as the kernel holds it ("QUOTA PERIOD", v1's two files joined alike); None without one."""
        d = self.dirs.get("cpu")
        if d is None:
            return None
        try:
            if self.version == 2:
                return (d / "cpu.max").read_text().strip()
            quota = (d / "cpu.cfs_quota_us").read_text().strip()
            return f"{quota} {(d / 'cpu.cfs_period_us').read_text().strip()}"
        except OSError:
            return None

    def peak_bytes(self) -> int | None:
        """The most memory the cgroup used (page cache included), where the kernel says."""
        d = self.dirs.get("memory")
        if d is None:
            return None
        name = "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"
        try:
            return int((d / name).read_text().strip())
        except (OSError, ValueError):
            return None

    def oom_kills(self) -> int:
        """Processes the kernel killed for going over the limit (0 where not reported)."""
        d = self.dirs.get("memory")
        if d is None:
            return 0
        try:
            name = "memory.events" if self.version == 2 else "memory.oom_control"
            for line in (d / name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except (OSError, ValueError):
            pass
        return 0

    def remove(self) -> None:
        """Remove every directory once its processes are gone."""
        for d in dict.fromkeys(self.dirs.values()):
            self.remove_dir(d)

    @staticmethod
    def remove_dir(d: Path) -> None:
        """Remove one cgroup directory, retrying briefly while the kernel lets go of its processes."""
        for _ in range(50):
            try:
                d.rmdir()
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.05)

    def __enter__(self) -> Cgroup:
        self.create()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.remove()


_FLAG = {"memory": "--memory", "cpu": "a fractional --cpus"}


def _parents(root: Path, controllers: list[str]) -> tuple[int, dict[str, Path]]:
    """The cgroup version with every controller asked for, and per controller the directory of this
    process's own cgroup in it (on v2 the same directory for all).

    Raises:
        ConfigError: a controller is not mounted.
    """
    own = _own_cgroups()
    unified = root / "cgroup.controllers"
    if unified.exists():
        available = unified.read_text().split()
        missing = [c for c in controllers if c not in available]
        if not missing:
            return 2, {c: root / own.get("", "/").lstrip("/") for c in controllers}
    else:
        missing = [c for c in controllers if not (root / c).is_dir()]
        if not missing:
            return 1, {c: root / c / own.get(c, "/").lstrip("/") for c in controllers}
    flag = _FLAG[missing[0]]
    raise ConfigError(
        f"{flag} needs the cgroup {missing[0]} controller but {root} has none mounted: run without {flag},"
        " or run on a machine with cgroups"
    )


def own_parents(root: Path = ROOT) -> list[Path]:
    """The directories where this process's cgroups would be made: v2's one, or v1's memory and cpu ones
    (those that exist)."""
    own = _own_cgroups()
    if (root / "cgroup.controllers").exists():
        found = [root / own.get("", "/").lstrip("/")]
    else:
        found = [root / c / own.get(c, "/").lstrip("/") for c in ("memory", "cpu")]
    return [d for d in dict.fromkeys(found) if d.is_dir()]


def _enable_controllers(parent: Path, controllers: list[str]) -> None:
    """On v2, a child cgroup has a controller only when its parent delegates it (cgroup.subtree_control)."""
    control = parent / "cgroup.subtree_control"
    enabled = control.read_text().split()
    for c in controllers:
        if c not in enabled:
            control.write_text(f"+{c}\n")


def _own_cgroups() -> dict[str, str]:
    """This process's cgroup per controller ("" is the v2 unified hierarchy), from /proc/self/cgroup."""
    found: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            found[name] = path
    return found
