"""Table-defined filesets (WebStone filelist.standard, the three WebCAT mixes, the size sweep); pure, no I/O.

Each is a list of (share, sizes) rows copied from DESIGN.md §4 and the
references; a row's share is split evenly across its sizes, and every file is
its own size class. K means 1024 here, as in the WebCAT tables.
"""

from __future__ import annotations

from crest.filesets.model import FileEntry

KIB = 1024
MIB = 1024 * 1024

# WebStone 2.x filelist.standard: (URL path, bytes, weight per mille, class).
WEBSTONE_STANDARD = (
    ("file500.html", 500, 350, "500B"),
    ("file5k.html", 5125, 500, "5K"),
    ("file50k.html", 51250, 140, "50K"),
    ("file500k.html", 512500, 9, "500K"),
    ("file5m.html", 5248000, 1, "5M"),
)

# WebCAT (seed 004, Compaq's ProLiant report): (percent of requests, sizes sharing it).
WEBCAT_WEBSTONE = (
    (40, ("2K", "3K")),
    (25, ("1K", "5K")),
    (15, ("4K", "6K")),
    (5, ("7K",)),
    (4, ("8K", "9K", "10K", "11K")),
    (4, ("12K", "14K", "15K", "17K", "18K")),
    (6, ("33K",)),
    (1, ("200K",)),
)
WEBCAT_LARGE_FILEMIX = (
    (8, ("256B",)),
    (9, ("512B",)),
    (8, ("1K",)),
    (17, ("2K",)),
    (12, ("3K",)),
    (7, ("4K",)),
    (10, ("6K",)),
    (5, ("8K",)),
    (10, ("16K",)),
    (7, ("32K",)),
    (4, ("64K",)),
    (1, ("256K",)),
    (1, ("512K",)),
    (1, ("1M",)),
)
# The static 25 % of the CGI/HTML mix (the other 75 % is a CGI returning 10K).
# The table lists 256K twice (first and last row, as printed); they stay two files.
WEBCAT_CGI_HTML_STATIC = (
    (2, ("256K",)),
    (2, ("512B",)),
    (2, ("1K",)),
    (3, ("2K",)),
    (3, ("3K",)),
    (2, ("4K",)),
    (3, ("6K",)),
    (1, ("8K",)),
    (3, ("16K",)),
    (2, ("32K",)),
    (1, ("64K",)),
    (1, ("256K",)),
)

# Zeus' "unbundled" sweep covered content lengths 1 .. 10,000,000 bytes; crest
# takes the 1-2-5 decade series over that range (22 files, 18,888,888 bytes).
SWEEP_SIZES = tuple(m * 10**e for e in range(7) for m in (1, 2, 5)) + (10_000_000,)


def label_bytes(label: str) -> int:
    """Bytes of a WebCAT size label: "512B" → 512, "2K" → 2048, "1M" → 1048576."""
    unit = {"B": 1, "K": KIB, "M": MIB}[label[-1]]
    return int(label[:-1]) * unit


def webstone() -> tuple[FileEntry, ...]:
    """WebStone's standard filelist, at the docroot's top level under its original URLs."""
    return tuple(
        FileEntry(path=path, size=size, cls=cls, weight=per_mille / 1000)
        for path, size, per_mille, cls in WEBSTONE_STANDARD
    )


def webcat(rows: tuple[tuple[int, tuple[str, ...]], ...]) -> tuple[FileEntry, ...]:
    """A WebCAT mix as files webcat/<label>.html; shares are normalised so that the mix sums to 1."""
    total = sum(percent for percent, _ in rows)
    files: list[FileEntry] = []
    seen: dict[str, int] = {}
    for percent, labels in rows:
        for label in labels:
            seen[label] = seen.get(label, 0) + 1
            # A label listed twice (cgi-html's 256K) gets a second file: webcat/256K-2.html.
            suffix = "" if seen[label] == 1 else f"-{seen[label]}"
            files.append(
                FileEntry(
                    path=f"webcat/{label}{suffix}.html",
                    size=label_bytes(label),
                    cls=label,
                    weight=percent / total / len(labels),
                )
            )
    return tuple(files)


def sweep_label(size: int) -> str:
    """Decimal label of a sweep size: 1 → "1B", 2000 → "2kB", 10000000 → "10MB"."""
    for unit, scale in (("MB", 10**6), ("kB", 10**3)):
        if size >= scale and size % scale == 0:
            return f"{size // scale}{unit}"
    return f"{size}B"


def sizes() -> tuple[FileEntry, ...]:
    """One file per sweep size, sizes/<bytes>.html, all equally weighted."""
    return tuple(
        FileEntry(path=f"sizes/{size}.html", size=size, cls=sweep_label(size), weight=1.0 / len(SWEEP_SIZES))
        for size in SWEEP_SIZES
    )
