"""`crest runs` and `crest show RUN_ID`: list stored runs and show one run's mixes; reads the store, never writes it.

Every string that came from a target, a suite or the file is printed as a rich
Text with control characters made visible, so it can neither inject markup nor
terminal escape sequences.
"""

from __future__ import annotations

import json
import math
import textwrap
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.text import Text

from crest.analysis.h2 import run_http_version
from crest.analysis.identity import (
    RunIdentity,
    RunResult,
    identity,
    needs_detail,
    run_result,
    summary_identity,
    summary_result,
)
from crest.analysis.peak import highest
from crest.analysis.throughput import judged_by_throughput, run_throughput
from crest.cli import EXIT_OK
from crest.cli.render import render_nodes
from crest.cli.render_h2 import h2_table
from crest.cli.render_network import render_network
from crest.cli.terminal import Column, FitTable
from crest.cli.terminal import console as _console
from crest.cli.terminal import safe as _safe
from crest.cli.terminal import safe_str as _safe_str
from crest.errors import ConfigError
from crest.store import DEFAULT_PATH, MixRecord, RunDetail, RunSummary, Store, StoreError, no_run_error
from crest.units import format_bytes, format_count, format_latency_us, format_seconds
from crest.verdicts import TARGET_IDLE, Verdict, decided_by, has, rank_of

_LABEL_WIDTH = 10
_HOST_FIELDS = (("hostname", "{}"), ("kernel", "{}"), ("cpu_model", "{}"), ("cpus", "{} CPUs"),
                ("python", "Python {}"), ("crest_version", "crest {}"), ("engine_version", "engine {}"))  # fmt: skip

DbOption = Annotated[Path, typer.Option("--db", metavar="PATH", help="The results database to read.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON to stdout and nothing else.")]


def runs_command(db: DbOption = DEFAULT_PATH, json_output: JsonOption = False) -> int:
    """List the stored runs, newest first: id, kind, experiment, suite, configuration, status, mixes and result."""
    listed: list[tuple[RunSummary, RunIdentity, RunResult]] = []
    if db.exists():  # a listing never creates the file
        with Store(db) as store:
            for s in store.runs():
                # Only a capacity search or a SPECweb99 test needs its mixes replayed for its result.
                result = _result(store.run(s.id)) if needs_detail(s) else summary_result(s)
                listed.append((s, summary_identity(s), result))
    if json_output:
        print(json.dumps([_summary_json(s, who, result) for s, who, result in listed]), flush=True)
        return EXIT_OK
    console = _console()
    if not listed:
        console.print(Text(f"no runs yet in {_safe_str(str(db))}: start one with `crest run SUITE --target URL`"))
        return EXIT_OK
    table = FitTable([
        Column("id", "left"), Column("kind", "left", wrap=True), Column("experiment", "left"),
        Column("suite", "left", wrap=True), Column("configuration", "left", legend=True),
        Column("status", "left", wrap=True), Column("mixes"), Column("result", wrap=True), Column("started", "left"),
    ])  # fmt: skip
    for s, who, result in listed:
        table.add_row(
            _safe(s.id), _kind_cell(who), _safe(who.experiment or "-"), _safe(s.suite), _safe(who.configuration),
            _safe(s.status), str(s.mixes), _safe(result.text), _local_time(s.started_at),
        )  # fmt: skip
    console.print(table)
    return EXIT_OK


def _result(detail: RunDetail) -> RunResult:
    """The run's result; a record the analysis cannot read (settings of an older crest) shows none."""
    try:
        return run_result(detail)
    except ConfigError:
        return RunResult("-")


def _kind_cell(who: RunIdentity) -> str:
    return who.kind + (" (cluster)" if who.cluster else "")


def show_command(
    run_id: Annotated[
        str,
        typer.Argument(
            metavar="RUN_ID", help="A run id from `crest runs`, or a unique start of one.", show_default=False
        ),
    ],
    db: DbOption = DEFAULT_PATH,
    json_output: JsonOption = False,
) -> int:
    """Show one run: what ran where, and each mix in ladder order with req/s, throughput, latency and errors."""
    if not db.exists():  # reading never creates the file
        raise no_run_error(db, run_id)
    with Store(db) as store:
        detail = store.run(run_id)
        apart = _trials_apart(store, detail)
    if json_output:
        print(json.dumps(_detail_json(detail)), flush=True)
        return EXIT_OK
    console = _console()
    header = _header(detail, console.width)
    console.print(header[0])
    for line in _limit_lines(detail, console.width):  # what decided the result, before anything else about it
        console.print(line)
    for line in header[1:]:
        console.print(line)
    if not detail.mixes:
        console.print(Text("\n  no mixes stored yet"))
        return EXIT_OK
    console.print()
    console.print(_mix_table(detail.mixes))
    if judged_by_throughput(detail):
        _print_throughput(console, detail)
    at = highest([m.rps for m in detail.mixes])  # mixes are in ladder order: the one curve of this run
    if at is not None:
        peak = detail.mixes[at]
        console.print(Text(f"  {'Peak':<{_LABEL_WIDTH}}{peak.rps:,.1f} req/s at {_load(peak)} (mix {peak.index})"))
    for line in _lab_lines(detail.mixes):
        console.print(line)
    for mix in detail.mixes:
        if mix.cluster:
            count = len(mix.cluster["nodes"])
            console.print(Text(f"\n  mix {mix.index} on {count} node{'s' if count != 1 else ''}"))
            for row in render_nodes(mix.cluster, titled=False).splitlines():  # its title names no mix
                console.print(_safe(row))
    for mix in detail.mixes:
        if mix.network:
            console.print(Text(f"\n  mix {mix.index}, client network:"))
            for row in render_network(mix.network).splitlines()[1:]:  # its title names no mix
                console.print(_safe(row))
    pages = _pages_table(detail.mixes)
    if pages is not None:
        console.print()
        console.print(pages)
    h2 = h2_table(detail.mixes, run_http_version(detail.meta.config))
    if h2 is not None:
        console.print()
        console.print(h2)
    # In the one order of crest.verdicts.RANK, whichever mix: what decided a result first.
    found = [(f"mix {mix.index}: ", v) for mix in detail.mixes for v in mix.verdicts]
    found += [("", v) for v in _run_verdicts(detail)]
    for where, verdict in sorted(found, key=lambda f: rank_of(f[1].kind)):
        for line in _label_block("warning:", where + verdict.message, console.width, label_width=9):
            console.print(line)
    if apart is not None:
        for line in _label_block("warning:", apart, console.width, label_width=9):
            console.print(line)
    return EXIT_OK


def _trials_apart(store: Store, detail: RunDetail) -> str | None:
    """When the run is a trial of a configuration whose trials (the other runs of its experiment with the
    same configuration) disagree beyond run-to-run noise: the report's sentence for it; else None."""
    from crest.analysis.group import configurations
    from crest.analysis.peak import trials_apart
    from crest.analysis.points import default_load_axis
    from crest.report.build import trials_apart_json
    from crest.report.narrative import trials_apart_line

    experiment = detail.meta.config.get("experiment") if isinstance(detail.meta.config, dict) else None
    if not isinstance(experiment, str) or not detail.mixes:
        return None
    try:
        runs = [d for d in store.select([experiment]) if d.mixes]
        mine = next((c for c in configurations(runs) if any(t.id == detail.id for t in c.trials)), None)
        if mine is None or mine.trial_count() < 2:
            return None
        found = trials_apart([p for p in mine.trial_points(default_load_axis(mine.trials)) if p])
    except (ConfigError, StoreError):  # a run of another kind (no curve), or an experiment it no longer names
        return None
    said = trials_apart_json(found)
    return None if said is None else trials_apart_line(said)


def _pages_table(mixes: list[MixRecord]) -> FitTable | None:
    """A HAR replay's page loads per mix: loads, loads/s, the load time's p50, p99 and max, failed loads."""
    from crest.analysis.pages import page_loads

    rows = page_loads(mixes)
    if not rows:
        return None
    names = ("loads", "loads/s", "load p50", "load p99", "load max", "failed")
    table = FitTable([Column("mix"), Column("page", "left")] + [Column(n) for n in names], title="page loads")
    for r in rows:
        table.add_row(
            str(r.mix), _safe(r.page), f"{r.loads:,}", f"{r.loads_per_s:,.2f}", _page_us(r.p50_us),
            _page_us(r.p99_us), _page_us(r.max_us), f"{r.failed:,}",
        )  # fmt: skip
    return table


def _page_us(value: float | None) -> str:
    return "-" if value is None else format_latency_us(value)


def _label_block(label: str, text: str, width: int, style: str = "", label_width: int = _LABEL_WIDTH) -> list[Text]:
    """`  label     text`, its wrapped lines under its own start (never back at the margin)."""
    rows = textwrap.wrap(text, max(20, width - 2 - label_width), break_long_words=False, break_on_hyphens=False)
    first = Text(f"  {label:<{label_width}}", style=style) + _safe(rows[0] if rows else "")
    return [first, *(Text(" " * (2 + label_width)) + _safe(row) for row in rows[1:])]


def _limit_lines(detail: RunDetail, width: int) -> list[Text]:
    """`limit` and what decided the run's peak when the target did not (the analysis's curve limit)."""
    from crest.analysis.points import default_load_axis, points_from_run
    from crest.analysis.summary import summarize

    try:
        limit = summarize(points_from_run(detail, default_load_axis([detail]))).limit
    except ConfigError:  # no mix with a measured req/s: no peak to judge
        return []
    if limit is None:
        return []
    return _label_block(
        "limit", decided_by(limit.kind, "at the peak", "the peak", limit.figures) or limit.message, width, "bold"
    )


def _print_throughput(console: Console, detail: RunDetail) -> None:
    """A file-server run's (or a NetBench table's) headline: throughput per mix, its peak and shape."""
    from crest.cli.render_throughput import operations_table, statement, throughput_table

    try:
        curve = run_throughput(detail)
    except ConfigError:
        return
    console.print(throughput_table(curve))
    console.print(statement(curve))
    peak = next((m for m in detail.mixes if m.index == curve.peak_index), None)
    ops = operations_table(peak) if peak is not None else None
    if ops is not None:
        console.print()
        console.print(ops)


def _run_verdicts(detail: RunDetail) -> list[Verdict]:
    """What only the whole run shows (the target idle at its peak), as the analysis judges it;
    a file of schema 1 may already carry it on the peak mix."""
    from crest.analysis.points import default_load_axis, points_from_run
    from crest.analysis.summary import summarize

    if any(has(m.verdicts, TARGET_IDLE) for m in detail.mixes):
        return []
    try:
        summary = summarize(points_from_run(detail, default_load_axis([detail])))
    except ConfigError:  # no mix with a measured req/s: no peak to judge
        return []
    return [v for v in summary.verdicts if v.kind == TARGET_IDLE]


def _header(detail: RunDetail, width: int) -> list[Text]:
    meta = detail.meta
    who = identity(detail)
    status = detail.status + (f" ({detail.reason})" if detail.reason else "")
    started = _local_time(detail.started_at, seconds=True)
    if detail.ended_at is not None:
        started += f", ended {_local_time(detail.ended_at, seconds=True)} ({format_seconds(round(detail.ended_at - detail.started_at))})"
    lines = [
        Text("Run ") + _safe(detail.id),
        _labelled("kind", who.kind_words + (f", experiment {who.experiment}" if who.experiment else "")),
        _labelled("setup", who.configuration),
        *_result_lines(_result(detail), width),
        _labelled("suite", f"{meta.suite} (profile {meta.profile}, trial {who.trial})"),
        _labelled("target", meta.target),
        _labelled("status", status),
        _labelled("started", started),
    ]
    host = [fmt.format(meta.host[key]) for key, fmt in _HOST_FIELDS if meta.host.get(key) not in (None, "")]
    if host:
        lines.append(_labelled("host", " · ".join(host)))
    if meta.factors:
        lines.append(_labelled("factors", ", ".join(f"{k}={v}" for k, v in meta.factors.items())))
    server = meta.config.get("server")
    if isinstance(server, dict):
        cpus = meta.config.get("cpus") or {}
        where = (
            f" · target cores {_cores(cpus.get('target'))}{_quota(cpus)}, engine cores {_cores(cpus.get('engine'))}"
            if cpus
            else ""
        )
        if server.get("node_id"):
            node = _node_name(server, (meta.config.get("options") or {}).get("target_node"))
            where = f" · on node {node} ({server.get('node_ip', '?')}), cores {_cores(server.get('cpus'))}"
        limit = f" · memory limit {format_bytes(server['memory_bytes'])}" if server.get("memory_bytes") else ""
        roles = server.get("roles")
        version = (
            ", ".join(f"{role} {m.get('version', '?')}" for role, m in roles.items())
            if isinstance(roles, dict)
            else str(server.get("version", "?"))
        )
        lines.append(_labelled("server", f"{version}{where}{limit}"))
    return lines


def _result_lines(result: RunResult, width: int) -> list[Text]:
    """What a capacity search found (its answer, then its statement) or a SPECweb99 test's verdict and
    conforming connections, with every rule it broke; a ladder's peak has its own line below the mixes."""
    if result.capacity is not None:
        search = result.capacity
        answer = result.capacity_phrase() or result.text
        return [_labelled("answer", f"{answer} (rule {search.rule})"), *_label_block("", search.statement(), width)]
    if result.specweb99 is not None:
        test = result.specweb99
        median = test.median
        metric = f"{median.conforming} conforming connections" if median else "no iteration stored"
        lines = [_labelled("result", f"{metric} · {test.verdict()}")]
        return lines + [row for failure in test.failures for row in _label_block("", f"INVALID: {failure}", width)]
    return []


def _node_name(server: dict[str, Any], asked: Any) -> str:
    """The target's node as the user named it (--target-node), else by the name the cluster gives it."""
    if asked:
        return str(asked)
    names = server.get("node_names")
    return str(names[0]) if isinstance(names, list) and names else str(server["node_id"])[:8]


def _lab_lines(mixes: list[MixRecord]) -> list[Text]:
    """What the lab did around the mixes beside their load: restarts and warm-up passes (never measured)."""
    lines = []
    for m in mixes:
        lab = m.lab or {}
        done = []
        if lab.get("preflight_requests"):
            n = int(lab["preflight_requests"])
            done.append(f"preflight sent {n} request{'' if n == 1 else 's'} before it (not measured)")
        if "restart" in lab:
            done.append(f"target restarted before it ({len(lab['restart'].get('pids_after') or [])} new processes)")
        warm = lab.get("warmup")
        if isinstance(warm, dict):
            done.append(f"warm-up pass of {warm.get('requests', 0):,} requests, {warm.get('errors', 0)} errors"
                        " (not measured)")  # fmt: skip
        if done:
            lines.append(Text(f"  mix {m.index}: " + "; ".join(done)))
    return lines


def _quota(cpus: dict[str, Any]) -> str:
    """A fractional --cpus as stored: the share and the CFS quota behind it."""
    if not cpus.get("quota_us"):
        return ""
    return f" at {cpus['cpus']} CPU (CFS quota {cpus['quota_us']} µs every {cpus['period_us']} µs)"


def _cores(cores: Any) -> str:
    return ",".join(str(c) for c in cores) if cores else "all"


def _labelled(label: str, text: str) -> Text:
    return Text(f"  {label:<{_LABEL_WIDTH}}") + _safe(text)


def _mix_table(mixes: list[MixRecord]) -> FitTable:
    monitored = any("target" in m.monitor for m in mixes)
    names = ["mix", "clients", "threads", "conns", "window", "requests", "req/s", "MB/s", "p50", "p99", "errors"]
    table = FitTable([Column(name) for name in names + (["target cpu", "engine cpu"] if monitored else [])])
    for m in mixes:
        cells = [
            str(m.index), format_count(m.clients), format_count(m.threads_per_client), format_count(m.connections),
            format_seconds(m.window_s), format_count(m.requests), f"{m.rps:,.1f}", f"{m.throughput_Bps / 1e6:,.2f}",
            _latency(m, "p50"), _latency(m, "p99"), format_count(m.error_count),
        ]  # fmt: skip
        if monitored:
            cells += [_util(m.monitor.get("target")), _util(m.monitor.get("engine"))]
        table.add_row(*cells)
    return table


def _util(cpu: Any) -> str:
    """CPU use as a share of the cores given, e.g. "87% of 1"."""
    if not isinstance(cpu, dict) or "cpu_util_pct" not in cpu:
        return "-"
    return f"{cpu['cpu_util_pct']:.0f}% of {cpu.get('cores', '?')}"


def _latency(mix: MixRecord, key: str) -> str:
    value = mix.latency_us.get(key)
    return "-" if value is None or mix.responses == 0 else format_latency_us(float(value))


def _load(mix: MixRecord) -> str:
    threads = mix.threads_per_client
    return (f"{format_count(mix.clients)} client{'s' if mix.clients != 1 else ''}"
            f" × {threads} thread{'s' if threads != 1 else ''}")  # fmt: skip


def _local_time(unix_s: float, *, seconds: bool = False) -> str:
    return datetime.fromtimestamp(unix_s).strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M")


def _summary_json(s: RunSummary, who: RunIdentity, result: RunResult) -> dict[str, Any]:
    return {
        "id": s.id, "kind": who.kind, "cluster": who.cluster, "experiment": who.experiment,
        "configuration": who.configuration, "suite": s.suite, "target": s.target, "profile": s.profile,
        "trial": who.trial, "repeat_index": s.repeat_index,
        "status": s.status, "reason": s.reason, "started_at": s.started_at, "ended_at": s.ended_at,
        "mixes": s.mixes, **_result_json(result), "factors": s.factors,
    }  # fmt: skip


def _result_json(result: RunResult) -> dict[str, Any]:
    """The result as typed fields: the phrase, the peak, and a capacity search's or SPECweb99 test's own."""
    capacity = specweb99 = None
    if result.capacity is not None:
        c = result.capacity
        capacity = {"answer": c.answer, "axis": c.axis, "rule": c.rule, "complete": c.complete,
                    "at_ceiling": c.at_ceiling, "statement": c.statement()}  # fmt: skip
    if result.specweb99 is not None:
        t = result.specweb99
        specweb99 = {"verdict": t.verdict(), "valid": t.valid,
                     "conforming_connections": t.median.conforming if t.median else None}  # fmt: skip
    return {
        "result": result.text, "peak_rps": _finite(result.peak_rps), "peak_mbit_s": _finite(result.peak_mbit_s),
        "capacity": capacity, "specweb99": specweb99,
    }  # fmt: skip


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _detail_json(d: RunDetail) -> dict[str, Any]:
    meta = d.meta
    who = identity(d)
    return {
        "id": d.id, "kind": who.kind, "cluster": who.cluster, "experiment": who.experiment,
        "configuration": who.configuration, "suite": meta.suite, "target": meta.target, "profile": meta.profile,
        "trial": who.trial, "repeat_index": meta.repeat_index, "status": d.status, "reason": d.reason,
        "started_at": d.started_at, "ended_at": d.ended_at, **_result_json(_result(d)),
        "factors": meta.factors, "host": meta.host, "config": meta.config,
        "mixes": [_mix_json(m) for m in d.mixes],
    }  # fmt: skip


def _mix_json(m: MixRecord) -> dict[str, Any]:
    # The histogram stays in the store: it is for merging and re-analysis, not for reading.
    return {
        "index": m.index, "clients": m.clients, "threads": m.threads_per_client, "connections": m.connections,
        "started_at": m.started_at, "ended_at": m.ended_at, "window_s": m.window_s,
        "requests": m.requests, "responses": m.responses, "bytes": m.bytes, "body_bytes": m.body_bytes,
        "rps": m.rps, "throughput_Bps": m.throughput_Bps,
        "errors": m.error_count, "errors_by_kind": m.errors, "latency_us": m.latency_us, "status": m.status,
        "classes": m.classes, "client_scores": m.client_scores, "timeline": m.timeline,
        "monitor": m.monitor, "verdicts": [v.to_json() for v in m.verdicts],
        "size_bytes": m.size_bytes, "client_cpu_s": m.client_cpu_s, "connections_opened": m.connections_opened,
        "access_log_requests": m.access_log_requests, "cluster": m.cluster, "lab": m.lab, "network": m.network,
        "h2": m.h2, "naps": m.naps,
    }  # fmt: skip
