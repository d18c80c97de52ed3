"""Forwarding a client network's target address to a server that listens on loopback only: a destination
NAT in the root namespace (nftables), for packets that come in on the network's target link, to
127.0.0.1 on the same port, with `route_localnet` on that link so the kernel routes them there.

One nftables table per network, named `crest-ID` like its namespaces, so a killed run's table is
removed by the same rules (clean.py). Owns only the nft commands; the network decides when (topology.py).
"""

from __future__ import annotations

import shutil
import subprocess

from crest.network import command

TABLE_PREFIX = "crest-"
_NFT_TIMEOUT_S = 30.0


def available() -> bool:
    """Whether nftables' command is here (the forward needs it)."""
    return shutil.which("nft") is not None


def table_name(network_id: str) -> str:
    return f"{TABLE_PREFIX}{network_id}"


def forward(table: str, link: str, address: str, port: int, *, first: bool) -> None:
    """DNAT TCP and UDP (QUIC) for `address`:`port` arriving on `link` to 127.0.0.1:`port`; `first` makes the
    table, its chain and the link's route_localnet.

    Raises:
        MachineError: nft or sysctl failed (one line).
    """
    script = []
    if first:
        _run(["sysctl", "-qw", f"net.ipv4.conf.{link}.route_localnet=1"])
        script += [f"add table ip {table}",
                   f"add chain ip {table} pre {{ type nat hook prerouting priority dstnat; policy accept; }}"]  # fmt: skip
    script += [f'add rule ip {table} pre iifname "{link}" ip daddr {address} {proto} dport {port}'
               f" dnat to 127.0.0.1:{port}" for proto in ("tcp", "udp")]  # fmt: skip
    _run(["nft", "-f", "-"], "\n".join(script) + "\n")


def remove(tables: list[str]) -> list[str]:
    """Delete these tables; the names that were there."""
    if not available():
        return []
    present = set(list_tables())
    gone = []
    for table in tables:
        if table in present:
            subprocess.run(["nft", "delete", "table", "ip", table], capture_output=True, timeout=_NFT_TIMEOUT_S,
                           check=False)  # fmt: skip
            gone.append(table)
    return gone


def list_tables() -> list[str]:
    """crest's nftables tables (family ip) on this machine."""
    if not available():
        return []
    out = subprocess.run(["nft", "list", "tables", "ip"], capture_output=True, text=True, timeout=_NFT_TIMEOUT_S,
                         check=False)  # fmt: skip
    names = [line.split()[-1] for line in out.stdout.splitlines() if line.startswith("table ip ")]
    return [n for n in names if n.startswith(TABLE_PREFIX)]


def _run(argv: list[str], stdin: str | None = None) -> None:
    command.run(argv, doing="forward the target address to loopback", install="nftables", stdin=stdin)
