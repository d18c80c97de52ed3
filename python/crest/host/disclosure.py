"""The disclosure of a run: the machine, its tuning, the docroot's filesystem, the NIC and the target's TLS
certificate, as the seeds' disclosure tables list them; stored with every run (RunMeta.host["disclosure"]).

Owns reading those facts from /proc, /sys, getrlimit, mountinfo and (when needed and
installed) ip, ethtool and openssl; never starts servers, stores or prints anything. One TLS handshake
with the target is its only traffic.

Every field is present. A field that does not apply here (the NIC of a loopback target, the CPU
governor without a cpufreq driver) holds {"not_applicable": why}; one that applies but could not be
read holds {"unavailable": why}. Readers test for those two keys (crest.store.records.missing).
"""

from __future__ import annotations

import ipaddress
import os
import platform
import re
import resource
import shutil
import socket
import ssl
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

# The sysctls that bound a web server's connections, buffers and ports (the seeds' tuning tables).
SYSCTLS = (
    "net.core.somaxconn",
    "net.ipv4.tcp_max_syn_backlog",
    "net.ipv4.tcp_tw_reuse",
    "net.ipv4.tcp_fin_timeout",
    "net.core.rmem_max",
    "net.core.wmem_max",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
    "net.ipv4.ip_local_port_range",
    "net.core.netdev_max_backlog",
    "fs.file-max",
)
ULIMITS = {
    "nofile": resource.RLIMIT_NOFILE,
    "nproc": resource.RLIMIT_NPROC,
    "memlock": resource.RLIMIT_MEMLOCK,
    "stack": resource.RLIMIT_STACK,
    "core": resource.RLIMIT_CORE,
}
SECTIONS = ("hardware", "os", "sysctl", "ulimits", "docroot", "nic", "tls")
_TOOL_TIMEOUT_S = 5


def not_applicable(why: str) -> dict[str, str]:
    return {"not_applicable": why}


def unavailable(why: str) -> dict[str, str]:
    return {"unavailable": why}


def collect(docroot: Path | None, target_url: str | None, tls_url: str | None) -> dict[str, Any]:
    """The whole disclosure; `docroot` is None for a target crest did not provision."""
    return {
        "hardware": hardware(),
        "os": operating_system(),
        "sysctl": {name: _sysctl(name) for name in SYSCTLS},
        "ulimits": ulimits(),
        "docroot": filesystem(docroot)
        if docroot is not None
        else not_applicable("crest did not provision the target: its docroot is not on this machine"),
        "nic": nic(_host_of(target_url)),
        "tls": certificate(tls_url) if tls_url else not_applicable("the workload sends no TLS requests"),
    }


# -- hardware --------------------------------------------------------------------------------------


def hardware() -> dict[str, Any]:
    cpuinfo = _read("/proc/cpuinfo") or ""
    model = next((line.split(":", 1)[1].strip() for line in cpuinfo.splitlines() if line.startswith("model name")),
                 None)  # fmt: skip
    packages: set[str] = set()
    cores: set[tuple[str, str]] = set()
    topology = sorted(Path("/sys/devices/system/cpu").glob("cpu[0-9]*/topology"))
    for t in topology:
        package, core = _read(t / "physical_package_id"), _read(t / "core_id")
        if package is not None and core is not None:
            packages.add(package)
            cores.add((package, core))
    logical = os.cpu_count()
    return {
        "cpu_model": model or unavailable("/proc/cpuinfo names no model"),
        "sockets": len(packages) if packages else unavailable("no CPU topology in /sys"),
        "cores": len(cores) if cores else unavailable("no CPU topology in /sys"),
        "logical_cpus": logical or unavailable("os.cpu_count() is unknown"),
        "numa_nodes": _numa(),
        "memory_bytes": _meminfo_bytes("MemTotal") or unavailable("/proc/meminfo has no MemTotal"),
        "cpu_governor": _governor(),
        "virtualization": _virtualization(" hypervisor" in cpuinfo or "\thypervisor" in cpuinfo),
    }


def _numa() -> Any:
    nodes = sorted(Path("/sys/devices/system/node").glob("node[0-9]*"), key=lambda p: int(p.name[4:]))
    if not nodes:
        return unavailable("no /sys/devices/system/node (kernel without NUMA support)")
    out = []
    for node in nodes:
        total = re.search(r"MemTotal:\s+(\d+) kB", _read(node / "meminfo") or "")
        out.append({"node": int(node.name[4:]), "cpus": _read(node / "cpulist") or "",
                    "memory_bytes": int(total.group(1)) * 1024 if total else None})  # fmt: skip
    return out


def _governor() -> Any:
    found = {g for g in (_read(p) for p in Path("/sys/devices/system/cpu").glob("cpu[0-9]*/cpufreq/scaling_governor"))
             if g}  # fmt: skip
    if not found:
        return not_applicable("no cpufreq driver: the kernel does not scale CPU frequency (usual inside a VM)")
    return ", ".join(sorted(found))


def _virtualization(hypervisor_flag: bool) -> dict[str, Any]:
    """The CPU's hypervisor flag (set by every mainstream hypervisor), the machine's DMI vendor and product
    when the firmware names them, and the container runtime when crest runs in one; files only, no tools."""
    dmi = " ".join(filter(None, (_read(f"/sys/class/dmi/id/{f}") for f in ("sys_vendor", "product_name"))))
    container = _read("/run/systemd/container") or (
        "docker" if Path("/.dockerenv").exists() else "podman" if Path("/run/.containerenv").exists() else "none"
    )
    return {
        "hypervisor": hypervisor_flag,
        "machine": dmi or _read("/sys/hypervisor/type") or unavailable("no DMI or /sys/hypervisor names the machine"),
        "container": container,
    }


# -- operating system and tuning -------------------------------------------------------------------


def operating_system() -> dict[str, Any]:
    release = _read("/etc/os-release") or ""
    pretty = re.search(r'^PRETTY_NAME="?([^"\n]*)"?', release, re.MULTILINE)
    return {
        "distribution": pretty.group(1) if pretty else unavailable("/etc/os-release has no PRETTY_NAME"),
        "kernel": platform.release(),
        "kernel_build": platform.version(),
        "boot_cmdline": _read("/proc/cmdline") or unavailable("cannot read /proc/cmdline"),
    }


def _sysctl(name: str) -> Any:
    value = _read(Path("/proc/sys") / name.replace(".", "/"))
    if value is None:
        return unavailable(f"no /proc/sys entry for {name} (another kernel or network namespace)")
    return " ".join(value.split())


def ulimits() -> dict[str, Any]:
    """The limits crest runs under, which the targets it starts inherit: [soft, hard], "unlimited" for none."""

    def show(n: int) -> int | str:
        return "unlimited" if n == resource.RLIM_INFINITY else n

    return {name: [show(soft), show(hard)] for name, (soft, hard) in
            ((name, resource.getrlimit(limit)) for name, limit in ULIMITS.items())}  # fmt: skip


# -- the docroot's filesystem ---------------------------------------------------------------------


def filesystem(docroot: Path) -> dict[str, Any]:
    """The filesystem the docroot lives on, its mount options and space (from /proc/self/mountinfo)."""
    path = docroot.resolve()
    best: list[str] | None = None
    for line in (_read("/proc/self/mountinfo") or "").splitlines():
        fields = line.split()
        if " - " not in line or len(fields) < 10:
            continue
        mount = _unescape(fields[4])
        inside = path == Path(mount) or Path(mount) in path.parents
        if inside and (best is None or len(mount) >= len(_unescape(best[4]))):
            best = fields
    if best is None:
        return {"path": str(path), "mount": unavailable("the docroot's mount is not in /proc/self/mountinfo")}
    dash = best.index("-")
    fs_type, source, super_options = best[dash + 1], best[dash + 2], best[dash + 3] if len(best) > dash + 3 else ""
    try:
        st = os.statvfs(path)
        free: Any = st.f_bavail * st.f_frsize
    except OSError as exc:
        free = unavailable(str(exc.strerror))
    return {"path": str(path), "mount_point": _unescape(best[4]), "filesystem": fs_type, "source": source,
            "mount_options": best[5], "super_options": super_options, "free_bytes": free}  # fmt: skip


def _unescape(text: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)


# -- the NIC that carries the target's traffic ------------------------------------------------------


def nic(host: str | None) -> Any:
    if host is None:
        return not_applicable("no target URL: nothing crosses a network")
    try:
        address = ipaddress.ip_address(socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)[0][4][0])
    except (OSError, ValueError, IndexError):
        return unavailable(f"cannot resolve {host}")
    if address.is_loopback:
        return not_applicable(f"the target is on loopback ({address}): no NIC carries its traffic")
    ip = shutil.which("ip")
    if ip is None:
        return unavailable("the ip tool is missing: apt-get install -y iproute2")
    route = _run([ip, "route", "get", str(address)])
    dev = re.search(r"\bdev (\S+)", route or "")
    if dev is None:
        return unavailable(f"no route to {address}")
    name = dev.group(1)
    if name == "lo":
        return not_applicable(f"{address} is this machine's own address: its traffic stays on loopback")
    sys = Path("/sys/class/net") / name
    driver = sys / "device" / "driver"
    speed = _read(sys / "speed")
    return {
        "interface": name,
        "driver": driver.resolve().name if driver.exists() else not_applicable("a virtual interface (no device)"),
        "speed_mbit_s": int(speed)
        if speed and speed.lstrip("-").isdigit() and int(speed) > 0
        else unavailable("the driver reports no link speed"),
        "mtu": int(_read(sys / "mtu") or 0) or unavailable("no mtu in /sys"),
        "offloads": _offloads(name),
    }


def _offloads(name: str) -> Any:
    ethtool = shutil.which("ethtool") or shutil.which("ethtool", path="/usr/sbin:/sbin")
    if ethtool is None:
        return unavailable("ethtool is missing: apt-get install -y ethtool")
    text = _run([ethtool, "-k", name])
    if text is None:
        return unavailable(f"ethtool -k {name} failed")
    wanted = ("tcp-segmentation-offload", "generic-segmentation-offload", "generic-receive-offload",
              "large-receive-offload", "rx-checksumming", "tx-checksumming", "scatter-gather")  # fmt: skip
    found = dict(re.findall(r"^(\S+): (\S+)", text, re.MULTILINE))
    return {k: found[k] for k in wanted if k in found}


# -- the target's certificate ---------------------------------------------------------------------


def certificate(tls_url: str) -> dict[str, Any]:
    """The key type and size of the certificate the target serves, from one handshake (any key, any
    security level: this reads the certificate, it judges nothing)."""
    host, port = _host_of(tls_url), urlsplit(tls_url).port or 443
    if host is None:
        return unavailable(f"no host in {tls_url}")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    context.set_ciphers("ALL:@SECLEVEL=0")
    try:
        with socket.create_connection((host, port), timeout=_TOOL_TIMEOUT_S) as raw:
            with context.wrap_socket(raw, server_hostname=host) as tls:
                der = tls.getpeercert(binary_form=True)
    except (OSError, ssl.SSLError) as exc:
        return unavailable(f"no TLS handshake with {host}:{port}: {exc}")
    if not der:
        return unavailable("the target sent no certificate")
    openssl = shutil.which("openssl")
    if openssl is None:
        return unavailable("openssl is missing (it reads the certificate's key): apt-get install -y openssl")
    try:
        text = subprocess.run([openssl, "x509", "-inform", "DER", "-noout", "-text"], input=der,
                              capture_output=True, timeout=_TOOL_TIMEOUT_S, check=True).stdout.decode()  # fmt: skip
    except (OSError, subprocess.SubprocessError) as exc:
        return unavailable(f"openssl could not read the certificate: {exc}")
    algorithm = re.search(r"Public Key Algorithm: (\S+)", text)
    bits = re.search(r"Public-Key: \((\d+) bit\)", text)
    curve = re.search(r"NIST CURVE: (\S+)", text)
    signature = re.search(r"Signature Algorithm: (\S+)", text)
    return {
        "key_type": _KEY_NAMES.get(algorithm.group(1), algorithm.group(1)) if algorithm else unavailable("no key"),
        "key_bits": int(bits.group(1)) if bits else unavailable("openssl printed no key size"),
        "curve": curve.group(1) if curve else not_applicable("not an elliptic-curve key"),
        "signature": signature.group(1) if signature else unavailable("no signature algorithm"),
    }


_KEY_NAMES = {"rsaEncryption": "RSA", "id-ecPublicKey": "ECDSA", "ED25519": "Ed25519"}


# -- helpers ----------------------------------------------------------------------------------------


def _host_of(url: str | None) -> str | None:
    return urlsplit(url).hostname if url else None


def _read(path: str | Path) -> str | None:
    try:
        return Path(path).read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None


def _meminfo_bytes(key: str) -> int | None:
    match = re.search(rf"^{key}:\s+(\d+) kB", _read("/proc/meminfo") or "", re.MULTILINE)
    return int(match.group(1)) * 1024 if match else None


def _run(argv: list[str]) -> str | None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=_TOOL_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None
