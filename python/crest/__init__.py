"""crest: a web-server capacity lab; this module only names the package version."""

from __future__ import annotations


def __getattr__(name: str) -> str:
    # Looked up on first use: importlib.metadata costs ~40 ms, which every `crest` command would pay at start-up.
    if name != "__version__":
        raise AttributeError(f"module 'crest' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as _dist_version

    try:
        found = _dist_version("crest")
    except PackageNotFoundError:  # running from a source tree that was never installed
        found = "0.0.0+unknown"
    globals()["__version__"] = found
    return found


__all__ = ["__version__"]
