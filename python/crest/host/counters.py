"""Host counters read from /proc: CPU time by kind per CPU, interrupts and softirqs by kind, TCP counters,
TIME_WAIT sockets, memory and paging; one cheap snapshot (a few small files) and the figures between two.

Owns reading and parsing these files and turning two snapshots into a window's deltas and rates. It
knows nothing of mixes, targets or verdicts (crest.host.monitor samples it and judges), and never prints.
Network counters are per network namespace: a snapshot reads them through a process of the target
(/proc/PID/net/...) when given one, so a target in its own namespace is seen, not crest's.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

# CPU time kinds, in /proc/stat's order as psutil names them (guest time is inside user already).
CPU_KINDS = ("user", "nice", "system", "irq", "softirq", "steal", "iowait", "idle")
# TCP counters kept from /proc/net/snmp ("Tcp:") and /proc/net/netstat ("TcpExt:"), stored under these names.
TCP_COUNTERS = {
    ("Tcp", "ActiveOpens"): "active_opens",
    ("Tcp", "PassiveOpens"): "passive_opens",
    ("Tcp", "AttemptFails"): "attempt_fails",
    ("Tcp", "EstabResets"): "estab_resets",
    ("Tcp", "RetransSegs"): "retrans_segs",
    ("Tcp", "OutRsts"): "out_rsts",
    ("Tcp", "InErrs"): "in_errs",
    ("TcpExt", "ListenOverflows"): "listen_overflows",
    ("TcpExt", "ListenDrops"): "listen_drops",
    ("TcpExt", "SyncookiesSent"): "syncookies_sent",
    ("TcpExt", "TCPTimeouts"): "timeouts",
    ("TcpExt", "TCPAbortOnData"): "abort_on_data",
}
# Paging counters of /proc/vmstat (pgpgin/pgpgout are KiB moved to and from storage).
VM_COUNTERS = ("pgpgin", "pgpgout", "pgmajfault", "pswpin", "pswpout")
# Memory gauges of /proc/meminfo (kB there, bytes here).
MEM_GAUGES = {"MemAvailable": "available_bytes", "Cached": "cached_bytes", "Dirty": "dirty_bytes"}
# Interrupt and softirq kinds kept per window: the busiest, the rest summed as "other" (a host may have
# hundreds of IRQ lines, one per queue of each device).
TOP_KINDS = 8


@dataclass(frozen=True)
class Snapshot:
    """Every host counter at one moment (unix seconds): cumulative, except time_wait and memory (gauges)."""

    t: float
    cpu_s: tuple[tuple[float, ...], ...]  # per CPU, seconds in each of CPU_KINDS
    interrupts: dict[str, int]  # by kind, summed over CPUs
    softirqs: dict[str, int]
    tcp: dict[str, int]  # TCP_COUNTERS' names
    time_wait: int  # TCP sockets in TIME_WAIT now
    vm: dict[str, int]  # VM_COUNTERS
    memory: dict[str, int]  # MEM_GAUGES' names, bytes


def snapshot(net_pid: int | None = None, proc: Path = Path("/proc")) -> Snapshot:
    """Read every counter now; network counters in the namespace of `net_pid` (None: this process's).
    A file that cannot be read gives no entries (a container may hide some), never an error."""
    net = proc / (str(net_pid) if net_pid is not None else "self") / "net"
    if net_pid is not None and not (net / "snmp").exists():  # the process is gone: this namespace
        net = proc / "self" / "net"
    cpus = tuple(tuple(float(getattr(c, k, 0.0)) for k in CPU_KINDS) for c in psutil.cpu_times(percpu=True))
    tcp = {**parse_named_rows(_read(net / "snmp")), **parse_named_rows(_read(net / "netstat"))}
    return Snapshot(
        t=time.time(),
        cpu_s=cpus,
        interrupts=parse_interrupts(_read(proc / "interrupts")),
        softirqs=parse_softirqs(_read(proc / "softirqs")),
        tcp={name: tcp[key] for key, name in TCP_COUNTERS.items() if key in tcp},
        time_wait=parse_time_wait(_read(net / "sockstat")),
        vm={k: v for k, v in parse_vmstat(_read(proc / "vmstat")).items() if k in VM_COUNTERS},
        memory=parse_meminfo(_read(proc / "meminfo")),
    )


def window(a: Snapshot, b: Snapshot, during: list[Snapshot] | None = None) -> dict[str, Any]:
    """The stored figures between two snapshots: CPU time by kind as % of all CPUs and per CPU, steal in
    cores, interrupts and softirqs per second (the busiest kinds), TCP and paging counts, the most TIME_WAIT
    sockets and the least memory available (over `during` too when given: the gauges' extremes)."""
    span = max(b.t - a.t, 1e-9)
    gauges = [a, *(during or []), b]
    per_cpu = [_cpu_pct(x, y) for x, y in zip(a.cpu_s, b.cpu_s)]
    total = _cpu_pct(_sum_cpus(a.cpu_s), _sum_cpus(b.cpu_s))
    steal_s = sum(y[CPU_KINDS.index("steal")] - x[CPU_KINDS.index("steal")] for x, y in zip(a.cpu_s, b.cpu_s))
    return {
        "span_s": round(span, 3),
        "cpus": len(b.cpu_s),
        "cpu_pct": total,
        "per_cpu_pct": per_cpu,
        "steal_cores": round(max(0.0, steal_s) / span, 4),
        "interrupts_per_s": _top_rates(a.interrupts, b.interrupts, span),
        "softirqs_per_s": _top_rates(a.softirqs, b.softirqs, span),
        "tcp": _deltas(a.tcp, b.tcp),
        "time_wait_max": max(s.time_wait for s in gauges),
        "paging": _deltas(a.vm, b.vm),
        "memory": {
            "available_bytes_min": min((s.memory.get("available_bytes", 0) for s in gauges), default=0),
            "cached_bytes_max": max((s.memory.get("cached_bytes", 0) for s in gauges), default=0),
            "dirty_bytes_max": max((s.memory.get("dirty_bytes", 0) for s in gauges), default=0),
        },
    }


def interval(a: Snapshot, b: Snapshot) -> dict[str, Any]:
    """One sampling interval as a chart row: CPU by kind (% of all CPUs), a few TCP and paging counts."""
    tcp, vm = _deltas(a.tcp, b.tcp), _deltas(a.vm, b.vm)
    return {
        "cpu_pct": _cpu_pct(_sum_cpus(a.cpu_s), _sum_cpus(b.cpu_s)),
        "retrans_segs": tcp.get("retrans_segs", 0),
        "listen_overflows": tcp.get("listen_overflows", 0),
        "out_rsts": tcp.get("out_rsts", 0),
        "time_wait": b.time_wait,
        "pgmajfault": vm.get("pgmajfault", 0),
    }


# -- parsers: one per file, over its text (tests feed them this machine's real files) -------------


def parse_interrupts(text: str) -> dict[str, int]:
    """/proc/interrupts → count by kind, summed over CPUs. A numbered line's kind is its device name (the
    last word: "virtio0-input.0"), a named line's its mnemonic ("LOC", "RES")."""
    lines = text.splitlines()
    if not lines:
        return {}
    cpus = len(lines[0].split())
    out: dict[str, int] = {}
    for line in lines[1:]:
        label, _, rest = line.partition(":")
        fields = rest.split()
        counts = [int(f) for f in fields[:cpus] if f.isdigit()]
        if not counts:
            continue
        label = label.strip()
        words = fields[len(counts) :]
        kind = (words[-1] if words else label) if label.isdigit() else label
        out[kind] = out.get(kind, 0) + sum(counts)
    return out


def parse_softirqs(text: str) -> dict[str, int]:
    """/proc/softirqs → count by kind (NET_RX, TIMER, ...), summed over CPUs."""
    out: dict[str, int] = {}
    for line in text.splitlines()[1:]:
        label, _, rest = line.partition(":")
        if rest:
            out[label.strip()] = sum(int(f) for f in rest.split() if f.isdigit())
    return out


def parse_time_wait(text: str) -> int:
    """/proc/net/sockstat's "TCP: ... tw N": the TIME_WAIT sockets of the namespace (IPv4 and IPv6)."""
    for line in text.splitlines():
        if line.startswith("TCP:"):
            fields = line.split()[1:]
            pairs = dict(zip(fields[::2], fields[1::2]))
            return int(pairs.get("tw", 0))
    return 0


def parse_vmstat(text: str) -> dict[str, int]:
    """/proc/vmstat → every counter by name."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if value.strip().lstrip("-").isdigit():
            out[name] = int(value)
    return out


def parse_meminfo(text: str) -> dict[str, int]:
    """/proc/meminfo → MEM_GAUGES in bytes."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        if name in MEM_GAUGES and rest.split():
            out[MEM_GAUGES[name]] = int(rest.split()[0]) * 1024
    return out


def parse_named_rows(text: str) -> dict[tuple[str, str], int]:
    """/proc/net/snmp or /proc/net/netstat: pairs of lines, names then values, under one prefix ("Tcp:")."""
    out: dict[tuple[str, str], int] = {}
    lines = text.splitlines()
    for names, values in zip(lines[::2], lines[1::2]):
        prefix, _, head = names.partition(":")
        vprefix, _, tail = values.partition(":")
        if prefix != vprefix:
            continue
        for name, value in zip(head.split(), tail.split()):
            try:
                out[(prefix, name)] = int(value)
            except ValueError:
                continue
    return out


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="ascii", errors="replace")
    except OSError:
        return ""


def _sum_cpus(cpus: tuple[tuple[float, ...], ...]) -> tuple[float, ...]:
    return tuple(sum(c[i] for c in cpus) for i in range(len(CPU_KINDS)))


def _cpu_pct(a: tuple[float, ...], b: tuple[float, ...]) -> dict[str, float]:
    """Each kind's share of the CPU time that passed (the kinds add up to 100)."""
    d = [max(0.0, y - x) for x, y in zip(a, b)]
    total = sum(d) or 1.0
    return {k: round(100.0 * v / total, 2) for k, v in zip(CPU_KINDS, d)}


def _deltas(a: Mapping[str, int], b: Mapping[str, int]) -> dict[str, int]:
    return {k: b[k] - a[k] for k in b if k in a}


def _top_rates(a: Mapping[str, int], b: Mapping[str, int], span_s: float) -> dict[str, float]:
    rates = sorted(((k, (b[k] - a[k]) / span_s) for k in b if k in a and b[k] > a[k]), key=lambda kv: -kv[1])
    out = {k: round(v, 1) for k, v in rates[:TOP_KINDS]}
    rest = sum(v for _, v in rates[TOP_KINDS:])
    if rest:
        out["other"] = round(rest, 1)
    return out
