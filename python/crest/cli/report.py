"""`crest report NAME...` and `crest compare NAME...`: stored runs → a report file, plus a terminal summary.

NAME is a run id (or a unique start of one) or an experiment id (every run of
one `crest run`). Trials of one configuration are grouped by their factors.
Every string that came from a target or the store is printed as a rich Text
with control characters made visible, like `crest show` does.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.text import Text

from crest.analysis.stats import DEFAULT_INTERVAL, interval_method
from crest.analysis.summary import PEAK_ONLY_SHAPE
from crest.cli import EXIT_OK, terminal
from crest.cli.render_compare import best_of_table, paired_table, pivot_table
from crest.cli.render_grouped import grouped_tables, ratios_table
from crest.cli.terminal import Column, FitTable
from crest.cli.terminal import safe as _safe
from crest.errors import ConfigError
from crest.report import SUFFIX, build_report, render, report_format
from crest.report import fmt as rfmt
from crest.report.narrative import mean_peak_notes
from crest.store import DEFAULT_PATH, RunDetail, Store, no_run_error

_PIPE_WIDTH = 160
_UNSAFE_FILENAME = re.compile(r"[^A-Za-z0-9._-]+")
_STDOUT = Path("-")
# Past this, a default file name lists the first name given and a digest of them all (file names stop at 255).
_NAME_MAX = 80
_HEADER_LABEL = 18  # the longest leader label named in the peaks table's "… over it" header

NamesArgument = Annotated[
    list[str],
    typer.Argument(metavar="NAME...", help="Run ids (or unique starts of them) or experiment ids.", show_default=False),
]
DbOption = Annotated[Path, typer.Option("--db", metavar="PATH", help="The results database to read.")]
OutputOption = Annotated[
    Path | None,
    typer.Option(
        "-o",
        "--output",
        metavar="FILE",
        help="Where to write; - is stdout (default: crest-results/reports/NAME.html beside the db, NAME being every"
        " name given; md, csv and json go to stdout).",
    ),
]
FormatOption = Annotated[
    str | None,
    typer.Option(
        "--format", metavar="html|md|csv|json", help="Report format (default: from the -o suffix, else html)."
    ),
]
AxisOption = Annotated[
    str | None,
    typer.Option(
        "--load-axis",
        metavar="clients|threads|connections|size",
        help="What the x of a point counts (default: size for content-length sweeps, else clients).",
    ),
]
TitleOption = Annotated[
    str | None,
    typer.Option("--title", metavar="TEXT", help="The report's title (default: suite and configurations)."),
]


BaselineOption = Annotated[
    str | None,
    typer.Option(
        "--baseline",
        metavar="LABEL",
        help="Index every peak against this configuration (its label or a factor value, e.g. nginx): baseline = 1.00.",
    ),
]
BestOfOption = Annotated[
    bool,
    typer.Option(
        "--best-of",
        help="Merge configurations that differ only in their suite (VeriTest's single- and multi-threaded suites):"
        " at each load, the suite with the higher mean req/s.",
    ),
]
PoolOption = Annotated[
    str | None,
    typer.Option(
        "--pool",
        metavar="FACTOR",
        help="Also test A − B pooled over every level of FACTOR (default: workload, when the runs span it).",
    ),
]
IntervalOption = Annotated[
    str,
    typer.Option(
        "--interval",
        metavar="t95|normal90",
        help="The paired tests' interval of the mean difference: t95, Student's t at 95%; normal90,"
        " mean ± 1.645 · sd/√n, the interval Kornecki et al. printed (and called 95%).",
    ),
]


def report_command(
    names: NamesArgument,
    output_format: FormatOption = None,
    output: OutputOption = None,
    db: DbOption = DEFAULT_PATH,
    load_axis: AxisOption = None,
    title: TitleOption = None,
) -> int:
    """Write a report of stored runs: one self-contained HTML page, or Markdown, CSV or JSON; prints its path.

    Markdown, CSV and JSON go to stdout unless -o names a file; `-o -` sends any format there.
    """
    fmt = report_format(output_format, None if output == _STDOUT else output)
    if output is None and fmt != "html":
        output = _STDOUT  # text a person pastes or a program reads; an HTML page is for a browser
    _, path = _build_and_write(db, names, output, fmt, load_axis, title)
    if path != _STDOUT:
        print(path, flush=True)
    return EXIT_OK


def compare_command(
    names: NamesArgument,
    db: DbOption = DEFAULT_PATH,
    output: OutputOption = None,
    output_format: FormatOption = None,
    load_axis: AxisOption = None,
    title: TitleOption = None,
    baseline: BaselineOption = None,
    best_of: BestOfOption = False,
    pool: PoolOption = None,
    interval: IntervalOption = DEFAULT_INTERVAL,
) -> int:
    """Compare configurations: peaks, percent improvements and paired tests in the terminal, plus the HTML report.

    With `-o -` the report goes to stdout and the terminal summary to stderr.
    """
    interval_method(interval)  # an unknown name fails before the store is read
    options = {"baseline": baseline, "best_of": best_of, "pool": pool, "interval": interval}
    fmt = report_format(output_format, None if output == _STDOUT else output)
    doc, path = _build_and_write(db, names, output, fmt, load_axis, title, options)
    if path == _STDOUT:
        with contextlib.redirect_stdout(sys.stderr):  # stdout carries the report itself
            print_summary(doc, path)
    else:
        print_summary(doc, path)
    return EXIT_OK


def _build_and_write(
    db: Path,
    names: list[str],
    output: Path | None,
    output_format: str,
    load_axis: str | None,
    title: str | None,
    options: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], Path]:
    """The report of the named runs, written where asked (`-` is stdout, None beside the db); the document and
    where it went."""
    details = _select(db, names)
    path = output if output is not None else default_report_path(db, names, output_format)
    doc = build_report(details, title=title, load_axis=load_axis, **(options or {}))
    text = render(doc, output_format)
    if path == _STDOUT:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()
    else:
        _write(path, text)
    return doc, path


def print_report_summary(details: Sequence[RunDetail], path: Path, *, load_axis: str | None = None) -> Path:
    """Write the report of `details` to `path` (format from its suffix, else HTML), then print a short
    summary and where the report is; for `crest run` after its runs. Returns the path written."""
    doc = build_report(details, load_axis=load_axis)
    _write(path, render(doc, report_format(None, path)))
    print_summary(doc, path)
    return path


def default_report_path(db: Path, names: str | Sequence[str], output_format: str = "html") -> Path:
    """crest-results/reports/NAME.html beside the database: NAME is every name given, joined by `_` and made
    safe for a file name, so that reports of different runs never overwrite each other; past 80 characters,
    the first name, the count of the others and a digest of them all."""
    given = [names] if isinstance(names, str) else list(dict.fromkeys(names))
    parts = [_UNSAFE_FILENAME.sub("-", name).strip(".-") or "report" for name in given] or ["report"]
    stem = "_".join(parts)
    if len(stem) > _NAME_MAX:
        digest = hashlib.sha256("\0".join(given).encode()).hexdigest()[:8]
        stem = f"{parts[0][:40]}_and-{len(parts) - 1}-more_{digest}"
    return db.parent / "reports" / f"{stem}{SUFFIX[output_format]}"


def print_summary(doc: dict[str, Any], path: Path) -> None:
    """The terminal version of a report's top: headline, peaks, paired verdicts, warnings, and its path."""
    console = terminal.console(_PIPE_WIDTH)
    summary = doc["summary"]
    console.print(_safe(summary["headline"]))
    console.print()
    console.print(_peaks(doc))
    for line in mean_peak_notes(doc["configurations"], doc["load_axis"]):
        console.print(Text("note: ", style="bold") + _safe(line))
    peaks = doc.get("peaks")
    if peaks and peaks.get("grouped"):  # the pivot's figures and more: one table per workload, improvement rows
        for table in grouped_tables(peaks["grouped"]):
            console.print()
            console.print(table)
    elif peaks and peaks["pivot"]:
        console.print()
        console.print(pivot_table(peaks["pivot"]))
    if doc.get("throughput_ratios"):
        console.print()
        console.print(ratios_table(doc["throughput_ratios"], doc["load_axis"]))
    if doc.get("best_of"):
        console.print()
        console.print(best_of_table(doc["best_of"], doc["load_axis"]))
    cmp = doc.get("comparison")
    interval = doc["paired_interval"]["label"]
    if cmp:
        console.print()
        console.print(paired_table(cmp["paired"], "rps", interval=interval))
        console.print()
        console.print(paired_table(cmp.get("paired_throughput", []), "throughput_Bps", interval=interval))
    pooled = doc.get("pooled")
    if pooled:
        for metric in ("rps", "throughput_Bps"):
            console.print()
            rows = [t for t in pooled["tests"] if t["metric"] == metric]
            console.print(paired_table(rows, metric, f"paired test pooled over {pooled['factor']}", interval))
    for line in summary["warnings"]:
        console.print(Text("warning: ", style="bold") + _safe(line))
    console.print(Text("report: ") + _safe("stdout" if path == _STDOUT else str(path)))


def _peaks(doc: dict[str, Any]) -> FitTable:
    axis = doc["load_axis"]
    cmp = doc.get("comparison")
    configs = doc["configurations"]
    if cmp:
        by_label = {c["label"]: c for c in configs}
        configs = [by_label[label] for label in cmp["ranking"]]
    leader = configs[0]["label"]
    gains = {(g["a"], g["b"]): g["pct"] for g in cmp["improvement_pct"]} if cmp else {}
    # A file-server run's requests are file operations (its headline is throughput, see doc["throughput"]).
    rate = "peak ops/s" if doc.get("throughput") else "peak req/s"
    peaks = doc.get("peaks") or {}
    # Runs judged by throughput are ranked, compared and indexed by it (analysis.throughput.headline_metric).
    by_throughput = peaks.get("metric") == "throughput_Bps" or all(rfmt.missing(c["peak"]["rps"]) for c in configs)
    columns = [Column("configuration", "left", legend=True), Column("trials"), Column(rate),
               Column("± 95% CI", wrap=True), Column("at load"), Column("peak Mbit/s" if by_throughput else "MB/s"),
               Column("p99 ms"),
               Column("saturation", "left", wrap=True), Column("past the peak", "left", wrap=True)]  # fmt: skip
    sweep = doc.get("sweep")
    weighted = {w["index"]: w for w in sweep["configurations"]} if sweep else {}
    if sweep:
        columns.append(Column("weighted Mbit/s"))
    if cmp:  # the leader is the first row; a long label is not repeated (nor cut) in a header
        columns.append(Column(f"{leader} over it" if len(leader) <= _HEADER_LABEL else "first row over it"))
    ratios = {b["label"]: b["ratio"] for b in peaks.get("bars", [])}
    caption = None
    if peaks.get("baseline"):
        columns.append(Column("index"))
        what = "peak throughput" if by_throughput else "peak"
        within = " with the same other factors" if peaks.get("baseline_factor") else ""
        caption = Text(f"index: {what} ÷ the peak of ") + _safe(peaks["baseline"]) + Text(f"{within} (= 1.00)")
    repeated = any(c["trials"] > 1 for c in configs)
    if repeated:  # the run-to-run spread beside the interval; secondary: each trial's own peak
        columns.insert(4, Column("run-to-run CV"))
        columns.insert(6, Column("trial peaks"))
    table = FitTable(columns, caption=caption)
    for c in configs:
        peak, s = c["peak"], c["summary"]
        published = s["shape"] == PEAK_ONLY_SHAPE  # a peak table: no load, so none to show and no saturation
        at = next((p for p in c["points"] if p["load"] == peak["load"]), None)
        row = [
            _safe(c["label"]), str(c["trials"]), rfmt.rps(peak["rps"]),
            rfmt.half_width(peak["rps_ci95"], peak["n"]),
            rfmt.DASH if published else rfmt.load(peak["throughput_load"] if by_throughput else peak["load"], axis),
            # by req/s: the MB/s of the peak's own mix, beside its load (the top of the bytes curve may be elsewhere)
            rfmt.headline(peak["throughput_Bps"], "throughput_Bps") if by_throughput
            else rfmt.mbytes(peak["load_throughput_Bps"]),
            rfmt.ms(at["latency_us"].get("p99") if at else None),
            rfmt.saturation(s, shout=True),
            s["shape"] + ("" if rfmt.missing(s["past_peak_ratio"]) else f" ({rfmt.percent(s['past_peak_ratio'])})"),
        ]  # fmt: skip
        if sweep:
            w = weighted[c["index"]]
            pm = rfmt.plus_minus(w["weighted_Mbps_ci95"], w["trials"], "{:,.2f}".format)
            row.append(rfmt.DASH if w["weighted_Mbps"] is None else
                       f"{w['weighted_Mbps']:,.2f}" + (f" {pm}" if pm else ""))  # fmt: skip
        if cmp:
            row.append(rfmt.DASH if c["label"] == leader else rfmt.pct(gains.get((leader, c["label"]))))
        if peaks.get("baseline"):
            row.append(rfmt.index(ratios.get(c["label"])))
        if repeated:
            row.insert(4, rfmt.cv(peak["rps_cv"]))
            row.insert(6, rfmt.trial_peaks(peak, axis, loads=False))
        table.add_row(*row)
    return table


def _select(db: Path, names: Sequence[str]) -> list[RunDetail]:
    if not names:
        raise ConfigError("name at least one run or experiment: crest report RUN_ID... (see `crest runs`)")
    if not db.exists():  # reading never creates the file
        raise no_run_error(db, names[0])
    with Store(db) as store:
        return store.select(list(names))


def _write(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot write the report to {path}: {exc.strerror}: pass -o with a writable file") from exc
