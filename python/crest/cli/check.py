"""`crest check RUN --baseline RUN|FILE --rule ...`: gate a CI job on a baseline; exit 1 on a regression,
3 when a noisy host left a rule nothing to judge on.

Parses, reads the two sides (stored runs, or a baseline exported with `crest report --format json`; a
stored baseline is joined by the stored history of its configuration, whose spread over time holds the
host's drift that trials back to back do not), asks
crest.analysis.gate for the verdicts and warnings and renders them: a table in the terminal, and on
request JUnit XML (one testcase per rule) and JSON. Every statistic is the gate's.
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
    MIN_BASELINE_TRIALS,
    GateResult,
    RuleVerdict,
    Side,
    check,
    history,
    parse_rules,
    side_from_runs,
)
from crest.analysis.points import default_load_axis
from crest.analysis.stats import CONFIDENCE
from crest.cli import EXIT_FAILURE, EXIT_OK, EXIT_UNDECIDED, terminal
from crest.cli.terminal import Column, FitTable
from crest.cli.terminal import safe as _safe
from crest.errors import ConfigError
from crest.report import fmt as rfmt
from crest.report.exported import side_from_report
from crest.store import DEFAULT_PATH, RunDetail, Store, no_run_error

_STDOUT = "-"
_PIPE_WIDTH = 160
_EXPORT = "crest report RUN --format json -o FILE"
# The most stored runs of the baseline's configuration a gate takes as its history: the newest, so that a
# store kept for months measures today's host and not last season's.
HISTORY_RUNS = 10


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
            help="What the run must not fall behind: a stored run or experiment id (3 or more trials tell noise from"
            f" change), or a file written by `{_EXPORT}`.",
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
    confidence: Annotated[
        float,
        typer.Option(
            "--confidence",
            metavar="LEVEL",
            help="The level of the baseline's prediction interval; one rule fails an unchanged run at most"
            " (1 − LEVEL) ÷ 2 of the time.",
        ),
    ] = CONFIDENCE,
    use_history: Annotated[
        bool,
        typer.Option(
            "--history/--no-history",
            help="Add to a stored baseline the stored runs of its configuration made before RUN (the newest"
            f" {HISTORY_RUNS} in all), so that its run-to-run noise holds the host's drift over time.",
        ),
    ] = True,
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
    """Gate a run on a baseline: one verdict per rule; exit 1 on a regression past its noise, 3 when a noisy
    host left a rule undecided, else 0.

    A rule fails when the run's figure is past the baseline's 95% prediction interval from trial to trial
    (its stored history included), moved by the rule's allowance. With fewer than 3 baseline trials the
    noise is unknown and the bound alone decides. Mixes with a noisy-host verdict are left out of the figures. See docs/ci.md.
    """
    parsed = parse_rules(rules or [DEFAULT_RULES])
    details = _runs(db, run)
    axis = default_load_axis(details)
    current = side_from_runs(run, details, axis)
    started = min(d.started_at for d in details)
    base, from_history = _baseline(db, baseline, axis, started if use_history else None)
    if current.suite and base.suite and current.suite != base.suite:
        raise ConfigError(
            f"{run} ran suite {current.suite!r}, the baseline {base.name} {base.suite!r}: gate against a baseline"
            " of the same suite"
        )
    result = check(parsed, current, base, confidence)
    code = exit_code(result)
    if junit is not None:
        _write(junit, junit_xml(result, from_history), "--junit")
    document = json.dumps(json_document(result, code, from_history), indent=2) + "\n"
    if json_out == _STDOUT:
        sys.stdout.write(document)
        sys.stdout.flush()
        with contextlib.redirect_stdout(sys.stderr):
            print_result(result, from_history)
    else:
        if json_out is not None:
            _write(Path(json_out), document, "--json")
        print_result(result, from_history)
    return code


def exit_code(result: GateResult) -> int:
    """1 on a regression; else 3 when a rule had only noisy measurements (repeat the run); else 0."""
    if result.regressions:
        return EXIT_FAILURE
    return EXIT_UNDECIDED if result.undecided else EXIT_OK


def _runs(db: Path, name: str) -> list[RunDetail]:
    if not db.exists():  # reading never creates the file
        raise no_run_error(db, name)
    with Store(db) as store:
        return store.select([name])


def _baseline(db: Path, name: str, axis: str, history_before: float | None) -> tuple[Side, bool]:
    """A file when one is there by that name, else a run id in the store; with `history_before`, a stored
    baseline joined by its configuration's runs made before then. True when any joined."""
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
        return side_from_report(name, doc, axis), False
    if path.suffix == ".json" or "/" in name:
        raise ConfigError(f"no baseline file {name}: export one with `{_EXPORT}`, or give a run id")
    details = _runs(db, name)
    side = side_from_runs(name, details, axis)
    if history_before is None:
        return side, False
    with Store(db) as store:
        first = details[0].meta
        stored = [store.run(s.id) for s in store.runs()
                  if (s.suite, s.profile, s.factors) == (first.suite, first.profile, first.factors)
                  and s.status == "complete" and s.id not in side.runs]  # fmt: skip
    joined = history(details, stored, history_before, HISTORY_RUNS)
    if len(joined) == len(details):
        return side, False
    return side_from_runs(name, joined, axis), True


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


def noise(verdict: RuleVerdict) -> str:
    """The baseline's prediction interval as changes, or why there is none."""
    if verdict.undecided:
        return "— (host noisy)"
    if verdict.noise is None:
        return f"unknown ({_trials(verdict.baseline_trials)})"
    low, high = verdict.noise
    return f"{change(verdict, low)} … {change(verdict, high)}"


def fails_past(verdict: RuleVerdict) -> str:
    """The change past which the rule fails: the noise's worse end moved by the allowance, or the bound."""
    if verdict.undecided:
        return "—"
    return change(verdict, verdict.rule.bound if verdict.limit is None else verdict.limit)


def bound(verdict: RuleVerdict) -> str:
    rule = verdict.rule
    op = {"<=": "≤", ">=": "≥"}.get(rule.op, rule.op)
    return f"{op} {change(verdict, rule.bound)}"


def _trials(n: int) -> str:
    return f"{n} trial" + ("" if n == 1 else "s")


def line(verdict: RuleVerdict, confidence: float) -> str:
    """The verdict in one plain line, as a JUnit message says it."""
    if verdict.undecided:
        against = "every mix it could be judged on measured on a noisy host"
    elif verdict.noise is None:
        against = f"noise unknown ({_trials(verdict.baseline_trials)} of the baseline)"
    else:
        against = (
            f"baseline's {confidence:.0%} prediction interval {noise(verdict)} over {_trials(verdict.baseline_trials)},"
            f" fails {fails_past(verdict)}"
        )
    return (
        f"{verdict.rule.text}: {verdict.rule.metric.name} {figure(verdict, verdict.baseline)} → "
        f"{figure(verdict, verdict.current)}, change {change(verdict, verdict.change)} ({against}),"
        f" bound {bound(verdict)}: {verdict.verdict}"
    )


def print_result(result: GateResult, from_history: bool = False) -> None:
    console = terminal.console(_PIPE_WIDTH)
    cur, base = result.current, result.baseline
    console.print(
        Text("crest check: ") + _safe(cur.name) + Text(" (") + _safe(cur.label) + Text(") against baseline ")
        + _safe(base.name) + Text(" (") + _safe(base.label) + Text(")")
    )  # fmt: skip
    console.print(_safe(made_of(result, from_history)))
    console.print(_safe(how_judged(result)))
    console.print()
    columns = [Column("rule", "left"), Column("baseline"), Column("current"), Column("change"),
               Column(f"noise ({result.confidence:.0%} PI)"), Column("fails past"), Column("bound"),
               Column("verdict", "left", wrap=True)]  # fmt: skip
    table = FitTable(columns)
    for v in result.verdicts:
        table.add_row(_safe(v.rule.text), figure(v, v.baseline), figure(v, v.current), change(v, v.change),
                      noise(v), fails_past(v), bound(v), v.verdict)  # fmt: skip
    console.print(table)
    for note in notes(result):
        console.print(Text("note: ") + _safe(note))
    for warning in result.warnings:
        console.print(Text("warning: ", style="bold") + _safe(warning))
    console.print(outcome(result))


def outcome(result: GateResult) -> str:
    bad, total = len(result.regressions), len(result.verdicts)
    undecided = len(result.undecided)
    if undecided and not bad:
        return (
            f"UNDECIDED: {undecided} of {total} rules had only measurements a noisy host made (exit 3): repeat the"
            " run on a quiet host"
        )
    if not result.noise_known:
        if bad:
            return f"FAIL: {bad} of {total} rules past their bound, noise unknown (exit 1)"
        return f"ok: all {total} rules within their bound, noise unknown (exit 0)"
    if bad:
        return f"FAIL: {bad} of {total} rules regressed past the baseline's noise (exit 1)"
    return f"ok: no rule of {total} regressed past the baseline's noise (exit 0)"


def made_of(result: GateResult, from_history: bool) -> str:
    """Which runs made the baseline, and whether they were the stored history of its configuration."""
    base = result.baseline
    runs = ", ".join(base.runs) if base.runs else base.name
    if from_history:
        return (
            f"baseline: {_trials(len(base.trials))}, {base.name} and the runs of its configuration stored before the"
            f" run (its history): {runs}"
        )
    return f"baseline: {_trials(len(base.trials))} ({runs}); run: {_trials(len(result.current.trials))}"


def how_judged(result: GateResult) -> str:
    """The method in one paragraph: each trial's figure, and what a change is judged against."""
    figures = (
        f"each trial's figure: its peak, the geometric mean over the {result.loads} loads every trial measured,"
        " or its mean error rate, from the mixes no noisy-host verdict marks"
    )
    if not result.noise_known:
        n = len(result.baseline.trials)
        return (
            f"{figures}. The baseline has {_trials(n)}: with fewer than {MIN_BASELINE_TRIALS}, crest cannot tell"
            " run-to-run noise from a change, so each rule is judged on its figures alone (past its bound fails)."
            f" Repeat the baseline (crest run --repeat {MIN_BASELINE_TRIALS}) or store more runs of its"
            " configuration."
        )
    return (
        f"{figures}. The run's figure (the mean of its {_trials(len(result.current.trials))}) is judged against"
        f" the baseline's {result.confidence:.0%} prediction interval from trial to trial, moved by the rule's"
        f" allowance: past it on the worse side is a regression. An unchanged run fails one rule at most"
        f" {result.false_alarm:.1%} of the time."
    )


def notes(result: GateResult) -> list[str]:
    """What a reader of a row needs told: a rule compared without logarithms, measurements a noisy host made
    left out."""
    out = []
    for v in result.verdicts:
        if v.scale == DIFFERENCE:
            out.append(rule_note(v))
        if v.noisy_left_out:
            out.append(noisy_note(v))
        if v.noise is None and not v.undecided and result.noise_known:
            out.append(
                f"{v.rule.text}: only {_trials(v.baseline_trials)} of the baseline had quiet mixes for it, too few to"
                " know its noise, so its bound alone decides"
            )
    return out


def noisy_note(verdict: RuleVerdict) -> str:
    """Which mixes noisy-host verdicts took from a rule, and what it was judged on."""
    left = verdict.noisy_left_out
    mixes = f"{left} mix{'' if left == 1 else 'es'}"
    if verdict.undecided:
        return (
            f"{verdict.rule.text}: no mix it could be judged on was measured on a quiet host, so it is undecided;"
            " the figures shown include the noisy ones"
        )
    if verdict.rule.metric.peak:
        how = "each side's peak over the same loads, where every trial kept measured quietly"
    else:
        how = "each trial's figure from its quiet mixes, against the baseline's mean at each load"
    return f"{verdict.rule.text}: {mixes} of the two sides left out for a noisy host; judged on {verdict.judged_on} ({how})"


def rule_note(verdict: RuleVerdict) -> str:
    what = _POINT_WORDS.get(verdict.rule.metric.point_metric, verdict.rule.metric.point_metric)
    return (
        f"{verdict.rule.text}: a figure at 0 {what} has no logarithm, so the figures are arithmetic means and the"
        " change and noise differences of them"
    )


_POINT_WORDS = {"rps": "req/s", "throughput_Bps": "throughput"}


# -- machine-readable ------------------------------------------------------------------------------------------------

_STORED_UNITS = {"req/s": "req/s", "MB/s": "bytes/s", "ms": "us", "%": "fraction"}


def _side_json(side: Side) -> dict[str, Any]:
    return {"name": side.name, "label": side.label, "suite": side.suite, "trials": len(side.trials),
            "runs": list(side.runs)}  # fmt: skip


def json_document(result: GateResult, exit_code: int, from_history: bool = False) -> dict[str, Any]:
    """The verdicts as data: figures in stored units (`unit`), changes in percent or percentage points."""
    rules = []
    for v in result.verdicts:
        metric = v.rule.metric
        rules.append({
            "rule": v.rule.text, "metric": metric.name, "description": metric.description,
            "unit": _STORED_UNITS[metric.unit], "baseline": v.baseline, "current": v.current,
            "change_unit": "pp" if metric.in_points else "%", "change": v.change, "op": v.rule.op,
            "bound": v.rule.bound, "noise_interval": list(v.noise) if v.noise else None, "limit": v.limit,
            "baseline_trials": v.baseline_trials, "current_trials": v.current_trials, "sd": v.sd,
            "significant": v.significant, "verdict": v.verdict, "scale": v.scale,
            "judged_on_mixes": v.judged_on, "noisy_mixes_left_out": v.noisy_left_out,
        })  # fmt: skip
    return {
        "run": _side_json(result.current),
        "baseline": {**_side_json(result.baseline), "history": from_history},
        "confidence": result.confidence,
        "noise_known": result.noise_known,
        "false_alarm_per_rule": result.false_alarm,
        "method": {"loads": result.loads, "how": how_judged(result)},
        "rules": rules,
        "notes": notes(result),
        "warnings": list(result.warnings),
        "regressions": len(result.regressions),
        "undecided": len(result.undecided),
        "exit_code": exit_code,
    }


def junit_xml(result: GateResult, from_history: bool = False) -> str:
    """JUnit XML as GitHub's, GitLab's and Jenkins' test reporters read it: a suite of one testcase per rule,
    a <failure> on each regression, an <error> on each rule a noisy host left undecided, the verdict line in
    each case's <system-out>. Each message carries the
    rule's note, the method when the noise is unknown, and every warning, as the terminal shows them."""
    cases = result.verdicts
    failures, errors = str(len(result.regressions)), str(len(result.undecided))
    name = f"crest check {result.current.name} against {result.baseline.name}"
    root = ET.Element("testsuites", name="crest check", tests=str(len(cases)), failures=failures, errors=errors)
    suite = ET.SubElement(root, "testsuite", name=name, tests=str(len(cases)), failures=failures, errors=errors,
                          skipped="0", time="0")  # fmt: skip
    properties = ET.SubElement(suite, "properties")
    for key, value in (("run", result.current.name), ("baseline", result.baseline.name),
                       ("baseline runs", made_of(result, from_history)), ("method", how_judged(result)),
                       *(("warning", w) for w in result.warnings)):  # fmt: skip
        ET.SubElement(properties, "property", name=key, value=value)
    for v in cases:
        case = ET.SubElement(suite, "testcase", name=v.rule.text, classname=f"crest.check.{result.current.suite}",
                             time="0")  # fmt: skip
        said = [line(v, result.confidence)]
        said += [f"note: {rule_note(v)}"] if v.scale == DIFFERENCE else []
        said += [f"note: {noisy_note(v)}"] if v.noisy_left_out else []
        said += [] if result.noise_known else [f"note: {how_judged(result)}"]
        said += [f"warning: {w}" for w in result.warnings]
        text = "\n".join(said)
        if v.regression:
            ET.SubElement(case, "failure", message=text, type="regression").text = text
        elif v.undecided:
            ET.SubElement(case, "error", message=text, type="host noisy").text = text
        else:
            ET.SubElement(case, "system-out").text = text
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
