"""Where the few requests outside the load are sent from (the SPECweb99 harness's validation, Reset and
Fetch): this process by default, or where a placement says its clients stand (`at`), e.g. a cluster's
load node, whose machine may reach a target the driver cannot. A request is a module-level function and
its arguments, so it can be shipped to where it runs. Owns only that choice; never sends by itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")
Sender = Callable[..., Any]  # sender(fn, *args, **kwargs) -> fn(*args, **kwargs), run where the clients stand

_sender: ContextVar[Sender | None] = ContextVar("crest_vantage", default=None)


def call(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """fn(*args, **kwargs) where the clients stand (here unless `at` says otherwise)."""
    sender = _sender.get()
    if sender is None:
        return fn(*args, **kwargs)
    result: T = sender(fn, *args, **kwargs)
    return result


@contextmanager
def at(sender: Sender) -> Iterator[None]:
    """Within the block (this thread), `call` runs through `sender`."""
    token = _sender.set(sender)
    try:
        yield
    finally:
        _sender.reset(token)
