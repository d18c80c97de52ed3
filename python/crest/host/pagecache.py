"""Evicting a tree's pages from the page cache, so the next reader's reads are charged to the reader.

Owns the eviction (POSIX_FADV_DONTNEED on each file, after a sync so no page is
dirty); must not decide when to evict (the target does, before it starts in a
memory-limited cgroup). A page stays charged to the cgroup that first read or
wrote it, even after that cgroup is gone: a fileset crest wrote or checked, or
an earlier target read, would otherwise be served from memory that the new
target's limit never counts.
"""

from __future__ import annotations

import os
from pathlib import Path


def evict(root: Path) -> int:
    """Ask the kernel to drop the cached pages of every regular file under `root`; the bytes of the files.

    Files that cannot be opened are skipped (the target will fail on them, and say so, itself).
    """
    os.sync()  # DONTNEED leaves dirty pages in the cache: a fileset written just now would stay
    total = 0
    for folder, _dirs, names in os.walk(root):
        for name in names:
            try:
                fd = os.open(os.path.join(folder, name), os.O_RDONLY | os.O_NOFOLLOW)
            except OSError:
                continue
            try:
                total += os.fstat(fd).st_size
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)
    return total
