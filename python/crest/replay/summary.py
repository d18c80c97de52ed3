"""A log's summary: what the engine's reader (`_engine.scan_log`, crates/replay) says of an access log,
typed. The reader keeps the table it read (same file, size, modification time and options), so the
engine's run that follows reads the log once. Owns the wording of a log the reader refuses; never prints.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crest import _engine
from crest.errors import ConfigError

# crates/replay's CLASSES, in its order: a logged request's class index names one of these.
CLASSES = (
    "static-1k",
    "static-10k",
    "static-100k",
    "static-big",
    "dynamic",
    "redirect",
    "client-error",
    "server-error",
)
STATIC_CLASSES = frozenset(CLASSES[:4])
DYNAMIC_CLASS = CLASSES.index("dynamic")


@dataclass(frozen=True)
class LogEntry:
    """One distinct request of a log (method and target), with what was logged for it most often."""

    method: str
    target: str  # path and query as logged
    status: int
    body_bytes: int
    count: int
    cls: int  # index into CLASSES

    @property
    def class_name(self) -> str:
        """The entry's class as named in results."""
        return CLASSES[self.cls]


@dataclass(frozen=True)
class LogSummary:
    """A log read whole: its counts, its span and every distinct request."""

    path: str
    format: str  # as resolved (auto names the format it found)
    lines: int
    requests: int
    skipped: int
    distinct: int
    sessions: int
    first_unix_s: float
    duration_s: float
    peak_concurrency: int | None
    class_requests: tuple[int, ...]
    classes: tuple[str, ...]
    table_bytes: int
    entries: tuple[LogEntry, ...]

    def facts(self) -> dict[str, Any]:
        """What a run stores of the log it replays (no entry: a path or query could be in one)."""
        return {
            "format": self.format, "lines": self.lines, "requests": self.requests, "skipped": self.skipped,
            "distinct": self.distinct, "sessions": self.sessions, "duration_s": self.duration_s,
            "peak_concurrency": self.peak_concurrency, "table_bytes": self.table_bytes,
            "class_requests": dict(zip(self.classes, self.class_requests)),
        }  # fmt: skip


def reader_options(
    format: str = "auto", session_key: str | Mapping[str, str] = "client", session_gap_s: float = 1800.0,
    max_bad_lines: int = 0,
) -> dict[str, Any]:  # fmt: skip
    """The reader's options (crates/replay's Options) as its JSON takes them."""
    key: Any = session_key if isinstance(session_key, str) else dict(session_key)
    return {"format": format, "session_key": key, "session_gap_s": session_gap_s, "max_bad_lines": max_bad_lines}


# How each caller's user gives the reader's options: the reader's refusals say `{format}` and `{max_bad_lines}`
# where their fix names one (crates/replay), and scan words them so.
IN_A_SUITE = {"format": "workload.replay.format", "max_bad_lines": "workload.replay.max_bad_lines"}
ON_THE_COMMAND_LINE = {"format": "--format", "max_bad_lines": "--max-bad-lines"}
A_BARE_LOG = {
    "format": "workload.replay.format in a suite (a bare log is read with format auto; docs/replay.md)",
    "max_bad_lines": "workload.replay.max_bad_lines in a suite",
}


def scan(
    path: str | Path, options: Mapping[str, Any] | None = None, said: Mapping[str, str] = IN_A_SUITE
) -> LogSummary:
    """Read the log at `path` with the reader's `options` (reader_options) and return its summary; a refusal's
    fix names each reader option as `said` (IN_A_SUITE, ON_THE_COMMAND_LINE, A_BARE_LOG).

    Raises:
        ConfigError: no such file, an unknown format, a line that does not parse (its number named),
            or no request to replay: one line with the fix.
    """
    where = Path(path)
    if not where.is_file():
        raise ConfigError(f"no access log at {where}: give the path of a log file (nginx, Apache, Caddy, H2O)")
    scan_log = getattr(_engine, "scan_log", None)
    if scan_log is None:  # an engine built before the reader: `make build` brings it
        raise ConfigError("this engine cannot read access logs: rebuild it with `make build`")
    try:
        text = scan_log(str(where), json.dumps(dict(options or reader_options())))
    except _engine.ConfigError as exc:
        message = str(exc)
        for key, words in said.items():  # only these two names: a log line quoted in it may hold any braces
            message = message.replace(f"{{{key}}}", words)
        raise ConfigError(message) from None
    doc = json.loads(text)
    return LogSummary(
        path=str(where),
        format=str(doc["format"]),
        lines=int(doc["lines"]),
        requests=int(doc["requests"]),
        skipped=int(doc["skipped"]),
        distinct=int(doc["distinct"]),
        sessions=int(doc["sessions"]),
        first_unix_s=float(doc["first_unix_s"]),
        duration_s=float(doc["duration_s"]),
        peak_concurrency=None if doc.get("peak_concurrency") is None else int(doc["peak_concurrency"]),
        class_requests=tuple(int(n) for n in doc["class_requests"]),
        classes=tuple(str(c) for c in doc["classes"]),
        table_bytes=int(doc["table_bytes"]),
        entries=tuple(_entry(e) for e in doc["entries"]),
    )


def _entry(e: dict[str, Any]) -> LogEntry:
    return LogEntry(str(e["method"]), str(e["target"]), int(e["status"]), int(e["body_bytes"]), int(e["count"]),
                    int(e["class"]))  # fmt: skip
