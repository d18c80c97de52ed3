"""Secret: a value (an SMB password) that never prints and never serialises as text.

Its repr, str and format are "***" and json.dumps refuses it (TypeError), so a Secret that strays into a
message, a log line, the store or a report shows the mask or fails loudly, never the value. Only
`reveal()` gives the value, and crest calls it in one place: where a run's config becomes the engine's
JSON (crest.load.runspec.engine_json). It pickles as itself, so a Ray actor handed one gets a Secret, not
text (file workloads, the only ones with a password, do not run on a cluster yet). Pure: no I/O, no printing.
"""

from __future__ import annotations

import hmac
from typing import Any, NoReturn

# What a Secret shows wherever it is printed, formatted or logged.
MASK = "***"


class Secret:
    """A string that shows as "***"; `reveal()` gives it. Immutable; equal to another Secret of the same value."""

    __slots__ = ("_value",)
    _value: str

    def __init__(self, value: str) -> None:
        if isinstance(value, Secret):
            value = value.reveal()
        object.__setattr__(self, "_value", value)

    def reveal(self) -> str:
        """The value itself: only for the engine's config (crest.load.runspec.engine_json)."""
        return self._value

    def __repr__(self) -> str:
        return MASK

    def __str__(self) -> str:
        return MASK

    def __format__(self, spec: str) -> str:
        return format(MASK, spec)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Secret):
            return NotImplemented
        return hmac.compare_digest(self._value.encode(), other._value.encode())

    def __hash__(self) -> int:
        return hash((Secret, self._value))

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError("a Secret cannot be changed")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError("a Secret cannot be changed")

    def __reduce__(self) -> tuple[type[Secret], tuple[str]]:
        # Pickled (a Ray actor's argument) as a Secret again on the other side, never as a bare str.
        return (Secret, (self._value,))


def reveal_for_engine(value: object) -> str:
    """json.dumps's `default` for the engine's config: a Secret's value; anything else is refused as
    json.dumps refuses it.

    Raises:
        TypeError: `value` is not a Secret (and not JSON).
    """
    if isinstance(value, Secret):
        return value.reveal()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def without_secrets(value: Any) -> Any:
    """`value` (dicts, lists and tuples of plain data) with every Secret left out: a dict loses the key
    of a Secret, a list or tuple the item. What is stored, printed or reported of a config."""
    if isinstance(value, dict):
        return {k: without_secrets(v) for k, v in value.items() if not isinstance(v, Secret)}
    if isinstance(value, (list, tuple)):
        items = [without_secrets(v) for v in value if not isinstance(v, Secret)]
        return items if isinstance(value, list) else tuple(items)
    return value
