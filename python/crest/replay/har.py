"""HAR recordings (HTTP Archive 1.2, as browsers' developer tools save them) as page loads: each page with
its requests in the order the browser started them, each request's resource class. Reads one JSON file;
owns the wording of a HAR it refuses; never prints, never sends.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from crest.errors import ConfigError

# The request classes of a page load, by what the browser fetched (Chrome's `_resourceType`, else the
# response's MIME type); each page adds a class `page:<name>` whose latency is the page's load time.
RESOURCE_CLASSES = ("document", "script", "stylesheet", "image", "font", "xhr", "other")
PAGE_CLASS_PREFIX = "page:"
# Chrome's resource types folded into RESOURCE_CLASSES (the rest are "other").
_RESOURCE_ALIASES = {"fetch": "xhr", "eventsource": "xhr", "media": "image"}
_MIME_CLASSES = (
    ("text/html", "document"), ("application/xhtml", "document"), ("text/css", "stylesheet"),
    ("javascript", "script"), ("ecmascript", "script"), ("image/", "image"), ("font/", "font"),
    ("application/font", "font"), ("application/json", "xhr"),
)  # fmt: skip
# A HAR bigger than this is no browser's recording of page loads: refused before it is parsed.
MAX_HAR_BYTES = 512 * 1024 * 1024
_PAGE_NAME = re.compile(r"[^A-Za-z0-9._/~%-]+")
MAX_PAGE_NAME = 60


@dataclass(frozen=True)
class HarEntry:
    """One request the browser made."""

    method: str
    url: str
    status: int  # 0: the browser got no response (blocked, aborted)
    body_bytes: int  # the response body's size as the browser received it (decoded); -1 unknown
    resource: str  # one of RESOURCE_CLASSES
    started_s: float  # from the recording's first request
    connection: str | None  # the browser's connection id, when the HAR has it
    http_version: str  # as recorded ("HTTP/1.1", "h2", "http/2.0", ...); "" when absent
    post_data: str | None  # the request body's text, when the HAR has it

    @property
    def host(self) -> str:
        """The host and port the browser sent it to (as in the URL)."""
        return urlsplit(self.url).netloc

    @property
    def target(self) -> str:
        """Its path and query, as a request line carries them."""
        parts = urlsplit(self.url)
        return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


@dataclass(frozen=True)
class HarPage:
    """One page load: its requests in the order they started, the document first."""

    id: str
    name: str  # unique in the recording; its class is PAGE_CLASS_PREFIX + name
    title: str
    started_s: float
    on_content_load_ms: float | None
    on_load_ms: float | None
    entries: tuple[int, ...]  # indices into Har.entries

    @property
    def class_name(self) -> str:
        """The class whose latency is this page's load time."""
        return PAGE_CLASS_PREFIX + self.name


@dataclass(frozen=True)
class Har:
    """A HAR file read whole: who wrote it, its pages and their requests."""

    path: str
    creator: str
    pages: tuple[HarPage, ...]
    entries: tuple[HarEntry, ...]

    def classes(self) -> tuple[str, ...]:
        """The run's classes: the resource classes, then one per page."""
        return RESOURCE_CLASSES + tuple(p.class_name for p in self.pages)

    def facts(self) -> dict[str, Any]:
        """What a run stores of the recording it replays (no URL: a path or query could be in one)."""
        resources = {c: sum(1 for e in self.entries if e.resource == c) for c in RESOURCE_CLASSES}
        return {
            "creator": self.creator, "pages": len(self.pages), "requests": len(self.entries),
            "hosts": len({e.host for e in self.entries}), "resource_requests": resources,
            "recorded_on_load_ms": {p.name: p.on_load_ms for p in self.pages},
        }  # fmt: skip


def read_har(path: str | Path) -> Har:
    """Read the HAR file at `path`.

    Raises:
        ConfigError: no such file, not JSON, no log.entries, an entry without request.url, method or a
            valid startedDateTime, or no request at all: one line naming the file, the place and the fix.
    """
    where = Path(path)
    if not where.is_file():
        raise ConfigError(f"no HAR file at {where}: give the path of a HAR recording (a browser's Save all as HAR)")
    if where.stat().st_size > MAX_HAR_BYTES:
        raise ConfigError(f"{where}: larger than {MAX_HAR_BYTES >> 20} MiB: record fewer pages per HAR file")
    try:
        doc = json.loads(where.read_bytes())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{where}: not a HAR file: not JSON ({exc}): save the recording as HAR") from None
    return parse_har(doc, str(where))


def parse_har(doc: Any, origin: str = "HAR") -> Har:
    """A HAR document (parsed JSON) as pages and requests; `origin` names it in errors.

    Raises:
        ConfigError: as read_har.
    """
    log = doc.get("log") if isinstance(doc, dict) else None
    if not isinstance(log, dict) or not isinstance(log.get("entries"), list):
        raise ConfigError(f"{origin}: not a HAR file: no log.entries list: save the recording as HAR 1.2")
    raw = log["entries"]
    if not raw:
        raise ConfigError(f"{origin}: log.entries is empty: record at least one page load")
    creator = log.get("creator")
    creator_text = ""
    if isinstance(creator, dict):
        creator_text = " ".join(str(creator.get(k, "")) for k in ("name", "version")).strip()
    parsed = [_entry(e, i, origin) for i, e in enumerate(raw)]
    first = min(when for when, _, _ in parsed)
    order = sorted(range(len(parsed)), key=lambda i: parsed[i][0])  # stable: ties keep the file's order
    entries = tuple(HarEntry(**{**parsed[i][1], "started_s": round(parsed[i][0] - first, 6)}) for i in order)
    refs = [parsed[i][2] for i in order]
    return Har(origin, creator_text, _pages(log.get("pages"), refs, entries, first, origin), entries)


def _entry(e: Any, i: int, origin: str) -> tuple[float, dict[str, Any], str | None]:
    where = f"{origin}: log.entries[{i}]"
    request = e.get("request") if isinstance(e, dict) else None
    if not isinstance(request, dict):
        raise ConfigError(f"{where}: no request object: every entry of a HAR has one")
    url = request.get("url")
    if not isinstance(url, str) or not url:
        raise ConfigError(f"{where}: no request.url: every entry of a HAR names the URL it requested")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(f"{where}: request.url {url[:80]!r} is not an http(s) URL: remove the entry")
    method = request.get("method")
    if not isinstance(method, str) or not re.fullmatch(r"[A-Za-z]{1,20}", method):
        raise ConfigError(f"{where}: request.method {method!r} is not an HTTP method: every entry names one")
    when = _time(e.get("startedDateTime"))
    if when is None:
        raise ConfigError(f"{where}: startedDateTime {e.get('startedDateTime')!r} is not an ISO 8601 time"
                          " (2026-11-27T21:00:00.123Z): every entry says when it started")  # fmt: skip
    response = _object(e.get("response"))
    content = _object(response.get("content"))
    status = response.get("status")
    size = content.get("size")
    body = response.get("bodySize")
    body_bytes = size if _count(size) else body if _count(body) else -1
    post = request.get("postData")
    post_text = post.get("text") if isinstance(post, dict) and isinstance(post.get("text"), str) else None
    connection = e.get("connection")
    fields = {
        "method": method.upper(), "url": url, "status": status if _count(status) else 0, "body_bytes": body_bytes,
        "resource": _resource(e.get("_resourceType"), content.get("mimeType")),
        "connection": str(connection) if isinstance(connection, (str, int)) and connection != "" else None,
        "http_version": str(response.get("httpVersion") or request.get("httpVersion") or ""),
        "post_data": post_text,
    }  # fmt: skip
    ref = e.get("pageref")
    return when, fields, ref if isinstance(ref, str) and ref else None


def _object(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _time(value: object) -> float | None:
    """Unix seconds of an ISO 8601 time (a trailing Z, any fraction of a second)."""
    if not isinstance(value, str):
        return None
    text = value.strip().replace("Z", "+00:00").replace("z", "+00:00")
    # Python before 3.11 reads at most 6 digits of a fraction: cut any longer one.
    text = re.sub(r"(\.\d{6})\d+", r"\1", text)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    return moment.timestamp()


def _resource(kind: object, mime: object) -> str:
    if isinstance(kind, str) and kind:
        kind = kind.lower()
        kind = _RESOURCE_ALIASES.get(kind, kind)
        return kind if kind in RESOURCE_CLASSES else "other"
    if isinstance(mime, str):
        mime = mime.lower()
        for needle, cls in _MIME_CLASSES:
            if needle in mime:
                return cls
    return "other"


def _pages(
    raw: object, refs: list[str | None], entries: tuple[HarEntry, ...], first: float, origin: str
) -> tuple[HarPage, ...]:
    """The recording's pages, each with its entries (in started order); entries of no page, or of a page the
    HAR does not list, make pages of their own (a recording without pages is one page)."""
    listed: dict[str, dict[str, Any]] = {}
    for i, p in enumerate(raw if isinstance(raw, list) else []):
        if not isinstance(p, dict) or not isinstance(p.get("id"), str) or not p["id"]:
            raise ConfigError(f"{origin}: log.pages[{i}]: no id: every page of a HAR has one")
        listed.setdefault(p["id"], p)
    members: dict[str, list[int]] = {}
    for i, ref in enumerate(refs):
        members.setdefault(ref or "", []).append(i)
    found: list[tuple[float, str, str, dict[str, Any], list[int]]] = []
    for pid in [pid for pid in listed if pid in members] + [r for r in members if r not in listed]:
        indices = members[pid]
        page = listed.get(pid, {})
        started = _time(page.get("startedDateTime"))
        title = page.get("title") if isinstance(page.get("title"), str) else ""
        begun = round(started - first, 6) if started is not None else entries[indices[0]].started_s
        found.append((begun, pid, title or entries[indices[0]].url, _object(page.get("pageTimings")), indices))
    found.sort(key=lambda f: f[0])
    pages: list[HarPage] = []
    names: set[str] = set()
    for begun, pid, title, timings, indices in found:
        name = _unique(_page_name(entries[indices[0]]), names)
        names.add(name)
        pages.append(HarPage(
            id=pid or "(no page)", name=name, title=title, started_s=begun,
            on_content_load_ms=_ms(timings.get("onContentLoad")), on_load_ms=_ms(timings.get("onLoad")),
            entries=tuple(indices),
        ))  # fmt: skip
    return tuple(pages)


def _ms(value: object) -> float | None:
    # HAR writes -1 for a timing that does not apply.
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return None


def _page_name(document: HarEntry) -> str:
    """A page's name: its document's path, cut to a readable length."""
    name = _PAGE_NAME.sub("_", urlsplit(document.url).path or "/")
    return name if len(name) <= MAX_PAGE_NAME else name[: MAX_PAGE_NAME - 1] + "~"


def _unique(name: str, taken: set[str]) -> str:
    if name not in taken:
        return name
    n = 2
    while f"{name}#{n}" in taken:
        n += 1
    return f"{name}#{n}"
