"""`crest network`: what a network SPEC builds (`plan`), and removing what dead runs left (`clean`).
Prints only; the network itself is crest.network's."""

from __future__ import annotations

from typing import Annotated

import typer

from crest.cli import EXIT_OK

app = typer.Typer(
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    no_args_is_help=True,
    help="Client networks (--network): show what a SPEC builds, or remove what killed runs left behind.",
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.command("clean")
def clean_command() -> int:
    """Remove the namespaces, links and delay lines of crest networks whose run is no longer running."""
    from crest.network.clean import clean_dead
    from crest.network.topology import check_capability

    check_capability()
    done = clean_dead()
    for name in done.removed:
        print(f"removed {name}")
    for pid in done.relays_stopped:
        print(f"stopped delay line {pid}")
    for network in done.kept_live:
        print(f"kept network {network}: its run is still going")
    if not (done.removed or done.relays_stopped or done.kept_live):
        print("nothing to clean")
    return EXIT_OK


@app.command("plan", no_args_is_help=True)
def plan_command(
    spec: Annotated[str, typer.Argument(metavar="SPEC", help="A --network SPEC, e.g. veritest-4x100.")],
) -> int:
    """Show what --network SPEC builds: subnets, address ranges, link rates, delay and loss (builds nothing)."""
    from crest.network import addresses
    from crest.network.spec import format_rate, parse_network

    s = parse_network(spec)

    def rate(bps: float | None) -> str:
        return "unshaped" if bps is None else format_rate(bps)

    print(f"network {s.label()}  ({s.canonical()})")
    print(
        f"  target        {addresses.TARGET_ADDRESS} in its own namespace (a URL target: this one), link {rate(s.target_link_bps)}"
    )
    for k in range(1, s.subnets + 1):
        print(
            f"  subnet {k:<6} {addresses.block(k)}, uplink {rate(s.subnet_link_bps)}, each {s.link_per}'s line {rate(s.client_link_bps)}"
        )
    if s.delayed:
        print(f"  between them  rtt {s.rtt_s * 1e3:g} ms, jitter {s.jitter_s * 1e3:g} ms, loss {s.loss * 100:g}% each way"
              " (crest's delay line)")  # fmt: skip
    return EXIT_OK
