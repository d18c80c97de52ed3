"""`crest suites`: list the built-in suites (or check one suite file) as a table or as JSON.

Only this module prints; the suites and their summaries come from crest.suite.
Problems in a suite file raise SuiteError (a ConfigError: one line, exit code 2).
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.text import Text

from crest.cli import EXIT_OK, terminal
from crest.cli.terminal import Column, FitTable
from crest.suite import GROUPS, PROFILES, Suite, SuiteError, builtin_suites, load_suite
from crest.suite.describe import classes_text, clients_text, mixes_text, source_short, tls_text, workload_text


def suite_json(suite: Suite, profile: str = "full") -> dict[str, Any]:
    """The --json object of one suite: {name, description, source, mixes, workload}."""
    mixes = []
    for mix in suite.mixes(profile):
        timing = mix.timing.model_dump()
        timing["window_s"] = mix.timing.window_s
        mixes.append(
            {
                "index": mix.index,
                "clients": mix.clients,
                "threads_per_client": mix.threads_per_client,
                "connections": mix.connections,
                "timing": timing,
                **({"size_bytes": mix.size_bytes} if mix.size_bytes is not None else {}),
            }
        )
    workload = suite.workload.model_dump()
    if tls_text(suite.workload) is not None:  # a TLS suite says its key and route, defaults included
        workload["tls"] = suite.workload.tls_settings().model_dump()
    return {
        "name": suite.name,
        "description": suite.description,
        "source": suite.source,
        "mixes": mixes,
        "workload": workload,
    }


def _table(suites: list[Suite], profile: str) -> FitTable:
    table = FitTable([Column("suite", "left", style="bold"), Column("source", "left", wrap=True),
                      Column("clients × threads per client", "left", wrap=True), Column("mix s (window)", "left"),
                      Column("workload", "left", wrap=True)])  # fmt: skip
    for suite in suites:
        ladder = suite.ladder
        threads = f"{ladder.threads_per_client}" + "".join(
            f" ({o.threads_per_client} from {o.from_clients})" for o in ladder.overrides
        )
        timing = suite.mixes(profile)[0].timing
        runs = f" ×{suite.repeat} runs" if suite.repeat > 1 else ""
        table.add_row(
            suite.name,
            source_short(suite.source),
            f"{clients_text(ladder)} × {threads}",
            f"{timing.length_s:g} ({timing.window_s:g}){runs}",
            classes_text(suite.workload),
        )
    return table


def _details(suite: Suite, profile: str) -> list[str]:
    lines = [
        f"suite:       {suite.name}",
        f"source:      {suite.source}",
        f"mixes:       {mixes_text(suite, profile)}",
        f"workload:    {workload_text(suite.workload)}",
    ]
    tls = tls_text(suite.workload)
    if tls is not None:
        lines.append(f"tls:         {tls}")
    lines.append(f"description: {suite.description}")
    if suite.notes:
        lines.append(f"notes:       {suite.notes}")
    return lines


def suites_command(
    suite: Annotated[
        str | None,
        typer.Argument(
            metavar="[SUITE]",
            help="Show only this suite: a built-in name or a suite .toml file (validates the file).",
            show_default=False,
        ),
    ] = None,
    profile: Annotated[
        str,
        typer.Option(
            "--profile",
            metavar="|".join(PROFILES),
            help="Timing to show: full (as published), standard (≤ 60 s mixes) or quick (4 s mixes).",
        ),
    ] = "full",
    json_output: Annotated[
        bool,
        typer.Option(
            "--json", help="Print a JSON list of {name, description, source, mixes, workload} and nothing else."
        ),
    ] = False,
) -> int:
    """List the built-in suites: the published tests crest can re-run.

    Each suite is a ladder of mixes (clients × threads per client) with its
    timing and workload, taken from one seed report; the source column says
    which report and figure.
    """
    if profile not in PROFILES:
        raise SuiteError(f"unknown profile '{profile}': expected one of {', '.join(PROFILES)}")
    suites = [load_suite(suite)] if suite is not None else builtin_suites()
    if json_output:
        print(json.dumps([suite_json(s, profile) for s in suites], indent=2, ensure_ascii=False))
        return EXIT_OK
    if suite is not None:
        # One suite: every detail, as plain lines (they wrap in the terminal, not in a cell).
        print("\n".join(_details(suites[0], profile)))
        return EXIT_OK
    out = terminal.console()
    out.print(_table(suites, profile))
    for name, (source, factors) in GROUPS.items():
        members = ", ".join(s for names in factors.values() for s in names)
        out.print(Text(f"group {name}: {source}; `crest run {name}` runs {members}"))
    from crest.experiment.design import builtin_designs  # the runner behind it: only for the full listing

    for d in builtin_designs():
        workloads = ", ".join(map(str, d.factors.get("workload", [d.suite])))
        k, p = len(d.factors), len(d.generators)
        size = f"2^{k}" if p == 0 else f"2^({k}-{p})"
        out.print(Text(f"design {d.name}: {d.source}; `crest doe {d.name}` runs its {size} design over {workloads}"))
    out.print(Text("Details of one suite: crest suites NAME; as JSON: crest suites --json"))
    return EXIT_OK
