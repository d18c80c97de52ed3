"""`crest run SUITE --target URL`: a suite's ladder against a target, each mix stored as it ends.

Owns the command's options, the live progress (stderr, terminals only) and
the closing summary; crest.experiment.plan plans the runs (every combination of
the value lists, trials interleaved) and the runner does the work; neither
prints.
"""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import typer

from crest.cli import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    cluster_options,
    engine_options,
    target_options,
    terminal,
    watching,
)
from crest.cli.main import also
from crest.cli.runs import show_command
from crest.errors import ConfigError, PeerError, TargetError
from crest.experiment.plan import Plan, execute, plan_runs
from crest.load.preflight import parse_url
from crest.network.spec import network_level
from crest.runner.trials import Event, RunInterrupted, RunRequest, SuiteRunner
from crest.servers import cpus as cpu_split
from crest.servers.registry import EXTERNAL
from crest.servers.registry import adapter as server_adapter
from crest.store import DEFAULT_PATH, Store
from crest.suite import PROFILES, load_group, load_suite
from crest.suite.roles import format_role_map, is_role_map, parse_role_map
from crest.units import (
    format_bytes,
    format_latency_us,
    format_span,
    parse_size,
    parse_timeout,
    parse_values,
)


def run_command(
    suite: Annotated[
        str | None,
        typer.Argument(
            help="A built-in suite (see `crest suites`), a suite .toml file, or an access log (its request mix)."
        ),
    ] = None,
    target: target_options.Target = None,
    server: target_options.Server = None,
    cpus: target_options.Cpus = None,
    memory: target_options.Memory = None,
    server_opt: target_options.ServerOpt = None,
    access_log: target_options.AccessLog = False,
    tls_target: Annotated[
        str | None, typer.Option("--tls-target", metavar="URL", help="Base https URL for the suite's TLS classes.")
    ] = None,
    profile: Annotated[
        str,
        typer.Option(
            "--profile",
            metavar="quick|standard|full",
            help="Mix lengths: quick (4 s), standard (60 s) or full (the seed's own, the default: 300 s for"
            " WebBench suites, about 2 h 40 min for veritest-static's two trials). The length of a run is printed"
            " before it starts.",
        ),
    ] = "full",
    repeat: Annotated[
        int | None,
        typer.Option("--repeat", metavar="N", min=1, help="Trials of the whole suite (default: the suite's)."),
    ] = None,
    fileset: Annotated[
        Path | None,
        typer.Option("--fileset", metavar="DIR", help="A tree made by `crest fileset generate`: use its manifest."),
    ] = None,
    db: Annotated[Path, typer.Option("--db", metavar="PATH", help="Results store (SQLite).")] = DEFAULT_PATH,
    resume: Annotated[
        str | None, typer.Option("--resume", metavar="RUN_ID", help="Continue an interrupted run with its next mix.")
    ] = None,
    insecure: target_options.Insecure = False,
    timeout: target_options.Timeout = "10s",
    seed: Annotated[int, typer.Option("--seed", metavar="N", help="Seed for request selection and client delays.")] = 0,
    validate_content: Annotated[
        bool, typer.Option("--validate-content", help="Check each static file's first line too, not only its size.")
    ] = False,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="No live progress.")] = False,
    loadfile: Annotated[
        str | None,
        typer.Option(
            "--loadfile",
            metavar="FILE",
            help="File suites: the dbench loadfile to replay (default: Debian's client.txt).",
        ),
    ] = None,
    password_file: Annotated[
        Path | None,
        typer.Option(
            "--password-file",
            metavar="FILE",
            help="smb:// targets: a file (mode 0600) whose first line is the password (else $CREST_SMB_PASSWORD).",
        ),
    ] = None,
    cluster: cluster_options.Cluster = None,
    nodes: cluster_options.Nodes = None,
    allow_unauthenticated_cluster: cluster_options.AllowUnauthenticated = False,
    target_node: cluster_options.TargetNode = None,
    monitor_node: cluster_options.MonitorNode = None,
    monitor_pid: cluster_options.MonitorPid = None,
    monitor_name: cluster_options.MonitorName = None,
    network: Annotated[
        list[str] | None,
        typer.Option(
            "--network",
            metavar="SPEC",
            help=cluster_options.NETWORK_HELP + " Repeat it to compare networks (`none`: loopback).",
        ),
    ] = None,
    http: target_options.Http = None,
    streams: target_options.Streams = None,
    nap: engine_options.Nap = True,
    preflight: engine_options.Preflight = True,
    ui: watching.Ui = False,
    ui_address: watching.UiAddress = None,
    metrics: watching.Metrics = None,
    jsonl: watching.Jsonl = None,
) -> int:
    """Run a suite's ladder of mixes against a target and store every mix.

    Web suites take an http(s) URL or a web server; file suites (mindcraft-netbench, netbench-nbdm60) take
    file:///DIR, smb://USER@HOST[:PORT]/SHARE or --server samba.
    """
    watcher = Progress(enabled=not quiet and sys.stderr.isatty(), headers=not quiet)
    watch = watching.Watching(watching.options(ui, ui_address, metrics, jsonl), db)
    on_event = watch.on_event(watcher.on_event)
    try:
        if resume is not None:
            if suite or target or cluster or nodes or target_node:
                raise ConfigError(
                    "--resume continues a stored run with its own suite, target and cluster:"
                    " drop SUITE, --target, --cluster, --nodes and --target-node"
                )
            if not nap:
                raise ConfigError("--resume continues a stored run with its own engine settings: drop --no-nap")
            watch.start()
            run_ids = [SuiteRunner.resume(resume, db, on_event)]
            experiment = run_ids[0]
        else:
            if suite is None or (target is None and server is None):
                raise ConfigError(
                    "give a suite and a target: crest run SUITE --server nginx (see `crest servers`)"
                    " or crest run SUITE --target http://host:port (see `crest suites`)"
                )
            if profile not in PROFILES:
                raise ConfigError(f"invalid --profile {profile!r}: use one of {', '.join(PROFILES)}")
            axes = _axes(server, target, cpus, memory)
            options = target_options.server_options(server_opt or [])
            target, role_targets = _role_targets(target)
            members = load_group(suite) or [(load_suite(suite), {})]
            for member, _ in members:
                if member.workload.specweb99 is not None:
                    # Without the kit's harness (validation, Reset, the POST-log check) the mixes run but every
                    # iteration would be judged INVALID for what only the harness does.
                    raise ConfigError(
                        f"suite {member.name} is SPECweb99, which needs the kit's harness around each iteration:"
                        " run it with crest specweb99 --connections N --server NAME (or --target URL)"
                    )
            base = RunRequest(
                suite=members[0][0],  # each member's own suite replaces it
                access_log=access_log,
                target=target,
                tls_target=tls_target,
                role_targets=role_targets,
                profile=profile,
                repeat=repeat,
                fileset_dir=fileset,
                store_path=db,
                insecure=insecure,
                timeout_s=parse_timeout(timeout),
                seed=seed,
                validate_content=validate_content,
                cluster=cluster,
                nodes=cluster_options.count(nodes, "--nodes"),
                target_node=target_node,
                monitor_node=monitor_node,
                monitor_pid=cluster_options.count(monitor_pid, "--monitor-pid"),
                monitor_name=monitor_name,
                loadfile=loadfile,
                password_file=password_file,
                network=network_level(network[0]) if network and len(network) == 1 else None,
                nap=nap,
                answer_check=preflight,
            )
            if network and len(network) > 1:
                axes["network"] = list(network)  # each a configuration of its own, like --server a,b
            axes.update(target_options.protocol_axes(http, streams))
            plan = plan_runs(base, members, {**axes, **options}, options=list(options))
            experiment = plan.experiment
            run_ids = execute(plan, store_path=db, on_event=on_event, on_ready=partial(announce, watcher, quiet, watch))
            if len(run_ids) > 1:
                print(
                    f"experiment {experiment}: {len(run_ids)} runs; compare them with `crest compare {experiment}`",
                    file=sys.stderr,
                )
    except RunInterrupted as exc:
        watcher.stop()
        _summaries(db, [exc.run_id])
        print(f"crest: {exc}", file=sys.stderr)
        also(exc)
        return EXIT_INTERRUPTED
    except (TargetError, PeerError) as exc:
        watcher.stop()
        if watcher.run_ids:
            # The target died mid-run: show what was measured, then the reason.
            _summaries(db, watcher.run_ids)
            print(f"crest: error: {exc}", file=sys.stderr)
            also(exc)
            return EXIT_FAILURE
        raise
    finally:
        watcher.stop()
        watch.stop()
    _summaries(db, run_ids if len(run_ids) == 1 else [])
    _report(db, run_ids, experiment if len(run_ids) > 1 else run_ids[0])
    for line in logs_kept(db, run_ids):  # asked for with --access-log: where it went (-q too)
        print(line, file=sys.stderr)
    return EXIT_OK


def logs_kept(db: Path, run_ids: list[str]) -> list[str]:
    """Where each run's target wrote its access log, kept with the results (`logs/RUN_ID/`, a per-class
    target's under its role): one line per run that has one."""
    lines = []
    for run_id in run_ids:
        kept = db.parent / "logs" / run_id
        found = sorted(kept.rglob("access.log")) if kept.is_dir() else []
        if found:
            which = "access log" if len(found) == 1 else "access logs"
            lines.append(f"crest: the target's {which} of run {run_id}: {', '.join(str(p) for p in found)}")
    return lines


def announce(watcher: Progress, quiet: bool, watch: watching.Watching | None, plan: Plan) -> None:
    """What is about to run, once every check passed: runs, mixes and the time under load; then the live
    page, the metrics endpoint and the JSON Lines start (their addresses printed after this line)."""
    watcher.ready(plan)
    if not quiet:
        _announce(plan)
    if watch is not None:
        watch.start()


def _announce(plan: Plan) -> None:
    runs, mixes, profiles = len(plan.trials), plan.mixes(), sorted({c.request.profile for c in plan.configurations})
    # Past a few minutes a newcomer wants to know the short way before committing to the long one.
    hint = "; --profile quick makes each mix 4 s" if plan.load_s() > 300 and "quick" not in profiles else ""
    print(
        f"crest: {runs} run{'s' * (runs != 1)}, {mixes} mix{'es' * (mixes != 1)},"
        f" {format_span(plan.load_s())} of load (profile {', '.join(profiles)}{hint})",
        file=sys.stderr,
        flush=True,
    )


def _role_targets(target: str | None) -> tuple[str | None, dict[str, str]]:
    """--target as one URL, or as a role map: (the first role's URL, role -> URL)."""
    if target is None or not is_role_map(target):
        return target, {}
    roles = parse_role_map(
        target, what="--target", example="static=http://127.0.0.1:8080,dynamic=http://127.0.0.1:8081"
    )
    for url in roles.values():
        parse_url(url)
    return next(iter(roles.values())), roles


def _axes(server: str | None, target: str | None, cpus: str | None, memory: str | None) -> dict[str, list[Any]]:
    """The value lists of --server, --cpus and --memory that were given: the planner combines them."""
    if server is not None and is_role_map(server):
        # Servers side by side, one per class role: one configuration (a role map is not swept).
        roles = parse_role_map(server, what="--server", example="static=lighttpd,dynamic=apache-event")
        for name in roles.values():
            if name == EXTERNAL:
                raise ConfigError("--server ROLE=external: give the URLs of targets crest does not start with"
                                  " --target ROLE=URL,... instead")  # fmt: skip
            server_adapter(name)
        servers = [format_role_map(roles)]
    else:
        servers = parse_values(server, what="--server", example="nginx,apache-event") if server else [EXTERNAL]
    if target is not None and server is not None and servers != [EXTERNAL]:
        raise ConfigError("--target names a target crest does not start; --server starts one: give one of them")
    if EXTERNAL in servers and (len(servers) > 1 or target is None):
        raise ConfigError("--server external means the URL given with --target, alone: add --target http://host:port")
    axes: dict[str, list[Any]] = {}
    if server is not None:
        axes["server"] = servers
    if cpus:
        axes["cpus"] = [s.cpus for s in cpu_split.parse(cpus)]  # whole cores stay ints, fractions floats
    if memory:
        values = parse_values(memory, what="--memory", example="256M,1G")
        for m in values:
            parse_size(m, what="--memory")
        axes["memory"] = values  # stored as written (256M); the planner turns each into bytes
    return axes


class Progress:
    """What `crest run` shows while it runs, on stderr: a header as each run starts (which configuration,
    which trial) and the live line (the run and its configuration, the mix of the ladder, req/s, errors,
    time left in the mix and in the whole plan)."""

    def __init__(self, enabled: bool, *, headers: bool = True) -> None:
        self.enabled = enabled
        self.headers = headers  # the run headers, also when stderr is not a terminal (a log keeps them)
        self.console = terminal.console(stderr=True)
        self.status: Any = None
        self.run_ids: list[str] = []
        self.plan: Plan | None = None
        self.runs_started = 0
        self.left_s = 0.0  # seconds of load the plan has left once the current mix ends
        self.mixes = 0
        self.label = ""

    def ready(self, plan: Plan) -> None:
        """The plan about to run (every check passed): the runs to count and the load to count down."""
        self.plan = plan
        self.left_s = plan.load_s()

    def on_event(self, event: Event) -> None:
        if event.kind == "run-started":
            self.run_ids.append(event.run_id)
            self.runs_started += 1
            self.mixes = event.mixes
            self._run_header(event)
        if event.mix is not None and event.mixes:
            self.mixes = event.mixes
        if not self.enabled:
            return
        if self.status is None:
            self.status = self.console.status("starting")
            self.status.start()
        if event.mix is None:
            return
        mix, t = event.mix, event.mix.timing
        head = (f"{self._run_words()} · mix {mix.index}/{self.mixes or '?'} · {mix.clients} clients ×"
                f" {mix.threads_per_client} threads")  # fmt: skip
        if event.kind == "mix-progress":
            live = event.live
            elapsed = float(live.get("elapsed_s", 0.0))
            rate = live.get("requests", 0) / elapsed if elapsed > 0 else 0.0
            left = max(0.0, t.length_s - elapsed)
            total = f" · {format_span(self.left_s - t.length_s + left)} left in all" if self.plan else ""
            self.status.update(
                f"{head} · {rate:,.0f} req/s · {live.get('errors', 0)} errors · {left:.0f}s left in mix{total}"
            )
        elif event.kind == "mix-finished" and event.record is not None:
            self.left_s -= t.length_s
            r = event.record
            self.console.print(
                f"  mix {mix.index:>3}: {mix.clients:>4} clients  {r.rps:>12,.1f} req/s  "
                f"{format_bytes(r.throughput_Bps)}/s  p99 {format_latency_us(r.latency_us.get('p99', 0))}  "
                f"errors {r.error_count}"
            )
        else:
            self.status.update(head)

    def _run_words(self) -> str:
        runs = len(self.plan.trials) if self.plan else 0
        where = f"run {self.runs_started}/{runs}" if runs > 1 else f"run {self.run_ids[-1] if self.run_ids else ''}"
        return f"{where} {self.label}".rstrip()

    def _run_header(self, event: Event) -> None:
        """`run 2/6 · server=lighttpd cpus=1 · trial 1 of 2 · 16 mixes` when a plan has several runs."""
        if self.plan is None or len(self.plan.trials) < 2 or self.runs_started > len(self.plan.trials):
            return
        trial = self.plan.trials[self.runs_started - 1]
        config = self.plan.configurations[trial.configuration]
        self.label = config_words(config.request)
        if not self.headers:
            return
        trials = sum(1 for t in self.plan.trials if t.configuration == trial.configuration)
        of = f" · trial {trial.index + 1} of {trials}" if trials > 1 else ""
        self.console.print(
            f"run {self.runs_started}/{len(self.plan.trials)} · {self.label}{of} · {event.mixes} mixes"
            f" ({event.run_id})",
            style="bold" if self.enabled else None,
            highlight=False,
        )

    def stop(self) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None


def config_words(request: RunRequest) -> str:
    """A configuration as its levels (`server=nginx cpus=1`), else the server or the target it loads."""
    if request.factors:
        return " ".join(f"{k}={v}" for k, v in request.factors.items())
    return request.server or request.target or ""


def _summaries(db: Path, run_ids: list[str]) -> None:
    """Each run as `crest show` prints it: the summary a person reads after a run."""
    for run_id in run_ids:
        print()
        show_command(run_id, db=db)
        print(f"stored in {db} (run {run_id})")


def _report(db: Path, run_ids: list[str], name: str) -> None:
    """Write the runs' HTML report and print its summary: peaks, comparisons, warnings, where it is."""
    from crest.cli.report import default_report_path, print_report_summary

    if not run_ids:
        return
    with Store(db) as store:
        details = store.select(run_ids)
    if len(run_ids) > 1:
        print(f"stored in {db}: {len(run_ids)} runs (`crest show RUN_ID` for each, `crest runs` lists them)")
    print()
    print_report_summary(details, default_report_path(db, name))
