"""Builds and removes a lab of simulated machines, and starts processes on them. Owns the machine side of
a lab: namespaces, the switch, links, addresses, routes, shaping, each machine's cgroup and private
directories; never places load or Ray (their callers run them on the machines).

    machine ns (crestm-ID-node1)        switch ns (crestm-ID-sw)              root namespace
      eth0 198.19.241.1 ── link ── p1 ─ br1 198.19.241.254 ┐
      ...                                                   ├ routes between segments
      eth0 198.19.240.2 ── link ── p0 ─ br0 198.19.240.254 ┘── link ── cmID 198.19.240.1 (the driver)

A machine is a network namespace with one link to its segment's bridge, a cgroup (its CPU share and
memory) and a directory of its own under the lab's, mounted over /tmp and crest's cache directory in
every process it runs, so that nothing reaches it through the driver's files (a fileset must travel). Its
clock offset is injected (CREST_CLOCK_OFFSET_S, read by crest.cluster.clock.wall): Linux's time
namespaces shift only the monotonic and boot clocks, not the wall clock a cluster start is set on.
A state file under STATE_DIR, written before anything is made, lets `crest machines clean` remove
what a killed run left (clean.py).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crest.errors import ConfigError, MachineError
from crest.filesets.cache import cache_root
from crest.machines.cgroups import MachineCgroup, remove_dir
from crest.machines.plan import (
    CLOCK_OFFSET_ENV,
    LAB_RANGES,
    LabSpec,
    MachineSpec,
    Names,
    driver_address,
    router_address,
)
from crest.network import command, netns
from crest.network.shaping import Shape, tc_lines

STATE_DIR = Path("/run/crest/machines")
ROOTS_DIR = Path("/var/lib/crest/machines")  # each machine's own /tmp and cache, under the lab's id
MACHINE_ENV = "CREST_MACHINE"
_INSTALL = "iproute2"
# Join the machine's cgroups first (`ip netns exec` mounts a /sys of the namespace's own, without them), then
# in its namespace put its own directories over /tmp and crest's cache and exec. `ip netns exec` gives each
# process a mount namespace of its own, so the binds reach no one else.
_JOIN = 'for f in {procs}; do echo $$ > "$f" || exit 125; done; exec "$@"'
# The software every machine runs (this Python, its packages, crest) stays visible where it lives under /tmp
# (a checkout or venv there): bound into the machine's own /tmp before that goes over the host's, as a
# real machine has crest installed too; its data (filesets, results, Ray's sessions) stays its own.
_MOUNT = 'set -e; {software}mount --rbind {tmp} /tmp; mkdir -p {cache_at}; mount --bind {cache} {cache_at}; exec "$@"'
_SOFTWARE = "mkdir -p {inside}; mount --bind {path} {inside}; "


@dataclass
class Machine:
    """One machine of a built lab: its spec, namespace, cgroup and own directory."""

    spec: MachineSpec
    namespace: str
    cgroup: MachineCgroup
    root: Path
    line_bps: float | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def address(self) -> str:
        return str(self.spec.address)

    @property
    def tmp(self) -> Path:
        """The directory its processes see as /tmp."""
        return self.root / "tmp"

    def command(self, argv: list[str]) -> list[str]:
        """The command line that runs `argv` on this machine: in its namespace, cgroup and own directories."""
        join = _JOIN.format(procs=" ".join(shlex.quote(str(p)) for p in self.cgroup.procs_files))
        software = "".join(
            _SOFTWARE.format(inside=shlex.quote(str(self.tmp / path.relative_to("/tmp"))), path=shlex.quote(str(path)))
            for path in software_under_tmp()
        )
        mount = _MOUNT.format(software=software, tmp=shlex.quote(str(self.tmp)),
                              cache=shlex.quote(str(self.root / "cache")), cache_at=shlex.quote(str(cache_root())))  # fmt: skip
        return ["sh", "-c", join, "sh", "ip", "netns", "exec", self.namespace, "sh", "-c", mount, "sh", *argv]

    def environment(self, env: dict[str, str] | None = None) -> dict[str, str]:
        """The environment a process on this machine gets: the caller's (or crest's), its name and its clock.
        Its cache directory is where the caller's is (the machine's own is mounted there)."""
        out = dict(os.environ if env is None else env)
        out[MACHINE_ENV] = self.name
        out[CLOCK_OFFSET_ENV] = repr(self.spec.clock_offset_s)
        return out

    def popen(self, argv: list[str], *, env: dict[str, str] | None = None, **kwargs: Any) -> subprocess.Popen[Any]:
        """Start `argv` on the machine; it dies with the machine (its cgroup is killed whole)."""
        return subprocess.Popen(self.command(argv), env=self.environment(env), **kwargs)

    def run(self, argv: list[str], *, timeout_s: float = 60.0, env: dict[str, str] | None = None,
            check: bool = True) -> subprocess.CompletedProcess[str]:  # fmt: skip
        """Run `argv` on the machine to its end; its output.

        Raises:
            MachineError: it failed (with `check`) or outlived `timeout_s`: one line naming the machine.
        """
        try:
            done = subprocess.run(self.command(argv), env=self.environment(env), capture_output=True, text=True,
                                  timeout=timeout_s, check=False)  # fmt: skip
        except subprocess.TimeoutExpired:
            raise MachineError(f"machine {self.name}: `{shlex.join(argv[:4])}` ran past {timeout_s:g}s") from None
        if check and done.returncode != 0:
            why = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or [f"exit {done.returncode}"]
            raise MachineError(f"machine {self.name}: `{shlex.join(argv[:4])}` failed: {why[0]}")
        return done

    def link_down(self) -> None:
        """Cut the machine off its segment (a cable pulled): its link goes down at both ends."""
        _ip(self.namespace, ["link set dev eth0 down"])

    def link_up(self) -> None:
        """Plug the machine back in: the link up and its routes again (the kernel drops a down link's routes)."""
        _ip(self.namespace, ["link set dev eth0 up", *self._routes()])

    def _routes(self) -> list[str]:
        return [f"route replace {r} via {router_address(self.spec.segment)} dev eth0" for r in LAB_RANGES]


@dataclass
class Lab:
    """A lab for `spec`: `with Lab(parse("4")) as lab: lab.machine("node1").run([...])`; everything made is
    removed on exit, every process on a machine killed."""

    spec: LabSpec
    names: Names = field(default_factory=Names)
    machines: list[Machine] = field(default_factory=list)
    created: bool = False

    @property
    def lab_id(self) -> str:
        return self.names.lab_id

    @property
    def namespaces(self) -> list[str]:
        return [self.names.switch, *(self.names.machine(m.name) for m in self.spec.machines)]

    @property
    def state_file(self) -> Path:
        return STATE_DIR / f"{self.lab_id}.json"

    @property
    def root(self) -> Path:
        return ROOTS_DIR / self.lab_id

    def machine(self, name: str) -> Machine:
        """A built machine by name (node1 …, or control).

        Raises:
            ConfigError: no such machine.
        """
        self.spec.machine(name)
        return next(m for m in self.machines if m.name == name)

    def describe(self) -> dict[str, Any]:
        return {**self.spec.describe(), "lab_id": self.lab_id, "driver_address": str(driver_address())}

    def __enter__(self) -> Lab:
        self.create()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def create(self) -> None:
        """Build the whole lab; on any failure remove what was made and raise.

        Raises:
            ConfigError: no CAP_NET_ADMIN (checked before anything is made), or another lab holds the range.
            MachineError: a command failed (its one-line message).
        """
        if not netns.has_net_admin():
            raise ConfigError(
                "a lab of machines needs root (CAP_NET_ADMIN and cgroups) to make namespaces, links and cgroups:"
                " run crest as root, or use --cluster local:N"
            )
        from crest.machines.clean import clean_dead  # a crash's leftovers go first, by their state files

        clean_dead()
        if _root_routes_lab():
            raise ConfigError(
                f"another crest lab holds {LAB_RANGES[0]} here: wait for that run, or remove its leftovers with"
                " `crest machines clean`"
            )
        STATE_DIR.mkdir(parents=True, exist_ok=True)
        self.state_file.write_text(json.dumps({
            "owner_pid": os.getpid(), "namespaces": self.namespaces, "root_links": [self.names.root_link],
            "cgroups": [], "root": str(self.root),
        }))  # fmt: skip
        self.created = True
        try:
            self._build()
        except BaseException:
            self.close()
            raise

    def _build(self) -> None:
        switch = self.names.switch
        for name in self.namespaces:
            _run(["ip", "netns", "add", name])
            _ip(name, ["link set dev lo up"])
        _run(["ip", "netns", "exec", switch, "sysctl", "-qw", "net.ipv4.ip_forward=1"])
        segments = sorted({m.segment for m in self.spec.machines})
        for s in segments:
            bridge = Names.bridge(s)
            _ip(switch, [f"link add name {bridge} type bridge", f"addr add {router_address(s)}/24 dev {bridge}",
                         f"link set dev {bridge} up"])  # fmt: skip
        self._driver_link()
        for index, spec in enumerate(self.spec.machines):
            self.machines.append(self._machine(index, spec))

    def _driver_link(self) -> None:
        link, switch = self.names.root_link, self.names.switch
        _run(["ip", "link", "add", "name", link, "type", "veth", "peer", "name", "drv", "netns", switch])
        _ip(switch, [f"link set dev drv master {Names.bridge(0)}", "link set dev drv up"])
        _ip(None, [
            f"addr add {driver_address()}/24 dev {link}", f"link set dev {link} up",
            *(f"route add {r} via {router_address(0)} dev {link}" for r in LAB_RANGES),
        ])  # fmt: skip

    def _machine(self, index: int, spec: MachineSpec) -> Machine:
        ns, switch, port = self.names.machine(spec.name), self.names.switch, Names.port(index)
        _run(["ip", "link", "add", "name", port, "netns", switch, "type", "veth", "peer", "name", "eth0", "netns", ns])
        _ip(switch, [f"link set dev {port} master {Names.bridge(spec.segment)}", f"link set dev {port} up"])
        _ip(ns, [f"addr add {spec.address}/24 dev eth0", "link set dev eth0 up"])
        line = None if spec.name == "control" else self.spec.line_bps
        if line is not None:  # the machine's own line, both ways, as a switch port at that speed
            _tc(switch, tc_lines(Shape(port, line)))
            _tc(ns, tc_lines(Shape("eth0", line)))
        group = MachineCgroup(self.names.cgroup(spec.name), cpus=spec.cpus, memory_bytes=spec.memory_bytes)
        self._remember_cgroup(group)
        group.create()
        root = self.root / spec.name
        for d in ("tmp", "cache"):
            (root / d).mkdir(parents=True, exist_ok=True)
        (root / "tmp").chmod(0o1777)
        cache_root().mkdir(parents=True, exist_ok=True)  # the mount point its cache goes over
        machine = Machine(spec, ns, group, root, line)
        _ip(ns, machine._routes())
        return machine

    def _remember_cgroup(self, group: MachineCgroup) -> None:
        state = json.loads(self.state_file.read_text())
        state["cgroups"] = [*state["cgroups"], *(str(f.parent) for f in group.procs_files)]
        self.state_file.write_text(json.dumps(state))

    def close(self) -> None:
        """Kill every machine's processes and remove everything the lab made (idempotent)."""
        if not self.created:
            return
        remove(json.loads(self.state_file.read_text()) if self.state_file.exists() else {
            "namespaces": self.namespaces, "root_links": [self.names.root_link], "cgroups": [], "root": str(self.root),
        })  # fmt: skip
        self.state_file.unlink(missing_ok=True)
        self.machines.clear()
        self.created = False


def software_under_tmp() -> list[Path]:
    """This Python's prefixes and crest's package root where they lie under /tmp, outermost only."""
    import crest

    found = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(), Path(crest.__file__).resolve().parents[1]}
    tmp = Path("/tmp")
    under = sorted(p for p in found if tmp in p.parents)
    return [p for p in under if not any(q in p.parents for q in under)]


def remove(state: dict[str, Any]) -> list[str]:
    """Remove what a lab's state names: its machines' processes and cgroups first (so no process holds a
    namespace), then its namespaces, root links and directories. What was removed, by name."""
    removed: list[str] = []
    for path in state.get("cgroups", []):
        if Path(path).is_dir():
            remove_dir(Path(path))
            removed.append(path)
    for name in state.get("namespaces", []):
        if _run(["ip", "netns", "del", name], check=False) == 0:
            removed.append(name)
    for link in state.get("root_links", []):
        if _run(["ip", "link", "del", link], check=False) == 0:
            removed.append(link)
    root = state.get("root")
    if root and Path(root).is_dir() and Path(root).parent == ROOTS_DIR:
        shutil.rmtree(root, ignore_errors=True)
    return removed


def _root_routes_lab() -> bool:
    out = subprocess.run(["ip", "-4", "route", "show", "exact", str(LAB_RANGES[0])], capture_output=True, text=True,
                         timeout=command.TIMEOUT_S, check=False)  # fmt: skip
    return bool(out.stdout.strip())


def _run(argv: list[str], *, check: bool = True) -> int:
    if check:
        command.run(argv, doing="build the lab of machines", install=_INSTALL)
        return 0
    try:
        return subprocess.run(argv, capture_output=True, timeout=command.TIMEOUT_S, check=False).returncode
    except (OSError, subprocess.TimeoutExpired):
        return 1


def _ip(ns: str | None, lines: list[str]) -> None:
    where = ["-n", ns] if ns else []
    command.run(["ip", *where, "-batch", "-"], doing="build the lab of machines", install=_INSTALL,
                stdin="\n".join(lines) + "\n")  # fmt: skip


def _tc(ns: str, lines: list[str]) -> None:
    command.run(["tc", "-n", ns, "-batch", "-"], doing="shape the lab's links", install=_INSTALL,
                stdin="\n".join(lines) + "\n")  # fmt: skip
