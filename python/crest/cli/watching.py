"""--ui, --ui-address, --metrics and --jsonl: watching a command as it runs, declared once for crest run,
bench, capacity, specweb99 and doe.

Owns the options, their checks (before anything is sent), starting and stopping what serves them and the
lines that say where they are; the frames come from crest.observe, the pages from crest.web, the
metrics endpoint from crest.observe.metrics.
"""

from __future__ import annotations

import ipaddress
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Protocol, TextIO

import typer

from crest.errors import ConfigError

PANEL = "Watching (live page, metrics, JSON Lines)"

Ui = Annotated[
    bool,
    typer.Option(
        "--ui",
        help="Serve a live page of the run in the browser: 127.0.0.1, a free port and a token in the URL,"
        " printed once on stderr.",
        rich_help_panel=PANEL,
    ),
]
UiAddress = Annotated[
    str | None,
    typer.Option(
        "--ui-address",
        metavar="HOST:PORT",
        help="Serve the live page there (implies --ui); a HOST other than loopback exposes it, token and all,"
        " to that network.",
        rich_help_panel=PANEL,
    ),
]
Metrics = Annotated[
    str | None,
    typer.Option(
        "--metrics",
        metavar="[HOST:]PORT",
        help="Serve OpenMetrics at http://HOST:PORT/metrics while the command runs, for Prometheus"
        " (HOST defaults to 127.0.0.1; PORT 0 picks a free one). See docs/metrics.md.",
        rich_help_panel=PANEL,
    ),
]
Jsonl = Annotated[
    str | None,
    typer.Option(
        "--jsonl",
        metavar="FILE|-",
        help="Write one JSON line a second while a mix runs and one at each run's and mix's start and end"
        " (appended; - is stdout, and the command's own output then goes to stderr). See docs/live.md.",
        rich_help_panel=PANEL,
    ),
]


class _Served(Protocol):
    url: str

    def stop(self) -> None: ...


@dataclass(frozen=True)
class WatchOptions:
    """The watching options as given on the command line."""

    ui: bool = False
    ui_address: str | None = None
    metrics: str | None = None
    jsonl: str | None = None

    def any(self) -> bool:
        return bool(self.ui or self.ui_address or self.metrics or self.jsonl)


def parse_listen(value: str, flag: str, *, default_port: int | None = None) -> tuple[str, int]:
    """`HOST:PORT`, `[v6]:PORT`, `:PORT` or `PORT` as (host, port); a missing host is 127.0.0.1.

    Raises:
        ConfigError: not an address and port, naming the form that works.
    """
    text = value.strip()
    host, _, port_text = text.rpartition(":") if ":" in text else ("", "", text)
    host = host.strip("[]") or "127.0.0.1"
    if not port_text and default_port is not None:
        port_text = str(default_port)
    example = f"{flag} 127.0.0.1:9464 (or :0 for a free port)"
    try:
        port = int(port_text)
    except ValueError:
        raise ConfigError(f"{flag} {value!r} is not HOST:PORT: give e.g. {example}") from None
    if not 0 <= port <= 65535:
        raise ConfigError(f"{flag} {value!r}: port {port} is outside 0-65535: give e.g. {example}")
    if host != "localhost":
        try:
            ipaddress.ip_address(host)
        except ValueError:
            raise ConfigError(
                f"{flag} {value!r}: {host!r} is not an IP address: give the address to listen on, e.g. {example}"
            ) from None
    return host, port


def check(options: WatchOptions) -> None:
    """Every check of the options that needs nothing started (the runner's checks come after)."""
    if options.ui_address is not None:
        parse_listen(options.ui_address, "--ui-address")
    if options.metrics is not None:
        parse_listen(options.metrics, "--metrics")
    if options.jsonl not in (None, "-"):
        path = Path(str(options.jsonl))
        if path.is_dir():
            raise ConfigError(f"--jsonl {options.jsonl}: is a directory; name a file (or - for stdout)")
        if not path.parent.is_dir():
            raise ConfigError(f"--jsonl {options.jsonl}: its directory does not exist; create it or name another")


class Watching:
    """What watches a command: made before its checks, started once they pass (`start`, so a bad suite
    prints no URL), stopped at the end whatever ends it (`with`)."""

    def __init__(self, options: WatchOptions, db: Path | None = None) -> None:
        check(options)
        self.options = options
        self.db = db
        self.feed: Any = None  # crest.observe.frames.Feed, imported only when something watches
        self._sinks: list[Any] = []
        self._served: list[_Served] = []
        self._stdout = sys.stdout
        if options.any():
            from crest.observe.frames import Feed

            self.feed = Feed([])

    def __enter__(self) -> Watching:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def on_event(self, also: Callable[[Any], None]) -> Callable[[Any], None]:
        """An event callback that tells `also` (the terminal's progress), then the feed."""
        feed = self.feed
        if feed is None:
            return also

        def both(event: Any) -> None:
            also(event)
            feed.on_event(event)

        return both

    def start(self) -> None:
        """Opens the JSON Lines file and starts the servers; prints where each is, once. Idempotent.

        With `--jsonl -` stdout carries the frames alone: the command's own output goes to stderr meanwhile.

        Raises:
            ConfigError: the file cannot be written or an address cannot be bound (nothing was sent).
        """
        options, feed = self.options, self.feed
        if feed is None or self._sinks:
            return
        lines = []
        if options.jsonl is not None:
            self._sinks.append(_jsonl(options.jsonl, self._stdout))
        if options.ui or options.ui_address:
            from crest.observe.hub import Hub
            from crest.web.serve import serve_ui

            hub = Hub()
            host, port = parse_listen(options.ui_address or "127.0.0.1:0", "--ui-address")
            ui = serve_ui(hub, self.db, host, port)
            self._served.append(ui)
            self._sinks.append(hub)
            lines.append(f"live: {ui.url}")
        if options.metrics is not None:
            from crest.observe.metrics import MetricsSink, serve_metrics

            metrics = MetricsSink()
            host, port = parse_listen(options.metrics, "--metrics")
            endpoint = serve_metrics(metrics, host, port)
            self._served.append(endpoint)
            self._sinks.append(metrics)
            lines.append(f"metrics: {endpoint.url}")
        for line in lines:
            print(line, file=sys.stderr, flush=True)
        if options.jsonl == "-":
            sys.stdout = sys.stderr
        feed.sinks.extend(self._sinks)

    def stop(self) -> None:
        """Closes every sink (the live page then says the run ended) and stops the servers."""
        sys.stdout = self._stdout
        if self.feed is not None:
            for failure in self.feed.failures:
                print(f"crest: warning: a watcher stopped: {failure}", file=sys.stderr)
            self.feed.failures.clear()
        sinks, served = self._sinks, self._served
        self._sinks, self._served = [], []
        for sink in sinks:
            sink.close()
        for one in served:
            one.stop()


def _jsonl(where: str, stdout: TextIO) -> Any:
    from crest.observe.jsonl import JsonlSink

    if where == "-":
        return JsonlSink(stdout, owned=False)
    try:
        out = Path(where).open("a", encoding="utf-8")  # the sink owns and closes it
    except OSError as exc:
        raise ConfigError(f"--jsonl {where}: {exc.strerror}; name a file you can write (or - for stdout)") from None
    return JsonlSink(out, owned=True)


def options(ui: bool, ui_address: str | None, metrics: str | None, jsonl: str | None) -> WatchOptions:
    return WatchOptions(ui=ui, ui_address=ui_address, metrics=metrics, jsonl=jsonl)
