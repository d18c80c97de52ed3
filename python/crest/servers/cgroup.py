"""A memory limit for a target's processes through a cgroup (v2, or v1's memory controller).

Owns creating the cgroup below crest's own, setting its limit, reading what
it used, and removing it; never starts processes (they join through
`procs_file` before exec, see process.py).
"""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path

from crest.errors import ConfigError

ROOT = Path("/sys/fs/cgroup")


class MemoryLimit:
    """One cgroup with a memory limit: `with MemoryLimit(bytes) as limit: ... limit.procs_file`."""

    def __init__(self, limit_bytes: int, *, root: Path = ROOT) -> None:
        self.limit_bytes = limit_bytes
        self.version, parent = _parent(root)
        self.path = parent / f"crest-{os.getpid()}-{secrets.token_hex(3)}"

    @property
    def procs_file(self) -> Path:
        return self.path / "cgroup.procs"

    def create(self) -> None:
        """Make the cgroup and set its limit.

        Raises:
            ConfigError: not permitted here (no write access to the cgroup tree), with the fix.
        """
        try:
            self.path.mkdir()
            if self.version == 2:
                (self.path / "memory.max").write_text(f"{self.limit_bytes}\n")
                # No swap either, so the limit bounds what the target keeps, not just what is resident.
                swap = self.path / "memory.swap.max"
                if swap.exists():
                    swap.write_text("0\n")
            else:
                (self.path / "memory.limit_in_bytes").write_text(f"{self.limit_bytes}\n")
        except OSError as exc:
            self.remove()
            raise ConfigError(
                f"--memory needs a cgroup under {self.path.parent} but creating it failed ({exc.strerror or exc}):"
                " run crest as root or with a delegated cgroup, or drop --memory"
            ) from None

    def peak_bytes(self) -> int | None:
        """The most memory the cgroup used (page cache included), where the kernel says."""
        name = "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"
        try:
            return int((self.path / name).read_text().strip())
        except (OSError, ValueError):
            return None

    def oom_kills(self) -> int:
        """Processes the kernel killed for going over the limit (0 where not reported)."""
        try:
            if self.version == 2:
                for line in (self.path / "memory.events").read_text().splitlines():
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return int(value)
                return 0
            for line in (self.path / "memory.oom_control").read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except (OSError, ValueError):
            pass
        return 0

    def remove(self) -> None:
        """Remove the cgroup once its processes are gone (retrying briefly while the kernel lets go)."""
        for _ in range(50):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.05)

    def __enter__(self) -> MemoryLimit:
        self.create()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.remove()


def _parent(root: Path) -> tuple[int, Path]:
    """The cgroup version with a memory controller, and the directory of this process's own cgroup in it.

    Raises:
        ConfigError: no memory controller is mounted.
    """
    own = _own_cgroups()
    controllers = root / "cgroup.controllers"
    if controllers.exists() and "memory" in controllers.read_text().split():
        return 2, root / own.get("", "/").lstrip("/")
    if (root / "memory").is_dir():
        return 1, root / "memory" / own.get("memory", "/").lstrip("/")
    raise ConfigError(
        f"--memory needs the cgroup memory controller but {root} has none mounted: drop --memory,"
        " or run on a machine with cgroups"
    )


def _own_cgroups() -> dict[str, str]:
    """This process's cgroup per controller ("" is the v2 unified hierarchy), from /proc/self/cgroup."""
    found: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            found[name] = path
    return found
