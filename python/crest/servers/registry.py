"""The server adapters by name, as `--server` and `crest servers` know them.

Owns the names and where each adapter lives; adapter modules are imported
on first use so a broken or missing one cannot stop the others.
"""

from __future__ import annotations

import importlib
from typing import Any

from crest.errors import ConfigError
from crest.servers.base import Adapter

EXTERNAL = "external"
# name -> (module, class); `external` is a URL given with --target, nothing to provision.
_ADAPTERS: dict[str, tuple[str, str]] = {
    "builtin": ("crest.servers.builtin_adapter", "BuiltinAdapter"),
    "nginx": ("crest.servers.nginx", "NginxAdapter"),
    "apache-prefork": ("crest.servers.apache", "ApachePreforkAdapter"),
    "apache-worker": ("crest.servers.apache", "ApacheWorkerAdapter"),
    "apache-event": ("crest.servers.apache", "ApacheEventAdapter"),
    "lighttpd": ("crest.servers.lighttpd", "LighttpdAdapter"),
    "caddy": ("crest.servers.caddy", "CaddyAdapter"),
    "h2o": ("crest.servers.h2o", "H2oAdapter"),
    "samba": ("crest.servers.samba", "SambaAdapter"),
}
NAMES = (*_ADAPTERS, EXTERNAL)


def adapter(name: str) -> Adapter:
    """A fresh adapter for `name`.

    Raises:
        ConfigError: no adapter has that name.
    """
    if name not in _ADAPTERS:
        raise ConfigError(f"unknown server {name!r}: use one of {', '.join(NAMES)} (see `crest servers`)")
    module, cls = _ADAPTERS[name]
    instance: Adapter = getattr(importlib.import_module(module), cls)()
    return instance


def describe_all() -> list[dict[str, Any]]:
    """Every adapter as `crest servers` lists it: installed or not, version, how to install."""
    rows = [adapter(name).describe() for name in _ADAPTERS]
    rows.append({
        "name": EXTERNAL, "title": "any URL (--target); not provisioned, pinned or monitored", "installed": True,
        "version": None, "binary": None, "install": None, "kinds": [], "http2": None, "options": {},
    })  # fmt: skip
    return rows
