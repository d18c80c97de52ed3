"""RunSpec: the settings of one engine run, their RunConfig JSON form, and the wording of the engine's verdict on them.

The engine (crates/engine plan.rs) is the one gate for input rules; this module
asks it (`_engine.validate`, no DNS, no socket) and rewords its messages to name
the `crest bench` flag or the `crest run` setting each field came from. Only what
the engine cannot know is checked here: how text is parsed (headers, address
ranges, the URL form the preflight needs). engine_json is the one place a
password (crest.secrets.Secret) is revealed. It does no I/O and never prints.
"""

from __future__ import annotations

import ipaddress
import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from crest import _engine
from crest.errors import ConfigError
from crest.load.preflight import TargetUrl, parse_file_url, parse_url
from crest.replay.summary import IN_A_SUITE
from crest.secrets import Secret, reveal_for_engine

# A range of more source addresses than this is almost certainly a typo.
MAX_SOURCE_ADDRS = 4096
HTTP_VERSIONS = ("1.0", "1.1", "2", "3")

# Where a RunSpec's values came from: `crest bench` flags or a suite run (`crest run`, `crest doe`).
Origin = Literal["bench", "suite"]

# The one table from an engine RunConfig key to what its user wrote: (crest bench flag, crest run setting).
# A key missing here (or an empty entry) is named as the engine names it.
FIELD_LABELS: dict[str, tuple[str, str]] = {
    "url": ("URL", "--target"),
    "requests": ("URL", "the workload's request table"),
    "method": ("-m/--method", ""),
    "headers": ("-H/--header", ""),
    "body": ("--body", ""),
    "http_version": ("--http", "workload.http_version"),
    "keepalive": ("--keepalive", "workload.keepalive"),
    "pipeline": ("--pipeline", ""),
    "streams": ("--streams", "workload.streams"),
    "h2_stream_window_bytes": ("--h2-window", ""),
    "h2_connection_window_bytes": ("--h2-connection-window", ""),
    "connections": ("-c/--connections", "the ladder's connections (clients x threads_per_client)"),
    "threads": ("-t/--threads", "engine threads"),
    "duration_s": ("-d/--duration", "timing.length_s"),
    "max_requests": ("-n/--requests", ""),
    "rate_rps": ("--rate", ""),
    "think_time_s": ("--think-time", "timing.think_time_s"),
    "timeout_s": ("--timeout", "--timeout"),
    "insecure": ("--insecure", "--insecure"),
    "tls_resumption": ("--tls-resumption", ""),
    "nap": ("--no-nap", ""),
    "source_addrs": ("--source-addrs", ""),
    "read_buffer_bytes": ("--read-buffer", "workload.read_buffer_bytes"),
    "socket_rcvbuf_bytes": ("--socket-rcvbuf", ""),
    "connections_per_client": ("", "ladder.threads_per_client"),
    "window_s": ("", "timing.ramp_up_s and timing.ramp_down_s"),
    "client_start_delay_s": ("", "timing.delay_s"),
    "drain_s": ("", "--timeout"),
    "seed": ("", "--seed"),
    "selection": ("", "workload.selection"),
    "line_speed_bps": ("", "workload.specweb99.line_speed_bps"),
    "keepalive_requests": ("", "workload.specweb99.keepalive_requests"),
    "keepalive_request_share": ("", "workload.specweb99.keepalive_request_share"),
    "specweb99": ("", "workload.specweb99"),
    "loadfile": ("", "workload.loadfile.path (or --loadfile)"),
    "replay": ("", "workload.replay"),
    "script": ("", "workload.script"),
    "pages": ("", "workload.har"),
}
_PLACEHOLDER = re.compile(r"\{([a-z0-9_]+)\}")


def field_label(key: str, origin: Origin) -> str:
    """What the user of `origin` wrote for engine key `key` (a flag or a suite setting); the log reader's own
    options (`{format}`, `{max_bad_lines}`, inside workload.replay) as a suite gives them."""
    labels = FIELD_LABELS.get(key, ("", ""))
    return (labels[0] if origin == "bench" else labels[1]) or IN_A_SUITE.get(key, key)


def engine_message(template: str, origin: Origin) -> str:
    """An engine message (`{key}` placeholders) with every key named as `origin`'s user wrote it."""
    return _PLACEHOLDER.sub(lambda m: field_label(m.group(1), origin), template)


def engine_config_error(exc: _engine.ConfigError, origin: Origin) -> ConfigError:
    """The crest ConfigError for an engine rejection, worded for `origin`."""
    return ConfigError(engine_message(exc.template, origin))


def engine_json(config: dict[str, Any]) -> str:
    """A RunConfig as the JSON text the engine takes: the one place a Secret in it (an SMB password)
    is revealed. The text goes straight to the engine and is never kept, logged or stored."""
    return json.dumps(config, default=reveal_for_engine)


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
    # HTTP/2 and HTTP/3: concurrent streams per connection (h2load's -m), and the receive windows (HTTP/3:
    # QUIC's stream and connection windows); None: the engine's (2^30 - 1 bytes, as h2load's).
    streams: int = 1
    h2_stream_window_bytes: int | None = None
    h2_connection_window_bytes: int | None = None
    connections: int = 10
    threads: int = 1
    duration_s: float | None = 10.0
    max_requests: int | None = None
    rate_rps: float | None = None
    think_time_s: float = 0.0
    timeout_s: float = 10.0
    insecure: bool = False
    tls_resumption: bool = True
    # Under load, nap between looks at the sockets instead of blocking on them (the engine's `nap`).
    nap: bool = True
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
    # Pace each connection to this many bits/s of received bytes (SPECweb99's user line); None: unpaced.
    line_speed_bps: float | None = None
    # Keep-alive connections carry a drawn number of requests, uniform in [min, max], and this share of
    # requests travels on them (the rest one per connection); None: every connection kept as long as it lasts.
    keepalive_requests: tuple[int, int] | None = None
    keepalive_request_share: float = 1.0
    # SPECweb99's request generator and validator (RunConfig.specweb99): base_url, dynamic_url, cgi_url,
    # dirs, users, first_connection, request_mix, class_mix. Replaces the request table.
    specweb99: dict[str, Any] | None = None
    # A file-operation run (RunConfig.loadfile): path, password (smb:// only: a crest.secrets.Secret,
    # revealed only by engine_json, never stored), cleanup. `url` is then file:///DIR or
    # smb://USER@HOST:PORT/SHARE.
    loadfile: dict[str, Any] | None = field(default=None, repr=False)
    # An access log sent by the engine itself (RunConfig.replay): log, options, mode, speed, part,
    # dynamic_url, expect_logged_status. `url` gives the scheme, host and port the logged paths go to.
    replay: dict[str, Any] | None = None
    # Scripted sessions written by the engine itself (RunConfig.script): steps, variables, users (the CSV's
    # rows), first_user. `url` gives the scheme, host and port every step's path goes to.
    script: dict[str, Any] | None = None
    # A HAR's page loads (RunConfig.pages): pages (name, class, entries: indices into `requests`, the
    # document first) and think_s; each client (connections_per_client connections) loads them in turn.
    pages: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        # A password given as text becomes a Secret here, so no RunSpec holds one that could print.
        password = (self.loadfile or {}).get("password")
        if isinstance(password, str):
            object.__setattr__(self, "loadfile", {**(self.loadfile or {}), "password": Secret(password)})

    def validate(self, origin: Origin = "suite") -> TargetUrl:
        """Check every setting with the engine's rules (no DNS, no socket); return the parsed URL.

        Args:
            origin: whose words the messages use: `crest bench` flags or `crest run` settings.

        Raises:
            ConfigError: the first problem found, as one line naming the flag or setting and the fix.
        """
        target = parse_file_url(self.url) if self.loadfile is not None else parse_url(self.url)
        if self.http_version not in HTTP_VERSIONS:
            # The engine knows only its variants; a JSON error would name neither the flag nor the choices.
            label = field_label("http_version", origin)
            raise ConfigError(f"invalid {label} {self.http_version!r}: expected 1.0, 1.1, 2 or 3")
        try:
            _engine.validate(engine_json(self.to_config()))
        except _engine.ConfigError as exc:
            raise engine_config_error(exc, origin) from None
        return target

    def to_config(self) -> dict[str, Any]:
        """The RunConfig dict the engine takes (engine defaults fill the keys left out). A password stays a
        Secret in it: engine_json reveals it for the engine, crest.secrets.without_secrets leaves it out."""
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
        # Only when set, so a plain run's config reads as it always has.
        if self.line_speed_bps is not None:
            config["line_speed_bps"] = self.line_speed_bps
        if self.streams != 1:
            config["streams"] = self.streams
        if self.h2_stream_window_bytes is not None:
            config["h2_stream_window_bytes"] = self.h2_stream_window_bytes
        if self.h2_connection_window_bytes is not None:
            config["h2_connection_window_bytes"] = self.h2_connection_window_bytes
        if not self.nap:
            config["nap"] = False
        if self.keepalive_requests is not None:
            config["keepalive_requests"] = list(self.keepalive_requests)
            config["keepalive_request_share"] = self.keepalive_request_share
        if self.specweb99 is not None:
            config["specweb99"] = dict(self.specweb99)
        if self.loadfile is not None:
            config["loadfile"] = dict(self.loadfile)
        if self.replay is not None:
            config["replay"] = dict(self.replay)
        if self.script is not None:
            config["script"] = dict(self.script)
        if self.pages is not None:
            config["pages"] = dict(self.pages)
        return config


def parse_header(text: str) -> tuple[str, str]:
    """Split "Name: value" into its parts, validated.

    The engine checks the name and value (RunSpec.validate); this only splits.

    Raises:
        ConfigError: no colon, or nothing before it.
    """
    name, sep, value = text.partition(":")
    if not sep or not name:
        raise ConfigError(f"invalid header {text!r}: expected 'Name: value', e.g. 'Accept: */*'")
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
