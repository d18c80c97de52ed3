"""A cluster node's client network reaching a target on another machine (nested placement on a real
cluster), where the node's own NIC is the link and the network's shaping, delay and loss come on top.

Two halves, both named in a state file under STATE_DIR before anything is changed, so a killed run's
changes are undone by the same clean as its namespaces (clean.py):
- on the load node (`route_out`): its router sends the target's address (only that /32) to the node's own
  end of the network, and IPv4 forwarding is switched on for that end and for the NIC the target is
  reached through (each restored to what it was at close);
- on the target's machine (`ReturnRoutes`): a route back to each load node's client blocks via that node's
  address, removed at close.
The commands are pure functions of their inputs (tested on text); running them is the rest. Never prints.
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass, field
from ipaddress import IPv4Network
from pathlib import Path
from typing import Any

from crest.errors import MachineError
from crest.network import command


def out_lines(target_ip: str, root_end: str) -> list[str]:
    """The router's `ip -batch` line that sends only the target's address out through the node's root."""
    return [f"route replace {target_ip}/32 via {root_end}"]


def forwarding_keys(root_link: str, nic: str) -> list[str]:
    """The sysctls that let the node's root forward between its network and the NIC toward the target."""
    return [f"net.ipv4.conf.{root_link}.forwarding", f"net.ipv4.conf.{nic}.forwarding"]


def back_lines(routes: list[tuple[str, str]]) -> list[str]:
    """`ip -batch` lines on the target's machine: each (block, load node address) routed back."""
    return [f"route replace {IPv4Network(block)} via {via}" for block, via in routes]


def undo_back_lines(routes: list[tuple[str, str]]) -> list[str]:
    return [f"route del {IPv4Network(block)} via {via}" for block, via in routes]


def nic_toward(address: str) -> str:
    """The device this machine reaches `address` through (`ip route get`).

    Raises:
        MachineError: no route to it.
    """
    done = _run(["ip", "-j", "route", "get", address])
    try:
        return str(json.loads(done)[0]["dev"])
    except (ValueError, LookupError):
        raise MachineError(f"no route from this node to the target {address}: check the cluster's network") from None


def read_sysctl(key: str) -> str:
    return _run(["sysctl", "-n", key]).strip()


def write_sysctl(key: str, value: str) -> None:
    _run(["sysctl", "-qw", f"{key}={value}"])


def ip_batch(ns: str | None, lines: list[str], *, check: bool = True) -> None:
    argv = ["ip", *(["-n", ns] if ns else []), "-batch", "-"]
    _run(argv, "\n".join(lines) + "\n", check=check)


@dataclass
class ReturnRoutes:
    """Routes back to load nodes' client blocks on this (the target's) machine, for the length of a run."""

    state_dir: Path
    routes: list[tuple[str, str]] = field(default_factory=list)
    name: str = field(default_factory=lambda: f"routes-{secrets.token_hex(3)}")

    @property
    def state_file(self) -> Path:
        return self.state_dir / f"{self.name}.json"

    def add(self, routes: list[tuple[str, str]]) -> None:
        """Route each (block, via) back; the state file names them first."""
        new = [r for r in routes if r not in self.routes]
        if not new:
            return
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.routes += new
        self.state_file.write_text(json.dumps({"owner_pid": os.getpid(), "routes": self.routes}))
        ip_batch(None, back_lines(new))

    def remove(self) -> None:
        if self.routes:
            ip_batch(None, undo_back_lines(self.routes), check=False)
            self.routes = []
        self.state_file.unlink(missing_ok=True)


def undo(state: dict[str, Any]) -> list[str]:
    """What clean.py undoes of a dead run's routed network: its routes back and its sysctls. The names done."""
    done = []
    routes = [(str(b), str(v)) for b, v in state.get("routes", [])]
    if routes:
        ip_batch(None, undo_back_lines(routes), check=False)
        done += [f"route {b} via {v}" for b, v in routes]
    for key, value in (state.get("sysctls") or {}).items():
        try:
            write_sysctl(str(key), str(value))
            done.append(f"{key}={value}")
        except MachineError:
            continue  # the device went with its namespace
    return done


def _run(argv: list[str], stdin: str | None = None, *, check: bool = True) -> str:
    return command.run(argv, doing="route the client network to the target", install="iproute2 procps",
                       stdin=stdin, check=check)  # fmt: skip
