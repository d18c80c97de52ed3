"""A run's target bound: the URLs the clients reach, each role's, the request tables built for them, and
a started file server's password; immutable, made anew for each trial (a started target gets new ports).

Owns reading the suite's manifest and building the tables from it; never starts, sends or prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from crest.errors import ConfigError
from crest.filesets import Manifest, build_manifest, load_manifest
from crest.replay import LogSummary, scan
from crest.replay.har import Har, read_har
from crest.runner.request import RunRequest, fileset_connections, fileset_copies
from crest.runner.table import RequestTable, build_table, dynamic_page, har_table, replay_table
from crest.secrets import Secret
from crest.suite import Mix
from crest.suite.roles import RoleUrls, url_role_map

# Where a target crest will start is not known before it starts: its checks bind to these.
STAND_IN_HTTP = "http://127.0.0.1:1"
STAND_IN_HTTPS = "https://127.0.0.1:1"
STAND_IN_SMB = "smb://crest@127.0.0.1:1/crest"


@dataclass(frozen=True)
class Bound:
    """One trial's target as its mixes reach it."""

    url: str | None
    tls_url: str | None
    insecure: bool
    table: RequestTable
    # A sweep's mixes each have their own table (static files of one size), by size.
    sized_tables: dict[int, RequestTable] = field(default_factory=dict)
    password: Secret | None = None  # the file server crest started made this login; never stored
    # A replay: the log's summary, and where its dynamic requests go (crest's dynamic page on a target
    # serving the log's site; None: to the logged paths as they are).
    log: LogSummary | None = None
    dynamic_url: str | None = None
    # A script: the engine's RunConfig.script, its CSV of users read once per binding.
    script: dict[str, Any] | None = None
    # A HAR: the recording, and the engine's RunConfig.pages over the table's entries.
    har: Har | None = None
    pages: dict[str, Any] | None = None

    def table_for(self, mix: Mix) -> RequestTable:
        """The request table of one mix: the suite's, or for a sweep's mix the one of its size."""
        return self.table if mix.size_bytes is None else self.sized_tables[mix.size_bytes]


def manifest(request: RunRequest) -> Manifest | None:
    """The manifest of the suite's fileset: the --fileset directory's, or the generator's own."""
    workload = request.suite.workload
    if workload.fileset is None:
        return None
    if request.fileset_dir is not None:
        found = load_manifest(request.fileset_dir)
        if found.fileset != workload.fileset:
            raise ConfigError(
                f"{request.fileset_dir} holds the {found.fileset} fileset but suite"
                f" {request.suite.name} needs {workload.fileset}: generate it with"
                f" `crest fileset generate {workload.fileset} DIR`"
            )
        return found
    return build_manifest(
        workload.fileset, connections=fileset_connections(request.suite), seed=0, copies=fileset_copies(request.suite)
    )


def bind(
    request: RunRequest, found: Manifest | None, url: str | None, tls_url: str | None,
    role_urls: RoleUrls | None = None, *, insecure: bool | None = None, password: Secret | None = None,
) -> Bound:  # fmt: skip
    """The tables of `request`'s workload for a target at `url` (and `tls_url`, and each role's URLs)."""
    workload = request.suite.workload
    if workload.replay is not None:
        return _bind_replay(request, url, tls_url, insecure=insecure)
    if workload.har is not None:
        # Against a site from the HAR (one crest starts, or the suite's site), dynamic requests go to crest's
        # dynamic page with their recorded size.
        har = read_har(workload.har.file)
        dynamic_url = dynamic_page(url or "") if request.server is not None or workload.har.site else None
        table, pages = har_table(har, url or "", workload.har.hosts, dynamic_url,
                                 bodies=workload.http_version != "2")  # fmt: skip
        return Bound(url, tls_url, request.insecure if insecure is None else insecure, table, har=har,
                     dynamic_url=dynamic_url, pages={"pages": pages, "think_s": workload.har.think_s})  # fmt: skip
    if workload.script is not None:
        # Each step is a class; the engine writes every request itself, so there is no table.
        table = RequestTable((), workload.script.classes)
        return Bound(url, tls_url, request.insecure if insecure is None else insecure, table,
                     script=workload.script.engine())  # fmt: skip
    if role_urls is None and request.role_targets:
        role_urls = url_role_map(request.role_targets, request.tls_target)
    table = build_table(
        workload, found, url or "", tls_url, check_content=request.validate_content, role_urls=role_urls
    )
    sized = {
        size: build_table(
            workload,
            found,
            url or "",
            tls_url,
            check_content=request.validate_content,
            size_bytes=size,
            role_urls=role_urls,
        )
        for size in request.suite.sweep_sizes() or []
    }
    return Bound(url, tls_url, request.insecure if insecure is None else insecure, table, sized, password)


def _bind_replay(request: RunRequest, url: str | None, tls_url: str | None, *, insecure: bool | None) -> Bound:
    """A replay's binding: the log read (the engine keeps its table for the run), its mix as a table in
    mode "mix". Dynamic requests go to crest's dynamic page where the target serves the log's site: one
    crest starts, or a --target serving the suite's `site`."""
    replay = request.suite.workload.replay
    assert replay is not None
    log = scan(replay.log, replay.reader_options())
    base = url or ""
    dynamic_url = dynamic_page(base) if request.server is not None or replay.site is not None else None
    table = replay_table(log, base, dynamic_url) if replay.mode == "mix" else RequestTable((), log.classes)
    return Bound(url, tls_url, request.insecure if insecure is None else insecure, table, log=log,
                 dynamic_url=dynamic_url)  # fmt: skip


def bind_stand_in(request: RunRequest, found: Manifest | None, roles: dict[str, str] | None) -> Bound:
    """A binding to a stand-in for the target crest will start, to validate an engine config before it does."""
    workload = request.suite.workload
    # HTTP/3 goes to the TLS port (see bind_started), so its stand-in is https too.
    url = STAND_IN_SMB if workload.is_file else STAND_IN_HTTPS if workload.over_quic else STAND_IN_HTTP
    stand_ins = {r: (STAND_IN_HTTP, STAND_IN_HTTPS) for r in roles or {}}
    return bind(request, found, url, STAND_IN_HTTPS, stand_ins or None,
                password=Secret("stand-in") if workload.is_file else None)  # fmt: skip


def bind_started(request: RunRequest, found: Manifest | None, target: Any) -> Bound:
    """A binding to a target crest started: HTTP/2 in cleartext goes where the server takes h2c by prior
    knowledge (a port of its own for nginx); HTTP/3 is always encrypted, so every class goes to the TLS
    port (QUIC on its UDP twin). A file server crest started made its own login: the target gives its
    password (`login_password`, read where the target runs), which is never stored.

    Raises:
        TargetError: the password file cannot be read.
    """
    http3 = request.suite.workload.over_quic
    plain = target.tls_url if http3 and target.tls_url else (target.h2c_url or target.url)
    role_urls = target.role_urls() if hasattr(target, "role_urls") else None  # a role map's, here or on a node
    password = target.login_password()  # a file server's login, wherever it runs; never stored
    return bind(request, found, plain, target.tls_url, role_urls, insecure=True, password=password)
