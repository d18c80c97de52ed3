"""The Starlette app: its routes, the token guard in front of every one of them, the static files and the
security headers.

The token: a random string in the URL crest prints, required on every request. The first request brings it
as `?token=`; the answer sets it as an HttpOnly, SameSite=Strict cookie named after the port (two crest pages
on one machine keep their own), so the page's links and its event stream need not repeat it. Anything
without it gets 403, whatever the path.
"""

from __future__ import annotations

import secrets
from functools import cache
from http.cookies import SimpleCookie
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from crest.errors import ConfigError, MachineError
from crest.web import lab, live
from crest.web.pages import page
from crest.web.state import State

# The pages' own policy: their script and styles from this server only, nothing fetched from elsewhere, no
# inline script, no framing. A stored report keeps its own (stricter, per-script hashes) from its <meta>.
PAGE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self';"
    " form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
_STATIC_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
FORBIDDEN = "403 Forbidden: open the URL crest printed; it carries the page's token\n"


def cookie_name(port: int) -> str:
    return f"crest-ui-{port}"


class TokenGuard:
    """ASGI middleware: 403 without the token; with it in the query, the answer also sets the cookie."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        port = int((scope.get("server") or ("", 0))[1] or 0)
        name = cookie_name(port)
        given = request.query_params.get("token")
        if given is not None and self._matches(given):
            await self.app(scope, receive, _with_cookie(send, name, self.token.decode()))
            return
        if self._matches(request.cookies.get(name)):
            await self.app(scope, receive, send)
            return
        await PlainTextResponse(FORBIDDEN, status_code=403, headers=_SECURITY)(scope, receive, send)

    def _matches(self, given: str | None) -> bool:
        return given is not None and secrets.compare_digest(given.encode("utf-8", "replace"), self.token)


_SECURITY = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store"}


def _with_cookie(send: Send, name: str, token: str) -> Send:
    cookie: SimpleCookie = SimpleCookie()
    cookie[name] = token
    cookie[name]["path"] = "/"
    cookie[name]["httponly"] = True
    cookie[name]["samesite"] = "Strict"
    header = cookie.output(header="").strip().encode("latin-1")

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []), (b"set-cookie", header)]}
        await send(message)

    return sending


class Headers:
    """ASGI middleware: the security headers on every answer, and the page policy where none is set."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {k.lower() for k, _ in headers}
                for key, value in (*_SECURITY.items(), ("Content-Security-Policy", PAGE_CSP)):
                    if key.lower().encode() not in present:
                        headers.append((key.lower().encode(), value.encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, sending)


def build_app(state: State) -> ASGIApp:
    """The whole app for one served page set, guarded by `state.token`."""

    async def home(request: Request) -> Response:
        return RedirectResponse("/live" if state.hub is not None else "/runs", status_code=303)

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        text = _static(name)
        if text is None:
            return PlainTextResponse("404 Not Found\n", status_code=404)
        return Response(text, media_type=_STATIC_TYPES[name[name.rindex(".") :]])

    async def icon(request: Request) -> Response:
        return Response(status_code=204)  # no icon; a browser asks for one on every page without a <link>

    routes = [
        Route("/", home),
        Route("/favicon.ico", icon),
        Route("/static/{name}", static),
        *live.routes(state),
        *lab.routes(state),
    ]

    async def failed(request: Request, exc: Exception) -> Response:
        # A store that fails mid-request (locked past the timeout, damaged): its one line, as the CLI says it.
        status = 500 if isinstance(exc, MachineError) else 400
        return page("error.html.j2", status_code=status, db=state.db is not None, hub=state.hub is not None,
                    message=str(exc))  # fmt: skip

    app = Starlette(routes=routes, exception_handlers={ConfigError: failed, MachineError: failed})
    app.state.crest = state
    return Headers(TokenGuard(app, state.token))


@cache
def _static(name: str) -> str | None:
    """A file of static/ (and the HTML report's stylesheet, which every page shares)."""
    if "/" in name or "." not in name or name[name.rindex(".") :] not in _STATIC_TYPES:
        return None
    if name == "report.css":
        return resources.files("crest.report").joinpath("templates", "report.css").read_text(encoding="utf-8")
    found: Any = resources.files("crest.web").joinpath("static", name)
    return str(found.read_text(encoding="utf-8")) if found.is_file() else None
