"""Which cores the target gets and which the load engine keeps (`--cpus N`).

Owns the split and the pinning of this process's threads; never starts
processes (a target's processes pin themselves before exec, see process.py).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from crest.errors import ConfigError


@dataclass(frozen=True)
class CpuSplit:
    """The cores of one run: the target's, and the engine's (the rest, or all when none are left)."""

    target: tuple[int, ...]
    engine: tuple[int, ...]

    @property
    def shared(self) -> bool:
        """True when the engine shares the target's cores (no core was left for it): a verdict of the mix."""
        return bool(set(self.target) & set(self.engine))


def available() -> tuple[int, ...]:
    """The cores this process may run on, in order."""
    return tuple(sorted(os.sched_getaffinity(0)))


def split(cpus: int, cores: Sequence[int] | None = None) -> CpuSplit:
    """Give the target the first `cpus` cores and the engine the others (all of them when none remain).

    Raises:
        ConfigError: more cores asked than this process may use.
    """
    cores = tuple(cores if cores is not None else available())
    if cpus < 1:
        raise ConfigError(f"--cpus {cpus}: give at least 1")
    if cpus > len(cores):
        raise ConfigError(
            f"--cpus {cpus}: this process may use only {len(cores)} cores ({_ranges(cores)}): give at most {len(cores)}"
        )
    target = cores[:cpus]
    return CpuSplit(target=target, engine=cores[cpus:] or cores)


@contextmanager
def pinned(cores: Sequence[int]) -> Iterator[None]:
    """Pin every thread of this process to `cores` for the block (the engine's threads start inside it,
    and inherit the mask); the previous masks are restored afterwards."""
    before = {tid: os.sched_getaffinity(tid) for tid in _threads()}
    for tid in before:
        _set(tid, cores)
    try:
        yield
    finally:
        for tid, mask in before.items():
            _set(tid, mask)


def allowed_list(pid: int) -> str:
    """`Cpus_allowed_list` of a process as the kernel reports it (e.g. "0" or "0-1")."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Cpus_allowed_list:"):
            return line.split(":", 1)[1].strip()
    raise ValueError(f"/proc/{pid}/status has no Cpus_allowed_list")


def parse_list(text: str) -> set[int]:
    """Cores from a kernel list like "0-2,5"."""
    cores: set[int] = set()
    for part in filter(None, text.split(",")):
        lo, _, hi = part.partition("-")
        cores.update(range(int(lo), int(hi or lo) + 1))
    return cores


def _threads() -> list[int]:
    try:
        return [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        return [0]


def _set(tid: int, cores: Sequence[int] | set[int]) -> None:
    try:
        os.sched_setaffinity(tid, set(cores))
    except (ProcessLookupError, OSError):
        pass  # the thread ended meanwhile


def _ranges(cores: Sequence[int]) -> str:
    return ",".join(str(c) for c in cores)
