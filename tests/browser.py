"""A small driver for Debian's headless Chromium over its DevTools protocol (a WebSocket, through the
`websockets` package's sync client): open a page, evaluate script in it, wait for a condition, take a
screenshot, and collect what the page logged (console errors, uncaught exceptions, CSP refusals).

No browser download and no automation framework: the installed /usr/bin/chromium, started hermetic (its
own profile, nothing resolves but loopback addresses, nothing syncs).
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import re
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from websockets.sync.client import ClientConnection, connect

CHROMIUM = Path("/usr/bin/chromium")
START_TIMEOUT_S = 30.0
COMMAND_TIMEOUT_S = 30.0
_LISTENING = re.compile(r"DevTools listening on (ws://\S+)")


class BrowserError(RuntimeError):
    pass


class Browser:
    """One headless Chromium with one page; use as a context manager."""

    def __init__(self, profile: Path, width: int = 1366, height: int = 900) -> None:
        profile.mkdir(parents=True, exist_ok=True)
        self.size = (width, height)
        self._stack = contextlib.ExitStack()
        self.ws: ClientConnection | None = None
        self.proc = subprocess.Popen(
            [
                str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-default-apps", "--disable-extensions", "--hide-scrollbars", "--mute-audio",
                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", f"--user-data-dir={profile}",
                "--remote-debugging-port=0", "--remote-allow-origins=*", f"--window-size={width},{height}",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            # Entered as a context manager (websockets 17 warns about a bare connect()), left in close().
            self.ws = self._stack.enter_context(connect(self._endpoint(), max_size=None, open_timeout=START_TIMEOUT_S))
            self._ids = itertools.count(1)
            self.events: list[dict[str, Any]] = []
            target = self.call("Target.createTarget", url="about:blank")["targetId"]
            self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
            for domain in ("Page", "Runtime", "Log"):
                self.send(f"{domain}.enable")
            self.send(
                "Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False
            )
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _endpoint(self) -> str:
        assert self.proc.stderr is not None
        deadline = time.monotonic() + START_TIMEOUT_S
        seen = []
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            seen.append(line)
            found = _LISTENING.search(line)
            if found:
                # Keep reading what it logs, so that a full pipe never stalls it.
                threading.Thread(target=self.proc.stderr.read, name="chromium-stderr", daemon=True).start()
                return found.group(1)
        raise BrowserError("chromium printed no DevTools endpoint: " + "".join(seen)[-2000:])

    # -- the protocol

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        """One command; its result (events that arrive meanwhile are kept in `events`)."""
        number = next(self._ids)
        message: dict[str, Any] = {"id": number, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        if self.ws is None:
            raise BrowserError(f"{method}: the browser is closed")
        self.ws.send(json.dumps(message))
        deadline = time.monotonic() + COMMAND_TIMEOUT_S
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError(f"{method}: no answer in {COMMAND_TIMEOUT_S:g} s")
            reply = json.loads(self.ws.recv(timeout=left))
            if reply.get("id") == number:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return dict(reply.get("result", {}))
            if "method" in reply:
                self.events.append(reply)

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        """A command to the page."""
        return self.call(method, self.session, **params)

    # -- what a test does

    def open(self, url: str) -> None:
        """Navigate and wait until the document has loaded."""
        self.send("Page.navigate", url=url)
        self.wait_for("document.readyState === 'complete' && location.href !== 'about:blank'")
        if not self.evaluate("location.href").startswith(url.split("?")[0]):
            raise BrowserError(f"{url} did not open: {self.evaluate('document.body.innerText.slice(0, 300)')!r}")

    def reload(self) -> None:
        self.send("Runtime.evaluate", expression="window.__crestOld = true")
        self.send("Page.reload", ignoreCache=True)
        self.wait_for("!window.__crestOld && document.readyState === 'complete'")

    def evaluate(self, expression: str) -> Any:
        """The value of a script expression in the page (awaited when it is a promise)."""
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def text(self, element_id: str) -> str:
        value = self.evaluate(f"(document.getElementById({json.dumps(element_id)}) || {{}}).textContent ?? null")
        if value is None:
            raise BrowserError(f"no element #{element_id}")
        return str(value)

    def wait_for(self, expression: str, timeout_s: float = 20.0) -> Any:
        """Poll until `expression` is truthy in the page; its value."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                value = self.evaluate(expression)
            except BrowserError:
                value = None  # the page is between documents
            if value:
                return value
            if time.monotonic() > deadline:
                raise BrowserError(f"not true after {timeout_s:g} s: {expression}")
            time.sleep(0.1)

    def screenshot(self, path: Path, full_page: bool = True) -> Path:
        """A PNG of the page (its whole height when `full_page`)."""
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            height = int(self.evaluate("Math.ceil(document.documentElement.scrollHeight)"))
            params.update(captureBeyondViewport=True,
                          clip={"x": 0, "y": 0, "width": self.size[0], "height": max(height, 1), "scale": 1})  # fmt: skip
        path.write_bytes(base64.b64decode(self.send("Page.captureScreenshot", **params)["data"]))
        return path

    def problems(self) -> list[str]:
        """What the page logged as an error: console errors, uncaught exceptions, refused loads (CSP)."""
        found = []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                found.append(json.dumps(params.get("exceptionDetails", {}))[:500])
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                found.append(" ".join(str(a.get("value", a.get("description"))) for a in params.get("args", [])))
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                found.append(str(params["entry"].get("text")))
        return found

    def close(self) -> None:
        if self.ws is not None:
            try:
                self.call("Browser.close")
            except Exception:
                pass  # closing anyway
            self.ws = None
        self._stack.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stderr is not None:
            self.proc.stderr.close()
