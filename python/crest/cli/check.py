"""`crest check RUN --baseline RUN|FILE --rule ...`: gate a CI job on a baseline; exit 1 on a significant regression.

Parses, reads the two sides (stored runs, or a baseline exported with `crest report --format json`),
asks crest.analysis.gate for the verdicts and renders them: a table in the terminal, and on request
JUnit XML (one testcase per rule) and JSON. Every statistic is the gate's.
"""

from __future__ import annotations

import contextlib
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.text import Text

from crest.analysis.gate import (
    DEFAULT_RULES,
    DIFFERENCE,
    GateResult,
    RuleVerdict,
    Side,
    check,
    parse_rules,
    side_from_runs,
)
from crest.analysis.points import default_load_axis
from crest.cli import EXIT_FAILURE, EXIT_OK, terminal
from crest.cli.terminal import Column, FitTable
from crest.cli.terminal import safe as _safe
from crest.errors import ConfigError
from crest.report import fmt as rfmt
from crest.report.exported import side_from_report
from crest.store import DEFAULT_PATH, RunDetail, Store, no_run_error

_STDOUT = "-"
_PIPE_WIDTH = 160
_EXPORT = "crest report RUN --format json -o FILE"


def check_command(
    run: Annotated[
        str,
        typer.Argument(
            metavar="RUN",
            help="The run to gate: a run id (or a unique start of one), or the experiment id of one configuration's"
            " trials (crest run --repeat N).",
        ),
    ],
    baseline: Annotated[
        str,
        typer.Option(
            "--baseline",
            metavar="RUN|FILE",
            help=f"What the run must not fall behind: a stored run or experiment id, or a file written by `{_EXPORT}`.",
            show_default=False,
        ),
    ],
    rules: Annotated[
        list[str] | None,
        typer.Option(
            "--rule",
            metavar="RULES",
            help="Comma-separated rules METRIC<+N% or METRIC>-N% (errors in points: errors<+1pp); repeatable."
            f" Default: {DEFAULT_RULES}. Metrics: peak_rps, rps, peak_throughput, throughput, p50, p90, p99,"
            " p99.9, max, mean, errors.",
        ),
    ] = None,
    db: Annotated[Path, typer.Option("--db", metavar="PATH", help="The results database to read.")] = DEFAULT_PATH,
    junit: Annotated[
        Path | None,
        typer.Option(
            "--junit", metavar="FILE", help="Also write JUnit XML: one testcase per rule, a failure per regression."
        ),
    ] = None,
    json_out: Annotated[
        str | None,
        typer.Option(
            "--json",
            metavar="FILE|-",
            help="Also write the verdicts as JSON (- is stdout; the table then goes to stderr).",
        ),
    ] = None,
) -> int:
    """Gate a run on a baseline: one verdict per rule; exit 1 on a significant regression, else 0.

    A rule fails only when its change is past the bound and crest compare's paired test (95% t interval
    over the mixes both runs measured) says the difference is significant. See docs/ci.md.
    """
    parsed = parse_rules(rules or [DEFAULT_RULES])
    details = _runs(db, run)
    axis = default_load_axis(details)
    current = side_from_runs(run, details, axis)
    base = _baseline(db, baseline, axis)
    if current.suite and base.suite and current.suite != base.suite:
        raise ConfigError(
            f"{run} ran suite {current.suite!r}, the baseline {base.name} {base.suite!r}: gate against a baseline"
            " of the same suite"
        )
    result = check(parsed, current, base)
    code = EXIT_FAILURE if result.regressions else EXIT_OK
    if junit is not None:
        _write(junit, junit_xml(result), "--junit")
    document = json.dumps(json_document(result, code), indent=2) + "\n"
    if json_out == _STDOUT:
        sys.stdout.write(document)
        sys.stdout.flush()
        with contextlib.redirect_stdout(sys.stderr):
            print_result(result)
    else:
        if json_out is not None:
            _write(Path(json_out), document, "--json")
        print_result(result)
    return code


def _runs(db: Path, name: str) -> list[RunDetail]:
    if not db.exists():  # reading never creates the file
        raise no_run_error(db, name)
    with Store(db) as store:
        return store.select([name])


def _baseline(db: Path, name: str, axis: str) -> Side:
    """A file when one is there by that name, else a run id in the store."""
    path = Path(name)
    if path.is_file():
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f"{name} is not JSON ({exc.msg}, line {exc.lineno}): export one with `{_EXPORT}`"
            ) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read the baseline {name}: {exc}: export one with `{_EXPORT}`") from None
        return side_from_report(name, doc, axis)
    if path.suffix == ".json" or "/" in name:
        raise ConfigError(f"no baseline file {name}: export one with `{_EXPORT}`, or give a run id")
    return side_from_runs(name, _runs(db, name), axis)


def _write(path: Path, text: str, flag: str) -> None:
    try:
        if path.parent != Path():
            path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot write {flag} {path}: {exc.strerror}: give a writable path") from None


# -- wording ---------------------------------------------------------------------------------------------------------


def figure(verdict: RuleVerdict, value: float) -> str:
    """A side's figure in the metric's unit: req/s, MB/s, ms or an error rate."""
    unit = verdict.rule.metric.unit
    if unit == "req/s":
        return f"{rfmt.rps(value)} req/s"
    if unit == "MB/s":
        return f"{rfmt.mbytes(value)} MB/s"
    if unit == "ms":
        return f"{rfmt.ms(value)} ms"
    return rfmt.error_rate(value)


def change(verdict: RuleVerdict, value: float) -> str:
    """A change in percent of the baseline (+4.2%), or in percentage points for errors (+0.30pp)."""
    if verdict.rule.metric.in_points:
        return f"{'−' if value < 0 else '+'}{abs(value):.2f}pp"
    return rfmt.pct(value)


def interval(verdict: RuleVerdict) -> str:
    if verdict.interval is None:
        return f"{rfmt.DASH} (1 pair)"
    low, high = verdict.interval
    return f"{change(verdict, low)} … {change(verdict, high)}"


def bound(verdict: RuleVerdict) -> str:
    rule = verdict.rule
    op = {"<=": "≤", ">=": "≥"}.get(rule.op, rule.op)
    return f"{op} {change(verdict, rule.bound)}"


def line(verdict: RuleVerdict, confidence: float) -> str:
    """The verdict in one plain line, as a JUnit failure message says it."""
    level = f"{confidence:.0%}"
    return (
        f"{verdict.rule.text}: {verdict.rule.metric.name} {figure(verdict, verdict.baseline)} → "
        f"{figure(verdict, verdict.current)}, change {change(verdict, verdict.change)}"
        f" ({level} CI {interval(verdict)}, {verdict.pairs} pairs), bound {bound(verdict)}: {verdict.verdict}"
    )


def print_result(result: GateResult) -> None:
    console = terminal.console(_PIPE_WIDTH)
    cur, base = result.current, result.baseline
    console.print(
        Text("crest check: ") + _safe(cur.name) + Text(" (") + _safe(cur.label) + Text(") against baseline ")
        + _safe(base.name) + Text(" (") + _safe(base.label) + Text(")")
    )  # fmt: skip
    console.print(_safe(how_paired(result)))
    console.print()
    level = f"{result.confidence:.0%} CI"
    columns = [Column("rule", "left"), Column("baseline"), Column("current"), Column("change"),
               Column(f"{level} of the change"), Column("pairs"), Column("bound"),
               Column("verdict", "left")]  # fmt: skip
    table = FitTable(columns)
    for v in result.verdicts:
        table.add_row(_safe(v.rule.text), figure(v, v.baseline), figure(v, v.current), change(v, v.change),
                      interval(v), str(v.pairs), bound(v), v.verdict)  # fmt: skip
    console.print(table)
    for note in notes(result):
        console.print(Text("note: ") + _safe(note))
    bad = result.regressions
    if bad:
        console.print(f"FAIL: {len(bad)} of {len(result.verdicts)} rules regressed significantly (exit 1)")
    else:
        console.print(f"ok: no significant regression in {len(result.verdicts)} rules (exit 0)")


def how_paired(result: GateResult) -> str:
    """What the paired tests paired, and what one trial per run means for them."""
    trials = (
        "one trial per run (no spread across trials, so each test pairs the ladder's mixes)"
        if result.one_trial
        else f"trial i against trial i over {result.trials} trials"
    )
    return (
        f"each rule: crest compare's paired test over the {result.loads} loads both measured, {trials}; on each"
        f" pair's ratio run ÷ baseline, with a {result.confidence:.0%} t interval. Figures: the peak, or the"
        " geometric mean over those mixes; errors: the mean rate, its change in percentage points."
    )


def notes(result: GateResult) -> list[str]:
    """What a reader of a row needs told: a peak's change is not its test's, and a test without ratios."""
    out = []
    for v in result.verdicts:
        what = _POINT_WORDS.get(v.rule.metric.point_metric, v.rule.metric.point_metric)
        if v.rule.metric.peak:
            out.append(
                f"{v.rule.text}: the change is the peak's; its interval and significance are the paired test of"
                f" {what} over every matched mix (mean change {change(v, v.test_change)})"
            )
        if v.scale == DIFFERENCE:
            out.append(
                f"{v.rule.text}: a mix at 0 {what} has no ratio, so the test takes plain differences (as crest"
                " compare does) and the figures are arithmetic means"
            )
    return out


_POINT_WORDS = {"rps": "req/s", "throughput_Bps": "throughput"}


# -- machine-readable ------------------------------------------------------------------------------------------------

_STORED_UNITS = {"req/s": "req/s", "MB/s": "bytes/s", "ms": "us", "%": "fraction"}


def _side_json(side: Side) -> dict[str, Any]:
    return {"name": side.name, "label": side.label, "suite": side.suite, "trials": len(side.trials)}


def json_document(result: GateResult, exit_code: int) -> dict[str, Any]:
    """The verdicts as data: figures in stored units (`unit`), changes in percent or percentage points."""
    rules = []
    for v in result.verdicts:
        metric = v.rule.metric
        rules.append({
            "rule": v.rule.text, "metric": metric.name, "description": metric.description,
            "unit": _STORED_UNITS[metric.unit], "baseline": v.baseline, "current": v.current,
            "change_unit": "pp" if metric.in_points else "%", "change": v.change, "op": v.rule.op,
            "bound": v.rule.bound, "test_change": v.test_change,
            "change_interval": list(v.interval) if v.interval else None, "pairs": v.pairs,
            "significant": v.significant, "verdict": v.verdict, "scale": v.scale,
        })  # fmt: skip
    return {
        "run": _side_json(result.current),
        "baseline": _side_json(result.baseline),
        "confidence": result.confidence,
        "paired": {"loads": result.loads, "trials": result.trials, "how": how_paired(result)},
        "rules": rules,
        "regressions": len(result.regressions),
        "exit_code": exit_code,
    }


def junit_xml(result: GateResult) -> str:
    """JUnit XML as GitHub's, GitLab's and Jenkins' test reporters read it: a suite of one testcase per rule,
    a <failure> on each regression, the verdict line in each case's <system-out>."""
    cases = result.verdicts
    failures = str(len(result.regressions))
    name = f"crest check {result.current.name} against {result.baseline.name}"
    root = ET.Element("testsuites", name="crest check", tests=str(len(cases)), failures=failures, errors="0")
    suite = ET.SubElement(root, "testsuite", name=name, tests=str(len(cases)), failures=failures, errors="0",
                          skipped="0", time="0")  # fmt: skip
    properties = ET.SubElement(suite, "properties")
    for key, value in (("run", result.current.name), ("baseline", result.baseline.name),
                       ("paired", how_paired(result))):  # fmt: skip
        ET.SubElement(properties, "property", name=key, value=value)
    for v in cases:
        case = ET.SubElement(suite, "testcase", name=v.rule.text, classname=f"crest.check.{result.current.suite}",
                             time="0")  # fmt: skip
        text = line(v, result.confidence)
        if v.regression:
            ET.SubElement(case, "failure", message=text, type="regression").text = text
        else:
            ET.SubElement(case, "system-out").text = text
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
