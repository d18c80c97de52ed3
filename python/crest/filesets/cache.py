"""Where provisioned targets get their docroot: each fileset generated once into a cache directory.

Owns the cache's location and naming; generation and checking are tree.py's.
A server that drops to an unprivileged account must be able to read the
tree, so when crest runs as root the cache is system-wide (/var/cache/crest),
not under root's private home.
"""

from __future__ import annotations

import os
from pathlib import Path

from crest.filesets.tree import generate_tree

ENV_VAR = "CREST_CACHE_DIR"


def cache_root() -> Path:
    """$CREST_CACHE_DIR, else /var/cache/crest for root, else $XDG_CACHE_HOME/crest (~/.cache/crest)."""
    if os.environ.get(ENV_VAR):
        return Path(os.environ[ENV_VAR])
    if os.geteuid() == 0:
        return Path("/var/cache/crest")
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "crest"


def cached_fileset(name: str, *, connections: int | None = None, seed: int = 0, copies: int | None = None) -> Path:
    """The directory holding fileset `name`, generated on first use and checked (size and first line
    of every file, rewriting any that differ) on every later one."""
    suffix = f"-c{connections}" if connections else ""
    suffix += f"-s{seed}" if seed else ""
    suffix += f"-x{copies}" if copies else ""
    root = cache_root() / "filesets" / f"{name}{suffix}"
    root.parent.mkdir(parents=True, exist_ok=True)
    for path in (root.parent, root.parent.parent):
        path.chmod(0o755)
    generate_tree(name, root, connections=connections, seed=seed, copies=copies)
    return root


def empty_docroot() -> Path:
    """A docroot for workloads without static files (dynamic only): an empty cached directory."""
    path = cache_root() / "empty-docroot"
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o755)
    return path
