"""`crest specweb99 --connections N --server NAME|--target URL`: SPECweb99 end to end, or its capacity search.

Owns the command's options and the kit's tables in the terminal; crest.specweb99.harness adds the
kit's housekeeping to the suite runner, crest.analysis.specweb99 judges the stored iterations, and
`--search` is `crest capacity` with the rule conforming>=95% plus every SPECweb99 rule.
"""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from crest.cli import EXIT_INTERRUPTED, EXIT_OK, cluster_options, engine_options, target_options, watching
from crest.errors import ConfigError
from crest.store import DEFAULT_PATH
from crest.units import format_span, parse_count, parse_share, parse_timeout

if TYPE_CHECKING:
    from crest.suite import Mix

PROFILES = ("smoke", "quick", "standard", "full")
SEARCH_RULE = "conforming>=95%"


def specweb99_command(
    connections: Annotated[
        str,
        typer.Option(
            "-c",
            "--connections",
            metavar="N",
            help="Simultaneous connections (with --search: the most the search may try).",
        ),
    ],
    target: target_options.Target = None,
    server: target_options.Server = None,
    profile: Annotated[
        str,
        typer.Option(
            "--profile",
            metavar="smoke|quick|standard|full",
            help="Run shape: smoke (seconds: does everything work?), quick (about 2 min, for tries), standard"
            " (about 9 min) or full (the kit's, the default: about 1 h 45 min).",
        ),
    ] = "full",
    iterations: Annotated[
        int | None, typer.Option("--iterations", metavar="N", min=1, help="Iterations [default: 3].")
    ] = None,
    dynamic: Annotated[
        str,
        typer.Option(
            "--dynamic",
            metavar="server|cgi",
            help="Dynamic requests to the server's own module (server) or to CGI (cgi).",
        ),
    ] = "server",
    search: Annotated[
        bool, typer.Option("--search", help="Find the most connections that still pass (a capacity search).")
    ] = False,
    start: Annotated[str, typer.Option("--start", metavar="N", help="--search: the first probe's connections.")] = "1",
    precision: Annotated[
        str, typer.Option("--precision", metavar="PERCENT", help="--search: bisect to within this.")
    ] = "5%",
    confirm: Annotated[
        int, typer.Option("--confirm", metavar="N", help="--search: repeats of the answer (median of 3).")
    ] = 2,
    cpus: target_options.Cpus = None,
    memory: target_options.Memory = None,
    server_opt: target_options.ServerOpt = None,
    access_log: target_options.AccessLog = False,
    insecure: target_options.Insecure = False,
    timeout: target_options.TimeoutOrDefault = None,  # 10s; with --network, the largest file's time (29s)
    db: Annotated[Path, typer.Option("--db", metavar="PATH", help="Results store (SQLite).")] = DEFAULT_PATH,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="No line per iteration.")] = False,
    cluster: cluster_options.Cluster = None,
    nodes: cluster_options.Nodes = None,
    allow_unauthenticated_cluster: cluster_options.AllowUnauthenticated = False,
    target_node: cluster_options.TargetNode = None,
    network: Annotated[str | None, typer.Option("--network", metavar="SPEC", help=cluster_options.NETWORK_HELP)] = None,
    nap: engine_options.Nap = True,
    ui: watching.Ui = False,
    ui_address: watching.UiAddress = None,
    metrics: watching.Metrics = None,
    jsonl: watching.Jsonl = None,
) -> int:
    """Run SPECweb99 against a target: validation, iterations, the POST-log check, VALID or INVALID.

    The metric is the number of conforming connections (each paced to 400 kbit/s, conforming at
    >= 320 kbit/s); --search finds the most connections that still make a valid run.
    """
    from crest.analysis.capacity import capacity_result
    from crest.analysis.rule import parse_rule
    from crest.analysis.specweb99 import specweb99_result
    from crest.capacity.runner import CapacityRequest, run_capacity
    from crest.cli.capacity import print_result
    from crest.cli.render_specweb99 import print_specweb99
    from crest.filesets.specweb import specweb99_directories
    from crest.runner.trials import RunInterrupted, RunRequest, SuiteRunner
    from crest.specweb99.harness import Harness, iteration_mixes
    from crest.store import Store
    from crest.suite import Suite, load_suite
    from crest.suite.specweb99 import QUICK, SMOKE, STANDARD

    count = parse_count(connections, what="--connections")
    if profile not in PROFILES:
        raise ConfigError(f"invalid --profile {profile!r}: use one of {', '.join(PROFILES)}")
    if dynamic not in ("server", "cgi"):
        raise ConfigError(f"invalid --dynamic {dynamic!r}: use server or cgi")
    if (target is None) == (server is None):
        raise ConfigError("give the target: --server NAME (crest starts it) or --target URL")
    base = load_suite("specweb99")
    shape = {"smoke": SMOKE, "quick": QUICK, "standard": STANDARD}.get(profile, {})
    settings = {
        **base.workload.specweb99.model_dump(mode="json"),  # type: ignore[union-attr]
        **shape,
        "dynamic": dynamic,
        **({"iterations": iterations} if iterations is not None else {}),
    }
    data = base.model_dump(mode="json")
    data["workload"]["specweb99"] = settings
    data["workload"]["fileset_connections"] = count
    data["ladder"] = {"clients": [count]}
    suite = Suite.model_validate(data)
    spec = suite.workload.specweb99
    assert spec is not None
    request = RunRequest(
        suite=suite,
        target=target,
        **target_options.one_configuration(
            "specweb99", server=server, cpus=cpus, memory=memory, server_opt=server_opt, access_log=access_log
        ),
        profile=profile,
        store_path=db,
        insecure=insecure,
        timeout_s=parse_timeout(timeout) if timeout else spec.request_timeout_s(network is not None),
        nap=nap,
        cluster=cluster,
        nodes=cluster_options.count(nodes, "--nodes"),
        target_node=target_node,
        network=network,
    )
    harness = Harness(
        spec, maxload=count, dirs=specweb99_directories(count), conforming_length=spec.conforming_length()
    )
    mixes = iteration_mixes(spec, count)
    shown = _Iterations(enabled=not quiet, word="probe" if search else "iteration", total=0 if search else len(mixes))
    watch = watching.Watching(watching.options(ui, ui_address, metrics, jsonl), db)
    with Store(db) as store, watch:
        try:
            if search:
                capacity = CapacityRequest(
                    rule=parse_rule(SEARCH_RULE),
                    axis="connections",
                    start=float(parse_count(start, what="--start")),
                    precision=parse_share(precision, what="--precision"),
                    confirm=confirm,
                    max_load=float(count),
                    specweb99=True,
                )
                ladder = mixes[0]
                ready = partial(_ready, quiet, capacity, watch)
                run_id = run_capacity(request, capacity, store, watch.on_event(shown.on_event), hooks=harness,
                                      ladder_mix=ladder, on_ready=ready)  # fmt: skip
                detail = store.run(run_id)
                print()
                print_result(capacity_result(detail))
            else:
                runner = SuiteRunner(request, watch.on_event(shown.on_event), harness)
                runner.preflight()
                if not quiet:  # every check passed: what is about to run
                    load_s = sum(m.timing.length_s for m in mixes)
                    print(f"crest: SPECweb99 at {count} connections: the kit's validation, then {len(mixes)}"
                          f" iterations of {format_span(spec.run_s)} measured (a {format_span(spec.warmup_s)} warm-up"
                          f" before the first, {format_span(spec.rampup_s)} of ramp-up before the others,"
                          f" {format_span(spec.rampdown_s)} of ramp-down after each): {format_span(load_s)} of load"
                          f" (profile {profile})", file=sys.stderr, flush=True)  # fmt: skip
                watch.start()
                run_id = runner.run_trial(store, 0, mixes)
                detail = store.run(run_id)
        except RunInterrupted as exc:
            # Not resumable (each probe or iteration depends on the harness's state): say so.
            print(
                f"crest: run {exc.run_id} interrupted: what finished is stored; start again with crest specweb99",
                file=sys.stderr,
            )
            return EXIT_INTERRUPTED
    result = specweb99_result(detail)
    if not search:
        print()
        print_specweb99(result)
    print(f"stored in {db} (run {run_id}); `crest report {run_id}` draws the SPECweb99 tables")
    # VALID or INVALID is the measurement, like a bench run's errors: exit 0 either way.
    return EXIT_OK


class _Iterations:
    """A line when the run starts (the kit validates the target first, then warms it up: minutes in which
    nothing else would be said), one as each iteration (or probe) starts, and one as each is stored."""

    def __init__(self, enabled: bool, word: str, total: int = 0) -> None:
        self.enabled = enabled
        self.word = word
        self.total = total  # iterations to run; 0 for a search (its probes are not counted ahead)

    def on_event(self, event: object) -> None:
        from crest.analysis.specweb99 import iteration

        kind, mix = getattr(event, "kind", ""), getattr(event, "mix", None)
        if self.enabled and kind == "run-started":
            print(f"  run {getattr(event, 'run_id', '')}: validating the target (the kit's checks of each kind of"
                  " request), then the load", file=sys.stderr, flush=True)  # fmt: skip
        if self.enabled and kind == "mix-started" and mix is not None:
            of = f" of {self.total}" if self.total else ""
            t = mix.timing
            print(f"  {self.word} {mix.index}{of}: {mix.clients} connections, {format_span(t.ramp_up_s)} of"
                  f" {'warm-up' if mix.index == 1 else 'ramp-up'}, then {format_span(t.window_s)} measured",
                  file=sys.stderr, flush=True)  # fmt: skip
        record = getattr(event, "record", None)
        if not self.enabled or getattr(event, "kind", "") != "mix-finished" or record is None:
            return
        if record.specweb99 is None:
            return
        it = iteration(record)
        verdict = "valid" if it.is_valid else "INVALID: " + "; ".join(it.failures)[:160]
        print(
            f"  {self.word} {it.index}: {it.requested} connections, {it.conforming} conforming,"
            f" {it.ops_per_s:,.1f} ops/s  {verdict}",
            file=sys.stderr,
        )


def _ready(quiet: bool, capacity: Any, watch: watching.Watching, probe: Mix) -> None:
    """Every check passed: say what the search will do, then start what watches it."""
    if not quiet:
        from crest.cli.capacity import announce_search

        announce_search(capacity, probe, word="SPECweb99")
    watch.start()
