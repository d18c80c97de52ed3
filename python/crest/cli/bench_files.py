"""`crest bench file:///DIR` and `crest bench smb://USER@HOST[:PORT]/SHARE`: dbench's loadfile replayed by
`-c` clients for `-d` seconds, like `dbench -t SECONDS N`, with the file-server summary (ops/s, MB/s, each
operation's count and latency) or one JSON object.

The same engine and RunSpec as an HTTP bench and as a loadfile suite's mix; what differs is the workload
(a loadfile, not a request) and what is printed. HTTP-only options are refused before anything runs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from crest.cli import EXIT_INTERRUPTED, EXIT_OK
from crest.cli.progress import LiveProgress
from crest.cli.render import render_file_report
from crest.cli.watching import Watching
from crest.errors import ConfigError, PeerError
from crest.load.client import LoadClient
from crest.load.runspec import RunSpec
from crest.runner.request import smb_password
from crest.suite.models import DEBIAN_LOADFILE, RESOLVE_NAMES
from crest.units import format_seconds


def bench_files(
    url: str, *, clients: int, threads: int, duration_s: float | None, timeout_s: float, loadfile: Path | None,
    password_file: Path | None, max_requests: int | None = None, skip_cleanup: bool = False,
    http_options: list[str], json_output: bool, quiet: bool, cluster: str | None, nodes: int | None,
    network: str | None, resolve_names: str | None = None, watch: Watching | None = None,
) -> int:  # fmt: skip
    """Run the loadfile against the file target for `duration_s` or `max_requests` operations (the first to
    come; the operations alone when the duration is None) and print its summary; the exit code. From this machine,
    from client subnets (`network`: an SMB share), from a cluster's nodes (`cluster`: each node's clients
    in DIR on its own machine, or on the share), or from each node's own subnets (both).

    Raises:
        ConfigError: an HTTP-only option, or what a file run cannot take; before anything runs.
        PeerError: no operation succeeded.
    """
    if http_options:
        raise ConfigError(
            f"{http_options[0]} is for HTTP targets; a file target ({url.split(':', 1)[0]}://) replays a loadfile:"
            " leave it out"
        )
    if network is not None and url.lower().startswith("file:"):
        from crest.network.url import on_network

        on_network(url)  # refused: a directory on this machine is reached by file calls, not over a network
    if nodes is not None and cluster is None:
        raise ConfigError("--nodes places the load on a cluster's nodes: add --cluster ADDRESS (e.g. local:3)")
    password = smb_password(password_file) if url.lower().startswith("smb:") else None
    if password_file is not None and password is None:
        raise ConfigError("--password-file is for smb:// targets: leave it out")
    if resolve_names not in (None, *RESOLVE_NAMES):
        raise ConfigError(f"--resolve-names {resolve_names}: use one of {', '.join(RESOLVE_NAMES)}")
    if resolve_names == "every-path" and not url.lower().startswith("file:"):
        raise ConfigError(
            "--resolve-names every-path is for file:///DIR targets (dbench's fileio simulates the lookup an SMB"
            " server makes itself): leave it out for an smb:// target"
        )
    path = str(loadfile or DEBIAN_LOADFILE)
    spec = RunSpec(
        url=url,
        connections=clients,
        threads=min(threads, clients),
        duration_s=duration_s,
        max_requests=max_requests,
        timeout_s=timeout_s,
        loadfile={
            "path": path,
            "password": password,
            "cleanup": not skip_cleanup,
            "resolve_names": resolve_names or RESOLVE_NAMES[0],
        },
    )
    client = LoadClient(spec, origin="bench")  # validates every setting: ConfigError before any traffic
    load, net_spec, network_here = _placed(client, spec, cluster, nodes, network)
    if watch is not None:
        watch.start()  # every check passed: the watchers' addresses come before the header
    if not json_output:
        length = format_seconds(duration_s) if duration_s is not None else f"{max_requests:,}-operation"
        kept = "left in place (--skip-cleanup)" if skip_cleanup else "removed at the end"
        print(
            f"Running {length} test @ {url}\n"
            f"  {clients} client{'s' if clients != 1 else ''} replaying {path}"
            f" (dbench's loadfile; each client in its own clients/client<N> tree, {kept})",
            flush=True,
        )
    show_progress = not (json_output or quiet) and sys.stderr.isatty()
    try:
        sampler = None
        if network_here is not None:
            from crest.network.counters import LinkSampler

            sampler = LinkSampler(network_here)
            sampler.start()
        try:
            with LiveProgress(spec, enabled=show_progress, watch=watch) as progress:
                result = load.run(on_progress=progress.update)
                progress.finished(result.report, interrupted=result.interrupted)
        finally:
            if sampler is not None:
                sampler.stop()
        figures = _figures(result.report, sampler)
    finally:
        if network_here is not None:
            network_here.close()
    report = result.report
    if json_output:
        document: dict[str, Any] = {**report, "url": url, "config": result.config}
        if figures is not None and net_spec is not None:
            document["network"] = {**net_spec.describe(), **figures}
        print(json.dumps(document), flush=True)
    else:
        _print_summary(report)
        if "cluster" in report:
            from crest.cli.render import render_nodes

            print(render_nodes(report["cluster"]), flush=True)
        if figures is not None:
            from crest.cli.render_network import render_network

            print(render_network(figures), flush=True)
    _fail_if_nothing_succeeded(report, result.interrupted)
    return EXIT_INTERRUPTED if result.interrupted else EXIT_OK


def _placed(client: LoadClient, spec: RunSpec, cluster: str | None, nodes: int | None,
            network: str | None) -> tuple[Any, Any, Any]:  # fmt: skip
    """Where the clients run, checked before the clock starts (the directory, the loadfile, the share and
    the logon, from where each client stands): (the load, the network spec, a network built here)."""
    net_spec = None
    if network is not None:
        from crest.network.spec import parse_network

        net_spec = parse_network(network)
    if cluster is not None:
        from crest.cluster.driver import OneMix

        return OneMix(cluster, nodes, spec, net_spec), net_spec, None  # each node checks from where it stands
    if net_spec is None:
        client.preflight()
        return client, None, None
    from crest.network.lines import check_fits, lines_needed
    from crest.network.load import SubnetLoad, spec_on_network
    from crest.network.topology import Network, check_capability

    check_fits(spec, net_spec)
    check_capability()
    here = Network(net_spec, lines_needed(spec, net_spec.subnets, net_spec.link_per), target_in_root=True)
    here.create()
    try:
        load = SubnetLoad(spec_on_network(spec, here), here, origin="bench")
        load.preflight()
    except BaseException:
        here.close()
        raise
    return load, net_spec, here


def _figures(report: dict[str, Any], sampler: Any) -> dict[str, Any] | None:
    """The network's figures over the run: the links sampled here, or each node's own (named with it)."""
    if sampler is not None:
        figures: dict[str, Any] = sampler.run_figures(report)
        return figures
    from crest.network.counters import take_nodes

    return take_nodes((report.get("cluster") or {}).get("nodes") or [])


def _print_summary(report: dict[str, Any]) -> None:
    print(render_file_report(report), flush=True)
    # rich only now, with the run over (an HTTP bench never loads it: its start-up is measured).
    from crest.cli.render_throughput import classes_table
    from crest.cli.terminal import console

    table = classes_table(report.get("classes") or {}, "operations")
    if table is not None:
        console().print(table)


def _fail_if_nothing_succeeded(report: dict[str, Any], interrupted: bool) -> None:
    errors = {kind: int(n) for kind, n in (report.get("errors") or {}).items() if n}
    if interrupted or report.get("requests", 0) or not errors:
        return
    first = next(iter(report.get("error_notes") or []), max(errors, key=lambda k: errors[k]))
    raise PeerError(f"no file operation succeeded ({sum(errors.values()):,} failed; {first}): check the target")
