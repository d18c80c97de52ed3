"""The exact bytes of every generated file: a header line, then printable filler; pure, never touches the disk.

Content is a function of (path, size) alone, so a client can check a response
without the manifest: the header states the size and the path, and the filler
is a 64-byte line repeated, rotated by a CRC of the path. Repeating a line
(instead of per-byte randomness) keeps generation and verification at disk
speed, and CRC-32 is the same on every platform and Python version.
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


def header_line(entry: FileEntry) -> bytes:
    """The first line of the file: b"crest-file size=<size> path=/<path>\\n" (not truncated)."""
    return f"crest-file size={entry.size} path=/{entry.path}\n".encode("ascii")


def filler_line(path: str) -> bytes:
    """The 64-byte line repeated after the header; which rotation of the alphabet depends on the path."""
    shift = zlib.crc32(path.encode("ascii")) % len(_ALPHABET)
    return _ALPHABET[shift:] + _ALPHABET[:shift] + b"\n"


def iter_chunks(entry: FileEntry, chunk_bytes: int = CHUNK_BYTES) -> Iterator[bytes]:
    """The file's content in order: the (possibly truncated) header, then filler in pieces of at most chunk_bytes.

    chunk_bytes must be a multiple of LINE_BYTES; the concatenation is always file_bytes(entry).
    """
    if chunk_bytes <= 0 or chunk_bytes % LINE_BYTES:
        raise ValueError(f"chunk_bytes must be a positive multiple of {LINE_BYTES}, got {chunk_bytes}")
    header = header_line(entry)
    if entry.size <= len(header):
        yield header[: entry.size]
        return
    yield header
    remaining = entry.size - len(header)
    block = filler_line(entry.path) * (chunk_bytes // LINE_BYTES)
    while remaining > chunk_bytes:
        yield block
        remaining -= chunk_bytes
    yield block[:remaining]


def file_bytes(entry: FileEntry) -> bytes:
    """The whole content of the generated file, exactly entry.size bytes."""
    return b"".join(iter_chunks(entry))
