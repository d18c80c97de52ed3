"""A JSON report read back: `crest report RUN --format json` as the baseline side of `crest check`.

Owns reading the report document this package writes (its `mixes` rows, one per stored mix of each
trial) back into LoadPoints, so that a baseline exported from one results store gates a run stored in
another. Takes the parsed document; reading the file is the caller's.
"""

from __future__ import annotations

import math
from typing import Any

from crest.analysis.gate import Side
from crest.analysis.points import LoadPoint
from crest.errors import ConfigError

_CLOSED_LOOP_AXES = ("clients", "threads", "connections")


def side_from_report(name: str, doc: Any, load_axis: str) -> Side:
    """The one configuration of an exported report as a gate's side, each trial's mixes on `load_axis`.

    Raises:
        ConfigError: not a crest JSON report, or a report of several configurations.
    """
    export = f"export one with `crest report RUN --format json -o {name}`"
    if not isinstance(doc, dict) or not isinstance(doc.get("mixes"), list) or "configurations" not in doc:
        raise ConfigError(f"{name} is not a crest report in JSON: {export}")
    configs = doc["configurations"]
    if not isinstance(configs, list) or len(configs) != 1:
        count = len(configs) if isinstance(configs, list) else 0
        raise ConfigError(f"{name} holds {count} configurations, a baseline one: {export} of a single run")
    if load_axis not in _CLOSED_LOOP_AXES and doc.get("load_axis") != load_axis:
        raise ConfigError(
            f"{name} is on the {doc.get('load_axis')} axis, the run on {load_axis}: export the baseline from a run"
            " of the same suite"
        )
    trials: dict[str, list[LoadPoint]] = {}
    try:
        for row in doc["mixes"]:
            trials.setdefault(str(row["run_id"]), []).append(_point(row, load_axis))
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"{name}: a mix row lacks or garbles {exc}: {export}") from None
    config = configs[0]
    label = str(config.get("label", name)) if isinstance(config, dict) else name
    suite = str(config.get("suite", "")) if isinstance(config, dict) else ""
    return Side(name, label, suite, tuple(tuple(points) for points in trials.values()))


def _point(row: dict[str, Any], load_axis: str) -> LoadPoint:
    load = row[load_axis] if load_axis in _CLOSED_LOOP_AXES else row["load"]
    latency = row.get("latency_us") or {}
    return LoadPoint(
        load=float(load),
        clients=int(row["clients"]),
        threads=int(row["threads"]),
        connections=int(row["connections"]),
        rps=float(row["rps"]),
        throughput_Bps=float(row["throughput_Bps"]),
        requests=int(row["requests"]),
        errors=int(row["errors"]),
        error_rate=float(row["error_rate"]),
        latency_us={str(k): float(v) for k, v in latency.items() if _finite(v)},
        target_cpu_pct=_number(row.get("target_cpu_pct")),
        engine_cpu_pct=_number(row.get("engine_cpu_pct")),
        client_bound=row.get("client_bound") is True,
        client_rps=[],
        littles_load_factor=_number(row.get("littles_load_factor")),
        index=int(row.get("mix", 0)),
        window_s=float(row.get("window_s") or 0.0),
    )


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _number(value: Any) -> float | None:
    return float(value) if _finite(value) else None
