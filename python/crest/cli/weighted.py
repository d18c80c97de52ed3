"""`crest weighted`: Zeus' weighted throughput of content-length sweeps, from stored runs or a CSV table.

NAME is a run id (or a unique start of one) or an experiment id; trials of one
configuration are grouped as in reports. `--csv FILE` reads columns size_bytes
and a throughput column (throughput_Bps / Bps in bytes/s, throughput_Mbps /
Mbps in Mbit/s), one row per content length. The arithmetic lives in
crest.analysis.weighted (imported when the command runs, not at start-up).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from crest.cli import EXIT_OK, terminal
from crest.cli.terminal import Column, FitTable
from crest.errors import ConfigError
from crest.store import DEFAULT_PATH

if TYPE_CHECKING:
    from crest.analysis.weighted import WeightedResult

# Throughput column name → bytes/s per unit of the column.
CSV_UNITS: dict[str, float] = {"throughput_Bps": 1.0, "Bps": 1.0, "throughput_Mbps": 1e6 / 8, "Mbps": 1e6 / 8}


def _mbps(value_Bps: float) -> str:
    return f"{value_Bps * 8 / 1e6:,.2f}"


def weighted_command(
    names: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[NAME...]",
            help="Run ids (or unique starts) or experiment ids of content-length sweeps.",
            show_default=False,
        ),
    ] = None,
    weights_text: Annotated[
        str | None,
        typer.Option("--weights", metavar="class0=35%,…", help="Class weights (default SPECweb99: 35/50/14/1 %)."),
    ] = None,
    csv_path: Annotated[
        Path | None,
        typer.Option("--csv", metavar="FILE", help="A table of size_bytes and throughput_Bps (or throughput_Mbps)."),
    ] = None,
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline",
            metavar="LABEL",
            help="Index each configuration's weighted throughput against this one (Zeus' index and percentage).",
        ),
    ] = None,
    db: Annotated[Path, typer.Option("--db", metavar="PATH", help="The results database to read.")] = DEFAULT_PATH,
) -> int:
    """Weighted throughput (Zeus' unbundled SPECweb99): each content-length class's mean throughput × its share, summed."""
    from crest.analysis.weighted import SPECWEB99_WEIGHTS, parse_weights, sweep_weighted_throughput

    weights = parse_weights(weights_text) if weights_text is not None else SPECWEB99_WEIGHTS
    if csv_path is not None and names:
        raise ConfigError("give run names or --csv FILE, not both")
    if csv_path is not None and baseline is not None:
        raise ConfigError("--baseline indexes stored configurations against each other: name runs, not --csv")
    if csv_path is not None:
        result = sweep_weighted_throughput(read_points(csv_path), weights)
        _print([(str(csv_path), result)], weights)
        return EXIT_OK
    if not names:
        raise ConfigError("name at least one sweep run or experiment (see `crest runs`), or give --csv FILE")
    _print_runs(db, names, weights, baseline)
    return EXIT_OK


def read_points(path: Path) -> list[tuple[int, float]]:
    """(size_bytes, throughput B/s) rows of a CSV table; ConfigError naming the file and line otherwise."""
    from crest.analysis.csvdata import read_csv

    table = read_csv(path)
    if "size_bytes" not in table.columns:
        raise ConfigError(
            f"{path} has no size_bytes column (has {', '.join(table.columns)}): name the content-length column size_bytes"
        )
    unit_columns = [c for c in table.columns if c in CSV_UNITS]
    if len(unit_columns) != 1:
        got = "none" if not unit_columns else " and ".join(unit_columns)
        raise ConfigError(f"{path} needs exactly one throughput column, one of {', '.join(CSV_UNITS)} (got {got})")
    column = unit_columns[0]
    points: list[tuple[int, float]] = []
    for i, row in enumerate(table.rows):
        try:
            size = int(row["size_bytes"])
            value = float(row[column])
        except ValueError:
            raise ConfigError(
                f"{table.where(i)}: size_bytes must be an integer and {column} a number"
                f" (got {row['size_bytes']!r}, {row[column]!r})"
            ) from None
        if size < 0:
            raise ConfigError(f"{table.where(i)}: size_bytes must be ≥ 0 (got {size})")
        points.append((size, value * CSV_UNITS[column]))
    return points


def _print_runs(db: Path, names: Sequence[str], weights: Mapping[str, float], baseline: str | None) -> None:
    from crest.analysis.compare import find_label
    from crest.analysis.weighted import sweep_configurations, weighted_index
    from crest.report import fmt as rfmt
    from crest.store import Store, no_run_error

    if not db.exists():
        raise no_run_error(db, names[0])
    with Store(db) as store:
        details = store.select(list(names))
    configs = sweep_configurations(details, weights)
    index = weighted_index(configs, baseline) if baseline is not None else None  # a bad label fails before output
    rows = [(f"{run_id}  {c.label}".rstrip(), r) for c in configs for run_id, r in zip(c.run_ids, c.trials)]
    _print(rows, weights)
    if any(len(c.trials) > 1 for c in configs) or index is not None:
        columns = [Column("configuration", "left", legend=True), Column("trials"), Column("weighted Mbit/s"),
                   Column("95% CI")]  # fmt: skip
        if baseline is not None:
            base = terminal.safe(configs[find_label([c.label for c in configs], baseline)].label)
            columns += [Column(f"% of {base}"), Column(f"index ({base}=1.00)")]
        table = FitTable(columns, title="per configuration")
        for i, c in enumerate(configs):
            ci = rfmt.interval_cell(c.ci95_Bps, len(c.trials), _mbps)
            cells: list[str | Text] = [terminal.safe(c.label), str(len(c.trials)), _mbps(c.mean_Bps), ci]
            if index is not None:
                cells += [f"{index[i] * 100:.2f}", f"{index[i]:.4f}"]
            table.add_row(*cells)
        terminal.console().print(table)


def _print(rows: Sequence[tuple[str, WeightedResult]], weights: Mapping[str, float]) -> None:
    columns = [Column("run", "left", legend=True)]
    columns += [Column(f"{cls} ({w * 100:g}%) Mbit/s") for cls, w in weights.items()]
    columns += [Column("weighted Mbit/s"), Column("weighted MB/s"), Column("sizes left out", "left", wrap=True)]
    table = FitTable(columns)
    for name, r in rows:
        table.add_row(
            terminal.safe(name), *(_mbps(r.per_class[c]) for c in weights), _mbps(r.value_Bps), f"{r.value_Bps / 1e6:,.3f}",
            ", ".join(f"{s:,}" for s in r.excluded) or "—",
        )  # fmt: skip
    terminal.console().print(table)
