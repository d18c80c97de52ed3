"""SuiteError and the translation of pydantic errors into one line per problem; it never reads files or prints.

Every problem becomes `<origin>: <dotted.key[i]>: <rule> (got <value>)`, so a user
can find the key in their TOML file without reading a traceback.
"""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from crest.errors import ConfigError

Loc = tuple[str | int, ...]


class SuiteError(ConfigError):
    """A suite file or suite definition is invalid; one line per problem, joined with "; "."""

    def __init__(self, problems: str | Sequence[str]) -> None:
        self.problems: list[str] = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("; ".join(self.problems))


class RuleError(ValueError):
    """Raised inside model validators: problems found by a rule, each at a key below the model.

    pydantic keeps the exception object in the error's context, so the key paths
    survive and the message can point at `workload.fileset` rather than `workload`.
    """

    def __init__(self, problems: Sequence[tuple[Loc, str]]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(message for _, message in self.problems))


def show(value: Any) -> str:
    """A value as the user wrote it in TOML: 'text', true, 2.5, [1, 4], a table."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "nothing"
    if isinstance(value, str):
        # Control characters escaped (a newline as \n), so the problem stays one line.
        return "'" + "".join(c if c.isprintable() else repr(c)[1:-1] for c in value) + "'"
    if isinstance(value, float):
        return repr(value)  # 1.0 stays 1.0: the user typed a float where a string or integer was due
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list | tuple):
        items = [show(v) for v in value[:6]]
        if len(value) > 6:
            items.append("…")
        return "[" + ", ".join(items) + "]"
    return str(value)


def key_path(loc: Loc) -> str:
    """("workload", "classes", 1, "weight") → "workload.classes[1].weight"."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


# pydantic error type → the rule in our words (the value is appended as "(got …)").
_TYPE_RULES = {
    "int_type": "must be an integer",
    "int_parsing": "must be an integer",
    "int_from_float": "must be an integer",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "finite_number": "must be a finite number",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "string_type": "must be a string",
    "list_type": "must be an array",
    "model_type": "must be a table",
    "model_attributes_type": "must be a table",
    "dict_type": "must be a table",
}


def _bound(value: Any) -> str:
    # pydantic stores a float field's bound as 0.0; the rule reads better as "> 0".
    return format(value, "g") if isinstance(value, float) else str(value)


def _rule(error: Mapping[str, Any]) -> str:
    kind = error["type"]
    ctx = error.get("ctx") or {}
    got = show(error.get("input"))
    if kind in _TYPE_RULES:
        return f"{_TYPE_RULES[kind]} (got {got})"
    if kind == "greater_than_equal":
        return f"must be ≥ {_bound(ctx['ge'])} (got {got})"
    if kind == "greater_than":
        return f"must be > {_bound(ctx['gt'])} (got {got})"
    if kind == "less_than_equal":
        return f"must be ≤ {_bound(ctx['le'])} (got {got})"
    if kind == "less_than":
        return f"must be < {_bound(ctx['lt'])} (got {got})"
    if kind == "literal_error":
        return f"must be {ctx['expected']} (got {got})"
    if kind == "too_short":
        n = ctx["min_length"]
        return f"must have at least {n} entr{'y' if n == 1 else 'ies'} (got {ctx['actual_length']})"
    if kind == "string_too_short":
        return "must not be empty"
    if kind == "missing":
        return "required key is missing"
    text = str(error.get("msg", kind))
    return f"{text[:1].lower()}{text[1:]} (got {got})"


def _line(origin: str, loc: Loc, rule: str) -> str:
    path = key_path(loc)
    return f"{origin}: {path}: {rule}" if path else f"{origin}: {rule}"


def problems_from(exc: ValidationError, origin: str, model: type[BaseModel] | None = None) -> list[str]:
    """One line per problem in a pydantic ValidationError, prefixed with origin (usually the file name).
    With the `model` validated, a missing table names the keys it needs and an unknown key the known key
    it most likely misspells."""
    lines: list[str] = []
    for error in exc.errors():
        loc: Loc = tuple(error["loc"])
        cause = (error.get("ctx") or {}).get("error")
        if isinstance(cause, RuleError):
            lines.extend(_line(origin, loc + sub, message) for sub, message in cause.problems)
        elif isinstance(cause, ValueError):
            lines.append(_line(origin, loc, str(cause)))
        elif error["type"] == "extra_forbidden":
            # The offending key is the last part of loc; report it at its parent table.
            known = _fields_at(model, loc[:-1])
            near = _closest(str(loc[-1]), list(known or {}))
            hint = f": did you mean {' or '.join(repr(k) for k in near)}?" if near else ""
            lines.append(_line(origin, loc[:-1], f"unknown key '{loc[-1]}'{hint}"))
        elif error["type"] == "missing" and (table := _fields_at(model, loc)) is not None:
            needed = [name for name, info in table.items() if info.is_required()]
            with_keys = f" with {', '.join(needed)}" if needed else ""
            lines.append(_line(origin, loc, f"required table is missing: add [{key_path(loc)}]{with_keys}"))
        else:
            lines.append(_line(origin, loc, _rule(error)))
    return lines


def _fields_at(model: type[BaseModel] | None, loc: Loc) -> dict[str, Any] | None:
    """The fields of the table at `loc` below `model` (its FieldInfos by key); None where `loc` leads to no
    model (a value, a union of several models, an unknown key)."""
    found: Any = model
    for part in loc:
        if not _is_model(found):
            return None
        field = found.model_fields.get(str(part)) if isinstance(part, str) else None
        if field is None:
            if isinstance(part, int):
                continue  # an entry of a list: its model is found below
            return None
        found = _model_in(field.annotation)
    return dict(found.model_fields) if _is_model(found) else None


def _model_in(annotation: Any) -> Any:
    """The one model an annotation holds (itself, optional, or the entries of a list); None otherwise."""
    if _is_model(annotation):
        return annotation
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    origin = typing.get_origin(annotation)
    if origin in (list, tuple, Sequence) or origin in (typing.Union, types.UnionType):
        models = [m for m in (_model_in(a) for a in args) if m is not None]
        return models[0] if len(models) == 1 else None
    return None


def _is_model(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, BaseModel)


def _closest(key: str, known: list[str]) -> list[str]:
    """The known keys most like `key` (difflib's ratio, at least 0.6): every one of the best score, so a
    typo as near to two keys ('stpe': stop, step) names both."""
    scored = [(difflib.SequenceMatcher(None, key, k).ratio(), k) for k in known]
    best = max((score for score, _ in scored), default=0.0)
    return [k for score, k in scored if score >= 0.6 and score == best]
