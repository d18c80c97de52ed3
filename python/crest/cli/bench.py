"""`crest bench URL`: parse options into a RunSpec, run it through a LoadClient, print the result (a file
target's bench is crest.cli.bench_files).

All validation happens before any traffic; request errors are data (exit 0) unless no request
succeeded at all (exit 1, with the first error and its likely fix); Ctrl-C prints the partial result
and exits 130.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

import typer

from crest.cli import EXIT_INTERRUPTED, EXIT_OK, cluster_options, engine_options, watching
from crest.cli.progress import LiveProgress
from crest.cli.render import render_header, render_nodes, render_report
from crest.errors import ConfigError, PeerError
from crest.load.client import LoadClient
from crest.load.preflight import check_answers, parse_url
from crest.load.runspec import RunSpec, parse_header, parse_source_addrs
from crest.units import parse_count, parse_duration, parse_rate, parse_size, parse_timeout

DEFAULT_DURATION = "10s"
# A file target's URL (crest.cli.bench_files runs it); anything else is a web target.
FILE_SCHEMES = ("file:", "smb:")


def bench_command(
    url: Annotated[
        str,
        typer.Argument(
            metavar="URL",
            help="Target URL: http://host[:port]/path or https://..., or a file target (file:///DIR,"
            " smb://USER@HOST[:PORT]/SHARE) that -c clients replay dbench's loadfile against.",
            show_default=False,
        ),
    ],
    connections: Annotated[
        str, typer.Option("-c", "--connections", metavar="N", help="Connections kept open (10k style suffixes ok).")
    ] = "10",
    threads: Annotated[
        str | None,
        typer.Option(
            "-t",
            "--threads",
            metavar="N",
            help="Engine threads [default: one per CPU, at most -c].",
            show_default=False,
        ),
    ] = None,
    duration: Annotated[
        str | None,
        typer.Option(
            "-d",
            "--duration",
            metavar="DURATION",
            help="Test length, e.g. 10s, 500ms, 1m [default: 10s unless -n].",
            show_default=False,
        ),
    ] = None,
    requests: Annotated[
        str | None,
        typer.Option(
            "-n", "--requests", metavar="N", help="Stop after this many requests, e.g. 1000 or 10k.", show_default=False
        ),
    ] = None,
    rate: Annotated[
        str | None,
        typer.Option(
            "--rate",
            metavar="REQ_PER_S",
            help="Open loop: total requests/s, latency from intended send time.",
            show_default=False,
        ),
    ] = None,
    http: Annotated[
        str,
        typer.Option(
            "--http",
            metavar="1.0|1.1|2|3",
            help="HTTP version: 1.0, 1.1, 2 (h2 by ALPN over https, h2c over http) or 3 (QUIC; https URLs only).",
        ),
    ] = "1.1",
    keepalive: Annotated[
        bool | None,
        typer.Option(
            "--keepalive/--no-keepalive",
            help="Reuse connections [default: on for 1.1, off for 1.0].",
            show_default=False,
        ),
    ] = None,
    header: Annotated[
        list[str] | None,
        typer.Option(
            "-H",
            "--header",
            metavar="'NAME: VALUE'",
            help="Extra header 'Name: value' (repeatable).",
            show_default=False,
        ),
    ] = None,
    method: Annotated[
        str | None,
        typer.Option(
            "-m",
            "--method",
            metavar="METHOD",
            help="Request method [default: GET, or POST with --body].",
            show_default=False,
        ),
    ] = None,
    body: Annotated[
        str | None, typer.Option("--body", metavar="TEXT", help="Request body (text).", show_default=False)
    ] = None,
    timeout: Annotated[
        str, typer.Option("--timeout", metavar="DURATION", help="Per-request timeout including connect.")
    ] = "10s",
    think_time: Annotated[
        str,
        typer.Option(
            "--think-time", metavar="DURATION", help="Closed loop: pause between a response and the next request."
        ),
    ] = "0s",
    pipeline: Annotated[
        str,
        typer.Option("--pipeline", metavar="N", help="Requests in flight per connection (HTTP/1.1 keep-alive only)."),
    ] = "1",
    streams: Annotated[
        str,
        typer.Option(
            "--streams", metavar="N", help="HTTP/2 or HTTP/3: concurrent streams per connection (like h2load -m)."
        ),
    ] = "1",
    h2_window: Annotated[
        str | None,
        typer.Option(
            "--h2-window",
            metavar="BYTES",
            help="HTTP/2 or HTTP/3: each stream's receive window, e.g. 64K [default: 1G, as h2load].",
            show_default=False,
        ),
    ] = None,
    h2_connection_window: Annotated[
        str | None,
        typer.Option(
            "--h2-connection-window",
            metavar="BYTES",
            help="HTTP/2 or HTTP/3: each connection's receive window [default: 1G, as h2load].",
            show_default=False,
        ),
    ] = None,
    read_buffer: Annotated[
        str | None,
        typer.Option(
            "--read-buffer",
            metavar="BYTES",
            help="Bytes taken per read from a socket (WebBench's receive buffer), e.g. 4096 or 16K [default: 64K].",
            show_default=False,
        ),
    ] = None,
    socket_rcvbuf: Annotated[
        str | None,
        typer.Option(
            "--socket-rcvbuf",
            metavar="BYTES",
            help="The socket's SO_RCVBUF, e.g. 4096 [default: the kernel's, auto-tuned].",
            show_default=False,
        ),
    ] = None,
    recv_buffer: Annotated[str | None, typer.Option("--recv-buffer", metavar="BYTES", hidden=True)] = None,
    insecure: Annotated[
        bool, typer.Option("--insecure", help="Do not verify the TLS certificate (self-signed targets).")
    ] = False,
    tls_resumption: Annotated[
        bool, typer.Option("--tls-resumption/--no-tls-resumption", help="Resume TLS sessions on new connections.")
    ] = True,
    nap: engine_options.Nap = True,
    preflight: engine_options.Preflight = True,
    source_addrs: Annotated[
        str | None,
        typer.Option(
            "--source-addrs",
            metavar="ADDRS",
            help="Bind outgoing connections round-robin, e.g. 127.0.0.2-127.0.0.20 or a comma list.",
            show_default=False,
        ),
    ] = None,
    allow_non_loopback_sources: Annotated[
        bool, typer.Option("--allow-non-loopback-sources", help="Allow --source-addrs outside 127.0.0.0/8 and ::1.")
    ] = False,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print one JSON report object to stdout and nothing else.")
    ] = False,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="No live progress line and no warnings.")] = False,
    cluster: cluster_options.Cluster = None,
    nodes: cluster_options.Nodes = None,
    allow_unauthenticated_cluster: cluster_options.AllowUnauthenticated = False,
    loadfile: Annotated[
        str | None,
        typer.Option(
            "--loadfile",
            metavar="PATH",
            help="File targets: the dbench loadfile each client replays [default: dbench's client.txt, as a suite's].",
            show_default=False,
        ),
    ] = None,
    password_file: Annotated[
        str | None,
        typer.Option(
            "--password-file",
            metavar="FILE",
            help="smb:// targets: a file (mode 0600) whose first line is the password (else $CREST_SMB_PASSWORD).",
            show_default=False,
        ),
    ] = None,
    skip_cleanup: Annotated[
        bool,
        typer.Option(
            "--skip-cleanup", help="File targets: leave each client's tree in place (dbench's --skip-cleanup)."
        ),
    ] = False,
    resolve_names: Annotated[
        str | None,
        typer.Option(
            "--resolve-names",
            metavar="queries|every-path",
            help="file:///DIR: which operations look their path up first: the queries only, or every-path as"
            " dbench's fileio does (its MB/s counts that work) [default: queries].",
            show_default=False,
        ),
    ] = None,
    network: Annotated[
        str | None,
        typer.Option(
            "--network",
            metavar="SPEC",
            help="Send from client subnets in network namespaces with line speeds, delay and loss, e.g."
            " subnets=4,client-link=100mbit,rtt=80ms or a preset (veritest-4x100, zeus-100mbit, webcat-10mbit,"
            " webcat-100mbit, specweb99-user). Needs root. See docs/networks.md.",
            show_default=False,
        ),
    ] = None,
    ui: watching.Ui = False,
    ui_address: watching.UiAddress = None,
    metrics: watching.Metrics = None,
    jsonl: watching.Jsonl = None,
) -> int:
    """Load-test a URL, like wrk or ab.

    Prints latency percentiles, requests/s, throughput, connections, status codes
    and errors; --json prints the same as one JSON object.
    """
    if recv_buffer is not None:
        # It set SO_RCVBUF, which WebBench's "receive buffer" never meant: say which one is wanted.
        raise ConfigError(
            "--recv-buffer was ambiguous and is gone: use --read-buffer BYTES (bytes per read, WebBench's"
            " receive buffer) or --socket-rcvbuf BYTES (the socket's SO_RCVBUF, what --recv-buffer set)"
        )
    if json_output and jsonl == "-":
        raise ConfigError("--json and --jsonl - both want stdout: write the frames to a file (--jsonl FILE)")
    watch = watching.Watching(watching.options(ui, ui_address, metrics, jsonl))
    try:
        conns = parse_count(connections, what="--connections")
        if url.lower().startswith(FILE_SCHEMES):
            http_given = [name for name, given in (
                ("--http", http != "1.1"), ("--keepalive/--no-keepalive", keepalive is not None), ("--header", bool(header)),
                ("--method", method is not None), ("--body", body is not None),
                ("--rate", rate is not None), ("--think-time", think_time != "0s"), ("--pipeline", pipeline != "1"),
                ("--streams", streams != "1"), ("--h2-window", h2_window is not None),
                ("--h2-connection-window", h2_connection_window is not None), ("--read-buffer", read_buffer is not None),
                ("--socket-rcvbuf", socket_rcvbuf is not None), ("--insecure", insecure),
                ("--no-tls-resumption", not tls_resumption), ("--source-addrs", source_addrs is not None),
            ) if given]  # fmt: skip
            from crest.cli.bench_files import bench_files

            return bench_files(
                url, clients=conns, threads=parse_count(threads, what="--threads") if threads is not None else
                _default_threads(conns), duration_s=_duration(duration, requests), timeout_s=parse_timeout(timeout),
                loadfile=Path(loadfile) if loadfile else None, skip_cleanup=skip_cleanup,
                max_requests=parse_count(requests, what="--requests") if requests is not None else None,
                password_file=Path(password_file) if password_file else None, http_options=http_given,
                json_output=json_output, quiet=quiet, cluster=cluster, nodes=cluster_options.count(nodes, "--nodes"),
                network=network, resolve_names=resolve_names, watch=watch,
            )  # fmt: skip
        for option, value in (
            ("--loadfile", loadfile),
            ("--password-file", password_file),
            ("--skip-cleanup", skip_cleanup or None),
            ("--resolve-names", resolve_names),
        ):
            if value is not None:
                raise ConfigError(f"{option} is for file targets (file:///DIR or smb://USER@HOST/SHARE): leave it out")
        spec = RunSpec(
            url=url,
            method=method if method is not None else ("POST" if body is not None else "GET"),
            headers=tuple(parse_header(h) for h in header or ()),
            body=body,
            http_version=http,
            keepalive=keepalive if keepalive is not None else http != "1.0",
            pipeline=parse_count(pipeline, what="--pipeline"),
            streams=parse_count(streams, what="--streams"),
            h2_stream_window_bytes=parse_size(h2_window, what="--h2-window") if h2_window is not None else None,
            h2_connection_window_bytes=(
                parse_size(h2_connection_window, what="--h2-connection-window")
                if h2_connection_window is not None
                else None
            ),
            connections=conns,
            threads=parse_count(threads, what="--threads") if threads is not None else _default_threads(conns),
            duration_s=_duration(duration, requests),
            max_requests=parse_count(requests, what="--requests") if requests is not None else None,
            rate_rps=parse_rate(rate, what="--rate") if rate is not None else None,
            think_time_s=parse_duration(think_time, what="--think-time", allow_zero=True),
            timeout_s=parse_timeout(timeout),
            insecure=insecure,
            tls_resumption=tls_resumption,
            nap=nap,
            source_addrs=(
                parse_source_addrs(source_addrs, allow_non_loopback=allow_non_loopback_sources)
                if source_addrs is not None
                else ()
            ),
            read_buffer_bytes=parse_size(read_buffer, what="--read-buffer") if read_buffer is not None else None,
            socket_rcvbuf_bytes=parse_size(socket_rcvbuf, what="--socket-rcvbuf")
            if socket_rcvbuf is not None
            else None,
        )
        client = LoadClient(spec, origin="bench")  # validates every setting: ConfigError before any traffic
        if body is not None and spec.method in ("GET", "HEAD") and method is not None and not (quiet or json_output):
            print(f"crest: warning: sending a body with {spec.method}; many servers ignore it", file=sys.stderr)
        if network is not None and cluster is None:
            return _bench_on_network(spec, network, json_output, quiet, watch, preflight)
        load: Any = client
        net_spec = None
        if cluster is None:
            if nodes is not None:
                raise ConfigError("--nodes places the load on a cluster's nodes: add --cluster ADDRESS (e.g. local:3)")
            client.preflight()
            sent = _answer_check(spec, preflight)
        else:
            from crest.cluster.driver import OneMix

            if network is not None:  # each load node sends from subnets of its own
                from crest.network.spec import parse_network

                net_spec = parse_network(network)
                if spec.source_addrs:
                    raise ConfigError(
                        "--network gives each client its own address in its subnet: leave out --source-addrs"
                    )
            # Connects, places the nodes (each builds its network) and checks the target from each.
            load = OneMix(cluster, cluster_options.count(nodes, "--nodes"), spec, net_spec)
            sent = load.from_clients(partial(_answer_check, spec, preflight))
        watch.start()  # every check passed: the watchers' addresses come before the header
        if not json_output:
            print(render_header(spec), flush=True)
        show_progress = not (json_output or quiet) and sys.stderr.isatty()
        with LiveProgress(spec, enabled=show_progress, watch=watch) as progress:
            result = load.run(on_progress=progress.update)
            progress.finished(result.report, interrupted=result.interrupted)
        from crest.network.counters import take_nodes

        figures = take_nodes((result.report.get("cluster") or {}).get("nodes") or [])
        if json_output:
            document: dict[str, Any] = {**result.report, "url": spec.url, "config": result.config,
                                        "preflight_requests": sent}  # fmt: skip
            if figures is not None and net_spec is not None:
                document["network"] = {**net_spec.describe(), **figures}
            print(json.dumps(document), flush=True)
        else:
            print(render_report(result.report, spec, preflight_requests=sent), flush=True)
            if "cluster" in result.report:
                print(render_nodes(result.report["cluster"]), flush=True)
            if figures is not None:
                from crest.cli.render_network import render_network

                print(render_network(figures), flush=True)
        _fail_if_nothing_succeeded(result.report, spec, result.interrupted)
        return EXIT_INTERRUPTED if result.interrupted else EXIT_OK
    finally:
        watch.stop()


def _bench_on_network(
    spec: RunSpec, text: str, json_output: bool, quiet: bool, watch: watching.Watching, preflight: bool
) -> int:
    """The bench from a client network's subnets to a target on this machine (it stays where it is, in
    this namespace, reached at the network's target address)."""
    from crest.cli.render_network import render_network
    from crest.network.counters import LinkSampler
    from crest.network.lines import check_fits, lines_needed
    from crest.network.load import SubnetLoad
    from crest.network.spec import parse_network
    from crest.network.topology import Network, check_capability
    from crest.network.url import loopback_port, on_network

    net_spec = parse_network(text)
    if spec.source_addrs:
        raise ConfigError("--network gives each client its own address in its subnet: leave out --source-addrs")
    moved = replace(spec, url=on_network(spec.url))  # ConfigError: not a target on this machine
    check_fits(moved, net_spec)
    check_capability()
    network = Network(net_spec, lines_needed(moved, net_spec.subnets, net_spec.link_per), target_in_root=True)
    with network:
        port = loopback_port(spec.url)
        if port is not None:
            network.forward_to_loopback(port)  # a server on 127.0.0.1 only: the network forwards to it
        load = SubnetLoad(moved, network, origin="bench")
        load.preflight()
        sent = load.from_clients(partial(_answer_check, moved, preflight))
        watch.start()
        if not json_output:
            print(render_header(spec), flush=True)
            print(f"Network: {net_spec.label()}, target reached at {moved.url}", flush=True)
        sampler = LinkSampler(network)
        sampler.start()
        show_progress = not (json_output or quiet) and sys.stderr.isatty()
        try:
            with LiveProgress(spec, enabled=show_progress, watch=watch) as progress:
                result = load.run(on_progress=progress.update)
                progress.finished(result.report, interrupted=result.interrupted)
        finally:
            sampler.stop()
        figures = sampler.run_figures(result.report)
        facts = network.describe()
    if json_output:
        document: dict[str, Any] = {**result.report, "url": moved.url, "config": result.config,
                                    "network": {**facts, **figures}, "preflight_requests": sent}  # fmt: skip
        print(json.dumps(document), flush=True)
    else:
        print(render_report(result.report, moved, preflight_requests=sent), flush=True)
        print(render_network(figures), flush=True)
    _fail_if_nothing_succeeded(result.report, moved, result.interrupted)
    return EXIT_INTERRUPTED if result.interrupted else EXIT_OK


def _answer_check(spec: RunSpec, preflight: bool) -> int:
    """The preflight's one exchange with the target (none with --no-preflight), by the user's --timeout, from
    where it is called (this machine, a subnet, a load node): the requests it sent."""
    if not preflight:
        return 0
    return check_answers(
        parse_url(spec.url), path=_path(spec.url), method=spec.method, headers=spec.headers,
        http_version=spec.http_version, insecure=spec.insecure, timeout_s=spec.timeout_s,
    )  # fmt: skip


def _path(url: str) -> str:
    """The request target of a URL: its path and query."""
    parts = urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def _duration(duration: str | None, requests: str | None) -> float | None:
    if duration is not None:
        return parse_duration(duration, what="--duration")
    if requests is not None:
        return None  # -n alone: run until that many requests are done
    return parse_duration(DEFAULT_DURATION)


def _default_threads(connections: int) -> int:
    """One engine thread per CPU this process may run on, never more than connections."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, connections))


def _fail_if_nothing_succeeded(report: dict[str, Any], spec: RunSpec, interrupted: bool) -> None:
    """A bench in which every request failed measured nothing. After its report comes one line with the
    first error and the likely fix, and exit 1; a run cut short by Ctrl-C keeps its own exit code.

    Raises:
        PeerError: no request succeeded and some failed.
    """
    errors = {kind: int(n) for kind, n in (report.get("errors") or {}).items() if n}
    if interrupted or report.get("requests", 0) or not errors:
        return
    kind = max(errors, key=lambda k: errors[k])
    first = next((note for note in report.get("error_notes") or [] if note.startswith(kind)), kind)
    statuses = ", ".join(sorted(str(code) for code in report.get("status") or {}))
    fixes = {
        "tls": "add --insecure for a target with a self-signed certificate"
        if spec.url.startswith("https:") and not spec.insecure
        else "check that the target speaks TLS on this port",
        "status": f"the target answered {statuses or 'errors'} to every request: check the URL's path and method",
        "connect": "is the target running? check the URL",
        "timeout": "the target did not answer within --timeout: raise --timeout or lower -c",
    }
    fix = fixes.get(kind, "see the errors above")
    raise PeerError(f"no request succeeded ({sum(errors.values()):,} failed; {first}): {fix}")
