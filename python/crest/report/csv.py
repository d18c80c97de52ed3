"""The report document → CSV: one row per stored mix, one header line, columns fixed by COLUMNS.

Numbers are written raw in the units their column names (bytes/s, µs, a
fraction for rates) so a spreadsheet computes with them. A text cell that a
spreadsheet would take for a formula (= + - @ tab CR first) gets a leading
apostrophe: labels and warnings can come from a target.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from typing import Any

_LATENCY = ("p50", "p90", "p99", "p999", "max", "mean")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")

Getter = Callable[[dict[str, Any]], Any]


def _latency(key: str) -> Getter:
    return lambda m: m["latency_us"].get(key)


COLUMNS: tuple[tuple[str, Getter], ...] = (
    ("configuration", lambda m: m["configuration"]),
    ("run_id", lambda m: m["run_id"]),
    ("trial", lambda m: m["trial"]),
    ("mix", lambda m: m["mix"]),
    ("load", lambda m: m["load"]),
    ("clients", lambda m: m["clients"]),
    ("threads", lambda m: m["threads"]),
    ("connections", lambda m: m["connections"]),
    ("window_s", lambda m: m["window_s"]),
    ("requests", lambda m: m["requests"]),
    ("responses", lambda m: m["responses"]),
    ("rps", lambda m: m["rps"]),
    ("throughput_Bps", lambda m: m["throughput_Bps"]),
    ("throughput_Mbps", lambda m: None if m["throughput_Bps"] is None else m["throughput_Bps"] * 8 / 1e6),
    ("body_bytes", lambda m: m["body_bytes"]),
    ("errors", lambda m: m["errors"]),
    ("error_rate", lambda m: m["error_rate"]),
    *((f"latency_{k}_us", _latency(k)) for k in _LATENCY),
    ("target_cpu_pct", lambda m: m["target_cpu_pct"]),
    ("engine_cpu_pct", lambda m: m["engine_cpu_pct"]),
    ("client_bound", lambda m: "yes" if m["client_bound"] else "no"),
    ("littles_load_factor", lambda m: m["littles_load_factor"]),
    ("errors_by_kind", lambda m: ";".join(f"{k}={n}" for k, n in m["errors_by_kind"].items())),
    ("warnings", lambda m: "; ".join(v["message"] for v in m["verdicts"])),
)


def render_csv(doc: dict[str, Any]) -> str:
    """Every mix of every run in the report, in configuration, trial and ladder order."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    columns = COLUMNS
    if doc.get("sweep"):  # content-length sweeps: each mix's length after its index
        at = [name for name, _ in COLUMNS].index("mix") + 1
        columns = (*COLUMNS[:at], ("size_bytes", lambda m: m.get("size_bytes")), *COLUMNS[at:])
    writer.writerow([name for name, _ in columns])
    for mix in doc["mixes"]:
        writer.writerow([_cell(get(mix)) for _, get in columns])
    return buffer.getvalue()


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value) if value != int(value) or abs(value) >= 1e16 else str(int(value))
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value
