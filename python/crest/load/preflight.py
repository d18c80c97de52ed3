"""Checks made before any load is sent: URL syntax, target reachability, one real answer, source addresses.

Owns nothing but these checks and never prints. `check_reachable` only connects and
closes; `check_answers` is the one place crest sends a request before the load: one TLS
handshake, verified as the load will verify it, and for HTTP/1.x one GET or HEAD, so a
certificate the engine would reject or a path that answers 404 stops the command before
thousands of requests fail the same way. It is sent from where the clients stand
(crest.load.vantage) and ends by the user's --timeout (crest.deadlines), and it says how
many requests it sent, so a result accounts for every request crest made.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
from dataclasses import dataclass
from urllib.parse import urlsplit

from crest.deadlines import Deadline
from crest.errors import ConfigError, TargetError
from crest.load import vantage

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


# Statuses that will not change under load, with what to do about each; any other 4xx/5xx is worded generically.
_STATUS_FIXES = {
    400: "the target rejects the request: check the headers and the body",
    401: "the target wants credentials: send them with -H 'Authorization: ...'",
    403: "the target forbids it: check the file's permissions or the server's access rules",
    404: "check the URL's path (the file must exist on the target; `crest fileset` shows what a fileset holds)",
    405: "the target does not allow this method here: check --method",
    410: "check the URL's path",
}


def check_answers(
    target: TargetUrl,
    *,
    path: str,
    timeout_s: float,
    method: str = "GET",
    headers: tuple[tuple[str, str], ...] = (),
    http_version: str = "1.1",
    insecure: bool = False,
    not_found_fix: str | None = None,
) -> int:
    """One real exchange with the target, as the load will have it: the TLS handshake (verified unless
    `insecure`, offering h2 by ALPN for HTTP/2) and, over HTTP/1.x with GET or HEAD, one request for `path`.
    Sent from where the clients stand (crest.load.vantage), and over by `timeout_s` (the user's --timeout)
    as one deadline for connect, handshake, head and the part of the body it reads.

    Other methods are not sent (a POST may change the target); h2c and HTTP/3 are only connected to.
    Returns the requests it sent (0 or 1), which the result reports as `preflight_requests`.

    Raises:
        TargetError: the handshake failed (an untrusted certificate, not TLS on that port), HTTP/2 was not
            offered, no head came by the deadline, or the request answered 4xx/5xx; one line naming the fix.
    """
    if http_version == "3":
        return 0
    sends = http_version != "2" and method in ("GET", "HEAD")
    status, reason = vantage.call(
        exchange, target, path=path, method=method, headers=headers, http_version=http_version,
        insecure=insecure, timeout_s=timeout_s, send=sends,
    )  # fmt: skip
    if status >= 400:
        fixes = {**_STATUS_FIXES, **({404: not_found_fix} if not_found_fix else {})}
        fix = fixes.get(status, "check the target's error log" if status >= 500 else "check the request")
        raise TargetError(f"{method} {target.url} answered {status} {reason} before any load was sent: {fix}")
    return 1 if sends else 0


# Enough of a body to see the exchange go well; the rest is dropped with the connection.
_BODY_READ_BYTES = 1 << 16


def exchange(
    target: TargetUrl,
    *,
    path: str,
    method: str,
    headers: tuple[tuple[str, str], ...],
    http_version: str,
    insecure: bool,
    timeout_s: float,
    send: bool,
) -> tuple[int, str]:
    """`check_answers`'s exchange from this process: (status, reason) of the answer, or (0, "") where only
    the handshake was made. A body still arriving at the deadline is no failure (the head said what the
    load will meet; the load's own timeout judges the body); a head still missing is."""
    context: ssl.SSLContext | None = None
    if target.tls:
        context = ssl.create_default_context()
        if insecure:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        context.set_alpn_protocols(["h2"] if http_version == "2" else ["http/1.1"])
    deadline = Deadline.after(timeout_s)
    conn: http.client.HTTPConnection = (
        http.client.HTTPSConnection(target.host, target.port, timeout=timeout_s, context=context)
        if context is not None
        else http.client.HTTPConnection(target.host, target.port, timeout=timeout_s)
    )
    try:
        with deadline.guard(lambda: conn.sock) as guard:
            conn.connect()
            if not send:
                alpn = conn.sock.selected_alpn_protocol() if isinstance(conn.sock, ssl.SSLSocket) else None
                if http_version == "2" and target.tls and alpn != "h2":
                    raise TargetError(
                        f"{target.authority} does not offer HTTP/2 over TLS (ALPN h2): use --http 1.1, or"
                        " a server with HTTP/2 enabled"
                    )
                return 0, ""
            conn.request(method, path or "/", headers=dict(headers))
            response = conn.getresponse()
            try:
                left = _BODY_READ_BYTES
                while left > 0 and not guard.fired:
                    chunk = response.read1(left)
                    if not chunk:
                        break
                    left -= len(chunk)
            except (OSError, http.client.HTTPException):
                if not guard.fired:
                    raise
            return response.status, response.reason
    except ssl.SSLCertVerificationError as exc:
        raise TargetError(_untrusted(target, exc)) from None
    except ssl.SSLError as exc:
        if deadline.passed:
            raise TargetError(_no_answer(method, path, target, f"nothing within --timeout {timeout_s:g}s")) from None
        raise TargetError(
            f"no TLS handshake with {target.authority} ({exc.reason or exc}): check that the target speaks TLS"
            " on this port, or use http://"
        ) from None
    except (OSError, http.client.HTTPException) as exc:
        why = f"no head within --timeout {timeout_s:g}s" if deadline.passed else _why(exc, timeout_s)
        raise TargetError(_no_answer(method, path, target, why)) from None
    finally:
        conn.close()


def _no_answer(method: str, path: str, target: TargetUrl, why: str) -> str:
    return (
        f"{method} {path or '/'} on {target.authority} got no HTTP answer ({why}):"
        " check that the target speaks HTTP on this port (https:// for a TLS port), or raise --timeout"
    )


def _why(exc: Exception, timeout_s: float) -> str:
    if isinstance(exc, TimeoutError):
        return f"nothing within --timeout {timeout_s:g}s"
    if isinstance(exc, http.client.RemoteDisconnected):
        return "it closed the connection"
    if isinstance(exc, http.client.BadStatusLine):
        return "its reply is not an HTTP status line"
    if isinstance(exc, OSError):
        return (exc.strerror or str(exc)).lower()
    return type(exc).__name__


def _untrusted(target: TargetUrl, exc: ssl.SSLCertVerificationError) -> str:
    why = exc.verify_message or exc.reason or "verification failed"
    return (
        f"the TLS certificate of {target.authority} is not trusted ({why}): add --insecure for a self-signed"
        " certificate"
    )


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
