"""FileEntry and Manifest: what a fileset is, and the manifest's JSON form; no file-system access.

The JSON is written one file per line so that manifests diff and grep well,
and it is validated strictly on load because generate deletes files a previous
manifest listed: a path must never reach outside the fileset's directory.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from crest.filesets.errors import ManifestError

MANIFEST_NAME = "crest-manifest.json"
MANIFEST_FORMAT = "crest-fileset-manifest/1"
_COLUMNS = ["path", "size", "class", "weight"]
# Relative, "/"-separated, URL-safe; no component may start with "." (so no "..", no hidden files).
_SAFE_PATH = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*(?:/[A-Za-z0-9_][A-Za-z0-9._-]*)*")
# Weights are stored with full float precision; this only catches hand edits.
_WEIGHT_SUM_TOLERANCE = 1e-9


@dataclass(frozen=True)
class FileEntry:
    """One file of a fileset: where it lives, how big it is, its class and its share of requests."""

    path: str  # URL path relative to the docroot, no leading slash
    size: int  # exact size in bytes
    cls: str  # class name within the fileset ("class1", "2K", "500B", ...)
    weight: float  # share of static requests; a manifest's weights sum to 1


@dataclass(frozen=True)
class Manifest:
    """A whole fileset: its name, the parameters it was built with, and every file."""

    fileset: str
    params: dict[str, Any]
    files: tuple[FileEntry, ...] = field(default=())

    def __post_init__(self) -> None:
        if not isinstance(self.files, tuple):  # a list would make equal manifests compare unequal
            object.__setattr__(self, "files", tuple(self.files))

    def total_bytes(self) -> int:
        """Sum of all file sizes."""
        return sum(entry.size for entry in self.files)

    def class_shares(self) -> dict[str, float]:
        """Share of requests per class, in order of first appearance."""
        shares: dict[str, list[float]] = {}
        for entry in self.files:
            shares.setdefault(entry.cls, []).append(entry.weight)
        return {cls: math.fsum(weights) for cls, weights in shares.items()}

    def mean_size(self) -> float:
        """Mean response body size in bytes under the manifest's weights."""
        return math.fsum(entry.size * entry.weight for entry in self.files)

    def to_json(self) -> str:
        """The manifest as JSON text: a header object with one file per line; from_json reads it back exactly."""
        head = {
            "format": MANIFEST_FORMAT,
            "fileset": self.fileset,
            "params": self.params,
            "file_count": len(self.files),
            "total_bytes": self.total_bytes(),
            "columns": _COLUMNS,
        }
        lines = [f"  {json.dumps(key)}: {json.dumps(value)}," for key, value in head.items()]
        rows = ",\n".join(f"    {json.dumps([e.path, e.size, e.cls, e.weight])}" for e in self.files)
        return "{\n" + "\n".join(lines) + '\n  "files": [\n' + rows + ("\n" if rows else "") + "  ]\n}\n"

    @classmethod
    def from_json(cls, text: str) -> Manifest:
        """Parse and validate manifest JSON; ManifestError (one line) when it is not a valid crest manifest."""
        try:
            doc = json.loads(text)
        except ValueError as exc:
            raise ManifestError(f"not valid JSON ({exc})") from None
        if not isinstance(doc, dict) or doc.get("format") != MANIFEST_FORMAT:
            raise ManifestError(f'not a crest fileset manifest (expected "format": "{MANIFEST_FORMAT}")')
        fileset, params, rows = doc.get("fileset"), doc.get("params"), doc.get("files")
        if not isinstance(fileset, str) or not isinstance(params, dict) or not isinstance(rows, list):
            raise ManifestError('manifest lacks "fileset", "params" or "files"')
        if doc.get("columns") != _COLUMNS:
            raise ManifestError(f"manifest columns are {doc.get('columns')!r}, expected {_COLUMNS!r}")
        files = tuple(_entry(row, index) for index, row in enumerate(rows))
        if len({e.path for e in files}) != len(files):
            raise ManifestError("manifest lists a path twice")
        if doc.get("file_count") != len(files) or doc.get("total_bytes") != sum(e.size for e in files):
            raise ManifestError("manifest file_count or total_bytes does not match its file list")
        total_weight = math.fsum(e.weight for e in files)
        if files and abs(total_weight - 1.0) > _WEIGHT_SUM_TOLERANCE:
            raise ManifestError(f"manifest weights sum to {total_weight!r}, expected 1")
        return cls(fileset=fileset, params=params, files=files)


def is_safe_path(path: str) -> bool:
    """Whether a manifest path stays inside the fileset directory and is URL-safe."""
    return _SAFE_PATH.fullmatch(path) is not None and path != MANIFEST_NAME


def _entry(row: Any, index: int) -> FileEntry:
    if not (isinstance(row, list) and len(row) == 4):
        raise ManifestError(f"manifest file #{index} is not a [path, size, class, weight] list")
    path, size, cls, weight = row
    if not isinstance(path, str) or not is_safe_path(path):
        raise ManifestError(f"manifest file #{index} has an unsafe path {path!r}")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise ManifestError(f"manifest file {path} has an invalid size {size!r}")
    if not isinstance(cls, str) or not cls:
        raise ManifestError(f"manifest file {path} has an invalid class {cls!r}")
    if not isinstance(weight, (int, float)) or isinstance(weight, bool) or not math.isfinite(weight) or weight < 0:
        raise ManifestError(f"manifest file {path} has an invalid weight {weight!r}")
    return FileEntry(path=path, size=size, cls=cls, weight=float(weight))
