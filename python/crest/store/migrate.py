"""Upgrades of older crest results files, one schema version at a time; called by schema.ensure_schema.

Owns the knowledge of what older crests wrote, and nothing else: the only
place that reads a warning's English text (schema 1 stored warnings as text;
later schemas store typed verdicts). Runs inside the caller's transaction,
never commits, prints or opens files.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable
from typing import Any

from crest import verdicts
from crest.verdicts import Verdict

# What crest's schema-1 code wrote at the start of each warning (runner, monitor, engine, published import).
_V1_PREFIXES = (
    ("client-bound:", verdicts.CLIENT_BOUND),
    ("target idle:", verdicts.TARGET_IDLE),
    ("page cache not dropped", verdicts.PAGE_CACHE),
    ("the target has all ", verdicts.CPU_SPLIT),
    ("the mix was cut short", verdicts.CUT_SHORT),
    ("published peak only:", verdicts.PEAK_ONLY),
)
# The engine's error notes: "<kind>: <n> × e.g. ..." and "<n> connects failed with EADDRNOTAVAIL ...".
_V1_ENGINE_NOTE = re.compile(
    r"^(?:(?:connect|tls|timeout|read|write|status|parse|validation): \d+ × |\d+ connects failed with EADDRNOTAVAIL)"
)
# Values schema 1 kept inside monitor_json that schema 2 stores as columns, with their column types.
_V1_MONITOR_COLUMNS = (
    ("size_bytes", "INTEGER"),
    ("client_cpu_s", "REAL"),
    ("connections_opened", "INTEGER"),
    ("access_log_requests", "INTEGER"),
)


def v1_verdict(text: str, monitor: dict[str, Any]) -> Verdict:
    """The typed verdict of a schema-1 warning text, with the figures the mix's monitor holds."""
    kind = next((k for prefix, k in _V1_PREFIXES if text.startswith(prefix)), None)
    if kind is None:
        kind = verdicts.ERRORS if _V1_ENGINE_NOTE.match(text) else verdicts.NOTE
    figures: dict[str, Any] = {}
    engine, target = monitor.get("engine"), monitor.get("target")
    if kind == verdicts.CLIENT_BOUND and isinstance(engine, dict):
        figures = {"engine_cpu_util_pct": engine.get("cpu_util_pct"), "engine_cores": engine.get("cores")}
    elif kind == verdicts.TARGET_IDLE and isinstance(target, dict):
        figures = {"target_cpu_util_pct": target.get("cpu_util_pct"), "target_cores": target.get("cores")}
    elif kind == verdicts.CPU_SPLIT and isinstance(target, dict):
        figures = {"target_cores": target.get("cores")}
    return Verdict(kind, text, {k: v for k, v in figures.items() if v is not None})


def _v1_to_v2(conn: sqlite3.Connection) -> None:
    """Warning texts become typed verdicts; monitor-JSON values become columns."""
    conn.execute("ALTER TABLE mixes RENAME COLUMN warnings_json TO verdicts_json")
    for column, sql_type in _V1_MONITOR_COLUMNS:
        conn.execute(f"ALTER TABLE mixes ADD COLUMN {column} {sql_type}")
    rows = conn.execute("SELECT run_id, idx, monitor_json, verdicts_json FROM mixes").fetchall()
    for run_id, idx, monitor_json, warnings_json in rows:
        monitor = json.loads(monitor_json)
        monitor = monitor if isinstance(monitor, dict) else {}
        # An empty text said nothing, and a verdict needs a message.
        typed = [v1_verdict(str(text), monitor).to_json() for text in json.loads(warnings_json) if str(text)]
        values = [_whole_or_real(monitor.pop(column, None), sql_type) for column, sql_type in _V1_MONITOR_COLUMNS]
        conn.execute(
            "UPDATE mixes SET verdicts_json = ?, monitor_json = ?, "
            + ", ".join(f"{column} = ?" for column, _ in _V1_MONITOR_COLUMNS)
            + " WHERE run_id = ? AND idx = ?",
            (_dump(typed), _dump(monitor), *values, run_id, idx),
        )


def _whole_or_real(value: Any, sql_type: str) -> int | float | None:
    # Only a number of the column's kind moves; anything else was never a measurement.
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if sql_type == "INTEGER":
        return int(value) if float(value).is_integer() else None
    return float(value)


def _dump(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _v2_to_v3(conn: sqlite3.Connection) -> None:
    """Cluster mixes: a column for their per-node breakdown; every earlier mix ran on one machine (NULL)."""
    conn.execute("ALTER TABLE mixes ADD COLUMN cluster_json TEXT")


def _v3_to_v4(conn: sqlite3.Connection) -> None:
    """Open-loop rates and SPECweb99 iterations: every earlier mix was a closed loop of another workload."""
    conn.execute("ALTER TABLE mixes ADD COLUMN rate_rps REAL")
    conn.execute("ALTER TABLE mixes ADD COLUMN specweb99_json TEXT")


def _v4_to_v5(conn: sqlite3.Connection) -> None:
    """What the lab did around a mix (restart, warm-up, per-role counts) and its TLS facts: earlier crests kept
    neither (NULL: not recorded)."""
    conn.execute("ALTER TABLE mixes ADD COLUMN lab_json TEXT")
    conn.execute("ALTER TABLE mixes ADD COLUMN tls_json TEXT")


def _v5_to_v6(conn: sqlite3.Connection) -> None:
    """A mix's client-network figures (--network): earlier crests had no client networks (NULL: loopback)."""
    conn.execute("ALTER TABLE mixes ADD COLUMN network_json TEXT")


def _v6_to_v7(conn: sqlite3.Connection) -> None:
    """An HTTP/2 mix's counters: earlier crests spoke only HTTP/1.x (NULL: no HTTP/2)."""
    conn.execute("ALTER TABLE mixes ADD COLUMN h2_json TEXT")


def _v7_to_v8(conn: sqlite3.Connection) -> None:
    """The engine's naps: earlier crests' engines always blocked, and counted nothing (NULL: not recorded)."""
    conn.execute("ALTER TABLE mixes ADD COLUMN naps INTEGER")


def _v8_to_v9(conn: sqlite3.Connection) -> None:
    """The owner of a run (which crest process writes it): earlier crests recorded none (NULL: never judged)."""
    conn.execute("ALTER TABLE runs ADD COLUMN owner_json TEXT")


# From version N to N + 1.
MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {
    1: _v1_to_v2, 2: _v2_to_v3, 3: _v3_to_v4, 4: _v4_to_v5, 5: _v5_to_v6, 6: _v6_to_v7, 7: _v7_to_v8, 8: _v8_to_v9,
}  # fmt: skip
