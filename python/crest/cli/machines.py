"""`crest machines`: what a lab SPEC builds (`plan`), a lab held up until Ctrl-C (`up`), and removing what
dead runs left (`clean`). Prints only; the lab itself is crest.machines'."""

from __future__ import annotations

import signal
import threading
from typing import TYPE_CHECKING, Annotated

import typer

from crest.cli import EXIT_OK

if TYPE_CHECKING:
    from crest.machines.plan import LabSpec

app = typer.Typer(
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    no_args_is_help=True,
    help="A lab of simulated machines on this host: show what a SPEC builds, hold one up, or remove what killed runs"
    " left behind.",
    context_settings={"help_option_names": ["-h", "--help"]},
)

_SPEC_HELP = "N machines and options, e.g. 4 or 8,segments=2,cpus=0.5,memory=512M,line=100mbit,skew=50ms."


@app.command("plan", no_args_is_help=True)
def plan_command(lab_spec: Annotated[str, typer.Argument(metavar="SPEC", help=_SPEC_HELP)]) -> int:
    """Show what a lab SPEC builds: each machine's segment, address, CPU share, memory and clock (builds nothing)."""
    from crest.machines import plan

    _print_plan(plan.parse(lab_spec))
    return EXIT_OK


def _print_plan(lab: LabSpec) -> None:
    from crest.machines.plan import driver_address, segment_network
    from crest.network.spec import format_rate

    line = "unshaped" if lab.line_bps is None else format_rate(lab.line_bps)
    print(f"lab of {len(lab.nodes)} machines on {lab.segments} segment(s), each machine's line {line}")
    print(f"  driver    {driver_address()} (this namespace), control segment {segment_network(0)}")
    for m in lab.machines:
        cpus = "all cores" if m.cpus is None else f"{m.cpus:g} cores"
        memory = "no memory limit" if m.memory_bytes is None else f"{m.memory_bytes / 2**20:g} MiB"
        print(
            f"  {m.name:<9} {m.address} (segment {m.segment}), {cpus}, {memory}, clock {m.clock_offset_s * 1e3:+.1f} ms"
        )


@app.command("up", no_args_is_help=True)
def up_command(lab_spec: Annotated[str, typer.Argument(metavar="SPEC", help=_SPEC_HELP)]) -> int:
    """Build a lab and hold it until Ctrl-C or SIGTERM, then remove it; prints how to run a command on a machine."""
    from crest.machines import Lab, plan

    lab = Lab(plan.parse(lab_spec))
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        with lab:
            _print_plan(lab.spec)
            first = lab.machines[1] if len(lab.machines) > 1 else lab.machines[0]
            print(f"lab {lab.lab_id} is up; run a command on a machine with: ip netns exec {first.namespace} COMMAND"
                  " (its network only: crest starts processes in its cgroup and own /tmp too); Ctrl-C removes it",
                  flush=True)  # fmt: skip
            while not stop.wait(0.5):
                pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return EXIT_OK


@app.command("clean")
def clean_command() -> int:
    """Remove the namespaces, links, cgroups and directories of labs whose run is no longer running."""
    from crest.machines.clean import clean_dead
    from crest.network.netns import has_net_admin

    if not has_net_admin():
        from crest.errors import ConfigError

        raise ConfigError("crest machines clean needs root (CAP_NET_ADMIN): run it as root")
    done = clean_dead()
    for name in done.removed:
        print(f"removed {name}")
    for lab in done.kept_live:
        print(f"kept lab {lab}: its run is still going")
    if not (done.removed or done.kept_live):
        print("nothing to clean")
    return EXIT_OK
