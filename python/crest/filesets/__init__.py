"""Standard web-benchmark filesets: what they contain (manifests), their exact bytes, and writing/checking them on disk.

Pure parts (build_manifest, file_bytes, header_line) never touch the disk;
generate/verify/load_manifest do, and nothing here prints. See docs/filesets.md.
"""

from __future__ import annotations

from crest.filesets.catalog import NAMES, build_manifest, copies_for
from crest.filesets.content import file_bytes, header_line
from crest.filesets.errors import DirectoryConflictError, FilesetError, ManifestError, UnknownFilesetError
from crest.filesets.model import MANIFEST_NAME, FileEntry, Manifest
from crest.filesets.tree import GenerateResult, generate, generate_tree, load_manifest, verify

__all__ = [
    "MANIFEST_NAME",
    "NAMES",
    "DirectoryConflictError",
    "FileEntry",
    "FilesetError",
    "GenerateResult",
    "Manifest",
    "ManifestError",
    "UnknownFilesetError",
    "build_manifest",
    "copies_for",
    "file_bytes",
    "generate",
    "generate_tree",
    "header_line",
    "load_manifest",
    "verify",
]
