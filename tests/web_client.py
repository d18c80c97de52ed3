"""A small ASGI client for the web app's unit tests: a request goes straight into the app (no socket, no
thread), and the answer comes back whole, or, for an event stream, until it ends or enough of it came.

Starlette's TestClient needs an HTTP client package that crest does not otherwise depend on; this is the
few lines of ASGI it would run.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Message

SERVER = ("127.0.0.1", 41234)


@dataclass
class Answer:
    status: int
    headers: dict[str, list[str]]
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8")

    def header(self, name: str) -> str | None:
        values = self.headers.get(name.lower())
        return values[-1] if values else None


@dataclass
class Client:
    """Requests to one app, keeping the cookies its answers set (as a browser does)."""

    app: ASGIApp
    cookies: dict[str, str] = field(default_factory=dict)

    def get(self, url: str, headers: dict[str, str] | None = None, *, until: bytes | None = None,
            timeout_s: float = 10.0) -> Answer:  # fmt: skip
        """GET `url` (a path with its query); with `until`, read a streamed body only until it holds that."""
        answer = asyncio.run(asyncio.wait_for(self._get(url, headers or {}, until), timeout_s))
        for value in answer.headers.get("set-cookie", []):
            jar: SimpleCookie = SimpleCookie()
            jar.load(value)
            self.cookies.update({k: m.value for k, m in jar.items()})
        return answer

    async def _get(self, url: str, headers: dict[str, str], until: bytes | None) -> Answer:
        parts = urlsplit(url)
        sent = dict(headers)
        if self.cookies:
            sent["cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        scope: dict[str, Any] = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
            "path": parts.path, "raw_path": parts.path.encode(), "query_string": parts.query.encode(),
            "root_path": "", "headers": [(k.lower().encode(), v.encode()) for k, v in sent.items()],
            "server": SERVER, "client": ("127.0.0.1", 50000),
        }  # fmt: skip
        got: dict[str, Any] = {"status": 0, "headers": {}, "body": b""}
        done = asyncio.Event()
        disconnect = asyncio.Event()
        asked = False

        async def receive() -> Message:
            nonlocal asked
            if not asked:
                asked = True
                return {"type": "http.request", "body": b"", "more_body": False}
            await disconnect.wait()
            return {"type": "http.disconnect"}

        async def send(message: Message) -> None:
            if message["type"] == "http.response.start":
                got["status"] = message["status"]
                for k, v in message.get("headers", []):
                    got["headers"].setdefault(k.decode().lower(), []).append(v.decode("latin-1"))
            elif message["type"] == "http.response.body":
                got["body"] += message.get("body", b"")
                if not message.get("more_body", False) or (until is not None and until in got["body"]):
                    done.set()

        task = asyncio.create_task(self.app(scope, receive, send))
        finished = asyncio.create_task(done.wait())
        await asyncio.wait({task, finished}, return_when=asyncio.FIRST_COMPLETED)
        disconnect.set()
        if not task.done():
            task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        finished.cancel()
        return Answer(got["status"], got["headers"], got["body"])
