"""How the load engine waits for its sockets, declared once for `crest bench`, `run`, `capacity` and
`specweb99` (the engine's `nap`; crest.load.runspec carries it)."""

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
