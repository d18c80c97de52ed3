"""Apache httpd with the prefork, worker or event MPM: one self-contained config, three adapters.

Owns Apache's configuration (templates/apache2.conf.j2: modules loaded by
absolute path from /usr/lib/apache2/modules, nothing from /etc/apache2 or
Debian's envvars) and command line. CGI goes through mod_cgid under every
MPM, FastCGI through mod_proxy_fcgi to crest-fcgi, TLS through mod_ssl, HTTP/2
through mod_http2 (worker and event only: it declares itself inactive under prefork).
With profile=stock it runs Debian's /etc/apache2 instead (event MPM only); profile=mindcraft
(prefork only) sets the knobs to the Apache 1.3.4 configuration Mindcraft printed (seed 001).
"""

from __future__ import annotations

import getpass
import grp
import os
from pathlib import Path
from typing import ClassVar

from crest.errors import ConfigError
from crest.servers.base import (
    Adapter,
    Knob,
    Preset,
    ServerSettings,
    access_log_knob,
    docroot_files,
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

MODULES_DIR = Path("/usr/lib/apache2/modules")
# Concurrent connections Apache can serve by default (MaxRequestWorkers); Debian's 150 would
# queue a 256-client mix in the listen backlog and measure that instead of the server.
MAX_REQUEST_WORKERS = 512
THREADS_PER_CHILD = 64
KEEPALIVE_TIMEOUT_S = 5  # Apache's default
# Concurrent streams per HTTP/2 connection (H2MaxSessionStreams; Apache's default is 100): nginx's 128.
HTTP2_MAX_STREAMS = 128
STOCK = Path("/etc/apache2/apache2.conf")
# The access log's line: crest's own (address, time to the millisecond, request, status, bytes, duration).
CREST_LOG_FORMAT = r"%a [%{msec}t] \"%r\" %>s %B %D"
# Mindcraft's Apache 1.3.4 (seed 001, "Apache 1.3.4 Configuration"), in Apache 2.4's prefork words:
# MaxClients is MaxRequestWorkers, the compile-time HARD_SERVER_LIMIT=500 is ServerLimit, and
# MaxRequestsPerChild is MaxConnectionsPerChild (one request per connection without keep-alive, as
# WebBench sent them). Logging was on, in the common format it printed. mod_status and .htaccess were
# off, as in every configuration crest writes; KeepAlive Off follows from the suite (no keep-alive).
MINDCRAFT = Preset(
    "Mindcraft 1999 (seed 001), Apache 1.3.4 Configuration: MaxClients 290, HARD_SERVER_LIMIT 500, StartServers 10, "
    "MinSpareServers 1, MaxSpareServers 290, MaxRequestsPerChild 10000, common log format; prefork only",
    {"max_request_workers": "290", "server_limit": "500", "start_servers": "10", "min_spare_servers": "1",
     "max_spare_servers": "290", "requests_per_child": "10000", "access_log": "on"},
)  # fmt: skip
# The log format each preset printed, where it differs from crest's.
PRESET_LOG_FORMATS = {"mindcraft": r"%h %l %u %t \"%r\" %>s %b"}

COMMON_KNOBS = {
    "profile": profile_knob(f"{STOCK} with its mods-, conf- and sites-enabled (event MPM)"),
    "max_request_workers": number("connections served at once, the whole server's capacity",
                                  str(MAX_REQUEST_WORKERS), "MaxRequestWorkers", ("MaxRequestWorkers",)),
    "server_limit": number("most child processes", "enough for max_request_workers", "ServerLimit",
                           ("ServerLimit",)),
    "start_servers": number("child processes started at once", "--workers (at least 5 for prefork)",
                            "StartServers", ("StartServers",)),
    "requests_per_child": number("connections a child serves before it exits and is replaced; 0 = never",
                                 "0", "MaxConnectionsPerChild", ("MaxConnectionsPerChild",), minimum=0),
    "backlog": number("listen backlog: connections the kernel queues before Apache accepts them",
                      "511 (Apache's own)", "ListenBacklog"),
    "keepalive_timeout": Knob("seconds an idle keep-alive connection stays open", str(KEEPALIVE_TIMEOUT_S),
                              "KeepAliveTimeout", ("KeepAliveTimeout",)),
    "keepalive_requests": number("requests per keep-alive connection, 0 = unlimited", "0",
                                 "MaxKeepAliveRequests", ("MaxKeepAliveRequests",), minimum=0),
    "sendfile": on_off("send static files with sendfile(2)", "on", "EnableSendfile", ("EnableSendfile",)),
    "mmap": on_off("read static files through mmap(2) (when not sent with sendfile)", "on", "EnableMMAP",
                   ("EnableMMAP",)),
    "file_cache": on_off("map every docroot file into memory at start-up (mod_file_cache; files added later "
                         "are read as usual)", "off", "MMapFile (mod_file_cache)"),
    "access_log": access_log_knob("CustomLog"),
}  # fmt: skip


class ApacheAdapter(Adapter):
    """What the three MPMs share; subclasses name the MPM and size it."""

    package = "apache2"
    kinds: ClassVar[frozenset[str]] = frozenset(
        {"cgi", "webstone-cgi", "fastcgi", "inproc", "specweb99", "specweb99-get"}
    )
    mpm: ClassVar[str]
    serves_http2 = True  # mod_http2: h2 by ALPN on TLS, h2c with prior knowledge (H2Direct) on the plain port
    stock_config = STOCK
    stock_logs_access = True  # Debian's 000-default site: CustomLog ${APACHE_LOG_DIR}/access.log combined

    def binary(self) -> Path | None:
        return which("apache2", "httpd")

    def version(self) -> str:
        binary = self.binary()
        return version_output([str(binary), "-v"], r"Apache/\S+( \([^)]*\))?") if binary else "unknown"

    def _check_stock(self, settings: ServerSettings) -> None:
        if self.mpm != "event":
            raise ConfigError(f"Debian's stock Apache runs the event MPM, not {self.mpm}: use --server apache-event "
                              "with profile=stock, or profile=tuned for this MPM")  # fmt: skip
        super()._check_stock(settings)

    def mpm_directives(self, settings: ServerSettings) -> list[tuple[str, int]]:
        """The MPM's sizing directives, in the order Apache wants them (limits before what they limit)."""
        raise NotImplementedError

    def capacity(self, directives: list[tuple[str, int]]) -> str:
        return f"MaxRequestWorkers {dict(directives)['MaxRequestWorkers']} concurrent connections"

    def modules(self, site: Site, settings: ServerSettings) -> list[str]:
        modules = [f"mpm_{self.mpm}", "authz_core"]
        if wants_cgi(settings):
            modules += ["alias", "cgid"]
        if wants_fastcgi(settings):
            modules += ["proxy", "proxy_fcgi"]
        if site.tls_port:
            modules += ["socache_shmcb", "ssl"]
        if switch(settings, "file_cache", False):
            modules.append("file_cache")
        if settings.http2:
            modules.append("http2")
        return modules

    def config_path(self, site: Site) -> Path:
        return site.conf_dir / "apache2.conf"

    def config_files(self, site: Site, settings: ServerSettings) -> dict[Path, str]:
        opts = settings.options
        directives = self.mpm_directives(settings)
        text = render(
            "apache2.conf.j2",
            site=site,
            settings=settings,
            mpm=self.mpm,
            modules=self.modules(site, settings),
            modules_dir=MODULES_DIR,
            mpm_directives=directives,
            capacity=self.capacity(directives),
            cgi=wants_cgi(settings),
            fastcgi=wants_fastcgi(settings),
            backlog=opts.get("backlog"),
            max_keepalive_requests=int_option(settings, "keepalive_requests", 0, minimum=0),
            keepalive_timeout=opts.get("keepalive_timeout", str(KEEPALIVE_TIMEOUT_S)),
            sendfile="On" if switch(settings, "sendfile", True) else "Off",
            mmap="On" if switch(settings, "mmap", True) else "Off",
            cached_files=docroot_files(site.docroot) if switch(settings, "file_cache", False) else [],
            http2_max_streams=HTTP2_MAX_STREAMS,
            log_format=PRESET_LOG_FORMATS.get(opts.get("profile", ""), CREST_LOG_FORMAT),
        )
        return {self.config_path(site): text}

    def stock_files(self, site: Site, settings: ServerSettings) -> dict[Path, str]:
        """Debian's apache2.conf with its ports.conf and enabled sites copied beside it (listening on the
        site's address, serving its docroot); modules and conf-enabled are read from /etc/apache2 as they
        are, and Debian's envvars (pid file, run, lock and log directories) point into the site (env)."""
        sites = site.conf_dir / "sites-enabled"
        files = {
            self.config_path(site): rewrite(STOCK, [
                (r"^Include ports\.conf$", f"Include {site.conf_dir}/ports.conf"),
                (r"^IncludeOptional sites-enabled/\*\.conf$", f"IncludeOptional {sites}/*.conf"),
                (r"^<Directory /var/www/>$", f"<Directory {site.docroot}/>"),
            ]),
            site.conf_dir / "ports.conf": rewrite(STOCK.parent / "ports.conf", [
                (r"^Listen 80$", f"Listen {site.host}:{site.port}"),
            ]),
        }  # fmt: skip
        for source in files_in(STOCK.parent / "sites-enabled"):
            files[sites / source.name] = rewrite(source, [
                (r"^<VirtualHost \*:80>$", f"<VirtualHost *:{site.port}>"),
                (r"^(\s*)DocumentRoot /var/www/html$", f"\\1DocumentRoot {site.docroot}"),
            ])  # fmt: skip
        return files

    def env(self, site: Site, settings: ServerSettings) -> dict[str, str] | None:
        if settings.options.get("profile") != "stock":
            return None
        user = site.user or getpass.getuser()
        group = site.group or grp.getgrgid(os.getgid()).gr_name
        # What Debian's /etc/apache2/envvars sets, with its paths in the site.
        return {**os.environ, "APACHE_RUN_USER": user, "APACHE_RUN_GROUP": group,
                "APACHE_PID_FILE": str(site.run_dir / "apache2.pid"), "APACHE_RUN_DIR": str(site.run_dir),
                "APACHE_LOCK_DIR": str(site.run_dir), "APACHE_LOG_DIR": str(site.logs), "LANG": "C"}  # fmt: skip

    def server_root(self, site: Site, settings: ServerSettings) -> Path:
        """Where relative paths resolve: the site, or /etc/apache2 for the stock configuration's includes."""
        return STOCK.parent if settings.options.get("profile") == "stock" else site.root

    def command(self, site: Site, settings: ServerSettings) -> list[str]:
        root = self.server_root(site, settings)
        return [str(self.binary()), "-d", str(root), "-f", str(self.config_path(site)), "-DFOREGROUND"]

    def check_command(self, site: Site, settings: ServerSettings) -> list[str] | None:
        root = self.server_root(site, settings)
        return [str(self.binary()), "-d", str(root), "-f", str(self.config_path(site)), "-t"]


class ApachePreforkAdapter(ApacheAdapter):
    """One single-threaded process per connection, as in the Mindcraft and WebBench reports."""

    name = "apache-prefork"
    title = "Apache httpd (prefork MPM)"
    mpm = "prefork"
    # mod_http2 under prefork says "the HTTP/2 protocol will be inactive": Apache 2.4.71 then offers no h2 by
    # ALPN (h2c prior knowledge was still answered), and prefork runs one request per process anyway.
    serves_http2 = False
    no_http2 = "mod_http2 needs a threaded MPM: use --server apache-event (or apache-worker)"
    presets = {"mindcraft": MINDCRAFT}
    knobs = {
        **COMMON_KNOBS,
        "profile": profile_knob(f"{STOCK} with its mods-, conf- and sites-enabled (event MPM)", presets),
        "min_spare_servers": number("idle processes Apache keeps ready", "start_servers", "MinSpareServers",
                                    ("MinSpareServers",)),
        "max_spare_servers": number("idle processes above which Apache stops some", "min_spare_servers + 10",
                                    "MaxSpareServers", ("MaxSpareServers",)),
    }  # fmt: skip

    def mpm_directives(self, settings: ServerSettings) -> list[tuple[str, int]]:
        workers = int_option(settings, "max_request_workers", MAX_REQUEST_WORKERS)
        limit = int_option(settings, "server_limit", workers)
        start = min(int_option(settings, "start_servers", max(5, settings.workers)), limit)
        min_spare = int_option(settings, "min_spare_servers", start)
        max_spare = int_option(settings, "max_spare_servers", min_spare + 10)
        return [
            ("ServerLimit", limit),
            ("MaxRequestWorkers", workers),
            ("StartServers", start),
            ("MinSpareServers", min_spare),
            ("MaxSpareServers", max_spare),
            ("MaxConnectionsPerChild", int_option(settings, "requests_per_child", 0, minimum=0)),
        ]


class _ThreadedApacheAdapter(ApacheAdapter):
    """worker and event: processes of ThreadsPerChild threads each."""

    def check(self, settings: ServerSettings) -> None:
        profile = settings.options.get("profile", "").lower()
        if profile in ApachePreforkAdapter.presets:
            raise ConfigError(f"--server-opt profile={profile} is Apache 1.3's configuration, one process per "
                              "connection (no threads): use --server apache-prefork")  # fmt: skip
        super().check(settings)

    knobs = {
        **COMMON_KNOBS,
        "threads_per_child": number("threads per child process", str(THREADS_PER_CHILD), "ThreadsPerChild",
                                    ("ThreadsPerChild",)),
        "min_spare_threads": number("idle threads Apache keeps ready", "threads_per_child", "MinSpareThreads",
                                    ("MinSpareThreads",)),
        "max_spare_threads": number("idle threads above which Apache stops a process", "max_request_workers",
                                    "MaxSpareThreads", ("MaxSpareThreads",)),
    }  # fmt: skip

    def mpm_directives(self, settings: ServerSettings) -> list[tuple[str, int]]:
        threads = int_option(settings, "threads_per_child", THREADS_PER_CHILD)
        asked = int_option(settings, "max_request_workers", MAX_REQUEST_WORKERS)
        processes = -(-asked // threads)  # Apache wants a whole number of processes' worth
        limit = int_option(settings, "server_limit", processes)
        workers = min(processes, limit) * threads
        start = min(int_option(settings, "start_servers", max(1, settings.workers)), limit)
        min_spare = int_option(settings, "min_spare_threads", threads)
        max_spare = int_option(settings, "max_spare_threads", max(workers, min_spare + threads))
        return [
            ("ServerLimit", limit),
            ("ThreadLimit", threads),
            ("ThreadsPerChild", threads),
            ("MaxRequestWorkers", workers),
            ("StartServers", start),
            ("MinSpareThreads", min_spare),
            ("MaxSpareThreads", max_spare),
            ("MaxConnectionsPerChild", int_option(settings, "requests_per_child", 0, minimum=0)),
        ]


class ApacheWorkerAdapter(_ThreadedApacheAdapter):
    """Threads per process; a keep-alive connection holds its thread while idle."""

    name = "apache-worker"
    title = "Apache httpd (worker MPM)"
    mpm = "worker"


class ApacheEventAdapter(_ThreadedApacheAdapter):
    """Like worker, but idle keep-alive connections wait in a listener thread, not a worker thread."""

    name = "apache-event"
    title = "Apache httpd (event MPM)"
    mpm = "event"
