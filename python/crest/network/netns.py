"""Entering network namespaces from Python: a function run in a thread of its own that first joins a
namespace (setns), and the CAP_NET_ADMIN check. Owns only that; never creates or removes namespaces.

A namespace is per thread in Linux, and threads a thread creates inherit it: a fresh thread that joins
a namespace and then starts the engine gives every engine worker that namespace, while the rest of
crest stays where it was. The thread ends after the call, so no pooled thread is left in a foreign
namespace.
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

NETNS_DIR = "/run/netns"  # where `ip netns add` mounts a named namespace
CLONE_NEWNET = 0x40000000
CAP_NET_ADMIN = 12

_libc = ctypes.CDLL(None, use_errno=True)


def path_of(name: str) -> str:
    """The file that holds a named namespace open."""
    return f"{NETNS_DIR}/{name}"


def enter(name: str) -> None:
    """Move the calling thread into namespace `name` (a whole single-threaded process, when called
    before it starts threads).

    Raises:
        OSError: the namespace does not exist or setns was refused.
    """
    fd = os.open(path_of(name), os.O_RDONLY | os.O_CLOEXEC)
    try:
        if _libc.setns(fd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"setns into network namespace {name}: {os.strerror(err)}")
    finally:
        os.close(fd)


def call_in(name: str | None, fn: Callable[[], T]) -> T:
    """fn() in a new thread inside namespace `name` (here when None); its result or its exception."""
    if name is None:
        return fn()
    box: dict[str, object] = {}

    def body() -> None:
        try:
            enter(name)
            box["value"] = fn()
        except BaseException as exc:  # handed to the caller's thread, raised there
            box["error"] = exc

    thread = threading.Thread(target=body, name=f"crest-netns-{name}", daemon=True)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


def has_net_admin() -> bool:
    """Whether this process may create namespaces, links and qdiscs (CAP_NET_ADMIN in its effective set)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("CapEff:"):
                    return bool(int(line.split()[1], 16) >> CAP_NET_ADMIN & 1)
    except OSError:
        pass
    return False
