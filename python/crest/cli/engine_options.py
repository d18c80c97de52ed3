"""How the load engine waits for its sockets (the engine's `nap`; crest.load.runspec carries it), and whether
crest sends its preflight request before the load: declared once for every command that takes them."""

from __future__ import annotations

from typing import Annotated

import typer

Nap = Annotated[
    bool,
    typer.Option(
        "--nap/--no-nap",
        help="Under load, nap briefly instead of blocking on the sockets, so the target need not wake crest"
        " for each burst it writes; percentiles from p5 up read at most 2% long (docs/bench.md)."
        " --no-nap: always block.",
    ),
]
Preflight = Annotated[
    bool,
    typer.Option(
        "--preflight/--no-preflight",
        help="Before the load, send one GET (or HEAD) to the target, from where the clients stand, so a 404 or an"
        " untrusted certificate stops the command at once; its count is reported as preflight_requests."
        " --no-preflight: only connect, so the target sees exactly the load's requests.",
    ),
]
