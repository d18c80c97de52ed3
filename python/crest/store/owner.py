"""Who owns a running run: the crest process writing it (pid, its start time, the machine's boot), stored with
the run so that a reader can tell a run whose crest is gone (killed, or the machine restarted) from one still
running. Only reads /proc through psutil; never prints, never writes the store."""

from __future__ import annotations

import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import psutil

_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")
# psutil derives a process's start time from clock ticks since boot: the same process reads the same to well
# under a second; another process given the same pid later starts later.
_SAME_START_S = 1.0


def current() -> dict[str, Any]:
    """This process as a run's owner."""
    me = psutil.Process()
    return {"host": socket.gethostname(), "boot_id": _boot_id(), "pid": me.pid, "started": me.create_time()}


def gone(owner: Mapping[str, Any] | None) -> bool:
    """Whether the crest that owned a run has ended: it ran on this machine (same host name) and the machine
    has booted since, or no live process has its pid and start time. False when it cannot be told (no owner
    stored by an older crest, another machine's run in a shared file)."""
    if not owner or owner.get("host") != socket.gethostname():
        return False
    boot = _boot_id()
    if boot is not None and owner.get("boot_id") not in (None, boot):
        return True
    try:
        proc = psutil.Process(int(owner["pid"]))
        if proc.status() == psutil.STATUS_ZOMBIE:
            return True
        started = proc.create_time()
    except psutil.NoSuchProcess:
        return True
    except (psutil.Error, KeyError, TypeError, ValueError):
        return False  # a process we may not look at is alive; an owner we cannot read says nothing
    return abs(started - float(owner.get("started", 0.0))) > _SAME_START_S


def alive(owner: Mapping[str, Any] | None) -> bool:
    """Whether the crest that owns a run is known to be running still: on this machine, and not gone."""
    return owner is not None and owner.get("host") == socket.gethostname() and not gone(owner)


def _boot_id() -> str | None:
    try:
        return _BOOT_ID.read_text().strip() or None
    except OSError:
        return None
