"""The built-in target (crates/target via _engine.start_server) as a context manager.

Owns validating a ServeSpec and the server's lifetime; never prints and never
waits for signals (the CLI does that).
"""

from __future__ import annotations

import ipaddress
import json
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from crest import _engine
from crest.errors import ConfigError, TargetError


@dataclass(frozen=True)
class ServeSpec:
    """Settings of the built-in target; field names follow ServeConfig."""

    docroot: Path
    host: str = "127.0.0.1"
    port: int = 0
    tls: bool = False  # the main listener speaks TLS
    tls_port: int | None = None  # an additional TLS listener (0 = a free port)
    threads: int = 0
    cgi_dir: Path | None = None  # None: the target's default, docroot/cgi-bin
    access_log: Path | None = None
    # SPECweb99's tables and POST log; None: /specweb99/dynamic answers 404.
    specweb99_dir: Path | None = None
    # Serve every request in this long, one at a time in arrival order: a queue of known capacity
    # (1 ÷ this req/s) for trying capacity searches. 0: off.
    service_time_s: float = 0.0
    # Also serve HTTP/3 (QUIC) on the UDP twin of the TLS listener's port (tls_port, else the main port).
    http3: bool = False

    def validate(self) -> None:
        """Check the settings before anything is bound.

        Raises:
            ConfigError: the first problem, as one line naming the fix.
        """
        if not self.docroot.is_dir():
            raise ConfigError(f"docroot {str(self.docroot)!r} is not a directory: give an existing one")
        if self.cgi_dir is not None and not self.cgi_dir.is_dir():
            raise ConfigError(f"CGI directory {str(self.cgi_dir)!r} is not a directory: give an existing one")
        if self.access_log is not None and not self.access_log.parent.is_dir():
            raise ConfigError(f"access log {str(self.access_log)!r}: its directory does not exist; create it first")
        for name, port in (("port", self.port), ("TLS port", self.tls_port)):
            if port is not None and not 0 <= port <= 65535:
                raise ConfigError(f"{name} {port} is out of range: use 1-65535, or 0 for a free port")
        if not 0 <= self.service_time_s <= 10:
            raise ConfigError(
                f"service time {self.service_time_s:g} s is out of range: give 0 (off) to 10 s, e.g. 20ms"
            )
        if self.http3 and not self.tls and self.tls_port is None:
            raise ConfigError("HTTP/3 runs over QUIC, which is always TLS: add --tls or --tls-port")
        if self.threads < 0:
            raise ConfigError(f"threads ({self.threads}) must be >= 0 (0 = one per CPU)")
        try:
            ipaddress.ip_address(_host_ip(self.host))
        except ValueError:
            raise ConfigError(
                f"host {self.host!r} is not an IP address: listen on one, e.g. 127.0.0.1, ::1 or 0.0.0.0"
            ) from None

    @property
    def is_loopback(self) -> bool:
        """Whether the server listens only on this machine."""
        try:
            return ipaddress.ip_address(_host_ip(self.host)).is_loopback
        except ValueError:
            return False

    def _cgi_dir(self) -> Path | None:
        """The CGI directory: as given, else the docroot's cgi-bin, else crest's own programs
        (so the suites' CGI classes run against a bare fileset)."""
        if self.cgi_dir is not None:
            return self.cgi_dir.resolve()
        if (self.docroot / "cgi-bin").is_dir():
            return None
        from crest.dynamic import PROGRAMS_DIR

        return PROGRAMS_DIR if PROGRAMS_DIR.is_dir() else None

    def to_config(self) -> dict[str, Any]:
        """The ServeConfig dict the engine takes."""
        config: dict[str, Any] = {
            "docroot": str(self.docroot.resolve()),
            "host": _host_ip(self.host),
            "port": self.port,
            "tls": self.tls,
            "tls_port": self.tls_port,
            "threads": self.threads,
            "cgi_dir": str(self._cgi_dir()) if self._cgi_dir() else None,
            "access_log": str(self.access_log.resolve()) if self.access_log else None,
        }
        # Only when asked, so an engine built before the option still takes the rest.
        if self.specweb99_dir is not None:
            config["specweb99_dir"] = str(self.specweb99_dir.resolve())
        if self.service_time_s > 0:
            config["service_time_us"] = round(self.service_time_s * 1e6)
        if self.http3:
            config["http3"] = True
        return config


def _host_ip(host: str) -> str:
    """The IP literal to bind: "localhost" means 127.0.0.1, "[::1]" means ::1."""
    return "127.0.0.1" if host == "localhost" else host.strip("[]")


class BuiltinServer:
    """The built-in target: `with BuiltinServer(spec) as server: server.url`."""

    def __init__(self, spec: ServeSpec) -> None:
        spec.validate()
        self.spec = spec
        self._server: _engine.Server | None = None

    def start(self) -> list[str]:
        """Bind and start serving; return the URLs (the first is the main one).

        Raises:
            ConfigError: the engine rejected the settings.
            TargetError: the server could not start (e.g. the port is taken).
        """
        if self._server is not None:
            return self.urls
        try:
            self._server = _engine.start_server(json.dumps(self.spec.to_config()))
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        except OSError as exc:
            raise TargetError(f"cannot start the built-in target: {exc}") from None
        return self.urls

    @property
    def urls(self) -> list[str]:
        """The base URLs the server answers on, e.g. ["http://127.0.0.1:41234/"]."""
        if self._server is None:
            raise TargetError("the built-in target is not running: call start() first")
        return list(self._server.urls)

    @property
    def url(self) -> str:
        """The main base URL (https when the main listener speaks TLS)."""
        return self.urls[0]

    def stop(self) -> None:
        """Stop serving; safe to call twice."""
        server, self._server = self._server, None
        if server is not None:
            server.stop()

    def __enter__(self) -> BuiltinServer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
