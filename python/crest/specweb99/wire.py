"""The SPECweb99 harness's few requests outside the load (Reset, Fetch, one of each operation), over
http.client: one connection per request, each ended by one deadline (crest.deadlines), so a target that
trickles cannot hold the harness. Owns only sending and receiving; what a response means is
crest.specweb99.checks'. A target that does not answer raises TargetError.
"""

from __future__ import annotations

import http.client
import ssl
from dataclasses import dataclass
from urllib.parse import urlsplit

from crest.deadlines import Deadline
from crest.errors import TargetError
from crest.load import vantage

TIMEOUT_S = 30.0  # a Reset regenerates two tables; a Fetch may return a long log


@dataclass(frozen=True)
class Reply:
    """A whole response: status, the Set-Cookie header (if any) and the body."""

    status: int
    set_cookie: str | None
    body: bytes


def request(url: str, *, cookie: str | None = None, body: str | None = None, insecure: bool = True) -> Reply:
    """GET `url` (POST `body` when given) from where the clients stand (crest.load.vantage: here, or a
    cluster's load node) and read the whole response.

    Raises:
        TargetError: the target refused, reset or timed out (one line naming the URL).
    """
    return vantage.call(send, url, cookie=cookie, body=body, insecure=insecure)


def send(url: str, *, cookie: str | None = None, body: str | None = None, insecure: bool = True) -> Reply:
    """`request` from this process."""
    parts = urlsplit(url)
    host = parts.hostname or "127.0.0.1"
    port = parts.port or (443 if parts.scheme == "https" else 80)
    conn: http.client.HTTPConnection
    if parts.scheme == "https":
        context = ssl.create_default_context()
        if insecure:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        conn = http.client.HTTPSConnection(host, port, timeout=TIMEOUT_S, context=context)
    else:
        conn = http.client.HTTPConnection(host, port, timeout=TIMEOUT_S)
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    headers = {"Connection": "close"}
    if cookie is not None:
        headers["Cookie"] = cookie
    if body is not None:
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    deadline = Deadline.after(TIMEOUT_S)  # the whole exchange, however the target trickles it
    try:
        with deadline.guard(lambda: conn.sock) as guard:
            try:
                conn.request("POST" if body is not None else "GET", target, body=body, headers=headers)
                response = conn.getresponse()
                return Reply(response.status, response.getheader("Set-Cookie"), response.read())
            except (OSError, http.client.HTTPException) as exc:
                if guard.fired:
                    raise TargetError(f"{url}: no whole answer within {TIMEOUT_S:g}s") from None
                raise TargetError(f"{url}: {exc or type(exc).__name__}") from None
    finally:
        conn.close()
