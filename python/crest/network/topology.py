"""Builds and removes one client network: namespaces, links, addresses, routes, shaping and the delay
line, all named with the network's id. Owns the machine side of `--network`; never sends load and
never reads counters (counters.py).

    subnet k ns (crest-ID-sK)          router ns (crest-ID-r)            target ns (crest-ID-t) or root
    [engine's sockets] up ─── link ─── sK          t ─── target link ─── eth0 (or crestID in root)
      binds its block's addresses         forwards 198.18.0.0/15 only         198.18.0.2

Links are veth pairs, or, when the spec has rtt, jitter or loss, TUN pairs carried by crest's delay
line (crates/delayline's crest-delayline: this kernel has no netem). Nothing has a route out of the machine: the router and the
subnets know only 198.18.0.0/15, and the root namespace gets a route to it only when the target lives
there (a URL target). A state file under STATE_DIR, written before anything is made, lets a later run
or `crest network clean` remove what a killed run left (clean.py).
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crest.dynamic import delay_line_path
from crest.errors import ConfigError, MachineError
from crest.network import addresses, command, forward, netns, routed
from crest.network.shaping import Shape, tc_lines
from crest.network.spec import NetworkSpec

STATE_DIR = Path("/run/crest/network")
PREFIX = "crest-"  # every namespace crest makes starts with it; clean.py removes dead runs' by it
ROOT_LINK_PREFIX = "crest"  # the target link's end in the root namespace: crest + id (≤ 15 characters)
RELAY_READY_TIMEOUT_S = 10.0
_IP_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class LinkEnd:
    """Where one direction of a link leaves: the namespace (None: root) and device whose egress carries
    it, what crest calls the link, and its shape (None: not shaped, only counted)."""

    ns: str | None
    dev: str
    link: str  # "target" | "subnet K" (per-client lines of the subnet are read from this end's classes)
    scope: str  # "target" | "subnet"
    subnet: int | None
    direction: str  # "down" (toward the clients) | "up" (toward the target)
    shape: Shape | None


@dataclass
class Network:
    """One client network for `spec`, with room for `clients_per_subnet` client lines in each subnet.
    `target_in_root`: the target is a URL on this machine, not a server crest starts in its namespace."""

    spec: NetworkSpec
    clients_per_subnet: int
    target_in_root: bool = False
    # 0 on one machine; a cluster node's network is slot n (from 1): its own blocks and target address,
    # and its root end stands for the target there (addresses.py).
    slot: int = 0
    network_id: str = field(default_factory=lambda: secrets.token_hex(3))
    ends: list[LinkEnd] = field(default_factory=list)
    relay: subprocess.Popen[bytes] | None = None
    created: bool = False
    forwarded: set[int] = field(default_factory=set)  # ports forwarded to a loopback-only target (forward.py)
    routed: set[str] = field(default_factory=set)  # targets on other machines sent out through the NIC (routed.py)
    sysctls: dict[str, str] = field(default_factory=dict)  # forwarding sysctls changed for them, as they were

    @property
    def router(self) -> str:
        return f"{PREFIX}{self.network_id}-r"

    @property
    def target_ns(self) -> str | None:
        """The target's namespace; None when it lives in the root namespace."""
        return None if self.target_in_root else f"{PREFIX}{self.network_id}-t"

    def subnet_ns(self, k: int) -> str:
        return f"{PREFIX}{self.network_id}-s{k}"

    @property
    def root_link(self) -> str:
        return f"{ROOT_LINK_PREFIX}{self.network_id}"

    @property
    def target_address(self) -> str:
        return str(addresses.slot_link(self.slot)[1])

    def block(self, k: int) -> int:
        """The address block (addresses.py) of this network's subnet k."""
        return addresses.first_block(self.slot, self.spec.subnets) + k

    @property
    def namespaces(self) -> list[str]:
        names = [self.router, *(self.subnet_ns(k) for k in range(1, self.spec.subnets + 1))]
        return names + ([self.target_ns] if self.target_ns else [])

    @property
    def offload(self) -> bool:
        """Whether the delay line carries GSO packets whole: not where loss would drop dozens of segments at
        once or HTB would send them in lumps (crates/delayline/src/cli.rs)."""
        spec = self.spec
        return spec.delayed and not spec.loss and spec.subnet_link_bps is None and spec.client_link_bps is None

    @property
    def state_file(self) -> Path:
        return STATE_DIR / f"{self.network_id}.json"

    @property
    def stats_file(self) -> Path:
        return STATE_DIR / f"{self.network_id}.relay.json"

    def client_addresses(self, subnet: int, lines: int) -> list[str]:
        """The addresses of a subnet's first `lines` client lines (one per client or per connection)."""
        return [str(addresses.client_address(self.block(subnet), i)) for i in range(lines)]

    def describe(self) -> dict[str, Any]:
        """The network as stored with a run (the disclosure's network section)."""
        return {
            **self.spec.describe(),
            "delay_by": (
                f"crest delay line (crest-delayline, TUN pairs{', GSO packets' if self.offload else ''}; no netem)"
                if self.spec.delayed
                else "none"
            ),
            "target_address": self.target_address,
            "target_namespace": self.target_ns or "root",
            "subnet_ranges": [str(b) for b in addresses.slot_blocks(self.slot, self.spec.subnets)],
            "network_id": self.network_id,
        }

    # -- building -------------------------------------------------------------------------------

    def __enter__(self) -> Network:
        self.create()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def create(self) -> None:
        """Build the whole network; on any failure remove what was made and raise.

        Raises:
            ConfigError: no CAP_NET_ADMIN (checked before anything is made), or the root namespace
                already holds another network's target address.
            MachineError: a command failed (its one-line message).
        """
        check_capability()
        from crest.network.clean import clean_dead  # a crash's leftovers go first, by their prefix

        clean_dead()
        if self.target_in_root and _root_has_address(self.target_address):
            raise ConfigError(
                f"another crest network already has its target address {self.target_address} in this namespace:"
                " wait for that run, or remove its leftovers with `crest network clean`"
            )
        STATE_DIR.mkdir(parents=True, exist_ok=True)
        self.state_file.write_text(json.dumps({
            "owner_pid": os.getpid(), "namespaces": self.namespaces,
            "root_links": [self.root_link] if self.target_in_root else [], "relay_pid": None,
            "nft_tables": [forward.table_name(self.network_id)] if self.target_in_root else [],
        }))  # fmt: skip
        self.created = True
        try:
            self._build()
        except BaseException:
            self.close()
            raise

    def _build(self) -> None:
        for name in self.namespaces:
            _run(["ip", "netns", "add", name])
            _run(["ip", "-n", name, "link", "set", "dev", "lo", "up"])
        _run(["ip", "netns", "exec", self.router, "sysctl", "-qw", "net.ipv4.ip_forward=1"])
        self._target_link()
        for k in range(1, self.spec.subnets + 1):
            self._subnet(k)
        if self.spec.delayed:
            self._start_relay()

    def _target_link(self) -> None:
        router, target = self.router, self.target_ns
        peer = self.root_link if target is None else "eth0"
        where = ["netns", target] if target is not None else []
        _run(["ip", "link", "add", "name", "t", "netns", router, "type", "veth", "peer", "name", peer, *where])
        via, address, prefix = addresses.slot_link(self.slot)
        _ip_batch(router, [f"addr add {via}/{prefix} dev t", "link set dev t up"])
        # A cluster node's root routes only its own blocks (and its subnets' own addresses, which a check
        # without a client address sends from) here: the other nodes' networks share its kernel when the
        # cluster is one machine's.
        ranges: list[object] = [addresses.RANGE]
        if self.slot:
            blocks = [self.block(k) for k in range(1, self.spec.subnets + 1)]
            ranges = [*(addresses.block(g) for g in blocks), *(f"{addresses.subnet_link(g)}/32" for g in blocks)]
        _ip_batch(target, [
            f"addr add {address}/{prefix} dev {peer}", f"link set dev {peer} up",
            *(f"route add {r} via {via} dev {peer}" for r in ranges),
        ])  # fmt: skip
        rate = self.spec.target_link_bps
        up = LinkEnd(router, "t", "target", "target", None, "up", Shape("t", rate) if rate else None)
        down = LinkEnd(target, peer, "target", "target", None, "down", Shape(peer, rate) if rate else None)
        self._shape_end(up)
        self._shape_end(down)

    def _subnet(self, k: int) -> None:
        router, sub = self.router, self.subnet_ns(k)
        dev = f"s{k}"
        if self.spec.delayed:
            _run(["ip", "-n", router, "tuntap", "add", "dev", dev, "mode", "tun"])
            _run(["ip", "-n", sub, "tuntap", "add", "dev", "up", "mode", "tun"])
        else:
            _run(
                ["ip", "link", "add", "name", dev, "netns", router, "type", "veth", "peer", "name", "up", "netns", sub]
            )
        g = self.block(k)
        r, s, block = addresses.router_link(g), addresses.subnet_link(g), addresses.block(g)
        _ip_batch(
            router,
            [f"addr add {r} peer {s} dev {dev}", f"link set dev {dev} up", f"route add {block} via {s} dev {dev}"],
        )
        _ip_batch(sub, [
            f"addr add {s} peer {r} dev up", "link set dev up up",
            f"route add default via {r} dev up", f"route add local {block} dev lo",
        ])  # fmt: skip
        spec = self.spec
        lines = self.clients_per_subnet if spec.client_link_bps is not None else 0
        clients = tuple(addresses.client_address(g, i) for i in range(lines))
        shaped = spec.subnet_link_bps is not None or spec.client_link_bps is not None
        for ns, d, direction, match in ((router, dev, "down", "dst"), (sub, "up", "up", "src")):
            shape = Shape(d, spec.subnet_link_bps, spec.client_link_bps, clients, block, match) if shaped else None
            self._shape_end(LinkEnd(ns, d, f"subnet {k}", "subnet", k, direction, shape))

    def _shape_end(self, end: LinkEnd) -> None:
        self.ends.append(end)
        if end.shape is None:
            return
        if not self.spec.delayed or end.scope == "target":
            # Offloads would hand HTB 64 KiB super-packets: a slow line would send in lumps.
            _run(["ip", "netns", "exec", end.ns, "ethtool", "-K", end.dev, "tso", "off", "gso", "off", "gro", "off"]
                 if end.ns else ["ethtool", "-K", end.dev, "tso", "off", "gso", "off", "gro", "off"], check=False)  # fmt: skip
        _tc_batch(end.ns, tc_lines(end.shape))

    def _start_relay(self) -> None:
        pairs = []
        for k in range(1, self.spec.subnets + 1):
            pairs += ["--pair", f"{self.subnet_ns(k)}:up:{self.router}:s{k}"]
        ready = STATE_DIR / f"{self.network_id}.ready"
        ready.unlink(missing_ok=True)
        log = STATE_DIR / f"{self.network_id}.relay.log"
        argv = [
            str(delay_line_path()), *pairs,
            "--delay-ms", f"{self.spec.rtt_s * 1e3 / 2:g}", "--jitter-ms", f"{self.spec.jitter_s * 1e3 / 2:g}",
            "--loss-pct", f"{self.spec.loss * 100:g}", "--seed", str(int(self.network_id, 16)),
            "--ready-file", str(ready), "--stats-file", str(self.stats_file),
        ]  # fmt: skip
        if self.offload:
            argv.append("--offload")
        with open(log, "ab") as out:
            self.relay = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out)
        state = json.loads(self.state_file.read_text())
        state["relay_pid"] = self.relay.pid
        self.state_file.write_text(json.dumps(state))
        deadline = time.monotonic() + RELAY_READY_TIMEOUT_S
        while not ready.exists():
            if self.relay.poll() is not None or time.monotonic() > deadline:
                why = log.read_text(errors="replace").strip().splitlines()[-1:] or ["no output"]
                raise MachineError(f"crest's delay line did not start: {why[0]}")
            time.sleep(0.02)
        ready.unlink(missing_ok=True)
        # Each TUN end needs its link up again once the relay holds it (a TUN device is down while detached).
        for k in range(1, self.spec.subnets + 1):
            _run(["ip", "-n", self.router, "link", "set", "dev", f"s{k}", "up"])
            _run(["ip", "-n", self.subnet_ns(k), "link", "set", "dev", "up", "up"])

    def delay_line_stats(self) -> dict[str, Any] | None:
        """The delay line's latest counters (its stats file, crates/delayline/src/main.rs), None without one."""
        if self.relay is None:
            return None
        try:
            stats: dict[str, Any] = json.loads(self.stats_file.read_text())
            return stats
        except (OSError, ValueError):
            return None

    def forward_to_loopback(self, port: int) -> None:
        """Have the target address's `port` (TCP and UDP) reach a server on this machine that listens on
        127.0.0.1 only (a URL target in the root namespace); once per port.

        Raises:
            MachineError: nftables is missing or refused.
        """
        assert self.target_in_root, "only a URL target in the root namespace is forwarded"
        if port in self.forwarded:
            return
        first = not self.forwarded
        forward.forward(forward.table_name(self.network_id), self.root_link, self.target_address, port, first=first)
        self.forwarded.add(port)

    def route_out(self, target_ip: str) -> None:
        """Send a target on another machine (a cluster node's network: nested placement on a real cluster)
        out through this machine's root and NIC: the router routes only `target_ip` to the network's root
        end, and forwarding is on for that end and the NIC (restored at close); once per address. The
        target's machine must route the network's blocks back (routed.ReturnRoutes).

        Raises:
            MachineError: no route to the target, or a command failed.
        """
        assert self.slot and self.target_in_root, "only a cluster node's network routes out"
        if target_ip in self.routed:
            return
        keys = routed.forwarding_keys(self.root_link, routed.nic_toward(target_ip))
        state = json.loads(self.state_file.read_text())
        saved = state.setdefault("sysctls", {})
        for key in keys:
            saved.setdefault(key, routed.read_sysctl(key))
        self.state_file.write_text(json.dumps(state))  # what to restore, written before anything changes
        self.sysctls = dict(saved)
        for key in keys:
            routed.write_sysctl(key, "1")
        routed.ip_batch(self.router, routed.out_lines(target_ip, self.target_address))
        self.routed.add(target_ip)

    # -- removing -------------------------------------------------------------------------------

    def close(self) -> None:
        """Remove everything this network made (idempotent); what fails to go is left for clean.py."""
        if not self.created:
            return
        if self.relay is not None:
            self.relay.send_signal(signal.SIGTERM)
            try:
                self.relay.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.relay.kill()
                self.relay.wait()
            self.relay = None
        for key, value in self.sysctls.items():
            try:
                routed.write_sysctl(key, value)
            except MachineError:
                pass  # its device goes with the network's links below
        self.sysctls.clear()
        self.routed.clear()
        remove(self.namespaces, [self.root_link] if self.target_in_root else [])
        if self.forwarded:
            forward.remove([forward.table_name(self.network_id)])
            self.forwarded.clear()
        for path in (self.state_file, self.stats_file, STATE_DIR / f"{self.network_id}.relay.log"):
            path.unlink(missing_ok=True)
        self.created = False


def remove(namespaces: list[str], root_links: list[str]) -> list[str]:
    """Delete these namespaces (their links go with them) and root links; the names that were there."""
    present = set(list_namespaces())
    gone = []
    for name in namespaces:
        if name in present:
            subprocess.run(["ip", "netns", "del", name], capture_output=True, timeout=_IP_TIMEOUT_S, check=False)
            gone.append(name)
    for link in root_links:
        if subprocess.run(["ip", "link", "del", link], capture_output=True, timeout=_IP_TIMEOUT_S).returncode == 0:
            gone.append(link)
    return gone


def list_namespaces() -> list[str]:
    """Named network namespaces on this machine."""
    try:
        return sorted(os.listdir(netns.NETNS_DIR))
    except FileNotFoundError:
        return []


def check_capability() -> None:
    """Raises ConfigError when this process cannot build a network (before anything is made)."""
    if not netns.has_net_admin():
        raise ConfigError(
            "--network needs CAP_NET_ADMIN to create network namespaces, links and qdiscs:"
            " run crest as root (or grant the capability), or leave out --network"
        )


def _root_has_address(address: str) -> bool:
    out = subprocess.run(["ip", "-4", "-o", "addr", "show", "to", address], capture_output=True, text=True,
                         timeout=_IP_TIMEOUT_S, check=False)  # fmt: skip
    return bool(out.stdout.strip())


def _run(argv: list[str], *, check: bool = True, stdin: str | None = None) -> None:
    command.run(argv, doing="build the client network", install="iproute2 ethtool", stdin=stdin, check=check)


def _ip_batch(ns: str | None, lines: list[str]) -> None:
    _run(["ip", *(["-n", ns] if ns else []), "-batch", "-"], stdin="\n".join(lines) + "\n")


def _tc_batch(ns: str | None, lines: list[str]) -> None:
    _run(["tc", *(["-n", ns] if ns else []), "-batch", "-"], stdin="\n".join(lines) + "\n")
