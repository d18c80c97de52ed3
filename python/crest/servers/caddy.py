"""Caddy: one Go process (GOMAXPROCS threads); CGI through fcgiwrap, FastCGI through its fastcgi transport.

Owns Caddy's configuration (templates/Caddyfile.j2, adapted by `caddy run
--adapter caddyfile`), command line and environment. Caddy has no way to
drop root; it runs as crest does.
"""

from __future__ import annotations

import os
import re
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
    profile_knob,
    render,
    version_output,
    wants_cgi,
    wants_fastcgi,
    which,
)
from crest.servers.site import Site
from crest.servers.stock import rewrite

IDLE_TIMEOUT = "5m"  # Caddy's default
DURATION = re.compile(r"\d+(ns|us|ms|s|m|h)|0")
STOCK = Path("/etc/caddy/Caddyfile")


class CaddyAdapter(Adapter):
    name = "caddy"
    title = "Caddy"
    package = "caddy"
    kinds: ClassVar[frozenset[str]] = frozenset(
        {"cgi", "webstone-cgi", "fastcgi", "inproc", "specweb99", "specweb99-get"}
    )
    cgi_through_fcgiwrap = True
    # h2 by ALPN on TLS (on in crest's configuration either way), h2c with prior knowledge on the plain
    # port when http2 is asked; h3 (QUIC, quic-go) on the TLS port over UDP only when http3 is asked.
    # Streams per connection: Go's default 250 (Caddy 2.6 has no setting for it); QUIC's: quic-go's 100.
    serves_http2 = True
    serves_http3 = True
    stock_config = STOCK
    knobs = {
        "profile": profile_knob(f"{STOCK} (its admin endpoint moved to a socket in the site)"),
        "workers": number("threads running Go code at once", "--workers (one per target core)",
                          "environment GOMAXPROCS", ("GOMAXPROCS",)),
        "GOGC": number("Go garbage collector target, percent of live heap", "100", "environment GOGC"),
        "idle_timeout": Knob("how long an idle keep-alive connection stays open, e.g. 5s", IDLE_TIMEOUT,
                             "servers { timeouts { idle } }"),
        "read_timeout": Knob("limit on reading a request's headers and body, e.g. 30s", "0 = none",
                             "servers { timeouts { read_header read_body } }"),
        "write_timeout": Knob("limit on writing a response, e.g. 30s", "0 = none", "servers { timeouts { write } }"),
        "max_header_size": Knob("largest request header accepted, e.g. 1MB", "1MB", "servers { max_header_size }"),
        "access_log": access_log_knob("log (in the site block)"),
        "fcgiwrap_children": Knob("fcgiwrap processes running CGI programs", "4 per worker, at least 8",
                                  "fcgiwrap -c"),
    }  # fmt: skip

    def binary(self) -> Path | None:
        return which("caddy")

    def version(self) -> str:
        binary = self.binary()
        if binary is None:
            return "unknown"
        text = version_output([str(binary), "version"], r"v?\d+\.\d+\.\d+\S*")
        return text if text == "unknown" else f"caddy/{text.lstrip('v')}"

    def check(self, settings: ServerSettings) -> None:
        super().check(settings)
        for key in ("idle_timeout", "read_timeout", "write_timeout"):
            value = settings.options.get(key)
            if value is not None and not DURATION.fullmatch(value):
                raise ConfigError(f"--server-opt {key}={value!r}: give a duration such as 500ms, 5s or 2m")

    def config_path(self, site: Site) -> Path:
        return site.conf_dir / "Caddyfile"

    def config_files(self, site: Site, settings: ServerSettings) -> dict[Path, str]:
        opts = settings.options
        addresses = [f"http://{site.host}:{site.port}"]
        if site.tls_port:
            addresses.append(f"https://{site.host}:{site.tls_port}")
        text = render(
            "Caddyfile.j2",
            site=site,
            settings=settings,
            addresses=addresses,
            cgi=wants_cgi(settings),
            fastcgi=wants_fastcgi(settings),
            idle_timeout=opts.get("idle_timeout", IDLE_TIMEOUT),
            read_timeout=opts.get("read_timeout", "0"),
            write_timeout=opts.get("write_timeout", "0"),
            max_header_size=opts.get("max_header_size", "1MB"),
        )
        return {self.config_path(site): text}

    def stock_files(self, site: Site, settings: ServerSettings) -> dict[Path, str]:
        """Debian's Caddyfile on the site's address and docroot. Its admin endpoint (localhost:2019, a second
        listen address every Caddy would share) moves to a socket in the site: the one line crest adds."""
        text = rewrite(STOCK, [
            (r"^:80 \{$", f"http://{site.host}:{site.port} {{\n\tbind {site.host}"),
            (r"^(\s*)root \* /usr/share/caddy$", f"\\1root * {site.docroot}"),
        ])  # fmt: skip
        return {self.config_path(site): f"{{\n\tadmin unix/{site.run_dir}/caddy-admin.sock\n}}\n" + text}

    def command(self, site: Site, settings: ServerSettings) -> list[str]:
        return [str(self.binary()), "run", "--config", str(self.config_path(site)), "--adapter", "caddyfile"]

    def check_command(self, site: Site, settings: ServerSettings) -> list[str] | None:
        return [str(self.binary()), "validate", "--config", str(self.config_path(site)), "--adapter", "caddyfile"]

    def env(self, site: Site, settings: ServerSettings) -> dict[str, str] | None:
        home = str(site.run_dir / "caddy")
        env = {**os.environ, "HOME": home, "XDG_CONFIG_HOME": home, "XDG_DATA_HOME": home}
        if settings.options.get("profile") == "stock":
            return env  # Go's own GOMAXPROCS: the cores its affinity mask allows
        env["GOMAXPROCS"] = str(int_option(settings, "workers", max(1, settings.workers)))
        if "GOGC" in settings.options:
            env["GOGC"] = settings.options["GOGC"]
        return env
