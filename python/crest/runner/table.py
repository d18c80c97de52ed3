"""The engine's weighted request table for a workload on a target.

Owns the URL each request class maps to and each request's expected body
size (from the fileset manifest); knows nothing of sockets, suites' timing or
the store. Shares: a class's weight normalised over the workload, times a
file's weight within the fileset, so the table reproduces the published
distribution exactly (the engine draws by the alias method).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from crest.dynamic import CGI_BYTES, CGI_ENV
from crest.errors import ConfigError
from crest.filesets import Manifest, header_line
from crest.replay import CLASSES as REPLAY_CLASSES
from crest.replay import LogSummary
from crest.replay.har import Har
from crest.replay.har_site import is_dynamic
from crest.replay.summary import DYNAMIC_CLASS, STATIC_CLASSES
from crest.suite import Workload
from crest.suite.har import SKIP as HAR_SKIP
from crest.suite.roles import RoleUrls, base_url_of

# Where crest's dynamic programs live on a target (see crest.dynamic), with
# the body size each returns. `inproc` is the built-in target's in-process
# page, the ISAPI analogue; real servers serve the FastCGI responder there.
ENV_PAGE_BYTES = 1024
DYNAMIC_PATHS = {
    "cgi": f"/cgi-bin/{CGI_ENV}",
    "inproc": "/dyn/env",
    "fastcgi": f"/fcgi/{CGI_ENV}",
}
WEBSTONE_CGI_PATH = f"/cgi-bin/{CGI_BYTES}"
# SPECweb99's dynamic set: the target's own module (in-process or FastCGI) and the CGI program.
SPECWEB99_DYNAMIC_PATH = "/specweb99/dynamic"
SPECWEB99_CGI_PATH = "/cgi-bin/crest-specweb99"


def specweb99_urls(base_url: str, dynamic: str) -> tuple[str, str]:
    """SPECweb99's (dynamic URL, CGI URL) on a target: the dynamic GET, custom-ad GET, POST and
    housekeeping go to the target's own module, or with dynamic = "cgi" to the CGI program too."""
    base = base_url.rstrip("/")
    cgi = f"{base}{SPECWEB99_CGI_PATH}"
    return (cgi if dynamic == "cgi" else f"{base}{SPECWEB99_DYNAMIC_PATH}"), cgi


@dataclass(frozen=True)
class RequestTable:
    """What the engine takes: entries (url, weight, class, expected size) and class names."""

    requests: tuple[dict[str, Any], ...]
    classes: tuple[str, ...]


def build_table(
    workload: Workload,
    manifest: Manifest | None,
    base_url: str,
    tls_base_url: str | None,
    *,
    check_content: bool = False,
    size_bytes: int | None = None,
    role_urls: RoleUrls | None = None,
) -> RequestTable:
    """The request table of `workload` against `base_url` (and `tls_base_url` for TLS classes).

    With `check_content`, each static file's response must also start with the
    file's first line (which states its size and path), not just have its size.
    With `size_bytes` (one mix of a content-length sweep), static classes request
    only the fileset's file(s) of exactly that size, weighted among themselves as
    in the manifest, and webstone-cgi classes ask for ?size=size_bytes.
    With `role_urls` (per-class targets), each class goes to its role's target instead.

    Raises:
        ConfigError: a TLS class without a TLS target, a static class without a
        manifest, or a size no file of the manifest has.
    """
    total = sum(c.weight for c in workload.classes)
    entries: list[dict[str, Any]] = []
    for index, cls in enumerate(workload.classes):
        share = cls.weight / total
        base = (
            base_url_of(cls, role_urls, workload.tls_settings().route)
            if role_urls
            else _base_for(cls.tls, cls.name, base_url, tls_base_url)
        )
        if cls.kind == "static":
            if manifest is None:
                raise ConfigError(f"class {cls.name!r} is static but no fileset manifest was given")
            files = manifest.files
            if size_bytes is not None:
                files = tuple(f for f in manifest.files if f.size == size_bytes)
                if not files:
                    sizes = sorted({f.size for f in manifest.files})
                    raise ConfigError(
                        f"no file of fileset {manifest.fileset} is {size_bytes} bytes"
                        f" (its sizes: {', '.join(map(str, sizes))})"
                    )
            within = sum(f.weight for f in files) if size_bytes is not None else 1.0
            for f in files:
                entry = _entry(f"{base}/{f.path}", share * f.weight / within, index, f.size)
                if check_content:
                    entry["expect_body_prefix"] = header_line(f)[: f.size].decode("ascii")
                entries.append(entry)
        elif cls.kind == "webstone-cgi":
            size = size_bytes or cls.size_bytes or 10240
            entries.append(_entry(f"{base}{WEBSTONE_CGI_PATH}?size={size}", share, index, size))
        elif cls.kind == "specweb99-get":
            if manifest is None:
                raise ConfigError(f"class {cls.name!r} is a SPECweb99 dynamic GET but no fileset manifest was given")
            files = manifest.files if size_bytes is None else tuple(f for f in manifest.files if f.size == size_bytes)
            within = sum(f.weight for f in files) if size_bytes is not None else 1.0
            for f in files:
                # The envelope names the client's address and port: its length is not known in advance.
                entries.append(
                    {"url": f"{base}{SPECWEB99_DYNAMIC_PATH}?/{f.path}", "weight": share * f.weight / within,
                     "class": index}
                )  # fmt: skip
        elif cls.kind in ("specweb99", "loadfile"):
            # The engine draws these itself: SPECweb99's requests (RunSpec.specweb99), a loadfile's operations.
            continue
        elif cls.kind == "url":
            # Whatever the URL answers: its size is not known, so only the status is judged.
            entries.append({"url": base_url, "weight": share, "class": index})
        else:
            entries.append(_entry(f"{base}{DYNAMIC_PATHS[cls.kind]}", share, index, ENV_PAGE_BYTES))
    return RequestTable(tuple(entries), tuple(c.name for c in workload.classes))


def _entry(url: str, weight: float, class_index: int, size: int) -> dict[str, Any]:
    return {"url": url, "weight": weight, "class": class_index, "expect_body_bytes": size}


def _base_for(tls: bool, name: str, base_url: str, tls_base_url: str | None) -> str:
    if not tls:
        return base_url.rstrip("/")
    if tls_base_url is None:
        raise ConfigError(
            f"class {name!r} goes over TLS: give the target's https URL with --tls-target https://host:port"
        )
    return tls_base_url.rstrip("/")


# On a site from the log, crest's dynamic page answers these classes (a site has no programs, redirects or errors).
_TO_THE_PAGE = frozenset({DYNAMIC_CLASS, REPLAY_CLASSES.index("redirect"), REPLAY_CLASSES.index("server-error")})


def logged_path(target: str) -> str:
    """A logged request target as a path and query: an absolute-form target (a proxy's log) loses its
    scheme and host."""
    if "://" in target:
        parts = urlsplit(target)
        return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return target if target.startswith("/") else f"/{target}"


def dynamic_page(base_url: str) -> str:
    """Where a replay's dynamic requests go on a target serving a log's site: crest-bytes, which answers
    ?size=N with N bytes (the logged size)."""
    return f"{base_url.rstrip('/')}{WEBSTONE_CGI_PATH}"


def replay_table(summary: LogSummary, base_url: str, dynamic_url: str | None) -> RequestTable:
    """A log's request mix (a replay's mode "mix"): each distinct logged request an entry weighted by how
    often it was logged, with its method and its logged status to expect, in its class (crest.replay's
    CLASSES). With `dynamic_url` (a site from the log), dynamic, redirect and server-error entries go there
    with their logged size (200 expected), and each static 200 must have its logged size too."""
    base = base_url.rstrip("/")
    total = sum(e.count for e in summary.entries) or 1
    entries: list[dict[str, Any]] = []
    for e in summary.entries:
        entry: dict[str, Any] = {"weight": e.count / total, "class": e.cls}
        if dynamic_url is not None and e.cls in _TO_THE_PAGE:
            # crest's dynamic page takes no body: what a POST sent is not in the log. A site has no
            # redirects and no failing programs either: the page answers those with their logged size too.
            entry.update(url=f"{dynamic_url}?size={e.body_bytes}", expect_status=200,
                         expect_body_bytes=e.body_bytes)  # fmt: skip
        else:
            target = logged_path(e.target)
            entry.update(url=f"{base}{target}", method=e.method)
            # A logged 304 answered a conditional request, which crest does not send: today's rule judges it.
            if e.status != 304:
                entry["expect_status"] = e.status
            if dynamic_url is not None and e.status == 200 and e.method == "GET" and \
                    REPLAY_CLASSES[e.cls] in STATIC_CLASSES:  # fmt: skip
                entry["expect_body_bytes"] = e.body_bytes
        entries.append(entry)
    return RequestTable(tuple(entries), tuple(summary.classes))


def har_table(
    har: Har, base_url: str, hosts: Mapping[str, str], dynamic_url: str | None = None, *, bodies: bool = True
) -> tuple[RequestTable, list[dict[str, Any]]]:
    """A HAR's requests as the engine's table (in the order the browser started them, each in its resource
    class, each with its method and its recorded status to expect) and its pages (RunConfig.pages' list:
    name, class, entries into the table, the document first). A request goes to the URL its recorded host
    maps to in `hosts`, else to `base_url`, path and query kept; a host mapped to "skip" is not sent. With
    `dynamic_url` (a site from the HAR), the target's own dynamic requests (a query string, a POST) go there
    with their recorded size, 200 expected. With `bodies` (HTTP/1.x), a request the HAR has a body for
    (postData) is sent with it.

    Raises:
        ConfigError: a page whose document is on a skipped host.
    """
    base = base_url.rstrip("/")
    classes = har.classes()
    entries: list[dict[str, Any]] = []
    where: dict[int, int] = {}
    for i, e in enumerate(har.entries):
        to = hosts.get(e.host, base)
        if to == HAR_SKIP:
            continue
        entry: dict[str, Any] = {"url": f"{to.rstrip('/')}{e.target}", "weight": 1.0,
                                 "class": classes.index(e.resource), "method": e.method}  # fmt: skip
        if dynamic_url is not None and to == base and is_dynamic(e):
            # crest's dynamic page takes no body, and answers GET: the method is the site's, not the HAR's.
            entry.update(url=f"{dynamic_url}?size={max(e.body_bytes, 0)}", method="GET", expect_status=200)
        else:
            if e.status not in (0, 304):
                # A 304 answered the browser's conditional request, which crest does not send; 0: no response
                # was recorded (blocked, aborted). Both are judged by today's rule (any 2xx or 3xx).
                entry["expect_status"] = e.status
            if bodies and e.post_data is not None:
                entry["body"] = e.post_data
        where[i] = len(entries)
        entries.append(entry)
    pages = []
    for page in har.pages:
        if page.entries[0] not in where:
            raise ConfigError(f"{har.path}: page {page.name}: its document's host {har.entries[page.entries[0]].host}"
                              " is skipped: map it to a URL in workload.har.hosts")  # fmt: skip
        pages.append({"name": page.name, "class": classes.index(page.class_name),
                      "entries": [where[i] for i in page.entries if i in where]})  # fmt: skip
    return RequestTable(tuple(entries), classes), pages
