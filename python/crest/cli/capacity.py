"""`crest capacity SUITE|URL --rule "p99<50ms,errors<1%"`: the highest load a target sustains under a rule.

Owns the command's options, the probe lines as they finish and the closing answer with its confidence
statement; crest.capacity.runner runs the probes (each a stored mix of one run) and
crest.analysis.capacity reads the answer back from the store, so what is printed is what was stored.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from crest.analysis.capacity import CapacityResult, capacity_result
from crest.analysis.rule import parse_rule
from crest.cli import EXIT_INTERRUPTED, EXIT_OK, cluster_options, engine_options, target_options, watching
from crest.cli.terminal import fold
from crest.errors import ConfigError
from crest.report import fmt as rfmt
from crest.runner.trials import Event, RunInterrupted, RunRequest
from crest.store import DEFAULT_PATH, Store
from crest.suite import PROFILES, Mix, Suite, load_suite
from crest.units import (
    format_latency_us,
    format_span,
    parse_count,
    parse_duration,
    parse_rate,
    parse_share,
    parse_timeout,
)

if TYPE_CHECKING:
    from crest.capacity.runner import CapacityRequest

DEFAULT_URL_LENGTH = "10s"


def capacity_command(
    suite: Annotated[
        str,
        typer.Argument(
            metavar="SUITE|URL|LOG",
            help="A suite (its workload and timing; see `crest suites`), a URL to request as given, or an access"
            " log (its request mix).",
            show_default=False,
        ),
    ],
    rule: Annotated[
        str,
        typer.Option(
            "--rule",
            metavar="RULE",
            help="What every probe must meet, e.g. 'p99<50ms,errors<1%' or 'rps>=1000'.",
            show_default=False,
        ),
    ],
    target: target_options.Target = None,
    server: target_options.Server = None,
    axis: Annotated[
        str,
        typer.Option(
            "--axis",
            metavar="clients|connections|rate",
            help="The load searched: clients, connections (one thread each) or rate (open loop, req/s).",
        ),
    ] = "clients",
    start: Annotated[
        str | None,
        typer.Option(
            "--start",
            metavar="LOAD",
            help="The first probe's load [default: 1; a log's request mix on --axis rate: the log's own rate].",
        ),
    ] = None,
    factor: Annotated[
        float, typer.Option("--factor", metavar="X", help="Growth factor between probes until one fails.")
    ] = 2.0,
    precision: Annotated[
        str,
        typer.Option(
            "--precision", metavar="PERCENT", help="Bisect until the failing load is within this of the answer."
        ),
    ] = "5%",
    confirm: Annotated[
        int, typer.Option("--confirm", metavar="N", help="Repeats of the answer that must all meet the rule.")
    ] = 3,
    max_load: Annotated[
        str | None,
        typer.Option(
            "--max", metavar="LOAD", help="Never probe above this load [default: the start × 1024].", show_default=False
        ),
    ] = None,
    connections: Annotated[
        str,
        typer.Option("-c", "--connections", metavar="N", help="URL with --axis rate: connections sending the rate."),
    ] = "50",
    length: Annotated[
        str | None,
        typer.Option(
            "--length",
            metavar="DURATION",
            help=f"URL: each probe's length, with a 20% ramp-up [default: {DEFAULT_URL_LENGTH}].",
            show_default=False,
        ),
    ] = None,
    profile: Annotated[
        str,
        typer.Option(
            "--profile",
            metavar="quick|standard|full",
            help="SUITE: each probe's timing, as for crest run: quick (4 s), standard (60 s) or full (the suite's"
            " own, the default: 300 s a probe for the VeriTest and WebBench suites; a search takes 10 to 20"
            " probes).",
        ),
    ] = "full",
    cpus: target_options.Cpus = None,
    memory: target_options.Memory = None,
    server_opt: target_options.ServerOpt = None,
    access_log: target_options.AccessLog = False,
    insecure: target_options.Insecure = False,
    timeout: target_options.Timeout = "10s",
    http: target_options.Http = None,
    streams: target_options.Streams = None,
    db: Annotated[Path, typer.Option("--db", metavar="PATH", help="Results store (SQLite).")] = DEFAULT_PATH,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="No line per probe.")] = False,
    cluster: cluster_options.Cluster = None,
    nodes: cluster_options.Nodes = None,
    allow_unauthenticated_cluster: cluster_options.AllowUnauthenticated = False,
    target_node: cluster_options.TargetNode = None,
    network: Annotated[str | None, typer.Option("--network", metavar="SPEC", help=cluster_options.NETWORK_HELP)] = None,
    nap: engine_options.Nap = True,
    preflight: engine_options.Preflight = True,
    ui: watching.Ui = False,
    ui_address: watching.UiAddress = None,
    metrics: watching.Metrics = None,
    jsonl: watching.Jsonl = None,
) -> int:
    """Find the highest load (clients, connections or an open-loop rate) that meets a rule: grow, bisect, confirm.

    Every probe is a stored mix of one run; the answer comes with a confidence statement.
    """
    from crest.capacity.runner import AXES, CapacityRequest, run_capacity

    parsed = parse_rule(rule)
    if any(c.metric == "conforming" for c in parsed.conditions):
        raise ConfigError(
            "conforming is SPECweb99's metric (connections at >= 320 kbit/s): search it with"
            " crest specweb99 --connections N --search"
        )
    if axis not in AXES:
        raise ConfigError(f"invalid --axis {axis!r}: use one of {', '.join(AXES)}")
    share = parse_share(precision, what="--precision")
    search = CapacityRequest(
        rule=parsed,
        axis=axis,
        start=_load(start or "1", axis, "--start"),
        factor=factor,
        precision=share,
        confirm=confirm,
        max_load=_load(max_load, axis, "--max") if max_load is not None else None,
    )
    search.search()  # checks the settings before anything is started
    is_url = suite.startswith(("http://", "https://"))
    if is_url:
        if target is not None or server is not None:
            raise ConfigError("a URL is its own target: drop --target and --server, or give a SUITE instead")
        if axis == "clients":
            search = replace(search, axis="connections")  # a URL has no clients: each connection is one
        the_suite = _url_suite(suite, parse_count(connections, what="--connections"), length)
        base_target: str | None = suite
        run_profile = "full"
    else:
        if length is not None:
            raise ConfigError("--length is for a URL; a suite's probes take its timing: choose it with --profile")
        if profile not in PROFILES:
            raise ConfigError(f"invalid --profile {profile!r}: use one of {', '.join(PROFILES)}")
        if (target is None) == (server is None):
            raise ConfigError("give the target: --server NAME (crest starts it) or --target URL")
        the_suite = load_suite(suite)
        if the_suite.workload.specweb99 is not None:
            raise ConfigError(
                f"suite {the_suite.name} needs SPECweb99's harness around each probe (Reset, the POST-log check):"
                " search it with crest specweb99 --connections N --search"
            )
        replay = the_suite.workload.replay
        if replay is not None and replay.sends_the_log:
            raise ConfigError(
                f"suite {the_suite.name} replays its log {replay.mode}, as logged, which no load can grow: search its"
                ' request mix with mode = "mix" in [workload.replay] (or give the log itself: crest capacity LOG)'
            )
        if the_suite.workload.har is not None and axis != "clients":
            raise ConfigError(
                f"suite {the_suite.name} loads pages as browsers do, each client a browser: search it with"
                " --axis clients (how many browsers it sustains)"
            )
        base_target = target
        run_profile = profile
        if start is None and axis == "rate" and replay is not None:
            search = replace(search, start=_log_rate(replay.log, replay.reader_options(), search.max_load))
            search.search()
    request = RunRequest(
        suite=target_options.with_protocol(the_suite, http, streams, "capacity"),
        target=base_target,
        **target_options.one_configuration(
            "capacity", server=server, cpus=cpus, memory=memory, server_opt=server_opt, access_log=access_log
        ),
        profile=run_profile,
        store_path=db,
        insecure=insecure,
        timeout_s=parse_timeout(timeout),
        nap=nap,
        answer_check=preflight,
        cluster=cluster,
        nodes=cluster_options.count(nodes, "--nodes"),
        target_node=target_node,
        network=network,
    )
    printer = _Probes(search.axis, parsed.text, enabled=not quiet)
    with Store(db) as store, watching.Watching(watching.options(ui, ui_address, metrics, jsonl), db) as watch:
        try:
            run_id = run_capacity(request, search, store, watch.on_event(printer.on_event),
                                  on_ready=partial(_ready, quiet, search, watch))  # fmt: skip
        except RunInterrupted as exc:
            # Not resumable (each probe or iteration depends on the harness's state): say so.
            print(
                f"crest: run {exc.run_id} interrupted: what finished is stored; start again with crest capacity",
                file=sys.stderr,
            )
            return EXIT_INTERRUPTED
        result = capacity_result(store.run(run_id))
    print()
    print_result(result)
    print(f"stored in {db} (run {run_id}); `crest report {run_id}` plots the probes")
    return EXIT_OK


def _ready(quiet: bool, search: CapacityRequest, watch: watching.Watching, probe: Mix) -> None:
    """Every check passed: say what the search will do, then start what watches it."""
    if not quiet:
        announce_search(search, probe)
    watch.start()


def _load(text: str, axis: str, option: str) -> float:
    if axis == "rate":
        return parse_rate(text, what=option)
    return float(parse_count(text, what=option))


def _log_rate(log: str, options: dict[str, Any], max_load: float | None) -> float:
    """Where a search of a log's mix on the rate axis starts: the log's own mean rate (whole req/s, at least
    1, at most --max), so the probes do not double up from 1 req/s to a rate the log already shows."""
    from crest.replay import scan

    summary = scan(log, options)
    rate = float(max(1, round(summary.requests / summary.duration_s))) if summary.duration_s > 0 else 1.0
    return min(rate, max_load) if max_load is not None else rate


def _url_suite(url: str, connections: int, length: str | None) -> Suite:
    """A one-class suite that requests the URL as given, over kept-alive HTTP/1.1."""
    length_s = parse_duration(length or DEFAULT_URL_LENGTH, what="--length")
    if length_s != int(length_s) or length_s < 2:
        raise ConfigError(f"invalid --length {length!r}: give whole seconds, at least 2s, e.g. 10s")
    return Suite.model_validate(
        {
            "name": "url",
            "description": f"capacity search on {url}",
            "source": "crest capacity URL",
            "workload": {
                "http_version": "1.1",
                "keepalive": True,
                "classes": [{"name": "url", "kind": "url", "weight": 1}],
            },
            "ladder": {"clients": [connections]},
            "timing": {"length_s": length_s, "ramp_up_s": max(1, int(length_s) // 5)},
        }
    )


class _Probes:
    """One line per probe as it is stored."""

    def __init__(self, axis: str, rule: str, enabled: bool) -> None:
        self.axis, self.rule, self.enabled = axis, rule, enabled
        self.shown = False

    def on_event(self, event: Event) -> None:
        if not self.enabled or event.kind != "mix-finished" or event.record is None or event.mix is None:
            return
        if not self.shown:
            print(f"capacity search on {self.axis} under {self.rule}", file=sys.stderr)
            self.shown = True
        r, mix = event.record, event.mix
        load = f"{mix.rate_rps:g} req/s" if self.axis == "rate" and mix.rate_rps else f"{mix.connections} conns"
        if self.axis == "clients":
            load = f"{mix.clients} clients"
        p99 = format_latency_us(r.latency_us.get("p99", 0))
        print(
            f"  probe {mix.index:>3}: {load:>14}  {r.rps:>11,.1f} req/s  p99 {p99:>9}  errors {r.error_count}",
            file=sys.stderr,
        )


def announce_search(search: CapacityRequest, probe: Mix, word: str = "capacity") -> None:
    """The plan, once every check passed (stderr: stdout keeps the answer)."""
    print(search_plan(search, probe.timing.length_s, word), file=sys.stderr, flush=True)


def search_plan(search: CapacityRequest, probe_s: float, word: str = "capacity") -> str:
    """What a search is about to do, before it starts: the length of a probe, the most probes it takes and
    the highest load it probes (its plan: the search held to both, whatever the target does), as time under
    load."""
    stated = search.plan()
    unit = "req/s" if search.axis == "rate" else search.axis
    ceiling = stated.highest_load
    reach = (f"up to --max {ceiling:g}" if search.max_load is not None
             else f"up to {ceiling:g} {unit} (--max; default the start × 1024)")  # fmt: skip
    return (f"crest: {word} search on {search.axis} from {search.start:g}: each probe {format_span(probe_s)} of"
            f" load; at most {stated.probes} probes {reach} (with {search.confirm} confirmations): at most"
            f" {format_span(stated.probes * probe_s)} of load")  # fmt: skip


def print_result(result: CapacityResult) -> None:
    """The answer, how sure it is, and each condition's margin at it."""
    print(fold(f"capacity: {result.statement()}"))  # prose and figures: folded between words, never inside
    for probe in result.probes:
        verdict = "met" if probe.passed else "broke " + ", ".join(probe.failures)
        line = f"  probe {probe.index:>3} ({probe.phase:>7}): {probe.load:>10g}  {verdict}"
        print(fold(line, hang=33))  # a long verdict continues under itself
    for margin in result.margins:
        c = margin.condition
        show = _shower(c.metric)
        if margin.mean is None or result.answer is None:
            continue
        spread = rfmt.mean_interval(margin.interval, len(margin.values), show, "a higher --confirm")
        spread = f" ({spread})" if margin.interval else f", {spread}" if spread else ""
        broke = f"; {show(margin.at_failed)} at {result.failed:g}" if margin.at_failed is not None else ""
        print(fold(f"  {c.text}: {show(margin.mean)} at {result.answer:g}{spread}{broke}"))


def _shower(metric: str) -> Callable[[float], str]:
    if metric in ("error_rate", "conforming"):
        return lambda v: f"{v * 100:.2f}%"
    if metric == "rps":
        return lambda v: f"{v:,.1f} req/s"
    return lambda v: format_latency_us(v)
