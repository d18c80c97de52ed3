"""A site from a log (`crest fileset from-log LOG DIR`): a docroot whose files have each logged 200
response's path and size, with deterministic content (crest.filesets.content), and a manifest that lists
them, the dynamic requests (served at replay by crest's dynamic page with their logged size) and what was
left out. Owns the site's layout, its manifest and checking a site against it; never prints.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from crest.errors import ConfigError
from crest.filesets.content import iter_chunks
from crest.filesets.model import FileEntry
from crest.replay.summary import CLASSES, DYNAMIC_CLASS, IN_A_SUITE, STATIC_CLASSES, LogEntry, LogSummary, scan

SITE_MANIFEST = "crest-site.json"
SITE_FORMAT = "crest-site-manifest/1"
INDEX = "index.html"
_FILE_MODE = 0o644
_DIR_MODE = 0o755


@dataclass(frozen=True)
class SiteFile:
    """One file of a site: the URL path it answers, where it is under the site, its size and class."""

    url_path: str  # as logged (percent-encoded), with its leading "/"
    file: str  # relative to the site, "/"-separated, decoded
    size: int
    cls: str

    def entry(self) -> FileEntry:
        # The content is a function of the logged path (ASCII), so a response can be checked without the site.
        return FileEntry(path=_ascii(self.url_path.lstrip("/")) or INDEX, size=self.size, cls=self.cls, weight=0.0)


@dataclass(frozen=True)
class Site:
    """What a site holds and what the log had that it does not."""

    log: str
    format: str
    files: tuple[SiteFile, ...]
    dynamic: tuple[dict[str, Any], ...]  # method, target, size: crest's dynamic page answers them
    skipped: tuple[dict[str, str], ...] = field(default=())  # target and why it has no file
    not_found: int = 0  # logged 4xx entries: not written, so they stay 4xx

    def total_bytes(self) -> int:
        """Bytes of every file."""
        return sum(f.size for f in self.files)

    def to_json(self) -> str:
        """The manifest: a header, then one file per line (diffs and greps well)."""
        head = {"format": SITE_FORMAT, "log": self.log, "log_format": self.format, "file_count": len(self.files),
                "total_bytes": self.total_bytes(), "not_found": self.not_found}  # fmt: skip
        lines = [f"  {json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
        rows = ",\n".join(f"    {json.dumps([f.url_path, f.file, f.size, f.cls])}" for f in self.files)
        dyn = ",\n".join(f"    {json.dumps(d)}" for d in self.dynamic)
        skip = ",\n".join(f"    {json.dumps(s)}" for s in self.skipped)
        return ("{\n" + "\n".join(lines) + '\n  "files": [\n' + rows + ("\n" if rows else "") + "  ],\n"
                + '  "dynamic": [\n' + dyn + ("\n" if dyn else "") + "  ],\n"
                + '  "skipped": [\n' + skip + ("\n" if skip else "") + "  ]\n}\n")  # fmt: skip

    @classmethod
    def from_json(cls, text: str, where: str) -> Site:
        """Read a manifest back; ConfigError (one line) when it is not a valid site manifest."""
        try:
            doc = json.loads(text)
            if doc.get("format") != SITE_FORMAT:
                raise ValueError(f'"format" is not "{SITE_FORMAT}"')
            files = tuple(SiteFile(str(u), str(f), int(s), str(c)) for u, f, s, c in doc["files"])
            for f in files:
                _safe(f.file)
            return cls(str(doc["log"]), str(doc["log_format"]), files, tuple(doc["dynamic"]),
                       tuple(doc["skipped"]), int(doc["not_found"]))  # fmt: skip
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ConfigError(f"{where} is not a valid site manifest ({exc}): write the site again with"
                              " `crest fileset from-log LOG DIR`") from None  # fmt: skip


def _ascii(text: str) -> str:
    return text if text.isascii() else quote(text, safe="/%?=&;:@+$,!~*'()")


def _safe(relative: str) -> str:
    """A file path under the site that stays inside it (no "..", no hidden component, no NUL)."""
    parts = relative.split("/")
    if not relative or any(not p or p in (".", "..") or p.startswith(".") or "\0" in p for p in parts):
        raise ValueError(f"unsafe path {relative!r}")
    if relative == SITE_MANIFEST:
        raise ValueError(f"{SITE_MANIFEST} is the site's manifest")
    return relative


def plan_site(summary: LogSummary) -> Site:
    """Which logged requests become files, which are dynamic and which are left out: pure.

    A static-class entry logged with status 200 for GET or HEAD is a file at its path (decoded; `/` and
    paths ending in `/` are index.html) with its logged body size (GET's when both were logged). Dynamic
    entries (a query string, POST, ...) are listed with their logged size. A path that is both a file and a
    directory's prefix: the directory wins, the file is skipped. 4xx are not written (they stay 4xx).
    """
    sizes: dict[str, tuple[str, int, str, bool]] = {}  # file -> (url path, size, class, from GET)
    dynamic: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    not_found = 0
    for e in summary.entries:
        name = CLASSES[e.cls] if 0 <= e.cls < len(CLASSES) else ""
        if e.cls == DYNAMIC_CLASS:
            dynamic.append({"method": e.method, "target": e.target, "size": e.body_bytes, "status": e.status})
            continue
        if 400 <= e.status < 500:
            not_found += 1
            continue
        if name not in STATIC_CLASSES or e.status != 200 or e.method not in ("GET", "HEAD"):
            skipped.append({"target": e.target, "why": f"{e.method} logged {e.status}: no file answers it"})
            continue
        try:
            url_path, file = _file_of(e)
        except ValueError as exc:
            skipped.append({"target": e.target, "why": str(exc)})
            continue
        held = sizes.get(file)
        if held is not None and (held[3] or e.method == "HEAD"):
            continue  # GET's size wins over HEAD's (HEAD logs no body)
        sizes[file] = (url_path, e.body_bytes, name, e.method == "GET")
    prefixes = {"/".join(f.split("/")[:i]) for f in sizes for i in range(1, f.count("/") + 1)}
    files = []
    for file, (url_path, size, cls, _) in sizes.items():
        if file in prefixes:
            skipped.append({"target": url_path, "why": "also a directory of other logged paths (the directory wins)"})
            continue
        files.append(SiteFile(url_path, file, size, cls))
    files.sort(key=lambda f: f.file)
    return Site(summary.path, summary.format, tuple(files), tuple(dynamic), tuple(skipped), not_found)


def _file_of(e: LogEntry) -> tuple[str, str]:
    """(URL path, file under the site) of a static entry; ValueError for a path that cannot be a file."""
    path = urlsplit(e.target).path if "://" in e.target else e.target.split("#", 1)[0]
    if not path.startswith("/"):
        raise ValueError(f"target {e.target!r} is not an absolute path")
    decoded = unquote(path)
    relative = decoded.lstrip("/")
    if not relative or decoded.endswith("/"):
        relative += INDEX
    return path, _safe(relative)


@dataclass(frozen=True)
class Written:
    """What writing a site did."""

    site: Site
    manifest_path: Path
    removed: int  # files of a previous site there that this one does not have


def write_site(
    log: str | Path, root: Path, options: dict[str, Any] | None = None, said: Mapping[str, str] = IN_A_SUITE
) -> Written:
    """Read `log` and write its site into `root` (created if missing): every file, then the manifest (a
    refusal of the log names the reader's options as `said`: see crest.replay.summary).

    Raises:
        ConfigError: the log cannot be read (as crest.replay.scan says), `root` holds something other than
            an earlier site, or a file cannot be written.
    """
    root = Path(root)
    _previous(root)  # refused before the log is read
    return write_planned(plan_site(scan(Path(log).resolve(), options, said)), root)


def write_planned(site: Site, root: Path) -> Written:
    """Write a planned site into `root` (created if missing): every file, then the manifest; the files of an
    earlier site there that this one does not have are removed.

    Raises:
        ConfigError: `root` holds something other than an earlier site, or a file cannot be written.
    """
    previous = _previous(root)
    keep = {f.file for f in site.files}
    try:
        removed = _remove(root, (f.file for f in previous.files if f.file not in keep)) if previous else 0
        for f in site.files:
            _write(root, f)
        manifest = root / SITE_MANIFEST
        manifest.write_text(site.to_json(), encoding="utf-8")
        os.chmod(manifest, _FILE_MODE)
    except OSError as exc:
        raise ConfigError(f"cannot write the site at {exc.filename or root}: {exc.strerror or exc}: check"
                          " permissions and free space") from None  # fmt: skip
    return Written(site, manifest, removed)


def _previous(root: Path) -> Site | None:
    """The site already in `root`, None for a missing or empty directory; anything else is refused."""
    if root.exists() and not root.is_dir():
        raise ConfigError(f"{root} exists and is not a directory: choose a directory for the site")
    if not root.exists() or not any(root.iterdir()):
        return None
    manifest = root / SITE_MANIFEST
    if not manifest.is_file():
        raise ConfigError(f"{root} is not empty and holds no site crest wrote ({SITE_MANIFEST}): choose an empty"
                          " directory, or remove what is there")  # fmt: skip
    return load_site(root)


def load_site(root: Path) -> Site:
    """The manifest of the site in `root`.

    Raises:
        ConfigError: no manifest, or not a valid one.
    """
    manifest = Path(root) / SITE_MANIFEST
    try:
        text = manifest.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        raise ConfigError(f"{root} has no readable {SITE_MANIFEST}: write a site there with"
                          f" `crest fileset from-log LOG {root}`") from None  # fmt: skip
    return Site.from_json(text, str(manifest))


def _remove(root: Path, files: Iterable[str]) -> int:
    removed = 0
    for file in files:
        try:
            (root / file).unlink()
            removed += 1
        except FileNotFoundError:
            pass
    return removed


def _write(root: Path, f: SiteFile) -> None:
    path = root / f.file
    parent = path.parent
    if not parent.is_dir():
        if parent.exists() or parent.is_symlink():
            parent.unlink()  # an earlier site's file where this one has a directory
        parent.mkdir(mode=_DIR_MODE, parents=True, exist_ok=True)
    if path.is_dir():
        shutil.rmtree(path)  # an earlier site's directory where this one has a file
    tmp = path.with_name(f".{path.name}.crest-tmp")
    with open(tmp, "wb") as out:
        for chunk in iter_chunks(f.entry()):
            out.write(chunk)
        os.fchmod(out.fileno(), _FILE_MODE)
    os.replace(tmp, path)


def check_site(root: Path, site: Site) -> list[str]:
    """One line per file of `site` that is missing or differs from its content; [] when intact."""
    problems = []
    for f in site.files:
        path = Path(root) / f.file
        try:
            data = path.read_bytes()
        except OSError:
            problems.append(f"{f.file}: missing")
            continue
        want = b"".join(iter_chunks(f.entry()))
        if data != want:
            problems.append(f"{f.file}: size {len(data)}, expected {f.size}" if len(data) != f.size
                            else f"{f.file}: content differs")  # fmt: skip
    return problems


def cached_site(log: str | Path, options: dict[str, Any] | None = None) -> Path:
    """The site of `log` in crest's cache (written on first use): what a target crest starts serves for a
    replay whose suite names no site. Keyed by the log's path, size, modification time and reader options."""
    from crest.filesets.cache import cache_root

    where = Path(log).resolve()
    try:
        st = where.stat()
    except OSError as exc:
        raise ConfigError(f"cannot read {where}: {exc.strerror or exc}: give the path of an access log") from None
    key = json.dumps([str(where), st.st_size, st.st_mtime_ns, options or {}], sort_keys=True)
    root = cache_root() / "sites" / hashlib.sha256(key.encode()).hexdigest()[:16]
    if not (root / SITE_MANIFEST).is_file():
        root.parent.mkdir(parents=True, exist_ok=True)
        for path in (root.parent, root.parent.parent):
            path.chmod(_DIR_MODE)  # a server that drops to another account reads it
        write_site(where, root, options)
    return root
