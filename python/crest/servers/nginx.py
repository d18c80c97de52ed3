"""nginx: master and `worker_processes` event-loop workers; CGI through fcgiwrap, FastCGI to crest-fcgi.

Owns nginx's configuration (templates/nginx.conf.j2) and command line; the
lifecycle is `Target`'s. The configuration is self-contained (nothing from
/etc/nginx) and needs only what nginx-light has: core, http, ssl, http_v2, fastcgi, log.
"""

from __future__ import annotations

import functools
import re
import subprocess
from pathlib import Path
from typing import ClassVar

from crest.errors import ConfigError
from crest.servers.base import (
    Adapter,
    Knob,
    ServerSettings,
    access_log_knob,
    int_option,
    number,
    on_off,
    profile_knob,
    render,
    switch,
    version_output,
    wants_cgi,
    wants_fastcgi,
    which,
)
from crest.servers.site import Site
from crest.servers.stock import files_in, rewrite

# Defaults that keep nginx's own limits out of a benchmark's way.
WORKER_CONNECTIONS = 4096
KEEPALIVE_REQUESTS = 1_000_000  # nginx's default (1000) would close every 1000th connection mid-mix
KEEPALIVE_TIMEOUT_S = 65
# Modules whose temporary files nginx keeps; each gets a directory inside the site.
TEMP_PATH_MODULES = ("fastcgi", "proxy", "scgi", "uwsgi")
# file_cache=on: descriptors and metadata of up to this many files, kept while read within a minute.
# On by default (unlike nginx's own default): lighttpd keeps the same in its stat cache out of the box,
# and without it nginx opened, fstat'ed and closed the file on every request, 1.4-1.5x slower on a
# 1 KiB keep-alive ladder (docs/servers.md, "Configuring each server fairly"). crest's filesets do not
# change while a run serves them, so a cached descriptor is never stale.
FILE_CACHE = "max=10000 inactive=60s"
# Concurrent streams per HTTP/2 connection: nginx's own default, written out so the configuration says it.
HTTP2_MAX_STREAMS = 128
STOCK = Path("/etc/nginx/nginx.conf")


class NginxAdapter(Adapter):
    name = "nginx"
    title = "nginx"
    package = "nginx-light"
    kinds: ClassVar[frozenset[str]] = frozenset(
        {"cgi", "webstone-cgi", "fastcgi", "inproc", "specweb99", "specweb99-get"}
    )
    cgi_through_fcgiwrap = True
    serves_http2 = True
    # nginx before 1.25.1 turns HTTP/2 on per listen socket (`listen ... http2`), and a cleartext socket
    # with it takes h2c with prior knowledge only, no HTTP/1: h2c gets a port of its own.
    h2c_own_port = True
    stock_config = STOCK
    stock_logs_access = True  # Debian's nginx.conf: access_log /var/log/nginx/access.log
    knobs = {
        "profile": profile_knob(str(STOCK)),
        "workers": Knob("worker processes ('auto' = one per core nginx sees)", "--workers (one per target core)",
                        "worker_processes", aliases=("worker_processes",)),
        "worker_connections": number("connections each worker may hold", str(WORKER_CONNECTIONS),
                                     "worker_connections"),
        "backlog": number("listen backlog: connections the kernel queues before nginx accepts them",
                          "511 (nginx's own)", "listen ... backlog="),
        "keepalive_timeout": Knob("seconds an idle keep-alive connection stays open", str(KEEPALIVE_TIMEOUT_S),
                                  "keepalive_timeout"),
        "keepalive_requests": Knob("requests per keep-alive connection before it is closed", str(KEEPALIVE_REQUESTS),
                                   "keepalive_requests"),
        "sendfile": on_off("send static files with sendfile(2)", "on", "sendfile"),
        "file_cache": on_off(f"keep open descriptors and metadata of served files (open_file_cache {FILE_CACHE})",
                             "on", "open_file_cache"),
        "open_file_cache": Knob("open_file_cache's value as nginx takes it, e.g. 'max=10000 inactive=60s' "
                                "(file_cache=on is the usual one)", "file_cache's", "open_file_cache"),
        "access_log": access_log_knob("access_log"),
        "fcgiwrap_children": Knob("fcgiwrap processes running CGI programs", "4 per worker, at least 8",
                                  "fcgiwrap -c"),
    }  # fmt: skip

    def binary(self) -> Path | None:
        return which("nginx")

    def version(self) -> str:
        binary = self.binary()
        return version_output([str(binary), "-v"], r"nginx/\S+") if binary else "unknown"

    def check(self, settings: ServerSettings) -> None:
        super().check(settings)
        settings = self.effective(settings)
        if "file_cache" in settings.options and "open_file_cache" in settings.options:
            raise ConfigError("--server-opt file_cache and open_file_cache set the same thing: give one of them")

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
            worker_processes=opts.get("workers", str(max(1, settings.workers))),
            backlog=int_option(settings, "backlog", 1) if "backlog" in opts else None,
            worker_connections=connections,
            rlimit_nofile=2 * connections + 1024,
            keepalive_timeout=opts.get("keepalive_timeout", str(KEEPALIVE_TIMEOUT_S)) if settings.keepalive else "0",
            keepalive_requests=opts.get("keepalive_requests", str(KEEPALIVE_REQUESTS)),
            sendfile="on" if switch(settings, "sendfile", True) else "off",
            open_file_cache=opts.get("open_file_cache", FILE_CACHE if switch(settings, "file_cache", True) else "off"),
            fcgi_keepalive=min(connections, 256),
            temp_paths=("client_body", *_temp_path_modules(str(self.binary()))),
            http2_max_streams=HTTP2_MAX_STREAMS,
        )
        return {self.config_path(site): text}

    def stock_files(self, site: Site, settings: ServerSettings) -> dict[Path, str]:
        """Debian's nginx.conf and its enabled sites, listening on the site's address and serving its docroot."""
        sites = site.conf_dir / "sites-enabled"
        files = {self.config_path(site): rewrite(STOCK, [
            (r"^pid .*;", f"pid {site.run_dir}/nginx.pid;"),
            (r"^error_log .*;", f"error_log {site.error_log};"),
            (r"^(\s*)access_log /var/log/nginx/access.log;", f"\\1access_log {site.access_log};"),
            (r"^(\s*)include /etc/nginx/sites-enabled/\*;", f"\\1include {sites}/*;"),
        ])}  # fmt: skip
        for source in files_in(STOCK.parent / "sites-enabled"):
            files[sites / source.name] = rewrite(source, [
                (r"^(\s*)listen 80 default_server;", f"\\1listen {site.host}:{site.port} default_server;"),
                (r"^(\s*)listen \[::\]:80 default_server;", "\\1# IPv6 listen dropped: crest listens on one address"),
                (r"^(\s*)root /var/www/html;", f"\\1root {site.docroot};"),
            ], optional=(r"^(\s*)listen \[::\]:80 default_server;",))  # fmt: skip
        return files

    def command(self, site: Site, settings: ServerSettings) -> list[str]:
        # -e: nginx opens its error log before reading the config; keep even that inside the site.
        # The stock configuration keeps nginx's own prefix: its modules-enabled names modules relative to it.
        # It also daemonizes; -g keeps it in the foreground, where crest supervises it, without editing the file.
        stock = settings.options.get("profile") == "stock"
        prefix = ["-g", "daemon off;"] if stock else ["-p", f"{site.root}/"]
        return [str(self.binary()), *prefix, "-c", str(self.config_path(site)), "-e", str(site.error_log)]

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
