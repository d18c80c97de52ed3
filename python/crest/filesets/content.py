"""The exact bytes of every generated file: a header line, then printable filler; pure, never touches the disk.

Content is a function of (path, size) alone, so a client can check a response
without the manifest: the header states the size and the path, and the filler
is a 64-byte line repeated, rotated by a CRC of the path. Repeating a line
(instead of per-byte randomness) keeps generation and verification at disk
speed, and CRC-32 is the same on every platform and Python version.

Files of SPECweb's tree (file_set/dirNNNNN/classC_F) are in the kit's format
(reference specweb99.md §1.7): the header is the kit's `"%9d file_set/..."` line,
which the SPECweb99 harness looks for, and class 1 and 2 files carry custom-ad
tags (`<!WEB99CAD>...<!/WEB99CAD>`) that a server's ad-rotating GET rewrites.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator

from crest.filesets.model import FileEntry

# 63 URL-safe printable characters + "\n" = one 64-byte filler line.
_ALPHABET = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-"
LINE_BYTES = len(_ALPHABET) + 1
# Write and compare in chunks this big; a whole number of lines, so every chunk starts on a line.
CHUNK_BYTES = LINE_BYTES * 1024


# SPECweb's kit tree: file_set/dirNNNNN/classC_F.
KIT_PREFIX = "file_set/dir"
# A custom-ad tag as the kit writes it: the directory at bytes 34..38, the class at 45 and the file at 47.
# The ad a file names before any substitution is not in the reference; crest names the first file.
CAD_TAG = b'<!WEB99CAD><IMG SRC="/file_set/dir00000/class0_0"><!/WEB99CAD>'
# 62 bytes, so a tag, a space and a newline make one 64-byte line in place of a filler line.
CAD_LINE = CAD_TAG + b" \n"
# How often a tag comes: the kit's placement is not in the reference (§1.7 says "one or more"); crest
# writes one as the first body line and one every 16 lines (1 KiB) after it, so every class 1 and 2
# file (1 KB and up) carries at least one.
CAD_EVERY_LINES = 16


def is_kit_file(path: str) -> bool:
    """Whether a path is in SPECweb's tree (its files take the kit's header and tags)."""
    return path.startswith(KIT_PREFIX)


def has_cad_tags(path: str) -> bool:
    """Whether a SPECweb file carries custom-ad tags: classes 1 and 2."""
    return is_kit_file(path) and ("/class1_" in path or "/class2_" in path)


def header_line(entry: FileEntry) -> bytes:
    """The first line of the file (not truncated): the kit's b"%9d file_set/dirNNNNN/classC_F\\n" for SPECweb's
    tree, else b"crest-file size=<size> path=/<path>\\n"."""
    if is_kit_file(entry.path):
        return f"{entry.size:9d} {entry.path}\n".encode("ascii")
    return f"crest-file size={entry.size} path=/{entry.path}\n".encode("ascii")


def filler_line(path: str) -> bytes:
    """The 64-byte line repeated after the header; which rotation of the alphabet depends on the path."""
    shift = zlib.crc32(path.encode("ascii")) % len(_ALPHABET)
    return _ALPHABET[shift:] + _ALPHABET[:shift] + b"\n"


def body_unit(path: str) -> bytes:
    """What the body after the header repeats: the path's filler line, or for a file with ad tags a tag
    line followed by CAD_EVERY_LINES - 1 filler lines."""
    filler = filler_line(path)
    if has_cad_tags(path):
        return CAD_LINE + filler * (CAD_EVERY_LINES - 1)
    return filler


def iter_chunks(entry: FileEntry, chunk_bytes: int = CHUNK_BYTES) -> Iterator[bytes]:
    """The file's content in order: the (possibly truncated) header, then the body in pieces of at most
    chunk_bytes.

    chunk_bytes must be a multiple of LINE_BYTES; the concatenation is always file_bytes(entry).
    """
    if chunk_bytes <= 0 or chunk_bytes % LINE_BYTES:
        raise ValueError(f"chunk_bytes must be a positive multiple of {LINE_BYTES}, got {chunk_bytes}")
    header = header_line(entry)
    if entry.size <= len(header):
        yield header[: entry.size]
        return
    yield header
    unit = body_unit(entry.path)
    # Long enough to cut any chunk out of, whatever the unit's phase at its start.
    block = unit * (chunk_bytes // len(unit) + 2)
    remaining, at = entry.size - len(header), 0
    while remaining > 0:
        n = min(chunk_bytes, remaining)
        start = at % len(unit)
        yield block[start : start + n]
        at += n
        remaining -= n


def file_bytes(entry: FileEntry) -> bytes:
    """The whole content of the generated file, exactly entry.size bytes."""
    return b"".join(iter_chunks(entry))
