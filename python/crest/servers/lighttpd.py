"""lighttpd: one event loop per process (`server.max-worker` processes); mod_cgi, mod_fastcgi, mod_openssl.

Owns lighttpd's configuration (templates/lighttpd.conf.j2) and command line;
the lifecycle is `Target`'s. HTTP/2 is built into lighttpd (1.4.56 and later):
h2 by ALPN on TLS, h2c with prior knowledge on the plain port.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from crest.errors import ConfigError
from crest.servers.base import (
    Adapter,
    Knob,
    Part,
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
from crest.servers.stock import rewrite

# Debian ships lighttpd's TLS module in its own package (a Recommends of lighttpd).
MODULE_DIRS = (Path("/usr/lib/lighttpd"), Path("/usr/lib64/lighttpd"), Path("/usr/local/lib/lighttpd"))
MAX_CONNECTIONS = 4096
KEEPALIVE_REQUESTS = 1_000_000  # lighttpd's default (1000) would close connections mid-mix
KEEPALIVE_IDLE_S = 5
STOCK = Path("/etc/lighttpd/lighttpd.conf")
# Knobs that set what an older, lighttpd-named key sets with lighttpd's own values.
_SAME_AS = {"sendfile": "server.network-backend", "file_cache": "server.stat-cache-engine"}


class LighttpdAdapter(Adapter):
    name = "lighttpd"
    title = "lighttpd"
    package = "lighttpd"
    kinds: ClassVar[frozenset[str]] = frozenset(
        {"cgi", "webstone-cgi", "fastcgi", "inproc", "specweb99", "specweb99-get"}
    )
    # lighttpd buffers its access log and writes it every 4 s (or 8 KiB).
    access_log_flush_s = 4.5
    # lighttpd offers 8 streams per HTTP/2 connection, fixed (SETTINGS_MAX_CONCURRENT_STREAMS, 1.4.69).
    serves_http2 = True
    # When an HTTP/2 connection ends, lighttpd logs the connection itself as a request with status 100
    # (src/connections.c, "so that mod_accesslog ... hooks are called"): not a request crest sent.
    # A `$HTTP["request-method"] == "PRI"` condition does not match it, so crest leaves it out when counting.
    h2_connection_log_line = b'"PRI * HTTP/2.0" 100 '
    stock_config = STOCK
    knobs = {
        "profile": profile_knob(str(STOCK)),
        "workers": number("worker processes (1 = a single process, lighttpd's own model)",
                          "--workers (one per target core)", "server.max-worker", ("server.max-worker",)),
        "server.max-connections": number("connections served at once, per process", str(MAX_CONNECTIONS),
                                         "server.max-connections"),
        "server.max-fds": number("file descriptors per process, as root", "4 per connection", "server.max-fds"),
        "backlog": number("listen backlog: connections the kernel queues before lighttpd accepts them",
                          "1024 (lighttpd's own)", "server.listen-backlog"),
        "keepalive_requests": number("requests per keep-alive connection", str(KEEPALIVE_REQUESTS),
                                     "server.max-keep-alive-requests", ("server.max-keep-alive-requests",),
                                     minimum=0),
        "keepalive_timeout": number("seconds an idle keep-alive connection stays open", str(KEEPALIVE_IDLE_S),
                                    "server.max-keep-alive-idle", ("server.max-keep-alive-idle",), minimum=0),
        "sendfile": on_off("send static files with sendfile(2) (off: writev)", "on", "server.network-backend"),
        "server.network-backend": Knob("how static files are sent: sendfile, writev or write", "sendfile",
                                       "server.network-backend"),
        "file_cache": on_off("cache files' metadata (stat cache; off: stat every request)", "on",
                             "server.stat-cache-engine"),
        "server.stat-cache-engine": Knob("file metadata cache: simple, inotify or disable", "simple",
                                         "server.stat-cache-engine"),
        "access_log": access_log_knob("accesslog.filename (mod_accesslog)"),
    }  # fmt: skip

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
        for knob, key in _SAME_AS.items():
            if knob in settings.options and key in settings.options:
                raise ConfigError(f"--server-opt {knob} and {key} set the same thing: give one of them")

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
        requests = int_option(settings, "keepalive_requests", KEEPALIVE_REQUESTS, minimum=0)
        backend = "sendfile" if switch(settings, "sendfile", True) else "writev"
        stat_cache = "simple" if switch(settings, "file_cache", True) else "disable"
        text = render(
            "lighttpd.conf.j2",
            site=site,
            settings=settings,
            modules=self.modules(site, settings),
            cgi=wants_cgi(settings),
            fastcgi=wants_fastcgi(settings),
            max_worker=int_option(settings, "workers", max(1, settings.workers)),
            backlog=opts.get("backlog"),
            max_connections=connections,
            max_fds=int_option(settings, "server.max-fds", 4 * connections),
            keepalive_requests=requests if settings.keepalive else 0,
            keepalive_idle=int_option(settings, "keepalive_timeout", KEEPALIVE_IDLE_S, minimum=0),
            network_backend=opts.get("server.network-backend", backend),
            stat_cache_engine=opts.get("server.stat-cache-engine", stat_cache),
        )
        return {self.config_path(site): text}

    def stock_files(self, site: Site, settings: ServerSettings) -> dict[Path, str]:
        """Debian's lighttpd.conf (its conf-enabled read from /etc as it is) on the site's address and docroot."""
        return {self.config_path(site): rewrite(STOCK, [
            (r'^server\.document-root\s*=.*$', f'server.document-root = "{site.docroot}"'),
            (r'^server\.errorlog\s*=.*$', f'server.errorlog = "{site.error_log}"'),
            (r'^server\.pid-file\s*=.*$', f'server.pid-file = "{site.run_dir}/lighttpd.pid"'),
            (r'^server\.port\s*=\s*80$', f'server.port = {site.port}\nserver.bind = "{site.host}"'),
            (r'^include_shell "/usr/share/lighttpd/use-ipv6\.pl.*$', "# IPv6 listen dropped: crest listens on one address"),
        ], optional=(r'^include_shell "/usr/share/lighttpd/use-ipv6\.pl.*$',))}  # fmt: skip

    def command(self, site: Site, settings: ServerSettings) -> list[str]:
        return [str(self.binary()), "-D", "-f", str(self.config_path(site))]

    def check_command(self, site: Site, settings: ServerSettings) -> list[str] | None:
        return [str(self.binary()), "-tt", "-f", str(self.config_path(site))]  # -tt: modules loaded too
