"""A URL target (http, https or an SMB share) seen from a client network: the same server, reached at the
network's target address.
A URL target stays in this (root) namespace, where it already runs; the network's target link ends
here with that address, so only a server on this machine can be reached, and it must listen on all
addresses (0.0.0.0), on the target address itself, or on loopback only: then the network forwards the
target address to it (crest.network.forward), or, without nftables, crest says what to change. Pure apart
from one bind to test locality and a look at the listening sockets.
"""

from __future__ import annotations

import socket
from ipaddress import ip_address
from urllib.parse import urlsplit, urlunsplit

import psutil

from crest.errors import ConfigError
from crest.load.preflight import TargetUrl, parse_file_url, parse_url
from crest.network import forward
from crest.network.addresses import TARGET_ADDRESS


def is_local(host: str) -> bool:
    """Whether `host` is one of this machine's addresses (a bind to it succeeds)."""
    try:
        infos = socket.getaddrinfo(host, None, socket.AF_INET)
    except socket.gaierror:
        return False
    for *_, addr in infos:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind((addr[0], 0))
                return True
            except OSError:
                continue
    return False


def on_network(url: str, address: str = str(TARGET_ADDRESS)) -> str:
    """`url` with its host replaced by the network's target address (a cluster node's network has its own).

    Raises:
        ConfigError: not http(s), or a host that is not this machine (the network cannot reach it).
    """
    if url.lower().startswith("file:"):
        raise ConfigError(
            f"--network: {url!r} is this machine's directory, which no client network reaches: give the share as"
            " smb://USER@HOST/SHARE (or --server samba), or leave out --network"
        )
    target = _parse(url)
    if target.scheme not in ("http", "https", "smb"):
        raise ConfigError(
            f"--network carries HTTP and SMB: {url!r} is {target.scheme}://; give an http(s):// or smb:// URL"
        )
    if not is_local(target.host):
        raise ConfigError(
            f"--network reaches only a target on this machine, and {target.host} is not one of its addresses:"
            " run the server here, or leave out --network"
        )
    only = _loopback_only(target.port)
    if only and not forward.available():
        raise ConfigError(
            f"--network: the server on port {target.port} listens only on {only}, which a client subnet cannot"
            " reach without a forward: apt-get install -y nftables (crest then forwards the target address to"
            f" it), or have it listen on 0.0.0.0 (or on {TARGET_ADDRESS}), or leave out --network"
        )
    parts = urlsplit(url)
    user = f"{parts.username}@" if parts.username else ""  # smb://USER@HOST/SHARE keeps its user
    return urlunsplit(parts._replace(netloc=f"{user}{address}:{target.port}"))


def loopback_port(url: str) -> int | None:
    """The port to forward to loopback for `url` (a target on this machine that listens on loopback only,
    see crest.network.forward), else None."""
    port = _parse(url).port
    return port if _loopback_only(port) else None


def _parse(url: str) -> TargetUrl:
    """An http(s) URL or an SMB share's, checked as the load would check it."""
    return parse_file_url(url) if url.lower().startswith("smb:") else parse_url(url)


def _loopback_only(port: int) -> str | None:
    """The loopback addresses a TCP server on `port` listens on, when it listens on no other; None when
    something listens beyond loopback, nothing listens, or the sockets cannot be read."""
    try:
        listening = [c.laddr.ip for c in psutil.net_connections("tcp") if c.status == psutil.CONN_LISTEN
                     and c.laddr and c.laddr.port == port]  # fmt: skip
    except (psutil.Error, OSError):
        return None
    if not listening or not all(ip_address(ip.split("%")[0]).is_loopback for ip in listening):
        return None
    return " and ".join(sorted(set(listening)))
