"""Apache httpd with the prefork, worker or event MPM: one self-contained config, three adapters.

Owns Apache's configuration (templates/apache2.conf.j2: modules loaded by
absolute path from /usr/lib/apache2/modules, nothing from /etc/apache2 or
Debian's envvars) and command line. CGI goes through mod_cgid under every
MPM, FastCGI through mod_proxy_fcgi to crest-fcgi, TLS through mod_ssl.
"""

from __future__ import annotations

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

MODULES_DIR = Path("/usr/lib/apache2/modules")
# Concurrent connections Apache can serve by default (MaxRequestWorkers); Debian's 150 would
# queue a 256-client mix in the listen backlog and measure that instead of the server.
MAX_REQUEST_WORKERS = 512
THREADS_PER_CHILD = 64
KEEPALIVE_TIMEOUT_S = 5  # Apache's default

COMMON_OPTIONS = {
    "MaxRequestWorkers": f"connections served at once, the whole server's capacity (default {MAX_REQUEST_WORKERS})",
    "ServerLimit": "most child processes (default: enough for MaxRequestWorkers)",
    "StartServers": "child processes started at once (default: --workers, at least 5 for prefork)",
    "KeepAliveTimeout": f"seconds an idle keep-alive connection stays open (default {KEEPALIVE_TIMEOUT_S})",
    "MaxKeepAliveRequests": "requests per keep-alive connection, 0 = unlimited (default 0)",
    "EnableSendfile": "On or Off: send static files with sendfile(2) (default On)",
}


class ApacheAdapter(Adapter):
    """What the three MPMs share; subclasses name the MPM and size it."""

    package = "apache2"
    kinds: ClassVar[frozenset[str]] = frozenset(
        {"cgi", "webstone-cgi", "fastcgi", "inproc", "specweb99", "specweb99-get"}
    )
    mpm: ClassVar[str]

    def binary(self) -> Path | None:
        return which("apache2", "httpd")

    def version(self) -> str:
        binary = self.binary()
        return version_output([str(binary), "-v"], r"Apache/\S+( \([^)]*\))?") if binary else "unknown"

    def check(self, settings: ServerSettings) -> None:
        super().check(settings)
        self.mpm_directives(settings)  # every number it computes with is a number
        int_option(settings, "MaxKeepAliveRequests", 0, minimum=0)

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
            max_keepalive_requests=int_option(settings, "MaxKeepAliveRequests", 0, minimum=0),
            keepalive_timeout=opts.get("KeepAliveTimeout", str(KEEPALIVE_TIMEOUT_S)),
            sendfile=opts.get("EnableSendfile", "On"),
        )
        return {self.config_path(site): text}

    def command(self, site: Site, settings: ServerSettings) -> list[str]:
        return [str(self.binary()), "-d", str(site.root), "-f", str(self.config_path(site)), "-DFOREGROUND"]

    def check_command(self, site: Site, settings: ServerSettings) -> list[str] | None:
        return [str(self.binary()), "-d", str(site.root), "-f", str(self.config_path(site)), "-t"]


class ApachePreforkAdapter(ApacheAdapter):
    """One single-threaded process per connection, as in the Mindcraft and WebBench reports."""

    name = "apache-prefork"
    title = "Apache httpd (prefork MPM)"
    mpm = "prefork"
    options_help = {
        **COMMON_OPTIONS,
        "MinSpareServers": "idle processes Apache keeps ready (default: StartServers)",
        "MaxSpareServers": "idle processes above which Apache stops some (default: MinSpareServers + 10)",
    }

    def mpm_directives(self, settings: ServerSettings) -> list[tuple[str, int]]:
        workers = int_option(settings, "MaxRequestWorkers", MAX_REQUEST_WORKERS)
        limit = int_option(settings, "ServerLimit", workers)
        start = min(int_option(settings, "StartServers", max(5, settings.workers)), limit)
        min_spare = int_option(settings, "MinSpareServers", start)
        max_spare = int_option(settings, "MaxSpareServers", min_spare + 10)
        return [
            ("ServerLimit", limit),
            ("MaxRequestWorkers", workers),
            ("StartServers", start),
            ("MinSpareServers", min_spare),
            ("MaxSpareServers", max_spare),
            ("MaxConnectionsPerChild", 0),
        ]


class _ThreadedApacheAdapter(ApacheAdapter):
    """worker and event: processes of ThreadsPerChild threads each."""

    options_help = {
        **COMMON_OPTIONS,
        "ThreadsPerChild": f"threads per child process (default {THREADS_PER_CHILD})",
        "MinSpareThreads": "idle threads Apache keeps ready (default: ThreadsPerChild)",
        "MaxSpareThreads": "idle threads above which Apache stops a process (default: MaxRequestWorkers)",
    }

    def mpm_directives(self, settings: ServerSettings) -> list[tuple[str, int]]:
        threads = int_option(settings, "ThreadsPerChild", THREADS_PER_CHILD)
        asked = int_option(settings, "MaxRequestWorkers", MAX_REQUEST_WORKERS)
        processes = -(-asked // threads)  # Apache wants a whole number of processes' worth
        limit = int_option(settings, "ServerLimit", processes)
        workers = min(processes, limit) * threads
        start = min(int_option(settings, "StartServers", max(1, settings.workers)), limit)
        min_spare = int_option(settings, "MinSpareThreads", threads)
        max_spare = int_option(settings, "MaxSpareThreads", max(workers, min_spare + threads))
        return [
            ("ServerLimit", limit),
            ("ThreadLimit", threads),
            ("ThreadsPerChild", threads),
            ("MaxRequestWorkers", workers),
            ("StartServers", start),
            ("MinSpareThreads", min_spare),
            ("MaxSpareThreads", max_spare),
            ("MaxConnectionsPerChild", 0),
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
