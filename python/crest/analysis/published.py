"""Published results as runs: a CSV table from a report becomes RunDetails that analysis treats like our own.

Owns the published-table format (its load, req/s and throughput columns, the
factor columns) and the mapping of a table row onto a stored mix, so that
`crest show`, comparisons and reports work on a 1999 report as on a run made
today. Reads one file; writes only through Store when asked to store.

Format: a UTF-8 CSV (lines starting with "#" are comments, e.g. the source):
  load       clients | threads | connections | load (whole numbers; clients and
             threads together mean threads in total over that many clients);
             no load column at all makes a peak table (one row per configuration)
  req/s      rps | requests_per_s          (required unless the table gives throughput)
  throughput throughput_Bps | throughput_MBps (10^6 B/s) | throughput_mbps or
             throughput_Mbps (10^6 bit/s)   (optional; alone, it makes a throughput-only
             table such as NetBench's, judged by throughput: crest.analysis.throughput)
  optional   window_s, requests, errors, trial (the repeat index)
  factors    every other column: rows with equal factor values are one configuration
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from crest.analysis.csvdata import CsvTable, Value, read_csv, typed
from crest.analysis.points import LOAD_AXES
from crest.errors import ConfigError
from crest.store import MixRecord, RunDetail, RunMeta, Store
from crest.verdicts import peak_only as peak_only_verdict

# The CSV files transcribed from the seed reports ship with crest (see docs/analysis.md).
PUBLISHED_DATA_DIR = Path(__file__).with_name("published_data")

SUITE = "published"
PROFILE = "published"
DATASET_FACTOR = "dataset"  # the factor every published run carries: the --name it was imported under
LOAD_COLUMNS = ("clients", "threads", "connections", "load")
RPS_COLUMNS = ("rps", "requests_per_s")
# Throughput columns and their factor to bytes/s; sizes are decimal (1 MB = 10^6 bytes), as crest prints them.
THROUGHPUT_COLUMNS = {
    "throughput_Bps": 1.0, "throughput_MBps": 1e6, "throughput_mbps": 1e6 / 8, "throughput_Mbps": 1e6 / 8,
}  # fmt: skip
OPTIONAL_COLUMNS = ("window_s", "requests", "errors", "trial")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:+-]*")


@dataclass
class _Row:
    factors: dict[str, Value]
    trial: int
    clients: int
    threads_per_client: int
    connections: int
    load: int
    rps: float
    throughput_Bps: float
    window_s: float
    requests: int | None
    errors: int
    line: str


def load_published(
    path: Path, name: str, factors: Mapping[str, Any] | None = None, load_axis: str | None = None
) -> RunDetail:
    """A table holding one configuration (one trial) as one RunDetail, not stored.

    Raises ConfigError when the table holds several configurations or trials
    (use load_published_runs) or cannot be read as the format above.
    """
    details = load_published_runs(path, name, factors, load_axis)
    if len(details) != 1:
        raise ConfigError(
            f"{path} holds {len(details)} runs (configurations or trials): import it with `crest import`,"
            " which stores each, or split the file"
        )
    return details[0]


def load_published_runs(
    path: Path, name: str, factors: Mapping[str, Any] | None = None, load_axis: str | None = None
) -> list[RunDetail]:
    """Every configuration × trial of a table as a RunDetail (not stored), in first-seen order.

    name: the dataset's name (e.g. the report's); it becomes the `dataset`
    factor and, once stored, the experiment id that selects all its runs.
    factors: extra factor values for every row (e.g. server=apache).
    load_axis: what a generic `load` column counts and the axis reports plot;
    by default the table's own load column (threads when it has clients and threads).
    """
    path = Path(path)
    check_name(name)
    table = read_csv(path)
    extra = {str(k): typed(v) for k, v in (factors or {}).items()}
    axis = _axis(table, load_axis)
    rows = [_row(table, i, axis, extra, name) for i in range(len(table.rows))]
    runs: dict[str, list[_Row]] = {}
    for row in rows:
        runs.setdefault(repr((sorted(row.factors.items(), key=str), row.trial)), []).append(row)
    peak_only = not any(c in table.columns for c in LOAD_COLUMNS)
    at = _mtime(path)
    details = []
    for number, members in enumerate(runs.values(), start=1):
        if peak_only and len(members) > 1:
            raise ConfigError(
                f"{members[1].line}: a second row for one configuration but the table has no load column:"
                f" add a column {'|'.join(LOAD_COLUMNS)}"
            )
        members.sort(key=lambda r: r.load)
        for before, after in zip(members, members[1:]):
            if before.load == after.load:
                raise ConfigError(
                    f"{after.line}: load {after.load} appears twice in one configuration:"
                    " give repeats a trial column, or distinct factor values"
                )
        config = {"published": {"name": name, "source": path.name, "columns": table.columns}, "load_axis": axis}
        meta = RunMeta(
            suite=SUITE, target=f"published:{path.name}", profile=PROFILE, repeat_index=members[0].trial,
            config=config, factors=dict(members[0].factors), host={},
        )  # fmt: skip
        run_id = f"published:{name}" + (f"#{number}" if len(runs) > 1 else "")
        mixes = [_mix(i, row, at, peak_only) for i, row in enumerate(members)]
        details.append(RunDetail(run_id, meta, "complete", None, at, at, mixes))
    return details


def store_published(store: Store, details: Sequence[RunDetail]) -> list[str]:
    """Store published runs as complete runs with their mixes; returns the new run ids in order.

    Each run's config records the dataset name as its "experiment", so
    Store.select([name]) finds every run imported under that name.
    """
    ids = []
    for detail in details:
        published = detail.meta.config.get("published", {})
        meta = RunMeta(
            suite=detail.meta.suite, target=detail.meta.target, profile=detail.meta.profile,
            repeat_index=detail.meta.repeat_index,
            config={**detail.meta.config, "experiment": published.get("name")},
            factors=dict(detail.meta.factors), host=dict(detail.meta.host),
        )  # fmt: skip
        run_id = store.create_run(meta)
        for mix in detail.mixes:
            store.add_mix(run_id, mix)
        store.finish_run(run_id, "complete")
        ids.append(run_id)
    return ids


def parse_factors(texts: Sequence[str]) -> dict[str, Value]:
    """Parse --factor k=v options: values that spell numbers become numbers (cpus=2 → 2)."""
    factors: dict[str, Value] = {}
    for text in texts:
        key, sep, value = text.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key or not value:
            raise ConfigError(f"invalid --factor {text!r}: expected NAME=VALUE, e.g. --factor server=nginx")
        if key in factors:
            raise ConfigError(f"--factor {key} is given twice: give each factor once")
        factors[key] = typed(value)
    return factors


def check_name(name: str) -> None:
    """Raise ConfigError unless `name` is a usable dataset name (letters, digits and . _ : + -)."""
    if not _NAME.fullmatch(name):
        raise ConfigError(
            f"invalid name {name!r}: use letters, digits and . _ : + - (starting with a letter or digit),"
            " e.g. mindcraft-1999"
        )


def _axis(table: CsvTable, load_axis: str | None) -> str:
    present = [c for c in LOAD_COLUMNS if c in table.columns]
    if load_axis is not None and load_axis not in LOAD_AXES:
        raise ConfigError(f"invalid load axis {load_axis!r}: use one of {', '.join(LOAD_AXES)}")
    if len(present) > 1 and "load" in present:
        raise ConfigError(f"{table.path} has a load column beside {present[0]}: keep one load column")
    if load_axis is not None:
        if present and present[0] != "load" and load_axis not in present:
            raise ConfigError(
                f"--load-axis {load_axis}: {table.path} has no {load_axis} column (it has {', '.join(present)})"
            )
        return load_axis
    if "threads" in present:
        return "threads"
    return present[0] if present and present[0] != "load" else "clients"


def _row(table: CsvTable, i: int, axis: str, extra: dict[str, Value], name: str) -> _Row:
    cells = table.rows[i]
    where = table.where(i)
    rps_column = next((c for c in RPS_COLUMNS if c in cells), None)
    throughput_column = next((c for c in THROUGHPUT_COLUMNS if c in cells), None)
    if rps_column is None and throughput_column is None:
        raise ConfigError(
            f"{table.path} has neither a req/s nor a throughput column: name one {' or '.join(RPS_COLUMNS)},"
            f" or {' or '.join(THROUGHPUT_COLUMNS)} for a throughput-only table"
        )
    known = {*LOAD_COLUMNS, *RPS_COLUMNS, *THROUGHPUT_COLUMNS, *OPTIONAL_COLUMNS}
    factors: dict[str, Value] = {DATASET_FACTOR: name}
    for column in table.columns:
        if column not in known:
            factors[column] = typed(cells[column])
    for key, value in extra.items():
        if key in factors:
            raise ConfigError(f"factor {key!r} is set twice (by the file or --name and by --factor): give it once")
        factors[key] = value
    clients, threads = _whole(cells, "clients", where), _whole(cells, "threads", where)
    generic = _whole(cells, "load", where) or _whole(cells, "connections", where)
    if generic is not None:
        clients, threads = (generic, None) if axis == "clients" else (None, generic)
    tpc = 1
    if clients is not None and threads is not None:
        if threads % clients:
            raise ConfigError(f"{where}: {threads} threads do not split evenly over {clients} clients: check the row")
        tpc = threads // clients
    elif threads is not None:
        clients = threads
    clients = clients or 0
    window_s = _number(cells, "window_s", where) or 0.0
    requests = _whole(cells, "requests", where)
    rps = _number(cells, rps_column, where, required=True) if rps_column is not None else None
    throughput = math.nan
    if throughput_column is not None:
        published = _number(cells, throughput_column, where)
        throughput = math.nan if published is None else published * THROUGHPUT_COLUMNS[throughput_column]
    return _Row(
        factors=factors,
        trial=_whole(cells, "trial", where) or 0,
        clients=clients,
        threads_per_client=tpc if clients else 0,
        connections=clients * tpc,
        load=clients * tpc,
        rps=rps if rps is not None else math.nan,
        throughput_Bps=throughput,
        window_s=window_s,
        requests=requests,
        errors=_whole(cells, "errors", where) or 0,
        line=where,
    )


def _mix(index: int, row: _Row, at: float, peak_only: bool) -> MixRecord:
    requests = (
        row.requests if row.requests is not None else (0 if math.isnan(row.rps) else round(row.rps * row.window_s))
    )
    throughput = 0.0 if math.isnan(row.throughput_Bps) else row.throughput_Bps
    return MixRecord(
        index=index, clients=row.clients, threads_per_client=row.threads_per_client, connections=row.connections,
        started_at=at, ended_at=at, window_s=row.window_s, requests=requests, responses=requests,
        bytes=round(throughput * row.window_s), body_bytes=0, rps=row.rps, throughput_Bps=row.throughput_Bps,
        errors={"reported": row.errors} if row.errors else {}, latency_us={}, status={}, classes={},
        client_scores=[], timeline=[], histogram_b64="", monitor={},
        verdicts=[peak_only_verdict()] if peak_only else [],
    )  # fmt: skip


def _number(cells: dict[str, str], column: str | None, where: str, required: bool = False) -> float | None:
    if column is None or column not in cells or cells[column] == "":
        if required:
            raise ConfigError(f"{where}: no {column} value: fill it in, or leave the unmeasured point out of the file")
        return None
    value = typed(cells[column].replace(",", ""))  # "1,000" as a report prints it
    if isinstance(value, str) or not math.isfinite(value) or value < 0:
        raise ConfigError(
            f"{where}: {column} is {cells[column]!r}, not a number ≥ 0: leave unmeasured points out of the file"
        )
    return float(value)


def _whole(cells: dict[str, str], column: str, where: str) -> int | None:
    value = _number(cells, column, where)
    if value is None:
        return None
    if value != int(value) or (column in LOAD_COLUMNS and value < 1):
        raise ConfigError(f"{where}: {column} is {cells[column]!r}: give a whole number (at least 1 for a load)")
    return int(value)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
