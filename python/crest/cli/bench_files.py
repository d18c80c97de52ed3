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
from crest.errors import ConfigError, PeerError
from crest.load.client import LoadClient
from crest.load.runspec import RunSpec
from crest.runner.request import smb_password
from crest.suite.models import DEBIAN_LOADFILE
from crest.units import format_seconds


def bench_files(
    url: str, *, clients: int, threads: int, duration_s: float, timeout_s: float, loadfile: Path | None, password_file: Path | None,
    http_options: list[str], json_output: bool, quiet: bool, cluster: str | None, network: str | None,
) -> int:  # fmt: skip
    """Run the loadfile against the file target and print its summary; the exit code.

    Raises:
        ConfigError: an HTTP-only option, or what a file run cannot take yet; before anything runs.
        PeerError: no operation succeeded.
    """
    if http_options:
        raise ConfigError(
            f"{http_options[0]} is for HTTP targets; a file target ({url.split(':', 1)[0]}://) replays a loadfile:"
            " leave it out"
        )
    if cluster is not None or network is not None:
        option = "--cluster" if cluster is not None else "--network"
        raise ConfigError(
            f"{option} does not take a file target in crest bench yet: run a loadfile suite with crest run"
        )
    password = smb_password(password_file) if url.lower().startswith("smb:") else None
    if password_file is not None and password is None:
        raise ConfigError("--password-file is for smb:// targets: leave it out")
    path = str(loadfile or DEBIAN_LOADFILE)
    spec = RunSpec(
        url=url,
        connections=clients,
        threads=min(threads, clients),
        duration_s=duration_s,
        timeout_s=timeout_s,
        loadfile={"path": path, "password": password, "cleanup": True},
    )
    client = LoadClient(spec, origin="bench")  # validates every setting: ConfigError before any traffic
    client.preflight()  # the directory, the loadfile, the share and the logon, before the clock starts
    if not json_output:
        print(
            f"Running {format_seconds(duration_s)} test @ {url}\n"
            f"  {clients} client{'s' if clients != 1 else ''} replaying {path}"
            " (dbench's loadfile; each client in its own clients/client<N> tree, removed at the end)",
            flush=True,
        )
    show_progress = not (json_output or quiet) and sys.stderr.isatty()
    with LiveProgress(spec, enabled=show_progress) as progress:
        result = client.run(on_progress=progress.update)
    report = result.report
    if json_output:
        print(json.dumps({**report, "url": url, "config": result.config}), flush=True)
    else:
        _print_summary(report)
    _fail_if_nothing_succeeded(report, result.interrupted)
    return EXIT_INTERRUPTED if result.interrupted else EXIT_OK


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
