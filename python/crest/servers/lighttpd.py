"""lighttpd: one event loop per process (`server.max-worker` processes); mod_cgi, mod_fastcgi, mod_openssl.

Owns lighttpd's configuration (templates/lighttpd.conf.j2) and command line;
the lifecycle is `Target`'s.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from crest.servers.base import (
    Adapter,
    Part,
    ServerSettings,
    int_option,
    render,
    version_output,
    wants_cgi,
    wants_fastcgi,
    which,
)
from crest.servers.site import Site

# Debian ships lighttpd's TLS module in its own package (a Recommends of lighttpd).
MODULE_DIRS = (Path("/usr/lib/lighttpd"), Path("/usr/lib64/lighttpd"), Path("/usr/local/lib/lighttpd"))
MAX_CONNECTIONS = 4096
KEEPALIVE_REQUESTS = 1_000_000  # lighttpd's default (1000) would close connections mid-mix
KEEPALIVE_IDLE_S = 5


class LighttpdAdapter(Adapter):
    name = "lighttpd"
    title = "lighttpd"
    package = "lighttpd"
    kinds: ClassVar[frozenset[str]] = frozenset(
        {"cgi", "webstone-cgi", "fastcgi", "inproc", "specweb99", "specweb99-get"}
    )
    # lighttpd buffers its access log and writes it every 4 s (or 8 KiB).
    access_log_flush_s = 4.5
    options_help = {
        "server.max-worker": "worker processes (default: --workers; 1 = a single process, lighttpd's own model)",
        "server.max-connections": f"connections served at once, per process (default {MAX_CONNECTIONS})",
        "server.max-fds": "file descriptors per process, as root (default: 4 per connection)",
        "server.max-keep-alive-requests": f"requests per keep-alive connection (default {KEEPALIVE_REQUESTS})",
        "server.max-keep-alive-idle": f"seconds an idle keep-alive connection stays open (default {KEEPALIVE_IDLE_S})",
        "server.network-backend": "how static files are sent: sendfile, writev or write (default sendfile)",
        "server.stat-cache-engine": "file metadata cache: simple, inotify or disable (default simple)",
    }

    def binary(self) -> Path | None:
        return which("lighttpd")

    def version(self) -> str:
        binary = self.binary()
        return version_output([str(binary), "-v"], r"lighttpd/\S+") if binary else "unknown"

    def parts(self) -> list[Part]:
        present = any((d / "mod_openssl.so").exists() for d in MODULE_DIRS)
        return [Part("serves HTTPS through its module mod_openssl", "tls", "lighttpd-mod-openssl", present)]

    def check(self, settings: ServerSettings) -> None:
        super().check(settings)
        for key in ("server.max-worker", "server.max-connections", "server.max-fds"):
            int_option(settings, key, 1)
        for key in ("server.max-keep-alive-requests", "server.max-keep-alive-idle"):
            int_option(settings, key, 0, minimum=0)

    def modules(self, site: Site, settings: ServerSettings) -> list[str]:
        modules = []
        if wants_cgi(settings):
            modules += ["mod_alias", "mod_cgi"]
        if wants_fastcgi(settings):
            modules.append("mod_fastcgi")
        if site.tls_port:
            modules.append("mod_openssl")
        if settings.access_log:
            modules.append("mod_accesslog")
        return modules

    def config_path(self, site: Site) -> Path:
        return site.conf_dir / "lighttpd.conf"

    def config_files(self, site: Site, settings: ServerSettings) -> dict[Path, str]:
        opts = settings.options
        connections = int_option(settings, "server.max-connections", MAX_CONNECTIONS)
        requests = int_option(settings, "server.max-keep-alive-requests", KEEPALIVE_REQUESTS, minimum=0)
        text = render(
            "lighttpd.conf.j2",
            site=site,
            settings=settings,
            modules=self.modules(site, settings),
            cgi=wants_cgi(settings),
            fastcgi=wants_fastcgi(settings),
            max_worker=int_option(settings, "server.max-worker", max(1, settings.workers)),
            max_connections=connections,
            max_fds=int_option(settings, "server.max-fds", 4 * connections),
            keepalive_requests=requests if settings.keepalive else 0,
            keepalive_idle=int_option(settings, "server.max-keep-alive-idle", KEEPALIVE_IDLE_S, minimum=0),
            network_backend=opts.get("server.network-backend", "sendfile"),
            stat_cache_engine=opts.get("server.stat-cache-engine", "simple"),
        )
        return {self.config_path(site): text}

    def command(self, site: Site, settings: ServerSettings) -> list[str]:
        return [str(self.binary()), "-D", "-f", str(self.config_path(site))]

    def check_command(self, site: Site, settings: ServerSettings) -> list[str] | None:
        return [str(self.binary()), "-tt", "-f", str(self.config_path(site))]  # -tt: modules loaded too
