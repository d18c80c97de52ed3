"""The built-in target (crates/target) as a provisioned server: `crest serve` in its own process.

A process of its own, not threads inside crest, so it is pinned, limited and
measured like any other server and its CPU is never mixed with the engine's.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import ClassVar

from crest import __version__
from crest.servers.base import Adapter, Helper, ServerSettings
from crest.servers.site import Site


class BuiltinAdapter(Adapter):
    name = "builtin"
    title = "crest built-in target"
    package = ""
    kinds: ClassVar[frozenset[str]] = frozenset({"cgi", "webstone-cgi", "inproc", "specweb99", "specweb99-get"})
    serves_http2 = True  # h2 by ALPN on its TLS port, h2c with prior knowledge on its main port
    serves_http3 = True  # h3 (quinn and hyperium's h3) on its TLS port's UDP twin, when asked
    alternatives = {
        "fastcgi": "the built-in target has no FastCGI; its in-process page (kind inproc) is the equivalent"
    }

    def binary(self) -> Path | None:
        return Path(sys.executable)

    def version(self) -> str:
        from crest.load.client import engine_version

        return f"crest-target/{__version__} (engine {engine_version()})"

    def config_files(self, site: Site, settings: ServerSettings) -> dict[Path, str]:
        return {}

    def command(self, site: Site, settings: ServerSettings) -> list[str]:
        argv = [sys.executable, "-m", "crest", "serve", "--docroot", str(site.docroot), "--host", site.host,
                "--port", str(site.port), "--threads", str(settings.workers), "--cgi-dir", str(site.cgi_bin),
                "--specweb99-dir", str(site.specweb99_dir)]  # fmt: skip
        if site.tls_port:
            argv += ["--tls-port", str(site.tls_port)]
        if settings.access_log:
            argv += ["--access-log", str(site.access_log)]
        if settings.http3:
            argv.append("--http3")
        return argv

    def helpers(self, site: Site, settings: ServerSettings) -> list[Helper]:
        return []  # it serves its dynamic kinds itself
