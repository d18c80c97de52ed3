"""Which cores the target gets and which the load engine keeps (`--cpus N`), and a fraction's quota.

Owns parsing `--cpus` values (whole cores, or a fraction such as 0.5 or 1.5:
ceil(N) cores pinned plus a CFS quota of N × PERIOD_US), the split and the
pinning of this process's threads; never starts processes (a target's
processes pin themselves before exec, see process.py) nor touches cgroups
(cgroup.py applies a quota).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from crest.errors import ConfigError
from crest.units import parse_values

# The CFS period of a fractional --cpus. A quota lets the target run quota_us in every period and
# then stalls it until the period ends, so a request caught by the stall waits up to
# period × (1 − share): the kernel's default 100 ms period added tens of ms to the tail at
# 0.5 CPU in our measurements (docs/servers.md), a 10 ms one a few ms at the same throughput.
PERIOD_US = 10_000
# The kernel refuses a quota below 1 ms.
MIN_QUOTA_US = 1_000


@dataclass(frozen=True)
class CpuQuota:
    """A CFS bandwidth limit: the target's processes run at most `quota_us` in every `period_us`."""

    quota_us: int
    period_us: int

    @property
    def cpus(self) -> float:
        """The share of one core it amounts to (0.5 = half a core)."""
        return self.quota_us / self.period_us


@dataclass(frozen=True)
class CpuShare:
    """One --cpus value: the cores pinned, and a quota when the value is not a whole number."""

    cpus: int | float  # as asked: an int for whole cores (stored and shown as such), else a float
    cores: int  # ceil(cpus)
    quota: CpuQuota | None  # None: whole cores, pinning only

    def metadata(self) -> dict[str, int | float | None]:
        """What a run stores about it (config["cpus"])."""
        return {
            "cpus": self.cpus,
            "cores": self.cores,
            "quota_us": self.quota.quota_us if self.quota else None,
            "period_us": self.quota.period_us if self.quota else None,
        }


def share(value: str | float, *, what: str = "--cpus") -> CpuShare:
    """One --cpus value ("2", "0.5", "1.5") as cores to pin and a quota for the fraction.

    Raises:
        ConfigError: not a positive number, or a share too small for the kernel's minimum quota.
    """
    text = str(value).strip()
    try:
        number = float(text)
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or number <= 0:
        raise ConfigError(f"{what} {text}: give a positive number of CPUs, e.g. 1, 2 or 0.5")
    if number.is_integer():
        return CpuShare(cpus=int(number), cores=int(number), quota=None)
    quota_us = round(number * PERIOD_US)
    if quota_us < MIN_QUOTA_US:
        raise ConfigError(f"{what} {text}: the smallest share is {MIN_QUOTA_US / PERIOD_US:g} of a core")
    return CpuShare(cpus=number, cores=math.ceil(number), quota=CpuQuota(quota_us=quota_us, period_us=PERIOD_US))


def parse(text: str, *, what: str = "--cpus") -> list[CpuShare]:
    """A comma-separated --cpus list ("0.5,1,2") as its values, in order.

    Raises:
        ConfigError: an empty or repeated item, or a value `share` refuses.
    """
    shares = [share(item, what=what) for item in parse_values(text, what=what, example="0.5,1,2")]
    if len({s.cpus for s in shares}) != len(shares):  # 1 and 1.0 are one value
        raise ConfigError(f"{what} {text!r} repeats a value: give each once")
    return shares


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


def split(cpus: float, cores: Sequence[int] | None = None) -> CpuSplit:
    """Give the target the first ceil(`cpus`) cores and the engine the others (all of them when none remain).

    Raises:
        ConfigError: not a positive number, or more cores asked than this process may use.
    """
    cores = tuple(cores if cores is not None else available())
    if not cpus > 0:
        raise ConfigError(f"--cpus {cpus}: give a positive number of CPUs, e.g. 1, 2 or 0.5")
    if cpus > len(cores):
        raise ConfigError(
            f"--cpus {cpus}: this process may use only {len(cores)} cores ({_ranges(cores)}): give at most {len(cores)}"
        )
    n = math.ceil(cpus)
    return CpuSplit(target=cores[:n], engine=cores[n:] or cores)


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
