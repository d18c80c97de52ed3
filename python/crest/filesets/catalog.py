"""The fileset names and build_manifest(), which validates parameters and dispatches; pure, deterministic, no I/O.

`seed` is validated and recorded in every manifest, but no current fileset
has a random element (each is fully defined by its published table), so it
does not change the files; it is there so that a future randomised fileset is
reproducible from its manifest alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from crest.filesets import specweb, tables, webbench
from crest.filesets.errors import FilesetError, UnknownFilesetError
from crest.filesets.model import FileEntry, Manifest

NAMES: tuple[str, ...] = (
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
DEFAULT_SPECWEB99_CONNECTIONS = 1
# 65,598 directories, 336 GB: beyond any published SPECweb99 result, and a typo
# such as 1M would otherwise spend minutes and gigabytes of RAM building the manifest.
MAX_SPECWEB99_CONNECTIONS = 100_000

_FIXED: dict[str, Callable[[], tuple[FileEntry, ...]]] = {
    "webstone": tables.webstone,
    "webcat-webstone": lambda: tables.webcat(tables.WEBCAT_WEBSTONE),
    "webcat-large-filemix": lambda: tables.webcat(tables.WEBCAT_LARGE_FILEMIX),
    "webcat-cgi-html": lambda: tables.webcat(tables.WEBCAT_CGI_HTML_STATIC),
    "webbench": webbench.webbench,
    "sizes": tables.sizes,
    "specweb99-lengths": specweb.specweb99_lengths,
}
# A sized fileset repeats its table this many times at most (webcat-large-filemix × 100,000 is 200 GB).
MAX_COPIES = 100_000


def check_name(name: str) -> str:
    """Return `name` if it is a known fileset, else raise UnknownFilesetError listing the known names."""
    if name not in NAMES:
        raise UnknownFilesetError(f"unknown fileset {name!r}: choose one of {', '.join(NAMES)}")
    return name


def build_manifest(name: str, *, connections: int | None = None, seed: int = 0, copies: int | None = None) -> Manifest:
    """The manifest of fileset `name`; `connections` sizes specweb99 (default 1 → 25 directories) and is rejected elsewhere.

    `copies` sizes a table fileset: its table repeated that many times (files per size),
    copy 1 at the table's own paths and copy k under xK/, each file's share divided by
    `copies` so the mix of sizes is the table's; the memory studies need a working set
    larger than the target's memory, which one file per size never is.
    """
    check_name(name)
    if not _is_int(seed) or seed < 0:
        raise FilesetError(f"invalid seed {seed!r}: expected a whole number >= 0")
    if connections is not None and name != "specweb99":
        raise FilesetError(f"--connections applies only to specweb99 (it sets the directory count); drop it for {name}")
    if copies is not None:
        if name in ("specweb99", "specweb96"):
            raise FilesetError(f"{name} is sized by its directories (--connections for specweb99), not by copies")
        if not _is_int(copies) or not 1 <= copies <= MAX_COPIES:
            raise FilesetError(f"invalid copies {copies!r}: expected a whole number from 1 to {MAX_COPIES:,}")
    params: dict[str, Any] = {"connections": None, "seed": seed}
    if name == "specweb99":
        conns = DEFAULT_SPECWEB99_CONNECTIONS if connections is None else connections
        if not _is_int(conns) or conns < 1:
            raise FilesetError(f"invalid connections {conns!r}: expected a whole number >= 1, e.g. 100")
        if conns > MAX_SPECWEB99_CONNECTIONS:
            raise FilesetError(
                f"connections {conns} is too many for specweb99: at most {MAX_SPECWEB99_CONNECTIONS:,} "
                f"({specweb.specweb99_directories(MAX_SPECWEB99_CONNECTIONS):,} directories)"
            )
        extra, files = specweb.specweb99(conns)
        params.update(connections=conns, **extra)
    elif name == "specweb96":
        extra, files = specweb.specweb96()
        params.update(extra)
    else:
        files = _FIXED[name]()
    if copies is not None:
        params["copies"] = copies
        files = _repeat(files, copies)
    return Manifest(fileset=name, params=params, files=files)


def copies_for(name: str, size_bytes: int) -> int:
    """Copies of table fileset `name` whose total is at least `size_bytes` (a working-set size)."""
    one = build_manifest(name, copies=1).total_bytes()
    copies = max(1, -(-size_bytes // one))
    if copies > MAX_COPIES:
        raise FilesetError(
            f"{size_bytes:,} bytes of {name} is {copies:,} copies of its {one:,}-byte table: at most {MAX_COPIES:,}"
        )
    return copies


def _repeat(files: tuple[FileEntry, ...], copies: int) -> tuple[FileEntry, ...]:
    return tuple(
        FileEntry(path=e.path if k == 1 else f"x{k}/{e.path}", size=e.size, cls=e.cls, weight=e.weight / copies)
        for k in range(1, copies + 1)
        for e in files
    )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
