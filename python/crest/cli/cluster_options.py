"""The cluster options of `crest run`, `crest bench` and `crest doe`, declared once (crest.cluster runs them;
--allow-unauthenticated-cluster is a policy for the whole invocation, handed to crest.cluster.auth as parsed).

Counts are taken as text and parsed by crest.units like every other count: a typed int option would make
typer load pydantic to coerce it, on `crest bench`'s start-up path."""

from __future__ import annotations

from typing import Annotated

import typer

from crest.units import parse_count

PANEL = "Cluster (Ray; pip install 'crest[cluster]')"

Cluster = Annotated[
    str | None,
    typer.Option(
        "--cluster",
        metavar="ADDRESS",
        help="Spread the clients over a Ray cluster's nodes: auto (the cluster `ray start` joined),"
        " ray://HOST:PORT, HOST:PORT, or local:N (N nodes started on this machine, for trying it out).",
        rich_help_panel=PANEL,
    ),
]
Nodes = Annotated[
    str | None,
    typer.Option(
        "--nodes", metavar="N", help="Load nodes [default: every alive node but the target's].", rich_help_panel=PANEL
    ),
]
TargetNode = Annotated[
    str | None,
    typer.Option(
        "--target-node",
        metavar="NODE",
        help="Run --server on this node (a node id, IP or custom resource); it listens on the node's address.",
        rich_help_panel=PANEL,
    ),
]
MonitorNode = Annotated[
    str | None,
    typer.Option(
        "--monitor-node",
        metavar="NODE",
        help="Sample an external --target's processes on this node (with --monitor-pid or --monitor-name).",
        rich_help_panel=PANEL,
    ),
]
MonitorPid = Annotated[
    str | None,
    typer.Option("--monitor-pid", metavar="PID", help="The target's pid there (with its children).",
                 rich_help_panel=PANEL),
]  # fmt: skip


def _allow_unauthenticated(value: bool) -> bool:
    if value:
        from crest.cluster.auth import allow_unauthenticated_clusters

        allow_unauthenticated_clusters()
    return value


AllowUnauthenticated = Annotated[
    bool,
    typer.Option(
        "--allow-unauthenticated-cluster",
        help="Use a --cluster beyond loopback that does not require Ray's token authentication (anyone who"
        " reaches it can run code on its nodes). See docs/cluster.md.",
        callback=_allow_unauthenticated,
        rich_help_panel=PANEL,
    ),
]
MonitorName = Annotated[
    str | None,
    typer.Option("--monitor-name", metavar="NAME", help="The target's process name there (every such process).",
                 rich_help_panel=PANEL),
]  # fmt: skip


def count(value: str | None, option: str) -> int | None:
    """A count option's value (--nodes, --monitor-pid), None when not given."""
    return None if value is None else parse_count(value, what=option)


NETWORK_HELP = (
    "Send from client subnets in network namespaces with line speeds, delay and loss: SPEC is a preset"
    " (veritest-4x100, veritest-8x100, zeus-100mbit, webcat-10mbit, webcat-100mbit, specweb99-user) and/or"
    " KEY=VALUE settings (subnets, client-link, subnet-link, target-link, rtt, jitter, loss, link-per)."
    " Needs root. See docs/networks.md."
)
