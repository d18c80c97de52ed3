"""`crest servers`: the server adapters, whether each is installed, its version and how to install it;
each line folded to the terminal's width under its own indent."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from crest.cli import EXIT_OK
from crest.cli.terminal import fold
from crest.servers.registry import describe_all


def servers_command(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> int:
    """List the targets crest can start (--server NAME): installed or not, version, install command."""
    rows = describe_all()
    if as_json:
        print(json.dumps(rows, indent=2))
        return EXIT_OK
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        if r["name"] == "external":
            state = "always available"
        elif r["installed"]:
            state = f"installed   {r['version']}"
        else:
            state = f"missing     install: {r['install']}"
        print(fold(f"{r['name']:<{width}}  {state}"))
        if r["name"] == "external":
            kinds = ""
        elif "loadfile" in r["kinds"]:  # a file server: file-operation suites, no web ones
            kinds = f"; file server: {', '.join(r['kinds'])} suites only"
        else:
            protocols = ["HTTP/1.1"] + ["HTTP/2"] * bool(r.get("http2")) + ["HTTP/3"] * bool(r.get("http3"))
            kinds = f"; {', '.join(protocols)}; dynamic: {', '.join(r['kinds']) or 'static only'}"
        print(fold(f"{'':<{width}}  {r['title']}{kinds}"))
        for part in r.get("missing", []):
            print(
                fold(f"{'':<{width}}  for {part['needed_for'].upper()} it {part['part']}, missing: {part['install']}")
            )
        if r["options"]:
            print(fold(f"{'':<{width}}  --server-opt: {', '.join(r['options'])}"))
    print("\n--json shows what each --server-opt key means.")
    return EXIT_OK
