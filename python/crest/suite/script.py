"""`[workload.script]`: scripted sessions as a suite's workload (each connection a virtual user playing the
steps in order, again and again), the CSV of users it reads, and the engine's `script` config of it.

The models hold what the suite file says; the engine (crates/engine script/) is the gate for templates,
regular expressions and JSON pointers. Each step is a class of the results: a script workload has no
[[workload.classes]].
"""

from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from crest.errors import ConfigError
from crest.suite.errors import RuleError, show

_MODEL_CONFIG = ConfigDict(strict=True, extra="forbid", frozen=True, allow_inf_nan=False)
# A step's name is its class name: the rule of [[workload.classes]] names.
_STEP_NAME = re.compile(r"[a-z0-9][a-z0-9._-]*")
# The most CSV rows read: one per virtual user is all a run uses (connection i takes row i mod rows).
MAX_USERS = 1_000_000


class Extract(BaseModel):
    """A value taken from a step's response body into a variable for later steps."""

    # `json` is the suite's key; the field is json_pointer (BaseModel has a json method).
    model_config = ConfigDict(**_MODEL_CONFIG, populate_by_name=True)

    name: str = Field(min_length=1)
    # A regular expression (Rust's regex syntax): its first group, or the whole match without one.
    regex: str | None = None
    # A JSON pointer (RFC 6901), e.g. "/data/token": a string's text, any other value as its JSON.
    json_pointer: str | None = Field(default=None, alias="json")

    @model_validator(mode="after")
    def _one_finder(self) -> Extract:
        if (self.regex is None) == (self.json_pointer is None):
            raise RuleError([((), f"extract {show(self.name)}: give exactly one of regex and json")])
        return self

    def engine(self) -> dict[str, Any]:
        """The engine's form: name and regex or json."""
        if self.regex is not None:
            return {"name": self.name, "regex": self.regex}
        return {"name": self.name, "json": self.json_pointer}


class Step(BaseModel):
    """One request of the script, its checks and what it extracts."""

    model_config = _MODEL_CONFIG

    name: str  # its class name in the results
    method: str = "GET"
    path: str  # a template: {{name}} is a CSV column or an earlier step's extracted value
    headers: dict[str, str] = {}
    body: str | None = None
    # Pause after its response before the next step (the user's think time).
    think_s: float = Field(default=0.0, ge=0)
    # The response must have exactly this status (None: any 2xx or 3xx).
    expect_status: int | None = Field(default=None, ge=200, le=599)
    extract: list[Extract] = []

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _STEP_NAME.fullmatch(value):
            raise ValueError(
                "must start with a lowercase letter or digit and use only lowercase letters,"
                f" digits, '-', '_' and '.' (got {show(value)})"
            )
        return value

    def engine(self) -> dict[str, Any]:
        """The engine's form of the step."""
        return {
            "name": self.name, "method": self.method, "path": self.path,
            "headers": [[k, v] for k, v in self.headers.items()], "body": self.body, "think_s": self.think_s,
            "expect_status": self.expect_status, "extract": [e.engine() for e in self.extract],
        }  # fmt: skip


class Script(BaseModel):
    """Scripted sessions: the steps each virtual user plays, and the CSV of users their templates read."""

    model_config = _MODEL_CONFIG

    # A CSV file whose header row names the variables; virtual user i takes row i mod rows. A relative
    # path is resolved against the suite file's directory when the file is read.
    users: str | None = None
    steps: list[Step] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_steps(self) -> Script:
        seen: dict[str, int] = {}
        problems = []
        for i, step in enumerate(self.steps):
            if step.name in seen:
                problems.append(
                    (("steps", i, "name"), f"must be unique: it is the step's class (also steps[{seen[step.name]}])")
                )
            seen.setdefault(step.name, i)
        if problems:
            raise RuleError(problems)
        return self

    @property
    def classes(self) -> tuple[str, ...]:
        """The class names: the steps'."""
        return tuple(s.name for s in self.steps)

    def engine(self, first_user: int = 0) -> dict[str, Any]:
        """The engine's RunConfig.script: the steps and the CSV read now (`first_user`: the global index of
        the engine's connection 0)."""
        variables, rows = read_users(self.users) if self.users else ([], [])
        return {"steps": [s.engine() for s in self.steps], "variables": variables, "users": rows,
                "first_user": first_user}  # fmt: skip


def read_users(path: str | Path) -> tuple[list[str], list[list[str]]]:
    """The CSV of users: its header row (the variable names) and its rows. One-line ConfigError for a file
    that cannot be read, has no header, or a row whose width differs from the header's."""
    where = Path(path)
    try:
        with where.open(newline="", encoding="utf-8") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            if not header or not any(h.strip() for h in header):
                raise ConfigError(f"{where}: the users CSV has no header row: name the columns on its first line")
            names = [h.strip() for h in header]
            rows: list[list[str]] = []
            for row in reader:
                if not row:
                    continue  # a blank line
                if len(row) != len(names):
                    raise ConfigError(
                        f"{where} line {reader.line_num}: {len(row)} values where the header names {len(names)}"
                        " columns: give each row one value per column"
                    )
                rows.append(row)
                if len(rows) > MAX_USERS:
                    raise ConfigError(f"{where}: more than {MAX_USERS} users: a run uses one row per connection")
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read the users CSV: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, csv.Error) as exc:
        raise ConfigError(f"{where}: not a UTF-8 CSV file: {exc}") from None
    if not rows:
        raise ConfigError(f"{where}: the users CSV has a header but no rows: add one row per user")
    return names, rows
