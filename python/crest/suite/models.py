"""The suite models (request class, workload, ladder, mix, suite) and every rule a suite must obey; no I/O, no printing.

A Suite is data: it says what load to offer and for how long. Running it, and
generating its fileset, belong to the runner and crest.filesets.
"""

from __future__ import annotations

import functools
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from crest.errors import ConfigError
from crest.suite.errors import Loc, RuleError, show
from crest.suite.har import BROWSER_CONNECTIONS, HarWorkload
from crest.suite.replay import Replay
from crest.suite.script import Script
from crest.suite.specweb99 import Specweb99
from crest.suite.timing import PROFILES, Timing, scale_timing
from crest.units import parse_size

_MODEL_CONFIG = ConfigDict(strict=True, extra="forbid", frozen=True, allow_inf_nan=False)
_NAME = re.compile(r"[a-z0-9][a-z0-9._-]*")

# The fileset names crest.filesets defines; used only if that package cannot be imported.
_FALLBACK_FILESETS = (
    "specweb99",
    "specweb96",
    "webstone",
    "webcat-webstone",
    "webcat-large-filemix",
    "webcat-cgi-html",
    "webbench",
    "sizes",
    "specweb99-lengths",
)
# The most load points a ladder may define: far more than any published test ran (Mindcraft's 16).
MAX_LOAD_POINTS = 10_000
WEBSTONE_CGI_DEFAULT_SIZE = 10240  # WebStone cgi-send's default response size (bytes)

# "url": the target URL itself, path and query as given (`crest capacity URL` builds such a suite).
# "specweb99": SPECweb99's whole request mix (static, dynamic GET, CGI GET, custom-ad GET, POST),
# drawn by the engine itself; the workload's `specweb99` settings say how. "specweb99-get": SPECweb99's
# standard dynamic GET of each fileset file (the file inside the dynamic page's envelope), served by
# the target's own module: in-process in the built-in target, crest's FastCGI responder behind others.
# "loadfile": file operations, not HTTP: each client replays dbench's NetBench-derived loadfile against a
# file target (file:///DIR or smb://USER@HOST:PORT/SHARE); the workload's `loadfile` settings say which.
RequestKind = Literal[
    "static", "cgi", "inproc", "fastcgi", "webstone-cgi", "url", "specweb99", "specweb99-get", "loadfile"
]
# The servers a workload's classes can be sent to (`--target static=URL,dynamic=URL`, `--server
# static=A,dynamic=B`): VeriTest ran TUX for static files with Apache behind it for the dynamic ones.
TARGET_ROLES = ("static", "dynamic", "tls")
TargetRole = Literal["static", "dynamic", "tls"]
# The HTTP versions that multiplex requests as streams on one persistent connection.
STREAM_VERSIONS = ("2", "3")
# Kinds that request the fileset's files (a workload with one needs a fileset; a sweep restricts them).
FILE_KINDS = ("static", "specweb99", "specweb99-get")


def fileset_names() -> tuple[str, ...]:
    """The fileset names crest knows (crest.filesets.NAMES, imported lazily so the suite package stands alone)."""
    try:
        from crest.filesets import NAMES  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return _FALLBACK_FILESETS
    return tuple(NAMES)


@functools.cache
def fileset_sizes(name: str) -> tuple[int, ...] | None:
    """The distinct file sizes of fileset `name`, ascending (crest.filesets imported lazily); None if unknown."""
    try:
        from crest.filesets import build_manifest  # type: ignore[import-not-found, unused-ignore]

        manifest = build_manifest(name)
    except Exception:
        return None
    return tuple(sorted({f.size for f in manifest.files}))


def _check_name(value: str) -> str:
    if not _NAME.fullmatch(value):
        raise ValueError(
            "must start with a lowercase letter or digit and use only lowercase letters,"
            f" digits, '-', '_' and '.' (got {show(value)})"
        )
    return value


class RequestClass(BaseModel):
    """One kind of request and its share of the workload (weights are normalised over the workload)."""

    model_config = _MODEL_CONFIG

    name: str  # unique within the workload, e.g. "static", "cgi", "ssl-static"
    kind: RequestKind
    weight: float = Field(gt=0)
    tls: bool = False
    # webstone-cgi only: response size in bytes (?size=N); filled with 10240 when omitted.
    size_bytes: int | None = Field(default=None, ge=1)
    # Which of the run's targets serves this class; None: "tls" for a TLS class, "static" for static
    # files, "dynamic" for the rest (see `role`). A run with one target sends every class to it.
    target_role: TargetRole | None = None

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return _check_name(value)

    @model_validator(mode="before")
    @classmethod
    def _default_size(cls, data: object) -> object:
        if isinstance(data, dict) and data.get("kind") == "webstone-cgi" and data.get("size_bytes") is None:
            return {**data, "size_bytes": WEBSTONE_CGI_DEFAULT_SIZE}
        return data

    @property
    def role(self) -> str:
        """The target role this class is sent to (its own, or the one its kind and TLS imply)."""
        if self.target_role is not None:
            return self.target_role
        if self.tls:
            return "tls"
        return "static" if self.kind == "static" else "dynamic"

    @model_validator(mode="after")
    def _size_only_for_webstone_cgi(self) -> RequestClass:
        if self.size_bytes is not None and self.kind != "webstone-cgi":
            raise RuleError(
                [
                    (
                        ("size_bytes",),
                        (
                            f"only kind 'webstone-cgi' takes a response size (got {self.size_bytes} with kind {show(self.kind)})"
                        ),
                    )
                ]
            )
        return self


# Where Debian's dbench package installs its NetBench-derived loadfile (crest ships no copy).
DEBIAN_LOADFILE = "/usr/share/dbench/client.txt"
# Which fileio operations look their path up first (the engine's Loadfile.resolve_names); the first is the default.
ResolveNames = Literal["queries", "every-path"]
RESOLVE_NAMES: tuple[ResolveNames, ...] = ("queries", "every-path")


class Loadfile(BaseModel):
    """A file-operation workload (kind "loadfile"): which dbench loadfile each client replays, and NetBench's
    workspace settings."""

    model_config = _MODEL_CONFIG

    # A dbench 4 loadfile; None: Debian's (apt-get install dbench). `crest run --loadfile PATH` overrides it.
    path: str | None = None
    # NetBench's per-client workspace as the suite states it (MB, 10^6 B). The loadfile decides what a
    # client writes; crest reports the bytes each client's tree holds, not this figure.
    workspace_mb: float | None = Field(default=None, gt=0)
    # NetBench's Save Workspace: keep each client's tree between mixes and delete it after the last
    # (False: delete it after every mix).
    save_workspace: bool = True
    # Which operations on a file:///DIR target look their path up first: "queries" (QUERY_PATH_INFORMATION,
    # FIND_FIRST of a name) or "every-path", as dbench's fileio does (docs/fileservers.md#crest-and-dbench).
    resolve_names: ResolveNames = "queries"

    def resolved_path(self) -> str:
        """The loadfile to read: the suite's, else Debian's."""
        return self.path or DEBIAN_LOADFILE


# The certificate key a crest-provisioned TLS target serves (the seeds used RSA 1024 and 2048).
TLS_KEYS = ("ecdsa-p256", "rsa2048", "rsa1024")


class Tls(BaseModel):
    """How TLS classes are served and resumed: the target's key (when crest makes the certificate), whether
    the engine offers session resumption on new connections, and which target of a role map serves them."""

    model_config = _MODEL_CONFIG

    key: Literal["ecdsa-p256", "rsa2048", "rsa1024"] = "ecdsa-p256"
    resumption: bool = True
    # With a role map that has no tls target: "kind" sends each TLS class to the target its kind implies
    # (static files to the static one); "static" or "dynamic" sends every TLS class to that target, as
    # VeriTest sent all its SSL requests to Apache behind TUX. A class's own target_role still wins.
    route: Literal["kind", "static", "dynamic"] = "kind"

    @model_validator(mode="after")
    def _usable_key(self) -> Tls:
        if self.key == "rsa1024":
            # ring (rustls' crypto) verifies RSA signatures only for keys of 2048 bits and up, and TLS 1.3's
            # RSA-PSS has no legacy 1024-bit verifier: the engine could not complete a single handshake.
            raise RuleError(
                [
                    (
                        ("key",),
                        "rsa1024 cannot be measured: the engine's TLS (rustls) refuses RSA keys under 2048 bits;"
                        " use rsa2048 (the seeds' other key) or ecdsa-p256",
                    )
                ]
            )
        return self


class Workload(BaseModel):
    """The weighted request classes plus protocol settings; the same for every mix of a suite."""

    model_config = _MODEL_CONFIG

    # At least one, except in a replay workload, whose classes are the log's (crest.replay.CLASSES).
    classes: list[RequestClass] = []
    # A name from crest.filesets.NAMES; required iff any class is static.
    fileset: str | None = None
    # SPECweb99 directory scaling (the kit's int(25 + 40 × connections / 61)); None → the runner derives it.
    fileset_connections: int | None = Field(default=None, ge=1)
    # A table fileset sized past a memory limit: its table repeated `fileset_copies` times (files per
    # size), or as many times as `fileset_size` (a working-set size, "512M") needs. None: the table once.
    fileset_copies: int | None = Field(default=None, ge=1)
    fileset_size: str | None = None
    http_version: Literal["1.0", "1.1", "2", "3"] = "1.0"  # WebBench sent HTTP/1.0
    keepalive: bool = False
    # HTTP/2 and HTTP/3: concurrent streams per connection (each a user of its own, like h2load's -m); 1 otherwise.
    streams: int = Field(default=1, ge=1)
    # Most bytes the engine takes from a socket per read: WebBench's "receive buffer" (Mindcraft: 4096),
    # the buffer its client read into, not the kernel's SO_RCVBUF. None → the engine's 64 KiB; the upper
    # bound is the run's rule (crest.load.runspec), checked before anything is sent.
    read_buffer_bytes: int | None = Field(default=None, ge=1)
    # "weighted": by share, with replacement; "once": every table entry exactly once, shuffled,
    # and a mix ends when all are sent (Zeus' non-cached test: nothing is requested twice).
    selection: Literal["weighted", "once"] = "weighted"
    # Drop the OS page cache before each mix (root only; otherwise the mix carries a warning).
    drop_caches: bool = False
    # SPECweb99's client model and rules: required by (and only with) a class of kind "specweb99".
    specweb99: Specweb99 | None = None
    # The file-operation workload's settings: allowed only with a class of kind "loadfile" (defaults if omitted).
    loadfile: Loadfile | None = None
    # TLS key and resumption for the TLS classes; None: an ECDSA P-256 key, resumption on.
    tls: Tls | None = None
    # An access log as the workload (timed, mix or sessions): the whole workload, with no classes.
    replay: Replay | None = None
    # Scripted sessions (each step a class): the whole workload, with no classes.
    script: Script | None = None
    # A HAR recording's page loads (each client a browser): the whole workload, with no classes.
    har: HarWorkload | None = None

    def tls_settings(self) -> Tls:
        """The TLS settings (the defaults when the suite gives none)."""
        return self.tls or Tls()

    @property
    def over_quic(self) -> bool:
        """Whether it speaks HTTP/3: QUIC over UDP, always encrypted, so every class goes to the TLS port
        and a TCP connect cannot probe the target."""
        return self.http_version == "3"

    @property
    def is_file(self) -> bool:
        """Whether this is a file-operation workload (file servers), not HTTP."""
        return any(c.kind == "loadfile" for c in self.classes)

    def loadfile_settings(self) -> Loadfile:
        """The loadfile settings of a file workload (the defaults when the suite gives none)."""
        return self.loadfile or Loadfile()

    @model_validator(mode="before")
    @classmethod
    def _multiplexed_keeps_alive(cls, data: object) -> object:
        # HTTP/2 and HTTP/3 connections persist by nature: keep-alive is implied, not a choice a suite must spell out.
        if isinstance(data, dict) and data.get("http_version") in STREAM_VERSIONS and "keepalive" not in data:
            return {**data, "keepalive": True}
        return data

    @model_validator(mode="before")
    @classmethod
    def _browser_streams(cls, data: object) -> object:
        # A browser multiplexes a page over its one HTTP/2 connection: the HAR's connections are its streams.
        if isinstance(data, dict) and isinstance(data.get("har"), dict) and "streams" not in data and \
                data.get("http_version") in STREAM_VERSIONS:  # fmt: skip
            return {**data, "streams": data["har"].get("connections", BROWSER_CONNECTIONS)}
        return data

    @model_validator(mode="before")
    @classmethod
    def _renamed_keys(cls, data: object) -> object:
        if isinstance(data, dict) and "receive_buffer_bytes" in data:
            raise RuleError(
                [
                    (
                        ("receive_buffer_bytes",),
                        "renamed: write read_buffer_bytes (the bytes the engine reads per call, WebBench's"
                        " receive buffer; it was applied as the socket's SO_RCVBUF)",
                    )
                ]
            )
        return data

    @model_validator(mode="after")
    def _rules(self) -> Workload:
        problems: list[tuple[Loc, str]] = []
        if self.replay is not None and self.script is not None:
            problems.append((("script",), "give [workload.script] or [workload.replay], not both"))
        if self.har is not None and (self.replay is not None or self.script is not None):
            other = "replay" if self.replay is not None else "script"
            problems.append((("har",), f"give [workload.har] or [workload.{other}], not both"))
        if self.replay is not None:
            problems += self._replay_rules()
        elif self.script is not None:
            problems += self._script_rules()
        elif self.har is not None:
            problems += self._har_rules()
        elif not self.classes:
            problems.append(
                (
                    ("classes",),
                    "must list at least 1 request class (or give a [workload.replay] log, a [workload.script]"
                    " or a [workload.har] recording)",
                )
            )
        if self.http_version in STREAM_VERSIONS and not self.keepalive:
            problems.append(
                (("keepalive",), f"HTTP/{self.http_version} connections persist: leave keepalive out or set it to true")
            )
        if self.http_version not in STREAM_VERSIONS and self.streams != 1:
            problems.append(
                (("streams",), f"needs HTTP/2 or HTTP/3 (got {self.streams} with http_version {self.http_version})")
            )
        seen: dict[str, int] = {}
        for i, cls in enumerate(self.classes):
            if cls.name in seen:
                problems.append(
                    (
                        (("classes", i, "name")),
                        (f"must be unique within the workload (got {show(cls.name)}, also classes[{seen[cls.name]}])"),
                    )
                )
            seen.setdefault(cls.name, i)
        spec = [c.name for c in self.classes if c.kind == "specweb99"]
        if spec and (len(self.classes) > 1 or self.fileset != "specweb99" or self.specweb99 is None):
            problems.append(
                (
                    ("classes",),
                    f"class {show(spec[0])} of kind 'specweb99' is the whole SPECweb99 mix: it must be the only"
                    " class, with fileset 'specweb99' and a [workload.specweb99] table",
                )
            )
        elif not spec and self.specweb99 is not None:
            problems.append((("specweb99",), "must be omitted: no class is of kind 'specweb99'"))
        files = [c.name for c in self.classes if c.kind == "loadfile"]
        if files and (len(self.classes) > 1 or self.fileset is not None):
            problems.append(
                (
                    ("classes",),
                    f"class {show(files[0])} of kind 'loadfile' is the whole file-operation workload: it must be"
                    " the only class, with no fileset",
                )
            )
        elif not files and self.loadfile is not None:
            problems.append((("loadfile",), "must be omitted: no class is of kind 'loadfile'"))
        static = [c.name for c in self.classes if c.kind in FILE_KINDS]
        if static and self.fileset is None:
            problems.append((("fileset",), f"required because class {show(static[0])} is static (got nothing)"))
        elif not static and self.fileset is not None:
            problems.append((("fileset",), f"must be omitted: no class is static (got {show(self.fileset)})"))
        elif self.fileset is not None and self.fileset not in (names := fileset_names()):
            problems.append((("fileset",), f"must be one of {', '.join(names)} (got {show(self.fileset)})"))
        if self.fileset_connections is not None and self.fileset != "specweb99":
            problems.append(
                (
                    ("fileset_connections",),
                    (
                        f"only fileset 'specweb99' scales with connections (got {self.fileset_connections}"
                        f" with fileset {show(self.fileset)})"
                    ),
                )
            )
        if self.fileset_copies is not None and self.fileset_size is not None:
            problems.append((("fileset_size",), "give fileset_copies or fileset_size, not both"))
        sized = "fileset_copies" if self.fileset_copies is not None else "fileset_size" if self.fileset_size else None
        if sized and self.fileset in (None, "specweb99", "specweb96"):
            why = "set fileset_connections" if self.fileset == "specweb99" else "name a table fileset"
            problems.append(((sized,), f"sizes a table fileset, not {show(self.fileset)}: {why}"))
        if self.fileset_size is not None:
            try:
                parse_size(self.fileset_size, what="fileset_size")
            except ConfigError as exc:
                problems.append((("fileset_size",), str(exc)))
        if problems:
            raise RuleError(problems)
        return self

    def _replay_rules(self) -> list[tuple[Loc, str]]:
        """What a replay workload cannot have: its requests are the log's."""
        problems: list[tuple[Loc, str]] = []
        if self.classes:
            problems.append((("classes",), "a replay workload's classes are the log's (static-1k ... server-error):"
                             " remove [[workload.classes]]"))  # fmt: skip
        for key, given in (("fileset", self.fileset), ("specweb99", self.specweb99), ("loadfile", self.loadfile),
                           ("fileset_copies", self.fileset_copies), ("fileset_size", self.fileset_size)):  # fmt: skip
            if given is not None:
                problems.append(((key,), "must be omitted: a replay workload requests the log's paths (a site"
                                 " from the log: `crest fileset from-log LOG DIR` and workload.replay.site)"))  # fmt: skip
        if self.selection != "weighted":
            problems.append((("selection",), "must be omitted: a replay sends the log as logged (mode timed) or"
                             " its weighted mix (mode mix)"))  # fmt: skip
        return problems

    def _script_rules(self) -> list[tuple[Loc, str]]:
        """What a script workload cannot have: its requests are its steps, sent over HTTP/1.x."""
        problems: list[tuple[Loc, str]] = []
        if self.classes:
            problems.append((("classes",), "a script's classes are its steps: remove [[workload.classes]]"))
        for key, given in (("fileset", self.fileset), ("specweb99", self.specweb99), ("loadfile", self.loadfile),
                           ("fileset_copies", self.fileset_copies), ("fileset_size", self.fileset_size)):  # fmt: skip
            if given is not None:
                problems.append(((key,), "must be omitted: a script's steps name the paths they request"))
        if self.selection != "weighted":
            problems.append((("selection",), "must be omitted: each virtual user plays the steps in order"))
        if self.http_version in STREAM_VERSIONS:
            problems.append((("http_version",), f"a script is sent over HTTP/1.x for now (got {self.http_version})"))
        return problems

    def _har_rules(self) -> list[tuple[Loc, str]]:
        """What a HAR workload cannot have: its requests are the recording's, sent as a browser sends them."""
        problems: list[tuple[Loc, str]] = []
        if self.classes:
            problems.append((("classes",), "a HAR workload's classes are the page load's (document ... other and"
                             " page:NAME): remove [[workload.classes]]"))  # fmt: skip
        for key, given in (("fileset", self.fileset), ("specweb99", self.specweb99), ("loadfile", self.loadfile),
                           ("fileset_copies", self.fileset_copies), ("fileset_size", self.fileset_size)):  # fmt: skip
            if given is not None:
                problems.append(((key,), "must be omitted: a HAR workload requests the recorded URLs"))
        if self.selection != "weighted":
            problems.append((("selection",), "must be omitted: each client loads the recorded pages in turn"))
        if self.http_version not in ("1.1", "2"):
            problems.append((("http_version",), "a HAR is replayed as a browser loads pages: over HTTP/1.1 (six"
                             f" connections) or HTTP/2 (one connection) (got {self.http_version})"))  # fmt: skip
        return problems

    @property
    def is_replay(self) -> bool:
        """Whether the workload is an access log's (workload.replay)."""
        return self.replay is not None

    def shares(self) -> dict[str, float]:
        """Each class's share of requests, 0..1, by name (weights normalised); {} for a replay (the log's)."""
        total = sum(c.weight for c in self.classes)
        return {c.name: c.weight / total for c in self.classes}


class MixOverride(BaseModel):
    """Threads per client for every mix with at least from_clients clients (the last matching override wins)."""

    model_config = _MODEL_CONFIG

    from_clients: int = Field(ge=1)
    threads_per_client: int = Field(ge=1)


def _ascending(value: list[int] | None, item: str) -> list[int] | None:
    """A ladder list: at least one entry, each ≥ 1 and greater than the one before it."""
    if value is None:
        return None
    problems: list[tuple[Loc, str]] = []
    if not value:
        problems.append(((), f"must list at least 1 {item} (got [])"))
    for i, n in enumerate(value):
        if n < 1:
            problems.append(((i,), f"must be ≥ 1 (got {n})"))
        elif i and n <= value[i - 1]:
            problems.append(((i,), f"must be greater than the entry before it (got {n} after {value[i - 1]})"))
    if problems:
        raise RuleError(problems)
    return value


class Ladder(BaseModel):
    """The load points: an explicit client list, or start then the multiples of step up to stop inclusive.

    WebBench's 1, 4, 8, …, 60 is start=1, step=4, stop=60.
    """

    model_config = _MODEL_CONFIG

    clients: list[int] | None = None
    start: int | None = Field(default=None, ge=1)
    step: int | None = Field(default=None, ge=1)
    stop: int | None = Field(default=None, ge=1)
    threads_per_client: int = Field(default=1, ge=1)
    overrides: list[MixOverride] = []
    # A content-length sweep (Zeus' unbundled SPECweb99): one mix per size and client count, each
    # mix's static classes restricted to the fileset's file(s) of that size and webstone-cgi
    # classes to ?size=N. `sizes = "fileset"` means every file size of the fileset, ascending.
    sizes_bytes: list[int] | None = None
    sizes: Literal["fileset"] | None = None
    # Between mixes, on a target crest provisions: true restarts it before every mix after the first; a
    # list restarts it before the mixes at those load points (Mindcraft restarted Apache at 256 clients).
    restart_target: bool | list[int] = False
    # "each": before every mix's window, request every entry the mix may request once (Zeus's cached test),
    # so files come from the server's caches; "first": only before the first mix. Never measured.
    warmup: Literal["none", "first", "each"] = "none"

    @field_validator("sizes_bytes")
    @classmethod
    def _sizes_bytes(cls, value: list[int] | None) -> list[int] | None:
        return _ascending(value, "content length")

    @field_validator("clients")
    @classmethod
    def _clients(cls, value: list[int] | None) -> list[int] | None:
        return _ascending(value, "load point")

    @model_validator(mode="after")
    def _shape(self) -> Ladder:
        arithmetic = {"start": self.start, "step": self.step, "stop": self.stop}
        given = [k for k, v in arithmetic.items() if v is not None]
        problems: list[tuple[Loc, str]] = []
        if self.clients is not None and given:
            problems.append(
                ((), (f"define exactly one of clients or start, step and stop (got clients and {', '.join(given)})"))
            )
        elif self.clients is None and len(given) < 3:
            missing = [k for k in arithmetic if k not in given]
            got = f"only {', '.join(given)}" if given else "neither"
            problems.append(
                (
                    (),
                    (
                        f"define exactly one of clients or start, step and stop (got {got}; missing {', '.join(missing)})"
                    ),
                )
            )
        elif self.clients is None and self.start is not None and self.stop is not None and self.stop < self.start:
            problems.append((("stop",), f"must be ≥ start (got {self.stop} < {self.start})"))
        elif (count := self._arithmetic_points()) > MAX_LOAD_POINTS:
            # Counted, never listed: a stop of 2**31 would otherwise exhaust memory before any check.
            problems.append(
                (
                    (),
                    f"defines {count} load points, more than crest runs ({MAX_LOAD_POINTS}): raise step or lower stop",
                )
            )
        if self.sizes_bytes is not None and self.sizes is not None:
            problems.append(
                ((), (f"define at most one of sizes_bytes or sizes (got sizes_bytes and sizes = {show(self.sizes)})"))
            )
        if not problems:
            largest = self.client_counts()[-1]
            if isinstance(self.restart_target, list):
                points = self.client_counts()
                for i, n in enumerate(self.restart_target):
                    if n not in points:
                        problems.append(
                            (
                                ("restart_target", i),
                                f"matches no load point (got {n}; the load points are {', '.join(map(str, points))})",
                            )
                        )
            for i, o in enumerate(self.overrides):
                if o.from_clients > largest:
                    problems.append(
                        (
                            ("overrides", i, "from_clients"),
                            (f"matches no load point: the largest is {largest} clients (got {o.from_clients})"),
                        )
                    )
        if problems:
            raise RuleError(problems)
        return self

    def _arithmetic_points(self) -> int:
        """How many load points start, step and stop define (0 for a clients list), without listing them."""
        if self.start is None or self.step is None or self.stop is None:
            return 0
        first_multiple = (self.start // self.step + 1) * self.step
        # Arithmetic, not len(range(...)): that overflows past sys.maxsize.
        return 1 + max(0, (self.stop - first_multiple) // self.step + 1)

    def client_counts(self) -> list[int]:
        """The client count of each load point, in order."""
        if self.clients is not None:
            return list(self.clients)
        assert self.start is not None and self.step is not None and self.stop is not None
        first_multiple = (self.start // self.step + 1) * self.step
        return [self.start, *range(first_multiple, self.stop + 1, self.step)]

    def restarts_before(self, index: int, clients: int) -> bool:
        """Whether the target restarts before the mix at this 1-based position and load point."""
        if isinstance(self.restart_target, list):
            return clients in self.restart_target and index > 1
        return self.restart_target and index > 1

    def warms_up_before(self, index: int) -> bool:
        """Whether the mix at this 1-based position gets a warm-up pass before its window."""
        return self.warmup == "each" or (self.warmup == "first" and index == 1)

    def threads_for(self, clients: int) -> int:
        """Threads per client at this load point: the last matching override, else threads_per_client."""
        threads = self.threads_per_client
        for o in self.overrides:
            if clients >= o.from_clients:
                threads = o.threads_per_client
        return threads

    @property
    def is_sweep(self) -> bool:
        """Whether the ladder sweeps content length (sizes_bytes or sizes given)."""
        return self.sizes_bytes is not None or self.sizes is not None


class Mix(BaseModel):
    """One load point, fully resolved: clients × threads for one timing (WebBench's word)."""

    model_config = _MODEL_CONFIG

    index: int = Field(ge=1)  # 1-based position in the ladder: WebBench numbers mixes from 1
    clients: int = Field(ge=1)
    threads_per_client: int = Field(ge=1)
    timing: Timing
    # The content length of a sweep's mix (bytes); None for ordinary ladders.
    size_bytes: int | None = Field(default=None, ge=1)
    # An open-loop mix: the total request rate its connections send at (latency from the intended
    # send time); None for the closed loop every suite ladder runs. A capacity search on the rate axis
    # makes these.
    rate_rps: float | None = Field(default=None, gt=0)
    # Between this mix and the one before it: restart the provisioned target; request every entry once
    # before the window (a warm-up pass, never measured). See Ladder.restart_target and Ladder.warmup.
    restart_target: bool = False
    warmup: bool = False

    @property
    def connections(self) -> int:
        """Closed-loop threads in the mix (each keeps one request outstanding)."""
        return self.clients * self.threads_per_client


class Suite(BaseModel):
    """A ladder of mixes with their timing and one workload: what one run of a published test offers."""

    model_config = _MODEL_CONFIG

    name: str
    description: str = Field(min_length=1)
    # Which report and figure/table it reproduces, e.g. "VeriTest 2003 (seed 000), figure 2".
    source: str = Field(min_length=1)
    # What the runner must do beyond the ladder, and what crest cannot do yet.
    notes: str | None = None
    workload: Workload
    ladder: Ladder
    timing: Timing
    repeat: int = Field(default=1, ge=1)  # trials of the whole suite (VeriTest ran each twice)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return _check_name(value)

    def with_protocol(self, http_version: str | None = None, streams: int | None = None) -> Suite:
        """This suite spoken over another HTTP version or stream count (--http, --streams, a design's
        http and streams factors): HTTP/1.1, 2 and 3 keep connections alive, 1.0 keeps the suite's choice.

        Raises:
            RuleError: a version other than 1.0, 1.1, 2 or 3, or streams below 1.
        """
        data = self.workload.model_dump()
        if http_version is not None:
            data["http_version"] = http_version
            if http_version != "1.0":
                data["keepalive"] = True
        # Streams are HTTP/2's and HTTP/3's: a comparison of 1.1 with 2 at N streams runs 1.1 as it is.
        if data.get("http_version") not in STREAM_VERSIONS:
            data["streams"] = 1
        elif streams is not None:
            data["streams"] = streams
        elif data.get("har") is not None and data.get("streams", 1) == 1:
            data["streams"] = data["har"]["connections"]  # a browser's page over one connection
        return Suite.model_validate({**self.model_dump(), "workload": data})

    @model_validator(mode="after")
    def _replay(self) -> Suite:
        replay = self.workload.replay
        if replay is None:
            return self
        problems: list[tuple[Loc, str]] = []
        if self.ladder.is_sweep:
            problems.append((("ladder", "sizes_bytes" if self.ladder.sizes_bytes is not None else "sizes"),
                             "a replay's response sizes are the log's: remove the content-length sweep"))  # fmt: skip
        if self.ladder.warmup != "none" and replay.sends_the_log:
            problems.append((("ladder", "warmup"), f"a {replay.mode} replay sends the log as logged, with no table to"
                             " warm up from: drop warmup (mode = \"mix\" takes it)"))  # fmt: skip
        if problems:
            raise RuleError(problems)
        return self

    @model_validator(mode="after")
    def _har(self) -> Suite:
        if self.workload.har is None:
            return self
        problems: list[tuple[Loc, str]] = []
        if self.ladder.is_sweep:
            problems.append((("ladder", "sizes_bytes" if self.ladder.sizes_bytes is not None else "sizes"),
                             "a HAR's requests are the recorded ones: remove the content-length sweep"))  # fmt: skip
        if self.ladder.warmup != "none":
            problems.append((("ladder", "warmup"), "a HAR replay loads whole pages: drop warmup"))
        if self.ladder.threads_per_client != 1 or self.ladder.overrides:
            problems.append((("ladder", "threads_per_client"), "a HAR client is a browser with its own connections"
                             " (workload.har.connections): leave threads_per_client out"))  # fmt: skip
        if not self.workload.keepalive:
            problems.append((("workload", "keepalive"), "a browser keeps its connections alive: set keepalive = true"))
        if self.timing.think_time_s > 0:
            problems.append((("timing", "think_time_s"), "a browser sends a page's requests without pausing: give"
                             " the pause between pages as workload.har.think_s"))  # fmt: skip
        if problems:
            raise RuleError(problems)
        return self

    @model_validator(mode="after")
    def _script(self) -> Suite:
        if self.workload.script is None:
            return self
        problems: list[tuple[Loc, str]] = []
        if self.ladder.is_sweep:
            problems.append((("ladder", "sizes_bytes" if self.ladder.sizes_bytes is not None else "sizes"),
                             "a script's steps name their own requests: remove the content-length sweep"))  # fmt: skip
        if self.ladder.warmup != "none":
            problems.append((("ladder", "warmup"), "a script has no file table to warm up from: drop warmup"))
        if problems:
            raise RuleError(problems)
        return self

    @model_validator(mode="after")
    def _sweep(self) -> Suite:
        if not self.ladder.is_sweep:
            return self
        key = "sizes_bytes" if self.ladder.sizes_bytes is not None else "sizes"
        problems: list[tuple[Loc, str]] = []
        fixed = [c for c in self.workload.classes if c.kind not in ("static", "specweb99-get", "webstone-cgi")]
        if fixed:
            problems.append(
                (
                    ("ladder", key),
                    (
                        "a content-length sweep restricts static, specweb99-get and webstone-cgi classes only; class"
                        f" {show(fixed[0].name)} (kind {show(fixed[0].kind)}) returns a fixed size: remove it or the sweep"
                    ),
                )
            )
        fileset = self.workload.fileset
        available = fileset_sizes(fileset) if fileset is not None else None
        if self.ladder.sizes is not None and fileset is None:
            problems.append(
                (
                    ("ladder", "sizes"),
                    ("'fileset' needs a static class and a workload.fileset: list the sizes with sizes_bytes instead"),
                )
            )
        if self.ladder.sizes_bytes is not None and fileset is not None and available is not None:
            for i, n in enumerate(self.ladder.sizes_bytes):
                if n not in available:
                    problems.append(
                        (
                            ("ladder", "sizes_bytes", i),
                            (
                                f"no file of fileset {show(fileset)} is {n} bytes (its sizes: {', '.join(map(str, available))})"
                            ),
                        )
                    )
        if problems:
            raise RuleError(problems)
        return self

    def sweep_sizes(self) -> list[int] | None:
        """The content lengths a sweep ladder visits in order; None for an ordinary ladder."""
        if self.ladder.sizes_bytes is not None:
            return list(self.ladder.sizes_bytes)
        if self.ladder.sizes is not None and self.workload.fileset is not None:
            return list(fileset_sizes(self.workload.fileset) or ())
        return None

    def mixes(self, profile: str = "full") -> list[Mix]:
        """The load points with the profile's timing; profiles scale durations and nothing else.

        A sweep ladder gives one mix per content length and client count: every
        client count at the first size, then at the next size, and so on.
        """
        replay = self.workload.replay
        # A timed or sessions replay lasts as long as its log (÷ speed): a profile does not cut it short.
        timing = self.timing if replay is not None and replay.sends_the_log else scale_timing(self.timing, profile)
        swept = self.sweep_sizes()
        sizes: list[int | None] = list(swept) if swept else [None]
        points = [(size, n) for size in sizes for n in self.ladder.client_counts()]
        ladder = self.ladder
        return [
            Mix(index=i, clients=n, threads_per_client=ladder.threads_for(n), timing=timing, size_bytes=size,
                restart_target=ladder.restarts_before(i, n), warmup=ladder.warms_up_before(i))
            for i, (size, n) in enumerate(points, start=1)
        ]  # fmt: skip


__all__ = [
    "DEBIAN_LOADFILE",
    "PROFILES",
    "TARGET_ROLES",
    "Ladder",
    "Loadfile",
    "Mix",
    "MixOverride",
    "RequestClass",
    "Suite",
    "Timing",
    "Workload",
    "fileset_names",
    "fileset_sizes",
]
