"""The disclosure stored with every run: the machine, its OS tuning and the docroot's filesystem, as the seeds
disclosed them (hardware, operating system and its settings, network, server).

Owns reading those facts from /proc, /sys, getrlimit and the mount table. A
fact that does not apply on this machine (no NIC on loopback, no cpufreq in a
VM) is kept as {"not_applicable": REASON}, never left out, so a reader can
tell "not measured" from "not there". Never starts servers, stores or prints;
the server's version and full configuration come from its Target.
"""

from __future__ import annotations

import ipaddress
import os
import platform
import resource
import shutil
import subprocess
from pathlib import Path
from typing import Any

# The sysctls that matter for web serving: accept queues, TIME_WAIT reuse, buffers, ports, file handles.
SYSCTLS = (
    "net.core.somaxconn",
    "net.ipv4.tcp_max_syn_backlog",
    "net.ipv4.tcp_tw_reuse",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.ip_local_port_range",
    "net.core.rmem_max",
    "net.core.wmem_max",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
    "net.core.netdev_max_backlog",
    "net.ipv4.tcp_congestion_control",
    "net.ipv4.tcp_syncookies",
    "fs.file-max",
    "fs.nr_open",
)
# The limits a server or the load engine runs into first.
RLIMITS = (
    ("nofile", resource.RLIMIT_NOFILE),
    ("nproc", resource.RLIMIT_NPROC),
    ("memlock", resource.RLIMIT_MEMLOCK),
    ("stack", resource.RLIMIT_STACK),
    ("core", resource.RLIMIT_CORE),
)
# Every section and field a disclosure has (tests check them all on the machine they run on).
FIELDS = {
    "hardware": ("cpu_model", "logical_cpus", "cores", "threads_per_core", "sockets", "numa_nodes", "memory_bytes",
                 "cpu_governor", "virtualization"),
    "os": ("distribution", "kernel", "kernel_version", "boot_cmdline", "sysctls", "ulimits"),
    "docroot": ("path", "mount_point", "filesystem", "device", "mount_options", "free_bytes"),
    "network": ("target_host", "interface", "mtu", "speed_mbps", "driver", "offloads"),
}  # fmt: skip


def not_applicable(reason: str) -> dict[str, str]:
    """How a fact that does not apply here is stored."""
    return {"not_applicable": reason}


def disclosure(docroot: Path | None, target_host: str | None) -> dict[str, Any]:
    """Everything the seeds disclosed about the system under test that crest can read on this machine."""
    return {
        "hardware": hardware(),
        "os": operating_system(),
        "docroot": filesystem(docroot)
        if docroot is not None
        else _every("docroot", "the target is a URL: crest does not know its docroot"),
        "network": network(target_host),
    }


def hardware() -> dict[str, Any]:
    cpuinfo = _read("/proc/cpuinfo")
    model = next((line.split(":", 1)[1].strip() for line in cpuinfo.splitlines() if line.startswith("model name")),
                 platform.machine())  # fmt: skip
    flags = next((line.split(":", 1)[1].split() for line in cpuinfo.splitlines() if line.startswith("flags")), [])
    logical = os.cpu_count() or 1
    topology = Path("/sys/devices/system/cpu")
    packages = {_read(p).strip() for p in topology.glob("cpu[0-9]*/topology/physical_package_id")}
    cores = {(_read(p.parent / "physical_package_id").strip(), _read(p).strip())
             for p in topology.glob("cpu[0-9]*/topology/core_id")}  # fmt: skip
    nodes = list(Path("/sys/devices/system/node").glob("node[0-9]*"))
    governors = sorted({_read(p).strip() for p in topology.glob("cpu[0-9]*/cpufreq/scaling_governor")} - {""})
    return {
        "cpu_model": model,
        "logical_cpus": logical,
        "cores": len(cores) or logical,
        "threads_per_core": max(1, logical // (len(cores) or logical)),
        "sockets": len(packages) or 1,
        "numa_nodes": len(nodes) or 1,
        "memory_bytes": _meminfo_bytes("MemTotal"),
        "cpu_governor": ",".join(governors) if governors else not_applicable(
            "no cpufreq driver: the kernel does not scale this CPU's frequency (typical in a virtual machine)"),
        "virtualization": _virtualization("hypervisor" in flags),
    }  # fmt: skip


def operating_system() -> dict[str, Any]:
    release = {}
    for line in _read("/etc/os-release").splitlines():
        key, _, value = line.partition("=")
        release[key] = value.strip().strip('"')
    return {
        "distribution": release.get("PRETTY_NAME") or not_applicable("no /etc/os-release"),
        "kernel": platform.release(),
        "kernel_version": platform.version(),
        "boot_cmdline": _read("/proc/cmdline").strip() or not_applicable("/proc/cmdline is not readable"),
        "sysctls": {name: _sysctl(name) for name in SYSCTLS},
        "ulimits": {name: _rlimit(limit) for name, limit in RLIMITS},
    }


def filesystem(path: Path) -> dict[str, Any]:
    """The filesystem a path lives on: its mount point, type, device and mount options (/proc/self/mountinfo)."""
    real = os.path.realpath(path)
    best: list[str] | None = None
    for line in _read("/proc/self/mountinfo").splitlines():
        fields = line.split()
        if " - " not in line or len(fields) < 10:
            continue
        point = fields[4].replace("\\040", " ")
        if (real == point or real.startswith(point.rstrip("/") + "/")) and (best is None or len(point) > len(best[4])):
            best = fields
    if best is None:
        return _every("docroot", f"{real} is on no mount listed in /proc/self/mountinfo") | {"path": real}
    tail = best[best.index("-") + 1 :]
    options = ",".join(dict.fromkeys(best[5].split(",") + (tail[2].split(",") if len(tail) > 2 else [])))
    try:
        free: Any = shutil.disk_usage(real).free
    except OSError as exc:
        free = not_applicable(f"cannot stat {real}: {exc.strerror}")
    return {"path": real, "mount_point": best[4], "filesystem": tail[0], "device": tail[1] if len(tail) > 1 else "",
            "mount_options": options, "free_bytes": free}  # fmt: skip


def network(target_host: str | None) -> dict[str, Any]:
    """The interface the target's traffic crosses, with its speed, driver and offloads; loopback has none."""
    if target_host is None:
        return _every("network", "no target host")
    try:
        loopback = ipaddress.ip_address(target_host).is_loopback
    except ValueError:
        loopback = target_host == "localhost"
    if loopback:
        return _every("network", "the target is on loopback: its traffic crosses no NIC") | {
            "target_host": target_host, "interface": "lo", "mtu": _int(_read("/sys/class/net/lo/mtu"))}  # fmt: skip
    dev = _route_device(target_host)
    if dev is None:
        return _every("network", f"no route to {target_host} found with `ip route get`") | {"target_host": target_host}
    net = Path("/sys/class/net") / dev
    driver = net / "device" / "driver"
    speed = _int(_read(net / "speed"))
    return {
        "target_host": target_host,
        "interface": dev,
        "mtu": _int(_read(net / "mtu")),
        "speed_mbps": speed if speed and speed > 0 else not_applicable(f"{dev} reports no link speed (virtual NIC)"),
        "driver": driver.resolve().name if driver.exists() else not_applicable(f"{dev} has no device driver (virtual)"),
        "offloads": _offloads(dev),
    }  # fmt: skip


def _every(section: str, reason: str) -> dict[str, Any]:
    return {name: not_applicable(reason) for name in FIELDS[section]}


def _read(path: str | Path) -> str:
    try:
        return Path(path).read_text(errors="replace")
    except OSError:
        return ""


def _int(text: str) -> int | None:
    try:
        return int(text.strip())
    except ValueError:
        return None


def _meminfo_bytes(key: str) -> int | None:
    for line in _read("/proc/meminfo").splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    return None


def _sysctl(name: str) -> Any:
    text = _read(Path("/proc/sys") / name.replace(".", "/")).strip()
    if not text:
        return not_applicable(f"/proc/sys/{name.replace('.', '/')} does not exist or is not readable here")
    return " ".join(text.split())


def _rlimit(limit: int) -> dict[str, Any]:
    soft, hard = resource.getrlimit(limit)
    return {"soft": "unlimited" if soft == resource.RLIM_INFINITY else soft,
            "hard": "unlimited" if hard == resource.RLIM_INFINITY else hard}  # fmt: skip


def _virtualization(flag: bool) -> dict[str, Any]:
    """Whether a hypervisor is present and, where the system says, which one."""
    kind = _detect_virt("--vm") or _read("/sys/hypervisor/type").strip()
    product = " ".join(filter(None, (_read("/sys/class/dmi/id/sys_vendor").strip(),
                                     _read("/sys/class/dmi/id/product_name").strip())))  # fmt: skip
    present = flag or kind not in ("", "none")
    return {"hypervisor": present, "kind": kind if kind not in ("", "none") else ("unknown" if present else "none"),
            "container": _detect_virt("--container") or "unknown", "product": product or "unknown"}  # fmt: skip


def _detect_virt(which: str) -> str:
    """systemd-detect-virt's answer for virtual machines (--vm) or containers (--container); "" without it."""
    tool = shutil.which("systemd-detect-virt")
    if tool is None:
        return ""
    try:
        return subprocess.run([tool, which], capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def _route_device(host: str) -> str | None:
    ip = shutil.which("ip")
    if ip is None:
        return None
    try:
        out = subprocess.run([ip, "route", "get", host], capture_output=True, text=True, timeout=5).stdout.split()
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out[out.index("dev") + 1] if "dev" in out[:-1] else None


def _offloads(dev: str) -> Any:
    """The NIC's offloads that change per-packet CPU cost (ethtool -k): TSO, GSO, GRO, LRO, checksums."""
    tool = shutil.which("ethtool")
    if tool is None:
        return not_applicable("ethtool is not installed: apt-get install -y ethtool")
    try:
        text = subprocess.run([tool, "-k", dev], capture_output=True, text=True, timeout=5).stdout
    except (OSError, subprocess.TimeoutExpired):
        return not_applicable(f"ethtool -k {dev} failed")
    wanted = ("tcp-segmentation-offload", "generic-segmentation-offload", "generic-receive-offload",
              "large-receive-offload", "rx-checksumming", "tx-checksumming", "scatter-gather")  # fmt: skip
    found = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in wanted:
            found[key.strip()] = value.split()[0] if value.split() else ""
    return found or not_applicable(f"ethtool -k {dev} listed no offloads")
