"""A JSON report read back: `crest report RUN --format json` as the baseline side of `crest check`.

Owns reading the report document this package writes (its `mixes` rows, one per stored mix of each
trial) back into LoadPoints, so that a baseline exported from one results store gates a run stored in
another. Takes the parsed document; reading the file is the caller's.
"""

from __future__ import annotations

import math
from typing import Any

from crest.analysis.gate import Side, run_setup
from crest.analysis.points import LoadPoint
from crest.errors import ConfigError
from crest.store import RunDetail, RunMeta
from crest.verdicts import Verdict

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
    points = tuple(tuple(p) for p in trials.values())
    return Side(name, label, suite, points, tuple(trials), _setup(doc))


def _setup(doc: dict[str, Any]) -> dict[str, Any] | None:
    """The first run's configuration as crest check compares it (gate.run_setup); None for a report
    written before its runs carried their options."""
    runs = doc.get("runs")
    run = runs[0] if isinstance(runs, list) and runs and isinstance(runs[0], dict) else None
    if run is None or not isinstance(run.get("options"), dict) or not run["options"]:
        return None
    config = {"options": run["options"], "server": run.get("server")}
    meta = RunMeta(str(run.get("suite", "")), str(run.get("target", "")), str(run.get("profile", "")), 0, config,
                   dict(run.get("factors") or {}), {})  # fmt: skip
    return run_setup(RunDetail(str(run.get("id", "")), meta, "complete", None, 0.0, None, []))


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
        verdicts=[Verdict.from_json(v) for v in row.get("verdicts") or [] if isinstance(v, dict)],
    )


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _number(value: Any) -> float | None:
    return float(value) if _finite(value) else None
