"""build_report: stored runs → the report document, a plain JSON-able dict that every renderer reads.

Owns what a report says and in which order: the configurations with their
curves, peaks and fairness, the comparison and scaling tables, per-mix rows,
run metadata and the plain-words summary at the top. The statistics come from
crest.analysis; this module only arranges them. The document's shape is
python/crest/schemas/report.schema.json (tested). Nothing here prints or
escapes: renderers escape.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from crest import __version__
from crest.analysis import (
    LOAD_AXES,
    Configuration,
    CurveSummary,
    Fairness,
    PairedResult,
    Peak,
    PeakTable,
    PointStats,
    aggregate_trials,
    configurations,
    default_load_axis,
    fairness,
    is_sweep,
    mean_curve,
    paired_difference,
    peak_table,
    percent_improvement,
    points_from_run,
    scaling,
    size_means,
    summarize,
    sweep_configurations,
)
from crest.analysis.bestof import best_of as merge_best_of
from crest.analysis.capacity import capacity_result, is_capacity_run
from crest.analysis.grouped import baselines
from crest.analysis.identity import identity, run_result
from crest.analysis.peak import TrialsApart, trials_apart
from crest.analysis.specweb99 import Iteration, is_specweb99_run, specweb99_result
from crest.analysis.stats import DEFAULT_INTERVAL, IntervalMethod, interval_method
from crest.analysis.throughput import headline_metric, judged_by_throughput, over_network, run_throughput
from crest.analysis.weighted import SPECWEB99_WEIGHTS, size_class
from crest.errors import ConfigError
from crest.report.counters import host_counters
from crest.report.disclosure import disclosure_section
from crest.report.grouped import ratios_section
from crest.report.h2 import h2_section
from crest.report.narrative import findings
from crest.report.network import network_section
from crest.report.pages import pages_section
from crest.report.peaks import best_of_section, interval_json, paired_json, peaks_section, pooled_section
from crest.store import MixRecord, RunDetail
from crest.verdicts import decided_by, rank_of

# 2: typed verdicts ({"kind", "message", ...figures}) replace the "warnings" texts of summaries and mixes.
SCHEMA_VERSION = 2
CPUS_FACTOR = "cpus"
_LATENCY_KEYS = ("p50", "p90", "p99", "p999")


def build_report(
    details: Sequence[RunDetail],
    *,
    title: str | None = None,
    load_axis: str | None = None,
    baseline: str | None = None,
    best_of: bool = False,
    pool: str | None = None,
    interval: str = DEFAULT_INTERVAL,
) -> dict[str, Any]:
    """The report document of the given runs (trials of one configuration are grouped automatically).
    The load axis defaults to content length when every run is a sweep, else to clients.

    baseline: the configuration every peak is indexed against (its label or a factor value);
    best_of: merge configurations that differ only in their suite, point by point (VeriTest);
    pool: the factor a pooled paired test pools over (default: workload, when the runs span it);
    interval: the paired tests' interval, a name in crest.analysis.stats.INTERVALS (t95 unless asked).

    Raises:
        ConfigError: no runs, an unknown load axis, no run with a stored mix, an unknown baseline,
            a pool factor the runs lack, or an unknown interval.
    """
    method = interval_method(interval)
    if load_axis is None:
        load_axis = default_load_axis([d for d in details if d.mixes])
    if load_axis not in LOAD_AXES:
        raise ConfigError(f"unknown load axis {load_axis!r}: use one of {', '.join(LOAD_AXES)}")
    measured = [d for d in details if d.mixes]
    if not measured:
        names = ", ".join(d.id for d in details) or "none"
        raise ConfigError(f"no stored mix in the runs given ({names}): pick runs that measured (see `crest runs`)")
    configs = configurations(measured)
    if best_of:
        configs = merge_best_of(configs)
    table = peak_table(configs, load_axis, headline_metric(measured))
    entries = [_configuration(i, c, table, load_axis) for i, c in enumerate(configs)]
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "title": title or _title(measured, configs),
        "generated_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "crest_version": __version__,
        "load_axis": load_axis,
        "configurations": entries,
        "comparison": _comparison(configs, table, entries, load_axis, method) if len(configs) > 1 else None,
        "scaling": _scaling(configs, load_axis),
        "mixes": [row for i, c in enumerate(configs) for t in c.trials for row in _mix_rows(t, c.label, i, load_axis)],
        "runs": [_run(t, c.label) for c in configs for t in c.trials],
        "hosts": _hosts(measured),
        "skipped_runs": [d.id for d in details if not d.mixes],
        "disclosure": disclosure_section(configs),
    }
    peaks = peaks_section(table, baseline)
    if peaks is not None:  # the optional keys below appear only when they say something
        doc["peaks"] = peaks
    why = "throughput" if table.metric == "throughput_Bps" else "network" if over_network(measured) else None
    base = baselines(table.rows, baseline) if baseline is not None else None
    ratios = ratios_section(configs, table, base, load_axis, why) if why else None
    if ratios is not None:  # only runs judged by throughput, or over a client network, carry the key
        doc["throughput_ratios"] = ratios
    doc["paired_interval"] = interval_json(method)
    pooled = pooled_section(configs, load_axis, pool, method) if len(configs) > 1 or pool else None
    if pooled is not None:
        doc["pooled"] = pooled
    merged = best_of_section(configs, load_axis)
    if merged is not None:
        doc["best_of"] = merged
    sweep = _sweep(measured, configs)
    if sweep is not None:  # only content-length sweeps carry the key: other reports stay as they were
        doc["sweep"] = sweep
    searches = [_capacity(d, c.label) for c in configs for d in c.trials if is_capacity_run(d)]
    if searches:  # only capacity searches carry the key
        doc["capacity"] = searches
    tests = [
        _specweb99(d, c.label) for c in configs for d in c.trials if is_specweb99_run(d) and not is_capacity_run(d)
    ]
    if tests:  # only SPECweb99 tests carry the key
        doc["specweb99"] = tests
    curves = [_throughput(d, c.label) for c in configs for d in c.trials if judged_by_throughput(d)]
    if curves:  # only file-server runs and throughput-only tables carry the key
        doc["throughput"] = curves
    hosts = host_counters(configs, load_axis)
    if hosts:  # only runs whose mixes sampled host counters carry the key
        doc["host_counters"] = hosts
    network = network_section(configs, load_axis)
    if network:  # only runs over a client network (--network) carry the key
        doc["network"] = network
    h2 = h2_section(configs, load_axis)
    if h2:  # only HTTP/2 and HTTP/3 runs carry the key
        doc["h2"] = h2
    pages = pages_section(configs)
    if pages:  # only HAR replays carry the key
        doc["pages"] = pages
    doc["summary"] = findings(doc)
    cleaned: dict[str, Any] = clean(doc)
    return cleaned


def clean(value: Any) -> Any:
    """The value with NaN and infinities as None and tuples as lists: strict JSON."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    return value


# -- one configuration --------------------------------------------------------------------


def _configuration(index: int, config: Configuration, table: PeakTable, load_axis: str) -> dict[str, Any]:
    trial_points = [p for p in config.trial_points(load_axis) if p]
    stats = aggregate_trials(trial_points)
    curve = summarize(mean_curve(trial_points), sweep=load_axis == "size")
    row = table.rows[index]
    first = config.trials[0]
    server = first.meta.config.get("server") if isinstance(first.meta.config, dict) else None
    return {
        "index": index,
        "label": config.label,
        "factors": dict(config.factors),
        "trials": config.trial_count(),
        "run_ids": [t.id for t in config.trials],
        "suite": first.meta.suite,
        "profile": first.meta.profile,
        "target": first.meta.target,
        "server": dict(server) if isinstance(server, dict) else None,
        "points": [_point(s) for s in stats],
        "peak": _peak(row.peak),
        "summary": _summary(curve, row.summaries),
        "fairness": _fairness(fairness(trial_points, row.peak_rps_load)),
        "trials_apart": trials_apart_json(trials_apart(trial_points)),
    }


def trials_apart_json(apart: TrialsApart | None) -> dict[str, Any] | None:
    """A configuration's trials that disagree (crest.analysis.peak.trials_apart), as the report stores it."""
    if apart is None:
        return None
    return {
        "low_trial": apart.low_trial, "low_rps": apart.low_rps, "high_trial": apart.high_trial,
        "high_rps": apart.high_rps, "apart_pct": apart.apart_pct, "outliers": list(apart.outliers),
        "noisy_trials": list(apart.noisy_trials), "explained": apart.explained,
    }  # fmt: skip


def _peak(peak: Peak) -> dict[str, Any]:
    return {
        "rps": peak.rps,
        "rps_sd": peak.rps_sd,
        "rps_ci95": peak.rps_ci95,
        "load": peak.load,
        "throughput_Bps": peak.throughput_Bps,
        "throughput_load": peak.throughput_load,
        "load_throughput_Bps": peak.load_throughput_Bps,
        "rps_cv": peak.rps_cv,
        "n": peak.n,
        "trial_peaks": [t.rps for t in peak.trials],
        "trial_peak_loads": [t.load for t in peak.trials],
        "trial_peaks_min": peak.trial_rps_min,
        "trial_peaks_max": peak.trial_rps_max,
        "trial_peaks_sd": peak.trial_rps_sd,
        "trials_peak_apart": peak.trials_peak_apart,
    }


def _point(s: PointStats) -> dict[str, Any]:
    return {
        "load": s.load,
        "n": s.n,
        "clients": s.clients,
        "threads": s.threads,
        "connections": s.connections,
        "rps": s.rps_mean,
        "rps_sd": s.rps_sd,
        "rps_ci95": s.rps_ci95,
        "rps_cv": s.rps_cv,
        "throughput_Bps": s.throughput_Bps_mean,
        "throughput_Bps_sd": s.throughput_Bps_sd,
        "throughput_Bps_ci95": s.throughput_Bps_ci95,
        "latency_us": {k: v for k, v in s.latency_us.items() if k in (*_LATENCY_KEYS, "max", "mean")},
        "error_rate": s.error_rate_mean,
        "errors": s.errors,
        "target_cpu_pct": s.target_cpu_pct_mean,
        "engine_cpu_pct": s.engine_cpu_pct_mean,
        "client_bound": s.client_bound,
    }


def _summary(curve: CurveSummary, trial_summaries: list[CurveSummary]) -> dict[str, Any]:
    # The curve of means speaks for the configuration; a trial adds a verdict only of a
    # kind the means do not show (e.g. one trial client-bound where the mean is not).
    found = [v.to_json() for v in curve.verdicts]
    kinds = {v.kind for v in curve.verdicts}
    for i, s in enumerate(trial_summaries):
        for v in s.verdicts:
            if v.kind not in kinds:
                many = len(trial_summaries) > 1
                found.append({**v.to_json(), "message": f"trial {i + 1}: {v.message}" if many else v.message,
                              **({"trial": i + 1} if many else {})})  # fmt: skip
    return {
        "peak_rps": curve.peak_rps,
        "peak_rps_load": curve.peak_rps_load,
        "peak_throughput_Bps": curve.peak_throughput_Bps,
        "peak_throughput_load": curve.peak_throughput_load,
        "saturated": curve.saturated,
        "verdict": curve.verdict,
        "past_peak_ratio": curve.past_peak_ratio,
        "shape": curve.shape,
        "max_error_rate": curve.max_error_rate,
        "verdicts": sorted(found, key=lambda v: rank_of(v["kind"])),
        "limit": curve.limit.to_json() if curve.limit else None,
        "limited_by": decided_by(curve.limit.kind, "at the peak", "the peak", curve.limit.figures)
        if curve.limit
        else None,
    }


def _fairness(f: Fairness | None) -> dict[str, Any] | None:
    """Per-client req/s at the peak load (every trial's clients together): WebBench's client scores."""
    if f is None:
        return None
    return {
        "load": f.load,
        "clients": [
            {"trial": c.trial, "client": c.client, "rps": c.rps, "share_of_mean": c.share_of_mean} for c in f.clients
        ],
        "mean_rps": f.mean_rps,
        "min_rps": f.min_rps,
        "max_rps": f.max_rps,
        "cv": f.cv,
        "min_over_max": f.min_over_max,
    }


# -- across configurations --------------------------------------------------------------------


def _comparison(
    configs: list[Configuration],
    table: PeakTable,
    entries: list[dict[str, Any]],
    load_axis: str,
    method: IntervalMethod,
) -> dict[str, Any]:
    ranked = table.ranking()
    paired: list[dict[str, Any]] = []
    for pos, i in enumerate(ranked):
        for j in ranked[pos + 1 :]:
            paired.append(_paired(configs[i], configs[j], load_axis, method))
    return {
        "ranking": [configs[i].label for i in ranked],
        "improvement_pct": [
            {"a": table.rows[i].label, "b": table.rows[j].label, "pct": table.improvement_pct[i][j]}
            for i in ranked
            for j in ranked
            if i != j
        ],
        "paired": paired,
        "paired_throughput": [
            _paired(configs[i], configs[j], load_axis, method, "throughput_Bps")
            for pos, i in enumerate(ranked)
            for j in ranked[pos + 1 :]
        ],
        "by_load": _by_load(entries, ranked[0]),
    }


def _paired(
    a: Configuration, b: Configuration, load_axis: str, method: IntervalMethod, metric: str = "rps"
) -> dict[str, Any]:
    try:
        result: PairedResult = paired_difference(a, b, metric, load_axis, method.confidence, method.quantile)
    except ConfigError as exc:  # no load in common: a fact of the report, not a failure
        return {"a": a.label, "b": b.label, "n": 0, "mean_diff": None, "sd": None, "ci95": None,
                "significant": False, "verdict": "not comparable", "note": str(exc),
                "mean_a": None, "mean_b": None, "metric": metric, "interval": method.name}  # fmt: skip
    return paired_json(result, method)


def _by_load(entries: list[dict[str, Any]], best: int) -> list[dict[str, Any]]:
    """req/s of every configuration at every load any of them measured, and the leader's gain over each."""
    loads = sorted({p["load"] for e in entries for p in e["points"]})
    rows: list[dict[str, Any]] = []
    for load in loads:
        values = [next((p["rps"] for p in e["points"] if p["load"] == load), None) for e in entries]
        lead = values[best]
        gains = [
            None if i == best or lead is None or v is None else percent_improvement(lead, v)
            for i, v in enumerate(values)
        ]  # fmt: skip
        rows.append({"load": load, "rps": values, "leader_gain_pct": gains})
    return rows


def _scaling(configs: list[Configuration], load_axis: str) -> list[dict[str, Any]] | None:
    cpus = {str(c.factors.get(CPUS_FACTOR)) for c in configs if CPUS_FACTOR in c.factors}
    if len(cpus) < 2:
        return None
    return [
        {"group": r.group_label, "label": r.label, "cpus": r.cpus, "base_cpus": r.base_cpus, "n": r.n,
         "peak_rps": r.peak_rps, "speedup": r.speedup, "efficiency": r.efficiency}
        for r in scaling(configs, load_axis)
    ]  # fmt: skip


# -- content-length sweeps (Zeus' weighted throughput) --------------------------------------


def _sweep(details: list[RunDetail], configs: list[Configuration]) -> dict[str, Any] | None:
    """Weighted throughput and throughput by content length per configuration, when every run is a sweep."""
    if not all(is_sweep(d) for d in details):
        return None
    note = None
    try:
        results = sweep_configurations([t for c in configs for t in c.trials], SPECWEB99_WEIGHTS)
    except ConfigError as exc:
        note = f"no weighted throughput: {exc}"
        results = []
    by_label = {r.label: r for r in results}
    entries: list[dict[str, Any]] = []
    for i, config in enumerate(configs):
        r = by_label.get(config.label)
        ci = r.ci95_Bps if r is not None else None
        entries.append({
            "index": i,
            "label": config.label,
            "trials": len(config.trials),
            "weighted_Mbps": r.mean_Bps * 8 / 1e6 if r is not None else None,
            "weighted_Mbps_ci95": [ci[0] * 8 / 1e6, ci[1] * 8 / 1e6] if ci else None,
            "trial_Mbps": [t.value_Mbps for t in r.trials] if r is not None else [],
            "per_class_Mbps": {c: v * 8 / 1e6 for c, v in r.trials[0].per_class.items()} if r and len(r.trials) == 1 else None,
            "excluded_sizes": list(r.trials[0].excluded) if r is not None else [],
            "points": [
                {"size_bytes": p.size_bytes, "class": size_class(p.size_bytes), "throughput_Bps": p.throughput_Bps,
                 "n": p.n} for p in size_means(config.trials)
            ],
        })  # fmt: skip
    return {"weights": dict(SPECWEB99_WEIGHTS), "configurations": entries, "note": note}


def _capacity(detail: RunDetail, label: str) -> dict[str, Any]:
    """A capacity search: its probes in order (load, phase, met or the conditions broken), the answer
    and the confidence statement, and each condition's margin at the answer."""
    r = capacity_result(detail)
    return {
        "run_id": detail.id,
        "label": label,
        "rule": r.rule,
        "axis": r.axis,
        "answer": r.answer,
        "failed": r.failed,
        "complete": r.complete,
        "trials": r.trials,
        "statement": r.statement(),
        "probes": [
            {"index": p.index, "load": p.load, "phase": p.phase, "passed": p.passed, "failures": list(p.failures),
             "rps": p.point.rps, "error_rate": p.point.error_rate, "latency_us": dict(p.point.latency_us),
             "conforming_share": p.point.conforming_share}
            for p in r.probes
        ],
        "margins": [
            {"condition": m.condition.text, "metric": m.condition.metric, "bound": m.condition.bound,
             "mean": m.mean, "ci95": list(m.interval) if m.interval else None, "at_failed": m.at_failed}
            for m in r.margins
        ],
    }  # fmt: skip


def _throughput(detail: RunDetail, label: str) -> dict[str, Any]:
    """A run judged by throughput (a file-server run, a NetBench table): Mbit/s per mix, the peak and the
    shape past it, and for a file run the operation kinds at the peak."""
    curve = run_throughput(detail)
    peak = next((m for m in detail.mixes if m.index == curve.peak_index), None)
    operations = []
    if peak is not None:
        for name, c in sorted(peak.classes.items()):
            if c.get("requests") or c.get("errors"):
                lat = c.get("latency_us") or {}
                operations.append({
                    "operation": name, "count": c.get("requests", 0), "ops_per_s": c.get("rps", 0.0),
                    "throughput_Bps": c.get("throughput_Bps", 0.0), "mean_us": lat.get("mean"),
                    "p99_us": lat.get("p99"), "errors": c.get("errors", 0),
                })  # fmt: skip
    return {
        "run_id": detail.id, "label": label, "statement": curve.statement, "load_axis": curve.load_axis,
        "peak_mbit_s": curve.peak_mbit_s, "peak_load": curve.peak_load, "peak_mix": curve.peak_index,
        "shape": curve.shape, "past_peak_ratio": curve.past_peak_ratio,
        "points": [
            {"mix": p.index, "load": p.load, "mbit_s": p.mbit_s, "netbench_mbit_s": p.netbench_mbit_s,
             "mb_s": p.mb_s, "per_client_mbit_s": p.per_client_mbit_s, "ops_per_s": p.ops_s, "errors": p.errors}
            for p in curve.points
        ],
        "operations": operations,
    }  # fmt: skip


def _specweb99(detail: RunDetail, label: str) -> dict[str, Any]:
    """A SPECweb99 test as the kit reports it: the verdict and every rule broken, the iterations, and the
    median iteration's conformance, per-class and POST-log tables."""
    r = specweb99_result(detail)
    median = r.median
    return {
        "run_id": detail.id,
        "label": label,
        "verdict": r.verdict(),
        "valid": r.valid,
        "conforming_length": r.conforming_length,
        "failures": r.failures,
        "conforming": median.conforming if median else None,
        "median": median.index if median else None,
        "iterations": [_iteration(i) for i in r.iterations],
    }


def _iteration(it: Iteration) -> dict[str, Any]:
    return {
        "index": it.index, "requested": it.requested, "valid": it.valid, "invalid": it.invalid,
        "conforming": it.conforming, "ops_per_s": it.ops_per_s, "ops_per_s_per_connection": it.ops_per_s_per_connection,
        "msec_per_op": it.msec_per_op, "bit_rate_bps": list(it.bit_rate_bps),
        "cumulative": [{"limit_bps": limit, "share": share} for limit, share in it.cumulative],
        "classes": [
            {"class": c.file_class, "target_share": c.target_share, "share": c.share, "requests": c.requests,
             "errors": c.errors, "error_rate": c.error_rate, "mean_latency_ms": c.mean_latency_ms,
             "throughput_bps": c.throughput_bps}
            for c in it.classes
        ],
        "operations": dict(it.operations), "post_log": it.post_log, "failures": list(it.failures),
    }  # fmt: skip


# -- per mix and per run ------------------------------------------------------------------------


def _mix_rows(detail: RunDetail, label: str, index: int, load_axis: str) -> list[dict[str, Any]]:
    mixes = {m.index: m for m in detail.mixes}
    rows: list[dict[str, Any]] = []
    for point in points_from_run(detail, load_axis):
        mix = mixes[point.index]
        rows.append({
            "configuration": label, "configuration_index": index, "run_id": detail.id,
            "trial": detail.meta.repeat_index + 1, "mix": point.index, "load": point.load,
            "clients": point.clients, "threads": point.threads, "connections": point.connections,
            "window_s": point.window_s, "requests": point.requests, "responses": mix.responses,
            "rps": point.rps, "throughput_Bps": point.throughput_Bps, "body_bytes": mix.body_bytes,
            "errors": point.errors, "error_rate": point.error_rate, "errors_by_kind": _errors(mix),
            "latency_us": {k: point.latency_us.get(k) for k in (*_LATENCY_KEYS, "max", "mean")},
            "target_cpu_pct": point.target_cpu_pct, "engine_cpu_pct": point.engine_cpu_pct,
            "client_bound": point.client_bound, "littles_load_factor": point.littles_load_factor,
            "status": {str(k): int(v) for k, v in mix.status.items()}, "verdicts": [v.to_json() for v in point.verdicts],
        })  # fmt: skip
        if mix.size_bytes is not None:
            rows[-1]["size_bytes"] = mix.size_bytes
    return rows


def _errors(mix: MixRecord) -> dict[str, int]:
    return {str(kind): int(n) for kind, n in mix.errors.items() if int(n)}


def _run(detail: RunDetail, label: str) -> dict[str, Any]:
    meta = detail.meta
    config = meta.config if isinstance(meta.config, dict) else {}
    server = config.get("server")
    options = config.get("options")
    who = identity(detail)  # the words `crest runs` and `crest show` use for this run
    try:
        result = run_result(detail).text
    except ConfigError:  # settings the analysis cannot replay: the run's other sections say why
        result = None
    return {
        "id": detail.id,
        "configuration": label,
        "kind": who.kind,
        "cluster": who.cluster,
        "setup": who.configuration,
        "result": result,
        "trial": who.trial,
        "suite": meta.suite,
        "profile": meta.profile,
        "target": meta.target,
        "status": detail.status,
        "reason": detail.reason,
        "started_at": detail.started_at,
        "ended_at": detail.ended_at,
        "mixes": len(detail.mixes),
        "factors": dict(meta.factors),
        "experiment": who.experiment,
        "host": dict(meta.host),
        "server": dict(server) if isinstance(server, dict) else None,
        "options": dict(options) if isinstance(options, dict) else {},
    }


def _hosts(details: list[RunDetail]) -> list[dict[str, Any]]:
    """The distinct load-generator hosts, each with the runs measured on it (none for published figures)."""
    seen: dict[str, dict[str, Any]] = {}
    for d in details:
        host = {k: v for k, v in d.meta.host.items() if k != "disclosure"}  # the Disclosure section shows it
        if not host:  # published figures (crest import): no host of crest's measured them
            continue
        key = repr(sorted((str(k), str(v)) for k, v in host.items()))
        seen.setdefault(key, {"facts": host, "runs": []})["runs"].append(d.id)
    return list(seen.values())


def _title(details: list[RunDetail], configs: list[Configuration]) -> str:
    """The suite, what was compared, and the kind of run when it is not a ladder: "webbench-static:
    nginx cpus=1 (capacity search)"."""
    suites = list(dict.fromkeys(d.meta.suite for d in details))
    suite = suites[0] if len(suites) == 1 else f"{len(suites)} suites"
    kinds = list(dict.fromkeys(identity(d).kind_words for d in details))
    kind = f" ({', '.join(kinds)})" if kinds != ["ladder"] else ""
    if len(configs) == 1:
        first = configs[0].trials[0]
        # A run without factors is labelled by its suite and target URL; its stored settings say more.
        label = configs[0].label if first.meta.factors else identity(first).configuration
        return f"{suite}: {label}{kind}"
    if len(configs) <= 3:
        return f"{suite}: " + " vs ".join(c.label for c in configs) + kind
    return f"{suite}: {len(configs)} configurations compared{kind}"
