"""SPECweb96 and SPECweb99 file sets: 4 classes × 9 files per directory, directory counts and request weights; pure, no I/O.

Numbers follow /work/shared/reference/specweb99.md (sections 1.2-1.6 and 5):
size of file F in class C = base[C] × (F+1) / 10 in integer arithmetic, class
shares 35/50/14/1 %, SPECweb99 Zipf(α=1) over directories and over the nine
files of a class with rank order 4,3,5,2,6,1,7,8,0.
"""

from __future__ import annotations

import math

from crest.filesets.model import FileEntry

BASES = (1024, 10240, 102400, 1024000)
CLASS_SHARES = (0.35, 0.50, 0.14, 0.01)
FILES_PER_CLASS = 9
# FILE_ORDER[r] is the file number at Zipf rank r+1: file 4 is the most popular, file 0 the least.
FILE_ORDER = (4, 3, 5, 2, 6, 1, 7, 8, 0)
# SPECweb96's directory rule scaled with the target ops/s and was not retrieved
# (reference §5, [UNVERIFIED]); crest uses a fixed tree of this many directories.
SPECWEB96_DIRECTORIES = 10


def file_size(cls: int, number: int) -> int:
    """Bytes of file `number` (0..8) in class `cls` (0..3), e.g. class 1 file 3 = 4096."""
    return BASES[cls] * (number + 1) // 10


def file_path(directory: int, cls: int, number: int) -> str:
    """URL path of a file, e.g. file_set/dir00004/class1_3."""
    return f"file_set/dir{directory:05d}/class{cls}_{number}"


def zipf(n: int) -> tuple[float, ...]:
    """Zipf(α=1) probabilities of ranks 1..n: (1/r) / H_n."""
    harmonic = math.fsum(1.0 / r for r in range(1, n + 1))
    return tuple((1.0 / r) / harmonic for r in range(1, n + 1))


def specweb99_file_probabilities() -> tuple[float, ...]:
    """P(file F | class) for F = 0..8 under SPECweb99's permuted Zipf (F=4: 35.349 %, F=0: 3.928 %)."""
    by_rank = zipf(FILES_PER_CLASS)
    probabilities = [0.0] * FILES_PER_CLASS
    for rank_index, number in enumerate(FILE_ORDER):
        probabilities[number] = by_rank[rank_index]
    return tuple(probabilities)


def specweb99_directories(connections: int) -> int:
    """Directories the SPECweb99 kit generates for this many simultaneous connections.

    The kit computes int(25 + (400000 / 122000) × connections / 5); 40/61 is that
    ratio exactly, and integer arithmetic reproduces the kit where the rounded
    0.6557 coefficient would come out one directory short (e.g. 61 → 65, not 64).
    """
    return 25 + (40 * connections) // 61


def build_specweb(
    directory_probabilities: tuple[float, ...], file_probabilities: tuple[float, ...]
) -> tuple[FileEntry, ...]:
    """Every file of the tree, weight = P(directory) × P(class) × P(file | class)."""
    return tuple(
        FileEntry(
            path=file_path(directory, cls, number),
            size=file_size(cls, number),
            cls=f"class{cls}",
            weight=p_dir * share * file_probabilities[number],
        )
        for directory, p_dir in enumerate(directory_probabilities)
        for cls, share in enumerate(CLASS_SHARES)
        for number in range(FILES_PER_CLASS)
    )


def specweb99(connections: int) -> tuple[dict[str, int], tuple[FileEntry, ...]]:
    """SPECweb99's tree for `connections`: Zipf over directories and over files within a class."""
    directories = specweb99_directories(connections)
    files = build_specweb(zipf(directories), specweb99_file_probabilities())
    return {"directories": directories}, files


def specweb96() -> tuple[dict[str, int], tuple[FileEntry, ...]]:
    """SPECweb96's layout with uniform choice of directory and of file within a class."""
    directories = SPECWEB96_DIRECTORIES
    uniform_dirs = tuple(1.0 / directories for _ in range(directories))
    uniform_files = tuple(1.0 / FILES_PER_CLASS for _ in range(FILES_PER_CLASS))
    return {"directories": directories}, build_specweb(uniform_dirs, uniform_files)


def specweb99_lengths() -> tuple[FileEntry, ...]:
    """SPECweb99's 36 file lengths (102 B … 921,600 B), one file each as lengths/classC_F, each class's share
    (35/50/14/1 %) spread evenly over its nine lengths: Zeus' sweep of "sample files from the SPECweb99
    document root", sized with copies so a one-length mix can request each file once."""
    return tuple(
        FileEntry(
            path=f"lengths/class{cls}_{number}", size=file_size(cls, number), cls=f"class{cls}",
            weight=CLASS_SHARES[cls] / FILES_PER_CLASS,
        )
        for cls in range(len(BASES))
        for number in range(FILES_PER_CLASS)
    )  # fmt: skip
