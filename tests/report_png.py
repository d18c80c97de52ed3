"""A small PNG reader for the browser test (8-bit RGB/RGBA, not interlaced: what Chromium writes).

numpy does the filters it can vectorise (None, Sub, Up); Average and Paeth
depend on the pixel to the left, so they run per byte in plain Python.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}


def read_png(path: Path) -> NDArray[np.uint8]:
    """The image as a (height, width, channels) uint8 array."""
    data = path.read_bytes()
    if data[:8] != _SIGNATURE:
        raise ValueError(f"{path} is not a PNG")
    pos, idat = 8, bytearray()
    width = height = channels = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or interlace or colour not in _CHANNELS:
                raise ValueError(
                    f"{path}: unsupported PNG (depth {depth}, colour type {colour}, interlace {interlace})"
                )
            channels = _CHANNELS[colour]
        elif kind == b"IDAT":
            idat += body
    raw = zlib.decompress(bytes(idat))
    stride = width * channels
    out = np.zeros((height, stride), dtype=np.uint8)
    prev = np.zeros(stride, dtype=np.uint8)
    for y in range(height):
        start = y * (stride + 1)
        kind = raw[start]
        line = np.frombuffer(raw, dtype=np.uint8, count=stride, offset=start + 1)
        if kind == 0:
            cur = line.copy()
        elif kind == 1:
            cur = (np.cumsum(line.reshape(width, channels).astype(np.uint32), axis=0) & 0xFF).astype(np.uint8).ravel()
        elif kind == 2:
            cur = line + prev  # uint8 arithmetic wraps modulo 256, as PNG wants
        elif kind in (3, 4):
            cur = np.frombuffer(_sequential(kind, line.tobytes(), prev.tobytes(), channels), dtype=np.uint8)
        else:
            raise ValueError(f"{path}: bad filter type {kind} in row {y}")
        out[y] = cur
        prev = out[y]
    return out.reshape(height, width, channels)


def _sequential(kind: int, line: bytes, prev: bytes, bpp: int) -> bytes:
    cur = bytearray(line)
    for x in range(len(cur)):
        a = cur[x - bpp] if x >= bpp else 0
        b = prev[x]
        if kind == 3:
            cur[x] = (cur[x] + ((a + b) >> 1)) & 0xFF
            continue
        c = prev[x - bpp] if x >= bpp else 0
        p = a + b - c
        pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
        cur[x] = (cur[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
    return bytes(cur)
