"""crest's own WebBench-style static tree (the original WebBench tree was never published); pure, no I/O.

6000 files whose counts per class follow the SPECweb96 class shares
(2100 / 3000 / 840 / 60). File n of class C has the specweb size of file
n mod 9 of that class, so sizes are spread round-robin over the class's nine
sizes, and requests are uniform within a class. Total 89,138,369 bytes.
"""

from __future__ import annotations

from crest.filesets.model import FileEntry
from crest.filesets.specweb import CLASS_SHARES, FILES_PER_CLASS, file_size

TOTAL_FILES = 6000
CLASS_COUNTS = tuple(round(TOTAL_FILES * share) for share in CLASS_SHARES)  # (2100, 3000, 840, 60)


def file_path(cls: int, number: int) -> str:
    """URL path of file `number` of class `cls`, e.g. wb/class1/0042.html."""
    return f"wb/class{cls}/{number:04d}.html"


def webbench() -> tuple[FileEntry, ...]:
    """All 6000 files; each weighs its class share divided by the class's file count."""
    return tuple(
        FileEntry(
            path=file_path(cls, number),
            size=file_size(cls, number % FILES_PER_CLASS),
            cls=f"class{cls}",
            weight=share / count,
        )
        for cls, (share, count) in enumerate(zip(CLASS_SHARES, CLASS_COUNTS))
        for number in range(count)
    )
