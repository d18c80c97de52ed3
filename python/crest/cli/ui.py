"""`crest ui`: the results browser in a web page until Ctrl-C; prints its URL (with its token) once."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Annotated

import typer

from crest.cli import EXIT_OK
from crest.cli.watching import parse_listen
from crest.store import DEFAULT_PATH

# How often the main thread wakes to let Python run signal handlers.
_WAKE_INTERVAL_S = 0.5


def ui_command(
    db: Annotated[
        Path, typer.Option("--db", metavar="FILE", help="The results database to browse (read-only).")
    ] = DEFAULT_PATH,
    address: Annotated[
        str,
        typer.Option(
            "--address",
            metavar="HOST:PORT",
            help="Where to listen; port 0 picks a free one. Anything but loopback is reachable from outside.",
        ),
    ] = "127.0.0.1:0",
) -> int:
    """Browse the results store in a web page: runs, reports, comparisons, experiments, capacity searches.

    Read-only: the store may be written by a run at the same time, and a running run's page shows its
    ladder so far. Every request needs the token in the printed URL. Serves until Ctrl-C or SIGTERM.
    """
    host, port = parse_listen(address, "--address")
    stop = threading.Event()
    previous = {sig: signal.signal(sig, _setter(stop)) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        from crest.web.serve import serve_ui  # starlette, uvicorn and jinja2 load only when it serves

        served = serve_ui(None, db, host=host, port=port, what="--address")
        try:
            if not served.is_loopback:
                print(
                    f"crest: warning: listening on {served.host}, reachable beyond this machine",
                    file=sys.stderr,
                    flush=True,
                )
            print(served.url, flush=True)  # stdout: the URL alone, for a script to open
            print("crest: open the URL above in a browser; Ctrl-C stops it", file=sys.stderr, flush=True)
            while not stop.wait(_WAKE_INTERVAL_S):
                pass
        finally:
            served.stop()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    print("crest: ui stopped", file=sys.stderr, flush=True)
    return EXIT_OK


def _setter(stop: threading.Event) -> Callable[[int, FrameType | None], None]:
    def handle(signum: int, frame: FrameType | None) -> None:
        stop.set()

    return handle
