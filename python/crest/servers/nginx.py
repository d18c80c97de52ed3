"""nginx: master and `worker_processes` event-loop workers; CGI through fcgiwrap, FastCGI to crest-fcgi.

Owns nginx's configuration (templates/nginx.conf.j2) and command line; the
lifecycle is `Target`'s. The configuration is self-contained (nothing from
/etc/nginx) and needs only what nginx-light has: core, http, ssl, fastcgi, log.
"""

from __future__ import annotations

import functools
import re
import subprocess
from pathlib import Path
from typing import ClassVar

from crest.servers.base import (
    Adapter,
    ServerSettings,
    int_option,
    render,
    version_output,
    wants_cgi,
    wants_fastcgi,
    which,
)
from crest.servers.site import Site

# Defaults that keep nginx's own limits out of a benchmark's way.
WORKER_CONNECTIONS = 4096
KEEPALIVE_REQUESTS = 1_000_000  # nginx's default (1000) would close every 1000th connection mid-mix
KEEPALIVE_TIMEOUT_S = 65
# Modules whose temporary files nginx keeps; each gets a directory inside the site.
TEMP_PATH_MODULES = ("fastcgi", "proxy", "scgi", "uwsgi")


class NginxAdapter(Adapter):
    name = "nginx"
    title = "nginx"
    package = "nginx-light"
    kinds: ClassVar[frozenset[str]] = frozenset(
        {"cgi", "webstone-cgi", "fastcgi", "inproc", "specweb99", "specweb99-get"}
    )
    cgi_through_fcgiwrap = True
    options_help = {
        "worker_processes": "worker processes (default: --workers, i.e. one per target core; 'auto' = one per core)",
        "worker_connections": f"connections each worker may hold (default {WORKER_CONNECTIONS})",
        "keepalive_timeout": f"seconds an idle keep-alive connection stays open (default {KEEPALIVE_TIMEOUT_S})",
        "keepalive_requests": f"requests per keep-alive connection before it is closed (default {KEEPALIVE_REQUESTS})",
        "sendfile": "on or off: send static files with sendfile(2) (default on)",
        "open_file_cache": "nginx's open_file_cache value, e.g. 'max=10000 inactive=60s' (default off)",
        "fcgiwrap_children": "fcgiwrap processes running CGI programs (default 4 per worker, at least 8)",
    }

    def binary(self) -> Path | None:
        return which("nginx")

    def version(self) -> str:
        binary = self.binary()
        return version_output([str(binary), "-v"], r"nginx/\S+") if binary else "unknown"

    def check(self, settings: ServerSettings) -> None:
        super().check(settings)
        int_option(settings, "worker_connections", WORKER_CONNECTIONS)

    def config_path(self, site: Site) -> Path:
        return site.conf_dir / "nginx.conf"

    def config_files(self, site: Site, settings: ServerSettings) -> dict[Path, str]:
        opts = settings.options
        connections = int_option(settings, "worker_connections", WORKER_CONNECTIONS)
        text = render(
            "nginx.conf.j2",
            site=site,
            settings=settings,
            cgi=wants_cgi(settings),
            fastcgi=wants_fastcgi(settings),
            worker_processes=opts.get("worker_processes", str(max(1, settings.workers))),
            worker_connections=connections,
            rlimit_nofile=2 * connections + 1024,
            keepalive_timeout=opts.get("keepalive_timeout", str(KEEPALIVE_TIMEOUT_S)) if settings.keepalive else "0",
            keepalive_requests=opts.get("keepalive_requests", str(KEEPALIVE_REQUESTS)),
            sendfile=opts.get("sendfile", "on"),
            open_file_cache=opts.get("open_file_cache", "off"),
            fcgi_keepalive=min(connections, 256),
            temp_paths=("client_body", *_temp_path_modules(str(self.binary()))),
        )
        return {self.config_path(site): text}

    def command(self, site: Site, settings: ServerSettings) -> list[str]:
        # -e: nginx opens its error log before reading the config; keep even that inside the site.
        return [str(self.binary()), "-p", f"{site.root}/", "-c", str(self.config_path(site)), "-e", str(site.error_log)]

    def check_command(self, site: Site, settings: ServerSettings) -> list[str] | None:
        return [*self.command(site, settings), "-t", "-q"]


@functools.lru_cache(maxsize=4)
def _temp_path_modules(binary: str) -> tuple[str, ...]:
    """The modules with temporary files that this nginx was built with (`nginx -V`)."""
    try:
        out = subprocess.run([binary, "-V"], capture_output=True, text=True, timeout=10)
        built = out.stdout + out.stderr
    except (OSError, subprocess.TimeoutExpired):
        built = ""
    return tuple(m for m in TEMP_PATH_MODULES if not re.search(rf"--without-http_{m}_module\b", built))
