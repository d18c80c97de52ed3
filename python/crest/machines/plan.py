"""What a lab of simulated machines is: its spec (`machines:N` and its options), each machine's name,
segment, address, share of the CPU and memory and clock offset, and every name the kernel will hold.
Pure: parses and computes, never builds (lab.py does).

    198.19.240.0/24      the control segment: the driver's end in the root namespace is .1, the
                         switch's router .254, the control machine .2
    198.19.(240+s).0/24  segment s (1 … 11): its machines .1 … .250, the switch's router .254

The ranges (198.19.240.0/21 and 198.19.248.0/22) lie in the last /20 of 198.18.0.0/15, below the client
networks' point-to-point links (crest.network.addresses: blocks 1–30 and 198.19.255.0/24), so a lab and
client networks, nested in it or beside it, never share an address. Nothing in them routes out of the
host: the machines know only the lab's ranges, and the root namespace gets routes to them and nothing else.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from ipaddress import IPv4Address, IPv4Network

from crest.errors import ConfigError
from crest.network.spec import parse_bit_rate
from crest.units import parse_duration, parse_size

LAB_RANGES = (IPv4Network("198.19.240.0/21"), IPv4Network("198.19.248.0/22"))  # 198.19.240.0 … 198.19.251.255
CONTROL_SEGMENT = 0
MAX_SEGMENTS = 11  # 198.19.241.0/24 … 198.19.251.0/24
MAX_MACHINES_PER_SEGMENT = 250
ROUTER_HOST = 254
DRIVER_HOST = 1
CONTROL_HOST = 2
PREFIX = "crestm-"  # every namespace a lab makes (not "crest-": `crest network clean` owns those)
ROOT_LINK_PREFIX = "cm"  # the driver's link in the root namespace: cm + lab id
MAX_SKEW_S = 10.0  # far beyond any real NTP-kept lab; a larger offset is a typo
# A machine's clock offset, seconds, in its processes' environment (crest.cluster.clock.wall adds it).
CLOCK_OFFSET_ENV = "CREST_CLOCK_OFFSET_S"
_HELP = "e.g. machines:4 or machines:8,segments=2,cpus=0.5,memory=512M,line=100mbit,skew=50ms"


@dataclass(frozen=True)
class MachineSpec:
    """One machine: its name (node1 …, as `--cluster local:N` names nodes), segment, CPU share (cores,
    None: unlimited), memory (bytes, None: unlimited) and clock offset from the host's (seconds)."""

    name: str
    segment: int
    host: int  # the last byte of its address on its segment
    cpus: float | None = None
    memory_bytes: int | None = None
    clock_offset_s: float = 0.0

    @property
    def address(self) -> IPv4Address:
        return segment_network(self.segment)[self.host]


@dataclass(frozen=True)
class LabSpec:
    """A lab: a control machine on the control segment, and machines dealt over `segments` segments,
    each machine's link shaped to `line_bps` both ways (None: unshaped, only the veth's own speed)."""

    machines: tuple[MachineSpec, ...]
    segments: int
    line_bps: float | None = None
    text: str = ""

    @property
    def control(self) -> MachineSpec:
        return self.machines[0]

    @property
    def nodes(self) -> tuple[MachineSpec, ...]:
        """The machines other than the control one, node1 first."""
        return self.machines[1:]

    def machine(self, name: str) -> MachineSpec:
        """The machine of that name.

        Raises:
            ConfigError: no such machine, naming the ones there are.
        """
        for m in self.machines:
            if m.name == name:
                return m
        names = ", ".join(m.name for m in self.machines)
        raise ConfigError(f"the lab has no machine {name!r}: it has {names}")

    def describe(self) -> dict[str, object]:
        """The lab as a run's disclosure states it."""
        return {
            "spec": self.text,
            "segments": self.segments,
            "line_bps": self.line_bps,
            "machines": [
                {"name": m.name, "segment": m.segment, "address": str(m.address), "cpus": m.cpus,
                 "memory_bytes": m.memory_bytes, "clock_offset_s": m.clock_offset_s}
                for m in self.machines
            ],
        }  # fmt: skip


def segment_network(segment: int) -> IPv4Network:
    """Segment s's /24 (0 is the control segment)."""
    return IPv4Network(f"{LAB_RANGES[0].network_address + 256 * segment}/24")


def router_address(segment: int) -> IPv4Address:
    """The switch's address on a segment: every machine's way to the other segments."""
    return segment_network(segment)[ROUTER_HOST]


def driver_address() -> IPv4Address:
    """The root namespace's end on the control segment (where crest's driver reaches the lab from)."""
    return segment_network(CONTROL_SEGMENT)[DRIVER_HOST]


def parse(text: str) -> LabSpec:
    """A lab from `N[,segments=S][,cpus=C][,memory=M][,line=RATE][,skew=D]` (the part after
    `machines:`): N machines node1 … nodeN dealt round-robin over S segments, each limited to C cores and
    M bytes, each link shaped to RATE both ways, and clock offsets spread evenly over −D … +D (node1 the
    earliest). The control machine (`control`) has no limits and the host's clock.

    Raises:
        ConfigError: one line naming the bad part and how to write it.
    """
    head, *options = [p.strip() for p in text.split(",")]
    if not head.isdigit() or int(head) < 1:
        raise ConfigError(f"invalid machines spec {text!r}: start with the number of machines, {_HELP}")
    count = int(head)
    values: dict[str, str] = {}
    for option in options:
        key, sep, value = option.partition("=")
        if not sep or not value or key not in ("segments", "cpus", "memory", "line", "skew"):
            raise ConfigError(
                f"invalid machines spec {text!r}: {option!r} is not one of segments=, cpus=, memory=, line=,"
                f" skew=: {_HELP}"
            )
        values[key] = value
    segments = _whole(values.get("segments", "1"), "segments", text)
    if segments > MAX_SEGMENTS:
        raise ConfigError(f"invalid machines spec {text!r}: at most {MAX_SEGMENTS} segments fit the lab's range")
    per_segment = -(-count // segments)
    if per_segment > MAX_MACHINES_PER_SEGMENT:
        raise ConfigError(
            f"invalid machines spec {text!r}: {per_segment} machines on a segment, at most"
            f" {MAX_MACHINES_PER_SEGMENT}: add segments="
        )
    cpus = _cpus(values["cpus"], text) if "cpus" in values else None
    memory = parse_size(values["memory"], what="memory= in the machines spec") if "memory" in values else None
    line = _line(values["line"], text) if "line" in values else None
    skew = (
        parse_duration(values["skew"], what="skew= in the machines spec", allow_zero=True) if "skew" in values else 0.0
    )
    if skew > MAX_SKEW_S:
        raise ConfigError(f"invalid machines spec {text!r}: skew={values['skew']} is over {MAX_SKEW_S:.0f}s")
    machines = [MachineSpec("control", CONTROL_SEGMENT, CONTROL_HOST)]
    for i in range(count):
        offset = 0.0 if count == 1 else skew * (2 * i / (count - 1) - 1)
        machines.append(MachineSpec(f"node{i + 1}", 1 + i % segments, 1 + i // segments, cpus, memory, offset))
    return LabSpec(tuple(machines), segments, line, text)


def _whole(value: str, key: str, text: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise ConfigError(f"invalid machines spec {text!r}: {key}={value!r} must be a whole number of at least 1")
    return int(value)


def _cpus(value: str, text: str) -> float:
    try:
        cpus = float(value)
    except ValueError:
        cpus = 0.0
    if not 0.01 <= cpus <= 1024:
        raise ConfigError(f"invalid machines spec {text!r}: cpus={value!r} must be a share of cores, e.g. 0.5 or 2")
    return cpus


def _line(value: str, text: str) -> float:
    try:
        return parse_bit_rate(value, what="line")
    except ConfigError:
        raise ConfigError(
            f"invalid machines spec {text!r}: line={value!r} must be a line speed in bits, e.g. 100mbit or 1gbit"
        ) from None


@dataclass(frozen=True)
class Names:
    """Every name a lab holds in the kernel, from its id: namespaces, the root link, the cgroups."""

    lab_id: str = field(default_factory=lambda: secrets.token_hex(3))

    @property
    def switch(self) -> str:
        """The namespace of the segments' bridges and the router between them."""
        return f"{PREFIX}{self.lab_id}-sw"

    def machine(self, name: str) -> str:
        return f"{PREFIX}{self.lab_id}-{name}"

    @property
    def root_link(self) -> str:
        return f"{ROOT_LINK_PREFIX}{self.lab_id}"

    def cgroup(self, name: str) -> str:
        return f"{PREFIX}{self.lab_id}-{name}"

    @staticmethod
    def bridge(segment: int) -> str:
        return f"br{segment}"

    @staticmethod
    def port(index: int) -> str:
        """The switch's end of the `index`-th machine's link."""
        return f"p{index}"
