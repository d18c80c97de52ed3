"""serve_ui: the web app on a socket of its own, in a daemon thread, until `stop()`.

Binds the socket itself before uvicorn starts, so that an address that cannot be bound is a one-line
ConfigError at once (not a log line from a thread), and so that port 0's real port is known for the URL.
Listens only on the host given: 127.0.0.1 unless the user names another.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import secrets
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import uvicorn

from crest.errors import ConfigError
from crest.listen import listen
from crest.observe.hub import Hub
from crest.web.app import build_app
from crest.web.state import State

DEFAULT_HOST = "127.0.0.1"
# How long serve_ui waits for uvicorn to start serving the bound socket, and stop() for it to end.
_START_TIMEOUT_S = 10.0
_STOP_TIMEOUT_S = 5.0
# Open event streams end within a poll once stopping is set; this bounds uvicorn's wait for them anyway.
_GRACEFUL_S = 1
# How long stop() waits for open pages to get a closed hub's last frames and its end (a poll or two).
_DRAIN_S = 2.0


@dataclass
class Served:
    """A running web app: `url` opens it (token included); `stop()` ends it (safe to call twice)."""

    url: str
    host: str
    port: int
    _server: uvicorn.Server
    _thread: threading.Thread
    _state: State
    _stopped: bool = field(default=False)

    @property
    def is_loopback(self) -> bool:
        """Whether only this machine can reach it."""
        try:
            return ipaddress.ip_address(self.host.split("%")[0]).is_loopback
        except ValueError:
            return False

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        hub = self._state.hub
        if hub is not None and hub.closed:
            # The command is done: let each open page get the frames left and the end before the socket goes.
            deadline = time.monotonic() + _DRAIN_S
            while self._state.streams and time.monotonic() < deadline:
                time.sleep(0.02)
        self._state.stopping.set()
        self._server.should_exit = True
        self._thread.join(_STOP_TIMEOUT_S)


def serve_ui(
    hub: Hub | None, db: Path | None, host: str = DEFAULT_HOST, port: int = 0, what: str = "--ui-address"
) -> Served:
    """Serve the live page of `hub` (when given) and the results browser of the store at `db` (when given)
    on host:port (port 0: a free one); returns once the socket listens.

    Raises:
        ConfigError: the address cannot be bound (in use, not this machine's, not permitted).
    """
    sock = listen(host, port, what, blocking=False)
    token = secrets.token_urlsafe(24)
    state = State(hub=hub, db=db, token=token)
    config = uvicorn.Config(
        build_app(state),
        # Nothing on the terminal: only the CLI prints (a stray client's bad request is no news to a run),
        # and no logging setup of the process is touched (log_config=None).
        log_config=None,
        log_level=logging.CRITICAL,
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=_GRACEFUL_S,
        server_header=False,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=_run, args=(server, sock), name="crest-ui", daemon=True)
    thread.start()
    deadline = time.monotonic() + _START_TIMEOUT_S
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    if not server.started:
        server.should_exit = True
        sock.close()
        raise ConfigError(f"the web page on {host}:{port} did not start: pass another HOST:PORT (port 0: a free one)")
    bound_host, bound_port = sock.getsockname()[:2]
    # Every address (0.0.0.0, ::) is reached by this machine's name, not by the wildcard itself.
    named = socket.gethostname() if bound_host in ("0.0.0.0", "::") else bound_host
    shown = f"[{named}]" if ":" in named else named
    path = "/live" if hub is not None else "/runs"
    url = f"http://{shown}:{bound_port}{path}?token={token}"
    return Served(url, bound_host, int(bound_port), server, thread, state)


def _run(server: uvicorn.Server, sock: socket.socket) -> None:
    with contextlib.suppress(Exception):  # a failed start shows as never started; serve_ui reports it
        server.run(sockets=[sock])
    sock.close()
