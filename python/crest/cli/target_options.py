"""The options every command that starts or reaches a target shares, declared once: the target or the server
crest starts, its CPUs, memory, settings and access log, TLS checking, the request timeout and the HTTP
version (the cluster options are cluster_options', the engine's nap engine_options'). `crest run` takes
several values of some to compare configurations; `crest capacity` and `crest specweb99` measure one
configuration, so `one_configuration` takes one value of each and says so in one line otherwise.

tests/test_cli_options.py walks every command's options against SHARED and fails when one lacks a
shared option it does not refuse for a stated reason. Never prints.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from crest.errors import ConfigError
from crest.units import parse_count, parse_size, parse_values

if TYPE_CHECKING:
    from crest.suite import Suite

Target = Annotated[
    str | None,
    typer.Option(
        "--target",
        metavar="URL",
        help="Base URL of a target crest does not start, e.g. http://127.0.0.1:8080; or one per class role,"
        " e.g. static=http://127.0.0.1:8080,dynamic=http://127.0.0.1:8081",
    ),
]
Server = Annotated[
    str | None,
    typer.Option(
        "--server",
        metavar="NAME",
        help="The target crest starts, e.g. nginx (see `crest servers`); servers side by side, one per class role,"
        " e.g. static=lighttpd,dynamic=apache-event. crest run compares several, comma-separated.",
    ),
]
Cpus = Annotated[
    str | None,
    typer.Option(
        "--cpus",
        metavar="N",
        help="CPUs of the target crest starts (e.g. 1 or 0.5): ceil(N) cores pinned, a CFS quota for a fraction;"
        " the engine gets the rest. crest run compares several, comma-separated (1,2).",
    ),
]
Memory = Annotated[
    str | None,
    typer.Option(
        "--memory",
        metavar="SIZE",
        help="Memory limit of the target crest starts (cgroup), e.g. 256M. crest run compares several (256M,1G).",
    ),
]
ServerOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--server-opt",
        metavar="KEY=VALUE",
        help="A setting of the server crest starts (repeatable, once per KEY; the keys `crest servers` lists), e.g."
        " max_request_workers=400. crest run runs KEY=V1,V2 as a configuration each (a comma inside a value: \\,).",
    ),
]
AccessLog = Annotated[
    bool, typer.Option("--access-log", help="The started target logs every request; each mix stores the count.")
]
Insecure = Annotated[bool, typer.Option("--insecure", help="Accept any TLS certificate (self-signed targets).")]
_TIMEOUT_HELP = "Per-request timeout, e.g. 10s."
Timeout = Annotated[str, typer.Option("--timeout", metavar="DURATION", help=_TIMEOUT_HELP)]
# A command whose default timeout depends on the rest of its options (crest specweb99 with --network).
TimeoutOrDefault = Annotated[str | None, typer.Option("--timeout", metavar="DURATION", help=_TIMEOUT_HELP)]
Http = Annotated[
    str | None,
    typer.Option(
        "--http",
        metavar="VERSION",
        help="Speak this HTTP version instead of the suite's: 1.0, 1.1, 2 or 3 (crest run compares several: 1.1,2,3).",
    ),
]
Streams = Annotated[
    str | None,
    typer.Option(
        "--streams", metavar="N", help="HTTP/2 or HTTP/3: concurrent streams per connection (like h2load -m)."
    ),
]

# Every shared option by its flag: a command lacks one only for a reason stated in the test's table.
SHARED = ("--target", "--server", "--cpus", "--memory", "--server-opt", "--access-log", "--insecure", "--timeout",
          "--http", "--streams", "--cluster", "--nodes", "--target-node", "--allow-unauthenticated-cluster",
          "--network", "--nap", "--preflight", "--ui", "--ui-address", "--metrics", "--jsonl")  # fmt: skip


def one_value(text: str | None, option: str, command: str, *, example: str) -> str | None:
    """The one value of an option that `crest run` takes as a list; a list is refused in one line.

    Raises:
        ConfigError: several comma-separated values.
    """
    if text is None or "=" in text:
        return text  # a role map (ROLE=NAME,...) is one configuration; the runner judges it
    return _one(parse_values(text, what=option, example=example), option, command)


def server_options(pairs: list[str]) -> dict[str, list[str]]:
    """KEY=V1,V2,… per --server-opt: each KEY's values (several sweep it in crest run, like --cpus). A comma
    inside a value is written \\, (e.g. KEY='a\\,b' is the one value a,b).

    Raises:
        ConfigError: a pair that is not KEY=VALUE, or a KEY given twice.
    """
    options: dict[str, list[str]] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key or not value.strip():
            raise ConfigError(f"--server-opt {pair!r}: give KEY=VALUE, e.g. --server-opt worker_connections=4096")
        if key in options:
            raise ConfigError(
                f"--server-opt {key} is given twice: give its values once, comma-separated, e.g. {key}=150,400"
            )
        options[key] = parse_values(
            value, what=f"--server-opt {key}", example=f"{key}=150,400", hint=" (a comma inside a value is written \\,)"
        )
    return options


def protocol_axes(http: str | None, streams: str | None) -> dict[str, list[Any]]:
    """--http (one version, or several to compare) and --streams, as the factors http and streams.

    Raises:
        ConfigError: an unknown version, or streams that none of the versions has.
    """
    from crest.load.runspec import HTTP_VERSIONS
    from crest.suite.models import STREAM_VERSIONS

    axes: dict[str, list[Any]] = {}
    if http is not None:
        versions = parse_values(http, what="--http", example="1.1,2")
        for v in versions:
            if v not in HTTP_VERSIONS:
                raise ConfigError(f"invalid --http {v!r}: expected 1.0, 1.1, 2 or 3 (several: 1.1,2)")
        axes["http"] = versions
    if streams is not None:
        n = parse_count(streams, what="--streams")
        if not set(STREAM_VERSIONS) & set(axes.get("http", STREAM_VERSIONS)):
            raise ConfigError(
                f"--streams {n} needs HTTP/2 or HTTP/3: add --http 2 or 3 (or a suite with http_version 2 or 3)"
            )
        axes["streams"] = [n]
    return axes


def one_configuration(
    command: str, *, server: str | None, cpus: str | None, memory: str | None, server_opt: list[str] | None,
    access_log: bool,
) -> dict[str, Any]:  # fmt: skip
    """The RunRequest fields of the one target configuration `command` measures.

    Raises:
        ConfigError: a list where one value is wanted, a bad size or setting (the runner refuses the
            target settings without a server crest starts).
    """
    from crest.servers import cpus as cpu_split

    name = one_value(server, "--server", command, example="nginx")
    cpu = one_value(cpus, "--cpus", command, example="1")
    size = one_value(memory, "--memory", command, example="256M")
    options = {
        key: _one(values, f"--server-opt {key}", command) for key, values in server_options(server_opt or []).items()
    }
    return {
        "server": name,
        "cpus": None if cpu is None else cpu_split.share(cpu).cpus,
        "memory_bytes": None if size is None else parse_size(size, what="--memory"),
        "server_options": options,
        "access_log": access_log,
        "factors": dict(options),  # stored as a run's factors, as crest run stores a swept setting
    }


def with_protocol(suite: Suite, http: str | None, streams: str | None, command: str) -> Suite:
    """The suite speaking --http and --streams (one version: `command` measures one configuration).

    Raises:
        ConfigError: an unknown version, several, or streams without HTTP/2 or HTTP/3.
    """
    from crest.suite.models import STREAM_VERSIONS

    axes = protocol_axes(http, streams)
    if not axes:
        return suite
    version = _one(axes["http"], "--http", command) if "http" in axes else None
    n = axes["streams"][0] if "streams" in axes else None
    if n is not None and (version or suite.workload.http_version) not in STREAM_VERSIONS:
        raise ConfigError(f"--streams {n} needs HTTP/2 or HTTP/3: add --http 2 or 3")
    return suite.with_protocol(version, n)


def _one(values: list[str], option: str, command: str) -> str:
    """The one value of a list `crest run` would compare, refused in one line when there are several."""
    if len(values) > 1:
        given = ",".join(values)
        raise ConfigError(
            f"{option} {given}: crest {command} measures one configuration, so give one value"
            f" (e.g. {option} {values[0]}); crest run {option} {given} compares several"
        )
    return values[0]
