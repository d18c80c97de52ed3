"""A site from a HAR recording: what a target crest starts serves for a HAR replay whose suite names no site.
Each recorded GET answered 200 (or 304, from the browser's cache) without a query string becomes a file at its
path with its recorded size, as a log's site does (crest.replay.site's layout, content and manifest); the
other requests are the site's dynamic ones, answered by crest's dynamic page with their recorded size.
Reads the HAR, writes the site; never prints.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from crest.replay.har import Har, HarEntry
from crest.replay.site import SITE_MANIFEST, Site, plan_site, write_planned
from crest.replay.summary import CLASSES, LogEntry, LogSummary

_STATIC, _DYNAMIC = CLASSES.index("static-1k"), CLASSES.index("dynamic")


def is_dynamic(e: HarEntry) -> bool:
    """Whether a site from the HAR answers `e` with crest's dynamic page: a query string, or a method
    other than GET and HEAD (what a log's site calls dynamic)."""
    return "?" in e.target or e.method not in ("GET", "HEAD")


def har_summary(har: Har) -> LogSummary:
    """The HAR's distinct requests as a log's summary (crest.replay.site plans a site from one)."""
    seen: dict[tuple[str, str], LogEntry] = {}
    for e in har.entries:
        key = (e.method, e.target)
        if key in seen:
            continue
        status = 200 if e.status == 304 else e.status
        if is_dynamic(e):
            cls = _DYNAMIC
        elif 300 <= status < 400:
            cls = CLASSES.index("redirect")
        elif 400 <= status < 500:
            cls = CLASSES.index("client-error")
        elif status >= 500:
            cls = CLASSES.index("server-error")
        else:
            cls = _STATIC
        seen[key] = LogEntry(e.method, e.target, status, max(e.body_bytes, 0), 1, cls)
    entries = tuple(seen.values())
    counts = tuple(sum(1 for x in entries if x.cls == i) for i in range(len(CLASSES)))
    return LogSummary(
        path=har.path, format="har", lines=len(har.entries), requests=len(har.entries), skipped=0,
        distinct=len(entries), sessions=len(har.pages), first_unix_s=0.0, duration_s=0.0, peak_concurrency=None,
        class_requests=counts, classes=CLASSES, table_bytes=0, entries=entries,
    )  # fmt: skip


def plan_har_site(har: Har) -> Site:
    """The site of a HAR: pure."""
    return plan_site(har_summary(har))


def cached_har_site(har: Har) -> Path:
    """The site of `har` in crest's cache (written on first use), keyed by the file's path, size and
    modification time."""
    from crest.filesets.cache import cache_root

    where = Path(har.path).resolve()
    st = where.stat()
    key = json.dumps(["har", str(where), st.st_size, st.st_mtime_ns])
    root = cache_root() / "sites" / hashlib.sha256(key.encode()).hexdigest()[:16]
    if not (root / SITE_MANIFEST).is_file():
        root.parent.mkdir(parents=True, exist_ok=True)
        for path in (root.parent, root.parent.parent):
            path.chmod(0o755)  # a server that drops to another account reads it
        write_planned(plan_har_site(har), root)
    return root
