"""`crest serve`: run the built-in target until SIGINT or SIGTERM; prints its URLs, first line = main URL."""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Annotated

import typer

from crest.cli import EXIT_OK
from crest.filesets import FilesetError, load_manifest
from crest.servers import BuiltinServer, ServeSpec
from crest.units import parse_duration

# How often the main thread wakes to let Python run signal handlers.
_WAKE_INTERVAL_S = 0.5


def serve_command(
    docroot: Annotated[Path, typer.Option("--docroot", metavar="DIR", help="Directory to serve.", show_default=False)],
    host: Annotated[
        str,
        typer.Option(
            "--host", metavar="ADDR", help="IP address to listen on; anything but loopback is reachable from outside."
        ),
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", metavar="PORT", help="Port for plain HTTP; 0 picks a free one.")] = 0,
    tls: Annotated[
        bool, typer.Option("--tls", help="The main listener speaks HTTPS (self-signed certificate).")
    ] = False,
    tls_port: Annotated[
        int | None,
        typer.Option(
            "--tls-port", metavar="PORT", help="Also serve HTTPS on this port; 0 picks a free one.", show_default=False
        ),
    ] = None,
    http3: Annotated[
        bool,
        typer.Option("--http3", help="Also serve HTTP/3 (QUIC over UDP) on the HTTPS listener's port."),
    ] = False,
    threads: Annotated[int, typer.Option("--threads", metavar="N", help="Server threads; 0 = one per CPU.")] = 0,
    cgi_dir: Annotated[
        Path | None,
        typer.Option(
            "--cgi-dir",
            metavar="DIR",
            help="CGI programs served under /cgi-bin/ [default: DOCROOT/cgi-bin].",
            show_default=False,
        ),
    ] = None,
    access_log: Annotated[
        Path | None,
        typer.Option(
            "--access-log", metavar="FILE", help="Append one line per request to this file.", show_default=False
        ),
    ] = None,
    specweb99_dir: Annotated[
        Path | None,
        typer.Option(
            "--specweb99-dir",
            metavar="DIR",
            help="Answer SPECweb99's dynamic set at /specweb99/dynamic, keeping its tables and POST log "
            "(post.log) here; made if missing.",
            show_default=False,
        ),
    ] = None,
    service_time: Annotated[
        str | None,
        typer.Option(
            "--service-time",
            metavar="DURATION",
            help="Serve each request in this long, one at a time (a queue of known capacity, 1/DURATION req/s).",
            show_default=False,
        ),
    ] = None,
) -> int:
    """Serve a docroot with the built-in target until Ctrl-C or SIGTERM."""
    spec = ServeSpec(
        docroot=docroot,
        host=host,
        port=port,
        tls=tls,
        tls_port=tls_port,
        threads=threads,
        cgi_dir=cgi_dir,
        access_log=access_log,
        specweb99_dir=specweb99_dir,
        service_time_s=parse_duration(service_time, what="--service-time") if service_time else 0.0,
        http3=http3,
    )
    server = BuiltinServer(spec)  # validates: ConfigError before anything is bound
    if not spec.is_loopback:
        print(f"crest: warning: listening on {host}, reachable beyond this machine", file=sys.stderr, flush=True)
    stop = threading.Event()
    previous = {sig: signal.signal(sig, _setter(stop)) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        with server:
            print("\n".join(server.urls), flush=True)
            page = _a_page(docroot)
            if page is not None:
                print(f"crest: note: {docroot} has no index.html, so / answers 404; a page it serves:"
                      f" {server.urls[0]}{page}", file=sys.stderr, flush=True)  # fmt: skip
            while not stop.wait(_WAKE_INTERVAL_S):
                pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return EXIT_OK


def _a_page(docroot: Path) -> str | None:
    """A path the docroot serves when / would answer 404 (no index.html): a fileset's first file, else the
    first file found; None when / has a page or the docroot holds no file."""
    if (docroot / "index.html").is_file():
        return None
    try:
        return load_manifest(docroot).files[0].path
    except (FilesetError, IndexError):
        pass
    for where, dirs, files in os.walk(docroot):  # top-down, so a big tree is not listed whole
        dirs.sort()
        if files:
            return (Path(where) / min(files)).relative_to(docroot).as_posix()
    return None


def _setter(stop: threading.Event) -> Callable[[int, FrameType | None], None]:
    def handle(signum: int, frame: FrameType | None) -> None:
        stop.set()

    return handle
