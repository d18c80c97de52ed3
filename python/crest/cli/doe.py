"""`crest doe`: 2^k factorial experiments — run a DESIGN file or built-in design, or `--analyze DATA.csv --response COL`.

Owns the command's options and how a DoeResult is printed (a table, or JSON
with --json); crest.experiment.design turns a design into runs, crest.analysis.doe
does the arithmetic.
"""

from __future__ import annotations

import csv
import json
import sys
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.text import Text

from crest.analysis.csvdata import read_csv
from crest.analysis.doe import ERROR, MEAN, DoeResult, analyze
from crest.cli import EXIT_OK, cluster_options, engine_options, target_options, terminal, watching
from crest.cli.cluster_options import NETWORK_HELP
from crest.cli.terminal import Column, FitTable
from crest.cli.terminal import safe as _safe
from crest.errors import ConfigError
from crest.store import DEFAULT_PATH
from crest.suite import PROFILES
from crest.units import parse_timeout

# Piped output is read in logs and files, where wrapping a table row helps nobody.
_PIPE_WIDTH = 200
# C0 and C1 control characters and DEL: column names and levels come from a user's file.


def doe_command(
    design: Annotated[
        str | None,
        typer.Argument(
            metavar="DESIGN",
            help="A design file (TOML) or a built-in design (kornecki-screening: Kornecki et al.'s 2^4 screening,"
            " 16 runs of 2 minutes) to run, then analyse; see docs/analysis.md.",
            show_default=False,
        ),
    ] = None,
    server: target_options.Server = None,
    profile: Annotated[
        str | None,
        typer.Option(
            "--profile",
            metavar="|".join(PROFILES),
            help="Mix lengths instead of the design's: quick (4 s), standard (≤ 60 s) or full (the suites' own).",
        ),
    ] = None,
    db: Annotated[Path, typer.Option("--db", help="Results store (SQLite) for the design's runs.")] = DEFAULT_PATH,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="No live progress.")] = False,
    analyze_path: Annotated[
        Path | None,
        typer.Option(
            "--analyze", metavar="DATA.csv", help="Analyse measured data: one row per experiment, a column per factor."
        ),
    ] = None,
    response: Annotated[
        str | None, typer.Option("--response", metavar="COLUMN", help="The measured column, e.g. rps.")
    ] = None,
    factors: Annotated[
        str | None,
        typer.Option("--factors", metavar="A,B,…", help="The factor columns (default: every column but the response)."),
    ] = None,
    generators: Annotated[
        list[str] | None,
        typer.Option("--generator", metavar="D=ABC", help="A generator of a fractional 2^(k-p) design; repeatable."),
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print JSON to stdout and nothing else.")] = False,
    cluster: cluster_options.Cluster = None,
    nodes: cluster_options.Nodes = None,
    allow_unauthenticated_cluster: cluster_options.AllowUnauthenticated = False,
    target_node: cluster_options.TargetNode = None,
    network: Annotated[str | None, typer.Option("--network", metavar="SPEC", help=NETWORK_HELP)] = None,
    access_log: target_options.AccessLog = False,
    insecure: target_options.Insecure = False,
    timeout: target_options.Timeout = "10s",
    nap: engine_options.Nap = True,
    ui: watching.Ui = False,
    ui_address: watching.UiAddress = None,
    metrics: watching.Metrics = None,
    jsonl: watching.Jsonl = None,
) -> int:
    """Analyse a 2^k (or fractional 2^(k-p)) factorial experiment: effects, allocation of variation, CIs."""
    if design is not None:
        if analyze_path is not None:
            raise ConfigError("give either a DESIGN to run or --analyze DATA.csv, not both")
        # What every run of the design shares, beside the design's own settings and factors.
        placement = {"cluster": cluster, "nodes": cluster_options.count(nodes, "--nodes"), "target_node": target_node,
                     "network": network, "access_log": access_log, "insecure": insecure,
                     "timeout_s": parse_timeout(timeout), "nap": nap}  # fmt: skip
        if server is not None and "," in server and "=" not in server:  # a role map is one target
            raise ConfigError(f"--server {server}: a design runs on one server; to compare servers, make server"
                              f' a factor of a design file (server = ["{server.split(",")[0]}", …])')  # fmt: skip
        watch = watching.options(ui, ui_address, metrics, jsonl)
        return _run_design(design, db, quiet, json_output, placement, {"server": server, "profile": profile}, watch)
    if watching.options(ui, ui_address, metrics, jsonl).any():
        raise ConfigError("--ui, --metrics and --jsonl watch a DESIGN as it runs: give a DESIGN, or drop them")
    if server is not None or profile is not None:
        raise ConfigError("--server and --profile choose how a DESIGN runs: give a DESIGN, or drop them")
    if analyze_path is None:
        raise ConfigError("nothing to do: give a DESIGN.toml to run, or --analyze DATA.csv --response COLUMN")
    return _analyze(analyze_path, response, factors, generators or [], json_output)


def _run_design(
    path: str,
    db: Path,
    quiet: bool,
    json_output: bool,
    placement: dict[str, Any],
    overrides: dict[str, Any],
    watch_options: watching.WatchOptions,
) -> int:
    from crest.cli.run import Progress, announce
    from crest.experiment.design import load_design, run_design, with_overrides

    d = with_overrides(load_design(path), **overrides)
    watcher = Progress(enabled=not quiet and sys.stderr.isatty())
    watch = watching.Watching(watch_options, db)
    try:
        experiment_id, runs = run_design(d, store_path=db, on_event=watch.on_event(watcher.on_event),
                                         placement=placement,
                                         on_ready=partial(announce, watcher, quiet or json_output, watch))  # fmt: skip
    finally:
        watcher.stop()
        watch.stop()
    out = db.parent / "doe" / f"{experiment_id}.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    names = list(d.factor_levels)
    with out.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow([*names, d.response, "run_id"])
        writer.writerows([[r.levels[n] for n in names] + [r.response, r.run_id] for r in runs])
    result = analyze([{**r.levels, d.response: r.response} for r in runs], d.response, names, d.generators)
    if json_output:
        print(json.dumps({**result_json(result), "experiment": experiment_id, "data": str(out)}), flush=True)
        return EXIT_OK
    _print(result)
    if d.notes:  # what stood in for what the seed had: read beside the effects, not after the fact
        terminal.console(_PIPE_WIDTH).print(Text("\nnotes: ") + _safe(d.notes))
    print(f"\nexperiment {experiment_id}: {len(runs)} runs; data in {out}")
    print(f"re-analyse: crest doe --analyze {out} --response {d.response} --factors {','.join(names)}")
    print(f"report:     crest report {experiment_id}")
    return EXIT_OK


def _analyze(path: Path, response: str | None, factors: str | None, generators: list[str], json_output: bool) -> int:
    table = read_csv(path)
    if response is None:
        raise ConfigError(f"--analyze needs --response COLUMN: one of {', '.join(table.columns)}")
    factor_columns = [f.strip() for f in factors.split(",") if f.strip()] if factors is not None else None
    result = analyze(table.rows, response, factor_columns, generators)
    if json_output:
        print(json.dumps(result_json(result)), flush=True)
        return EXIT_OK
    _print(result)
    return EXIT_OK


def result_json(result: DoeResult) -> dict[str, Any]:
    """The JSON `crest doe --analyze --json` prints."""
    return {
        "response": result.response,
        "replications": result.replications,
        "effects": result.effects,
        "variation_pct": result.variation_pct,
        "ci95": None if result.ci95 is None else {k: list(v) for k, v in result.ci95.items()},
        "levels": {f: list(v) for f, v in result.levels.items()},
        "aliases": result.aliases,
        "sst": result.sst,
        "sse": result.sse,
    }


def _print(result: DoeResult) -> None:
    console = terminal.console(_PIPE_WIDTH)
    combinations = len(result.effects)  # 2^k: the mean and 2^k − 1 terms
    reps = f"{result.replications} replication{'s' if result.replications != 1 else ''}"
    console.print(
        Text("2^k design of ") + _safe(result.response)
        + Text(f": {combinations} combinations × {reps} = {combinations * result.replications} experiments"
               + ("" if result.ci95 else " (no replications: no error estimate)"))
    )  # fmt: skip
    levels = FitTable([Column(name, "left", wrap=True) for name in ("factor", "low (-1)", "high (+1)")])
    for factor, (low, high) in result.levels.items():
        levels.add_row(_safe(factor), _safe(low), _safe(high))
    console.print()
    console.print(levels)
    console.print()
    console.print(_effects_table(result))


def _effects_table(result: DoeResult) -> FitTable:
    columns = [Column("term", "left", wrap=True), Column("effect"), Column("% variation")]
    if result.ci95 is not None:
        columns.append(Column("95% CI"))
    if result.aliases:
        columns.append(Column("aliased with", "left", wrap=True))
    table = FitTable(columns)
    for term, effect in result.effects.items():
        cells = [_safe(term), Text(_number(effect)), Text("" if term == MEAN else _percent(result.variation_pct[term]))]
        if result.ci95 is not None:
            low, high = result.ci95[term]
            cells.append(Text(f"[{_number(low)}, {_number(high)}]"))
        if result.aliases:
            cells.append(_safe(", ".join(result.aliases.get(term, []))))
        table.add_row(*cells)
    if ERROR in result.variation_pct:
        blank = [Text("")] * (len(table.columns) - 3)
        table.add_row(Text(ERROR), Text(""), Text(_percent(result.variation_pct[ERROR])), *blank)
    return table


def _percent(value: float) -> str:
    return "<0.01" if 0 < value < 0.005 else f"{value:.2f}"


def _number(value: float) -> str:
    # Three decimals at most (responses are req/s or bytes/s); tiny effects keep three significant digits.
    if value != 0 and abs(value) < 0.01:
        return f"{value:.3g}"
    text = f"{value:,.3f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text
