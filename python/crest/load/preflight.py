"""Checks made before any load is sent: URL syntax, target reachability, source addresses.

Owns nothing but these checks; it never sends an HTTP request (a TCP connect and
close is all the target sees) and never prints.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from crest.errors import ConfigError, TargetError

PREFLIGHT_TIMEOUT_S = 2.0


@dataclass(frozen=True)
class TargetUrl:
    """A validated target URL, split into the parts the checks need."""

    url: str
    scheme: str
    host: str  # without the brackets of an IPv6 literal
    port: int

    @property
    def authority(self) -> str:
        """host:port as written in messages, with brackets around IPv6 literals."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    @property
    def tls(self) -> bool:
        """Whether the URL asks for TLS."""
        return self.scheme == "https"


def parse_url(text: str) -> TargetUrl:
    """Validate a target URL: http or https, a host, a port in 1-65535.

    Raises:
        ConfigError: one line quoting the URL and showing the accepted form.
    """
    expected = f"invalid URL {text!r}: expected http://host[:port]/path or https://host[:port]/path"
    if not text or any(c.isspace() for c in text):
        raise ConfigError(expected)
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:  # bad IPv6 literal, non-numeric or out-of-range port
        raise ConfigError(f"{expected} ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(expected)
    if parts.username is not None or parts.password is not None:
        raise ConfigError(
            f"invalid URL {text!r}: credentials in the URL are not supported; send them with -H 'Authorization: ...'"
        )
    if port == 0:
        raise ConfigError(f"invalid URL {text!r}: port must be in 1-65535")
    if port is None:
        port = 443 if parts.scheme == "https" else 80
    return TargetUrl(url=text, scheme=parts.scheme, host=parts.hostname, port=port)


def parse_file_url(text: str) -> TargetUrl:
    """Validate a file target: file:///DIR (a local or mounted directory) or smb://USER@HOST[:PORT]/SHARE.

    The engine checks the rest (the directory exists, the loadfile parses); this checks the form.

    Raises:
        ConfigError: one line quoting the URL and showing the accepted forms.
    """
    expected = f"invalid file target {text!r}: expected file:///DIR or smb://USER@HOST[:PORT]/SHARE"
    if not text or any(c.isspace() for c in text):
        raise ConfigError(expected)
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise ConfigError(f"{expected} ({exc})") from None
    if parts.scheme == "file":
        if parts.netloc not in ("", "localhost") or not parts.path.startswith("/"):
            raise ConfigError(expected)
        return TargetUrl(url=text, scheme="file", host="", port=0)
    if parts.scheme != "smb" or not parts.hostname or not parts.username or parts.path.strip("/") == "":
        raise ConfigError(expected)
    if parts.password is not None:
        raise ConfigError(
            f"invalid file target {text!r}: a password in the URL is visible to everyone on the machine;"
            " set CREST_SMB_PASSWORD or give --password-file FILE (mode 0600)"
        )
    if port == 0:
        raise ConfigError(f"invalid file target {text!r}: port must be in 1-65535")
    return TargetUrl(url=text, scheme="smb", host=parts.hostname, port=port or 445)


def check_reachable(target: TargetUrl, timeout_s: float = PREFLIGHT_TIMEOUT_S, *, tcp: bool = True) -> None:
    """Resolve the target and, with `tcp`, open and close one TCP connection to it.

    Raises:
        TargetError: the host does not resolve or no address accepts a connection.
    """
    try:
        infos = socket.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise TargetError(f"cannot resolve host {target.host!r} ({exc.strerror}): check the URL") from None
    if not tcp:
        return
    reason = "no address"
    for family, kind, proto, _, sockaddr in infos:
        try:
            with socket.socket(family, kind, proto) as sock:
                sock.settimeout(timeout_s)
                sock.connect(sockaddr)
                return
        except ConnectionRefusedError:
            reason = "connection refused"
        except TimeoutError:
            reason = f"no answer within {timeout_s:g}s"
        except OSError as exc:
            reason = (exc.strerror or str(exc)).lower()
    raise TargetError(f"cannot connect to {target.authority} ({reason}): is the target running? check the URL")


def check_source_addrs(addrs: tuple[str, ...], target: TargetUrl) -> None:
    """Check that each source address can be bound here and matches the target's family.

    Raises:
        ConfigError: an address is of the wrong family or is not assigned to this machine.
    """
    try:
        target_ip = ipaddress.ip_address(target.host)
    except ValueError:
        target_ip = None  # a host name: the family is only known after resolution
    for addr in addrs:
        ip = ipaddress.ip_address(addr)
        if target_ip is not None and ip.version != target_ip.version:
            raise ConfigError(
                f"source address {addr} is IPv{ip.version} but the target {target.host} is"
                f" IPv{target_ip.version}: use source addresses of the target's family"
            )
        family = socket.AF_INET6 if ip.version == 6 else socket.AF_INET
        try:
            with socket.socket(family, socket.SOCK_STREAM) as sock:
                sock.bind((addr, 0))
        except OSError as exc:
            raise ConfigError(
                f"source address {addr} cannot be used ({(exc.strerror or str(exc)).lower()}):"
                " use addresses assigned to this machine, e.g. 127.0.0.2-127.0.0.20"
            ) from None
