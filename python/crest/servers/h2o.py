"""H2O: one process of `num-threads` event-loop threads; CGI through its fastcgi-cgi, FastCGI to crest-fcgi.

Owns H2O's configuration (templates/h2o.conf.j2) and command line; the
lifecycle is `Target`'s. H2O 2.2 cannot turn keep-alive off on its side
(connections still close when the client asks), and its file handler cannot
hand files without an extension to a FastCGI handler, so fastcgi-cgi runs as
a helper (like fcgiwrap for nginx) with one path per CGI program.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from crest.dynamic import PROGRAMS
from crest.servers.base import (
    Adapter,
    Helper,
    Knob,
    Part,
    ServerSettings,
    access_log_knob,
    int_option,
    number,
    profile_knob,
    render,
    version_output,
    wants_cgi,
    wants_fastcgi,
    which,
)
from crest.servers.site import Site
from crest.servers.stock import rewrite

# H2O's CGI bridge (Debian's h2o package): a FastCGI server that forks the program per request.
FASTCGI_CGI = Path("/usr/share/h2o/fastcgi-cgi")
MAX_CONNECTIONS = 4096
REQUEST_TIMEOUT_S = 10  # H2O's default http1-request-timeout (also its keep-alive idle time)
STOCK = Path("/etc/h2o/h2o.conf")


class H2oAdapter(Adapter):
    name = "h2o"
    title = "H2O"
    package = "h2o"
    kinds: ClassVar[frozenset[str]] = frozenset(
        {"cgi", "webstone-cgi", "fastcgi", "inproc", "specweb99", "specweb99-get"}
    )
    # h2 by ALPN on TLS and h2c with prior knowledge on the plain port are H2O's defaults: nothing to configure.
    # H2O 2.2 offers 100 streams per connection, fixed (SETTINGS_MAX_CONCURRENT_STREAMS; its
    # http2-max-concurrent-requests-per-connection only limits how many of them it works on at once).
    serves_http2 = True
    stock_config = STOCK
    stock_logs_access = True  # Debian's h2o.conf: access-log through rotatelogs
    # H2O 2.2 has no listen backlog, sendfile or open-file cache setting: those knobs are not offered.
    knobs = {
        "profile": profile_knob(str(STOCK)),
        "workers": number("event-loop threads", "--workers (one per target core)", "num-threads", ("num-threads",)),
        "max-connections": number("connections served at once", str(MAX_CONNECTIONS), "max-connections"),
        "http1-request-timeout": Knob("seconds an HTTP/1 connection may wait for a request (its keep-alive idle "
                                      "time too)", str(REQUEST_TIMEOUT_S), "http1-request-timeout"),
        "access_log": access_log_knob("access-log"),
    }  # fmt: skip

    def binary(self) -> Path | None:
        return which("h2o")

    def version(self) -> str:
        binary = self.binary()
        if binary is None:
            return "unknown"
        text = version_output([str(binary), "--version"], r"h2o version \S+")
        return text.replace("h2o version ", "h2o/")

    def parts(self) -> list[Part]:
        return [Part(f"runs CGI through {FASTCGI_CGI}", "cgi", "h2o", FASTCGI_CGI.exists())]

    def check(self, settings: ServerSettings) -> None:
        super().check(settings)

    def helpers(self, site: Site, settings: ServerSettings) -> list[Helper]:
        helpers = super().helpers(site, settings)
        if wants_cgi(settings):
            argv = (str(FASTCGI_CGI), f"--listen={site.cgi_socket}")
            helpers.append(Helper("fastcgi-cgi", argv, site.cgi_socket, user=site.user))
        return helpers

    def config_path(self, site: Site) -> Path:
        return site.conf_dir / "h2o.conf"

    def config_files(self, site: Site, settings: ServerSettings) -> dict[Path, str]:
        text = render(
            "h2o.conf.j2",
            site=site,
            settings=settings,
            cgi=wants_cgi(settings),
            fastcgi=wants_fastcgi(settings),
            cgi_programs=PROGRAMS,
            num_threads=int_option(settings, "workers", max(1, settings.workers)),
            max_connections=int_option(settings, "max-connections", MAX_CONNECTIONS),
            request_timeout=settings.options.get("http1-request-timeout", str(REQUEST_TIMEOUT_S)),
        )
        return {self.config_path(site): text}

    def stock_files(self, site: Site, settings: ServerSettings) -> dict[Path, str]:
        """Debian's h2o.conf on the site's address and docroot, its logs (rotatelogs pipes) as files in the site.
        It runs as the site's account (www-data as root), like the other stock servers: H2O writes its pid file
        after switching user, and Debian's own account (debian-h2o) cannot reach into the site."""
        account = [(r"^user: .*$", f"user: {site.user}")] if site.user else [(r"^user: .*$", "# user: crest's own")]
        return {self.config_path(site): rewrite(STOCK, [
            *account,
            (r"^access-log: .*$", f'access-log: "{site.access_log}"'),
            (r"^error-log: .*$", f'error-log: "{site.error_log}"'),
            (r"^pid-file: .*$", f'pid-file: "{site.run_dir}/h2o.pid"'),
            (r"^listen:\n  port: 80$", f"listen:\n  host: {site.host}\n  port: {site.port}"),
            (r"^(\s*)file\.dir: /var/www$", f'\\1file.dir: "{site.docroot}"'),
        ])}  # fmt: skip

    def command(self, site: Site, settings: ServerSettings) -> list[str]:
        return [str(self.binary()), "-c", str(self.config_path(site))]

    def check_command(self, site: Site, settings: ServerSettings) -> list[str] | None:
        return [str(self.binary()), "-t", "-c", str(self.config_path(site))]
