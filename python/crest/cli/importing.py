"""`crest import FILE.csv --name NAME`: store a published table as runs, so show, compare and report use it.

Owns the command's options and what it prints (the new run ids, one per
line); crest.analysis.published reads the table and maps it onto runs.
The whole file is checked before the store is opened, so bad input stores nothing.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from crest.analysis.published import load_published_runs, parse_factors, store_published
from crest.cli import EXIT_OK
from crest.store import DEFAULT_PATH, Store

FileArgument = Annotated[
    Path,
    typer.Argument(metavar="FILE.csv", help="A table of published results (see docs/analysis.md).", show_default=False),
]
NameOption = Annotated[
    str,
    typer.Option(
        "--name", help="The dataset's name, e.g. mindcraft-1999: it selects all its runs later.", show_default=False
    ),
]
FactorOption = Annotated[
    list[str] | None,
    typer.Option("--factor", metavar="K=V", help="A factor value for every row, e.g. server=apache; repeatable."),
]
LoadAxisOption = Annotated[
    str | None,
    typer.Option(
        "--load-axis", metavar="clients|threads", help="What the table's load counts (default: its load column)."
    ),
]
DbOption = Annotated[Path, typer.Option("--db", metavar="PATH", help="The results database to store into.")]


def import_command(
    file: FileArgument,
    name: NameOption,
    factor: FactorOption = None,
    load_axis: LoadAxisOption = None,
    db: DbOption = DEFAULT_PATH,
) -> int:
    """Store a published table (load, req/s, throughput, factor columns) as complete runs; print their ids."""
    details = load_published_runs(file, name, parse_factors(factor or []), load_axis)
    with Store(db) as store:
        ids = store_published(store, details)
    for run_id in ids:
        print(run_id, flush=True)
    runs = f"{len(ids)} run{'s' if len(ids) != 1 else ''}"
    print(f"crest: stored {runs} from {file.name} as {name}", file=sys.stderr, flush=True)
    return EXIT_OK
