"""`crest doe`: 2^k factorial experiments; today `--analyze DATA.csv --response COL` (effects, % variation, CIs).

Owns the command's options and how a DoeResult is printed (a table, or JSON
with --json); crest.analysis.doe does the arithmetic. Running a DESIGN file
(one run per row of the design) is the next step: it plugs in at
_run_design without changing the analysis path.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from crest.analysis.csvdata import read_csv
from crest.analysis.doe import ERROR, MEAN, DoeResult, analyze
from crest.cli import EXIT_OK
from crest.errors import ConfigError

# Piped output is read in logs and files, where wrapping a table row helps nobody.
_PIPE_WIDTH = 200
# C0 and C1 control characters and DEL: column names and levels come from a user's file.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def doe_command(
    design: Annotated[
        Path | None,
        typer.Argument(metavar="[DESIGN]", help="A design file to run (not built yet: use --analyze).", show_default=False),
    ] = None,
    analyze_path: Annotated[
        Path | None,
        typer.Option("--analyze", metavar="DATA.csv", help="Analyse measured data: one row per experiment, a column per factor."),
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
) -> int:
    """Analyse a 2^k (or fractional 2^(k-p)) factorial experiment: effects, allocation of variation, CIs."""
    if design is not None:
        if analyze_path is not None:
            raise ConfigError("give either a DESIGN to run or --analyze DATA.csv, not both")
        return _run_design(design)
    if analyze_path is None:
        raise ConfigError("nothing to do: give --analyze DATA.csv --response COLUMN (running a DESIGN file comes later)")
    return _analyze(analyze_path, response, factors, generators or [], json_output)


def _run_design(design: Path) -> int:
    raise ConfigError(
        f"running a design is not built yet ({design}): run each configuration with `crest run`,"
        " then analyse the results with `crest doe --analyze DATA.csv --response COLUMN`"
    )


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
    console = Console(markup=False, emoji=False, highlight=False)
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console = Console(markup=False, emoji=False, highlight=False, width=_PIPE_WIDTH)
    combinations = len(result.effects)  # 2^k: the mean and 2^k − 1 terms
    reps = f"{result.replications} replication{'s' if result.replications != 1 else ''}"
    console.print(
        Text("2^k design of ") + _safe(result.response)
        + Text(f": {combinations} combinations × {reps} = {combinations * result.replications} experiments"
               + ("" if result.ci95 else " (no replications: no error estimate)"))
    )  # fmt: skip
    levels = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for name in ("factor", "low (-1)", "high (+1)"):
        levels.add_column(name)
    for factor, (low, high) in result.levels.items():
        levels.add_row(_safe(factor), _safe(low), _safe(high))
    console.print()
    console.print(levels)
    console.print()
    console.print(_effects_table(result))


def _effects_table(result: DoeResult) -> Table:
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    table.add_column("term")
    table.add_column("effect", justify="right")
    table.add_column("% variation", justify="right")
    if result.ci95 is not None:
        table.add_column("95% CI", justify="right")
    if result.aliases:
        table.add_column("aliased with")
    for term, effect in result.effects.items():
        cells = [_safe(term), Text(_number(effect)), Text("" if term == MEAN else _percent(result.variation_pct[term]))]
        if result.ci95 is not None:
            low, high = result.ci95[term]
            cells.append(Text(f"[{_number(low)}, {_number(high)}]"))
        if result.aliases:
            cells.append(_safe(", ".join(result.aliases.get(term, []))))
        table.add_row(*cells)
    if ERROR in result.variation_pct:
        table.add_row(Text(ERROR), Text(""), Text(_percent(result.variation_pct[ERROR])))
    return table


def _percent(value: float) -> str:
    return "<0.01" if 0 < value < 0.005 else f"{value:.2f}"


def _number(value: float) -> str:
    return f"{value:,.6g}"


def _safe(value: Any) -> Text:
    return Text(_CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(value)))
