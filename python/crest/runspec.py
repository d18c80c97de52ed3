"""RunSpec: the validated settings of one engine run and their RunConfig JSON form.

Owns the rules that span several settings (threads vs connections, open loop vs
think time, pipelining vs HTTP version); it does no I/O and never prints.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import Any

from crest.errors import ConfigError
from crest.preflight import TargetUrl, parse_url

# RFC 9110 token characters: what a method or a header name may contain.
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
# A range of more source addresses than this is almost certainly a typo.
MAX_SOURCE_ADDRS = 4096
HTTP_VERSIONS = ("1.0", "1.1")
# The engine allocates one read buffer per worker thread, up front (plan.rs MAX_READ_BUFFER_BYTES).
MAX_READ_BUFFER_BYTES = 16 << 20


@dataclass(frozen=True)
class RunSpec:
    """What one engine run does; field names and units follow RunConfig."""

    url: str
    method: str = "GET"
    headers: tuple[tuple[str, str], ...] = ()
    body: str | None = None
    http_version: str = "1.1"
    keepalive: bool = True
    pipeline: int = 1
    connections: int = 10
    threads: int = 1
    duration_s: float | None = 10.0
    max_requests: int | None = None
    rate_rps: float | None = None
    think_time_s: float = 0.0
    timeout_s: float = 10.0
    insecure: bool = False
    tls_resumption: bool = True
    source_addrs: tuple[str, ...] = field(default=())
    # Most bytes one read takes from a socket (WebBench's receive buffer); None: the engine's 64 KiB.
    read_buffer_bytes: int | None = None
    # The socket's SO_RCVBUF; None leaves it to the kernel (which auto-tunes it).
    socket_rcvbuf_bytes: int | None = None
    # A weighted request table (suites); empty means every request goes to `url`.
    requests: tuple[dict[str, Any], ...] = ()
    classes: tuple[str, ...] = ()
    connections_per_client: int = 1
    window_s: tuple[float, float] | None = None
    client_start_delay_s: float = 0.0
    drain_s: float = 0.0  # after the end, let in-flight exchanges finish for up to this long
    seed: int = 0
    selection: str = "weighted"

    def validate(self) -> TargetUrl:
        """Check every setting and their combinations; return the parsed URL.

        Raises:
            ConfigError: the first problem found, as one line naming the fix.
        """
        target = parse_url(self.url)
        if not _TOKEN.fullmatch(self.method):
            raise ConfigError(f"invalid method {self.method!r}: expected a token such as GET or POST")
        for name, value in self.headers:
            _check_header(name, value)
        if self.http_version not in HTTP_VERSIONS:
            raise ConfigError(f"invalid HTTP version {self.http_version!r}: expected 1.0 or 1.1")
        self._check_counts()
        self._check_load_model()
        if self.pipeline > 1 and (self.http_version != "1.1" or not self.keepalive):
            raise ConfigError(
                f"pipelining (depth {self.pipeline}) needs HTTP/1.1 with keep-alive:"
                " drop --pipeline or use --http 1.1 --keepalive"
            )
        for addr in self.source_addrs:
            try:
                ipaddress.ip_address(addr)
            except ValueError:
                raise ConfigError(f"invalid source address {addr!r}: e.g. 127.0.0.2") from None
        return target

    def _check_counts(self) -> None:
        if self.connections < 1:
            raise ConfigError(f"connections ({self.connections}) must be at least 1")
        if self.threads < 1:
            raise ConfigError(f"threads ({self.threads}) must be at least 1")
        if self.connections < self.threads:
            raise ConfigError(
                f"connections ({self.connections}) must be >= threads ({self.threads}):"
                " each thread needs a connection; raise -c or lower -t"
            )
        if self.pipeline < 1:
            raise ConfigError(f"pipeline depth ({self.pipeline}) must be at least 1")
        if self.read_buffer_bytes is not None and not 1 <= self.read_buffer_bytes <= MAX_READ_BUFFER_BYTES:
            raise ConfigError(
                f"read buffer ({self.read_buffer_bytes} B) must be 1 B to {MAX_READ_BUFFER_BYTES} B (16 MiB)"
            )
        if self.socket_rcvbuf_bytes is not None and self.socket_rcvbuf_bytes < 1:
            raise ConfigError(
                f"socket receive buffer ({self.socket_rcvbuf_bytes} B) must be at least 1 byte;"
                " leave it out for the kernel's default"
            )

    def _check_load_model(self) -> None:
        if self.duration_s is None and self.max_requests is None:
            raise ConfigError("no stop condition: give a duration (-d 10s) or a request count (-n 1000)")
        if self.duration_s is not None and self.duration_s <= 0:
            raise ConfigError(f"duration ({self.duration_s}s) must be greater than 0, e.g. 10s")
        if self.max_requests is not None and self.max_requests < 1:
            raise ConfigError(f"request count ({self.max_requests}) must be at least 1")
        if self.timeout_s <= 0:
            raise ConfigError(f"timeout ({self.timeout_s}s) must be greater than 0, e.g. 10s")
        if self.think_time_s < 0:
            raise ConfigError(f"think time ({self.think_time_s}s) must not be negative")
        if self.rate_rps is not None:
            if self.rate_rps <= 0:
                raise ConfigError(f"rate ({self.rate_rps:g} req/s) must be greater than 0")
            if self.think_time_s > 0:
                raise ConfigError(
                    "--rate and --think-time conflict: think time is a closed-loop setting"
                    " and --rate is open loop; drop one of them"
                )

    def to_config(self) -> dict[str, Any]:
        """The RunConfig dict the engine takes (engine defaults fill the keys left out)."""
        config: dict[str, Any] = {
            "url": self.url,
            "method": self.method,
            "headers": [[name, value] for name, value in self.headers],
            "body": self.body,
            "http_version": self.http_version,
            "keepalive": self.keepalive,
            "pipeline": self.pipeline,
            "connections": self.connections,
            "threads": self.threads,
            "duration_s": self.duration_s,
            "max_requests": self.max_requests,
            "rate_rps": self.rate_rps,
            "think_time_s": self.think_time_s,
            "timeout_s": self.timeout_s,
            "insecure": self.insecure,
            "tls_resumption": self.tls_resumption,
            "source_addrs": list(self.source_addrs),
            "socket_rcvbuf_bytes": self.socket_rcvbuf_bytes,
            "requests": list(self.requests),
            "classes": list(self.classes),
            "connections_per_client": self.connections_per_client,
            "window_s": list(self.window_s) if self.window_s else None,
            "client_start_delay_s": self.client_start_delay_s,
            "drain_s": self.drain_s,
            "seed": self.seed,
            "selection": self.selection,
        }
        if self.read_buffer_bytes is not None:
            config["read_buffer_bytes"] = self.read_buffer_bytes
        return config


def _check_header(name: str, value: str) -> None:
    if not _TOKEN.fullmatch(name):
        raise ConfigError(f"invalid header name {name!r}: expected 'Name: value', e.g. 'Accept: */*'")
    if any(c in value for c in "\r\n\0"):
        raise ConfigError(f"invalid value for header {name!r}: it must not contain CR, LF or NUL")


def parse_header(text: str) -> tuple[str, str]:
    """Split "Name: value" into its parts, validated.

    Raises:
        ConfigError: no colon, or a name or value HTTP does not allow.
    """
    name, sep, value = text.partition(":")
    if not sep or not name:
        raise ConfigError(f"invalid header {text!r}: expected 'Name: value', e.g. 'Accept: */*'")
    _check_header(name, value.strip())
    return name, value.strip()


def parse_source_addrs(text: str, *, allow_non_loopback: bool = False) -> tuple[str, ...]:
    """Parse "127.0.0.2-127.0.0.20" and/or "127.0.0.2,127.0.0.3" into a tuple of addresses.

    Raises:
        ConfigError: bad syntax, an empty or huge range, or a non-loopback address when not allowed.
    """
    example = "e.g. 127.0.0.2-127.0.0.20 or 127.0.0.2,127.0.0.3"
    addrs: list[str] = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        first, _, last = item.partition("-")
        try:
            lo = ipaddress.ip_address(first.strip())
            hi = ipaddress.ip_address(last.strip()) if last else lo
        except ValueError:
            raise ConfigError(f"invalid source address {item!r}: {example}") from None
        if lo.version != hi.version or int(hi) < int(lo):
            raise ConfigError(f"invalid source address range {item!r}: {example}")
        if int(hi) - int(lo) + 1 + len(addrs) > MAX_SOURCE_ADDRS:
            raise ConfigError(f"too many source addresses in {text!r}: at most {MAX_SOURCE_ADDRS}")
        addrs.extend(str(type(lo)(n)) for n in range(int(lo), int(hi) + 1))
    if not addrs:
        raise ConfigError(f"invalid source addresses {text!r}: {example}")
    if not allow_non_loopback:
        for addr in addrs:
            if not ipaddress.ip_address(addr).is_loopback:
                raise ConfigError(
                    f"source address {addr} is not a loopback address: add --allow-non-loopback-sources if you mean it"
                )
    return tuple(addrs)
