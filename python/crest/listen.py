"""A listening TCP socket on the address a user named (the live page, crest ui, the metrics endpoint), and
its refusals worded once: in use, not this machine's address, not permitted. Never prints."""

from __future__ import annotations

import errno
import socket

from crest.errors import ConfigError


def listen(host: str, port: int, what: str, *, blocking: bool = True) -> socket.socket:
    """A socket listening on host:port (port 0: a free one), on `host` alone (an IPv6 one takes no IPv4).

    Args:
        what: the option that named the address (`--metrics`), for the message.

    Raises:
        ConfigError: the address cannot be bound, with the fix.
    """
    where = f"{what}: cannot listen on {host}:{port}"
    not_here = f"{where}: {host} is not an address of this machine; name one (e.g. {what} 127.0.0.1:{port})"
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except (socket.gaierror, UnicodeError):
        raise ConfigError(not_here) from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind(address)
        sock.listen(64)
        sock.setblocking(blocking)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRNOTAVAIL:
            raise ConfigError(not_here) from None
        why = {errno.EADDRINUSE: "the port is in use", errno.EACCES: "not permitted (ports below 1024 need root)"}
        raise ConfigError(
            f"{where}: {why.get(exc.errno or 0, exc.strerror or str(exc))}; name another port"
            f" ({what} {host}:0 picks a free one)"
        ) from None
    return sock
