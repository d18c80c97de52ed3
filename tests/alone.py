"""Two markers for integration tests that run beside others (`make test`: pytest-xdist, two workers, one
module per worker):

- `alone`: the test looks at the whole machine (every process of a kind) or reads the clock; it runs with
  no other test beside it.
- `netns`: the test makes network namespaces, counting crest's before and after (and a run cleans up the
  namespaces of dead runs by their prefix); it runs beside other tests but beside no other `netns` test.

Locks on files: a test holds the machine lock shared, an `alone` test holds it exclusive; a `netns` test
also holds the namespace lock exclusive. Each lock has a turnstile, taken before the lock and let go once
it is held: a test waiting for a lock holds its turnstile, so the other worker, coming back for the same
lock after its own test, queues behind it instead of taking the lock again and again. Held around the
whole of a test, fixtures' setup and teardown included (a module's servers start and stop inside some
test's turn), and outside pytest-timeout's timer, so waiting never counts against a test's timeout."""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ALONE = "alone"
NETNS = "netns"
# One set of locks for the machine, not per session: two `make test` at once would trip each other too.
_DIR = Path(tempfile.gettempdir())


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{ALONE}: runs with no other test beside it (it checks every process of a kind, or the clock)"
    )
    config.addinivalue_line("markers", f"{NETNS}: makes network namespaces; runs beside no other such test")


def _take(name: str, mode: int) -> list[int]:
    """The lock `name` in `mode`, through its turnstile; the descriptors to close to let it go."""
    turnstile = os.open(_DIR / f"crest-tests-{name}.turnstile", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    lock = os.open(_DIR / f"crest-tests-{name}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    fcntl.flock(turnstile, fcntl.LOCK_EX)
    fcntl.flock(lock, mode)
    os.close(turnstile)
    return [lock]


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    if item.get_closest_marker("integration") is None:
        yield  # unit tests start nothing another test could see
        return
    held: list[int] = []
    try:
        held += _take("machine", fcntl.LOCK_EX if item.get_closest_marker(ALONE) else fcntl.LOCK_SH)
        if item.get_closest_marker(NETNS):
            held += _take("netns", fcntl.LOCK_EX)
        yield
    finally:
        for fd in held:
            os.close(fd)  # closing lets a flock go
