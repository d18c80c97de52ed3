"""A URL target seen from a client network: the same server, reached at the network's target address.
A URL target stays in this (root) namespace, where it already runs; the network's target link ends
here with that address, so only a server on this machine can be reached, and it must listen on all
addresses (0.0.0.0) or on the target address itself. Pure apart from one bind to test locality.
"""

from __future__ import annotations

import socket
from urllib.parse import urlsplit, urlunsplit

from crest.errors import ConfigError
from crest.load.preflight import parse_url
from crest.network.addresses import TARGET_ADDRESS


def _is_local(host: str) -> bool:
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


def on_network(url: str) -> str:
    """`url` with its host replaced by the network's target address.

    Raises:
        ConfigError: not http(s), or a host that is not this machine (the network cannot reach it).
    """
    target = parse_url(url)
    if target.scheme not in ("http", "https"):
        raise ConfigError(f"--network carries HTTP: {url!r} is {target.scheme}://; give an http:// or https:// URL")
    if not _is_local(target.host):
        raise ConfigError(
            f"--network reaches only a target on this machine, and {target.host} is not one of its addresses:"
            " run the server here, or leave out --network"
        )
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=f"{TARGET_ADDRESS}:{target.port}"))
