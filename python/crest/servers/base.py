"""The server adapter contract and the lifecycle every provisioned target shares.

An adapter says how one kind of server is configured and started (its
binary, version, config files, command line, which dynamic kinds it can
serve and through which helper; for a file server, the account its clients
log in with). `Target` does the rest the same way for all of them: the private
site, helpers (crest's FastCGI responder, fcgiwrap), pinning, the cgroup
(memory limit, CPU quota), waiting until it answers, and stopping it with
nothing left behind. Adapters never start long-running processes themselves.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import shlex
import shutil
import socket
import subprocess
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar

from crest.errors import ConfigError, MachineError, TargetError
from crest.host import pagecache
from crest.network.netns import call_in
from crest.secrets import Secret
from crest.servers.cgroup import Cgroup
from crest.servers.cpus import CpuQuota
from crest.servers.process import LOG_TAIL_LINES, Processes, wait_until
from crest.servers.reap import reap_dead
from crest.servers.site import Site, create_site, remove_site

# Request kinds a workload may need beyond static files (see crest.suite's RequestKind).
DYNAMIC_KINDS = ("cgi", "webstone-cgi", "fastcgi", "inproc", "specweb99", "specweb99-get")
# File-operation workloads (dbench-style loadfiles over SMB): only file servers serve them, and file
# servers serve nothing else, so a web suite needs a web server and a file suite a file server.
FILE_KINDS = ("loadfile",)
# Every kind a workload may ask of a server (what ServerSettings.kinds holds; static web files are implicit).
SERVER_KINDS = (*DYNAMIC_KINDS, *FILE_KINDS)
# SPECweb99's dynamic set: /specweb99/dynamic (crest's FastCGI responder on real servers) and the CGI program.
_FASTCGI_KINDS = frozenset({"fastcgi", "inproc", "specweb99", "specweb99-get"})
_CGI_KINDS = frozenset({"cgi", "webstone-cgi", "specweb99"})
# How long a server may take to answer after it was started.
READY_TIMEOUT_S = 20.0
# What a --server-opt value may contain: it is pasted into a config file, so nothing that
# config syntaxes read as quotes, terminators, blocks, comments or line ends.
OPTION_VALUE = re.compile(r"[\w.:/+=,@ -]+")
# Where adapters keep their configuration templates (jinja2).
TEMPLATES = Path(__file__).resolve().parent / "templates"
# The values an on/off knob takes (any case), and what they mean.
ON_OFF = {"on": True, "off": False}
# --server-opt profile: crest's own configuration, or the distribution's default one unchanged (see stock.py);
# an adapter may add presets (Adapter.presets), configurations a seed report printed.
PROFILES = ("tuned", "stock")


@dataclass(frozen=True)
class Knob:
    """One --server-opt key: what it means, its default, and the server setting it sets.

    The common vocabulary (docs/servers.md) uses the same key on every server that has the setting:
    profile, workers, backlog, requests_per_child, file_cache, sendfile, access_log, keepalive_timeout,
    keepalive_requests. `aliases` are older or server-native names for the same setting (both are
    accepted, never together).
    """

    meaning: str
    default: str
    directive: str  # e.g. "worker_processes", "ListenBacklog", "environment GOMAXPROCS"
    aliases: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()  # the values it takes (any case); () = any safe text
    minimum: int | None = None  # a whole number of at least this; None = not a number

    def describe(self) -> dict[str, Any]:
        described: dict[str, Any] = {"meaning": self.meaning, "default": self.default, "directive": self.directive}
        if self.aliases:
            described["aliases"] = list(self.aliases)
        if self.choices:
            described["choices"] = list(self.choices)
        if self.minimum is not None:
            described["minimum"] = self.minimum
        return described


def number(meaning: str, default: str, directive: str, aliases: tuple[str, ...] = (), *, minimum: int = 1) -> Knob:
    """A knob that takes a whole number of at least `minimum`."""
    return Knob(meaning, default, directive, aliases, minimum=minimum)


def on_off(meaning: str, default: str, directive: str, aliases: tuple[str, ...] = ()) -> Knob:
    """A knob that turns a feature on or off."""
    return Knob(f"on or off: {meaning}", default, directive, aliases, choices=tuple(ON_OFF))


def access_log_knob(directive: str) -> Knob:
    """access_log: the same as --access-log, as a knob so designs can vary it."""
    return on_off("log every request to the site's access log (the same as --access-log)", "off", directive)


@dataclass(frozen=True)
class Preset:
    """A --server-opt profile that sets knobs as a seed report printed its server's configuration.

    Its values are knob values under the knobs' own keys; a --server-opt given with the profile replaces
    the preset's value of that knob (so a design can vary one setting of a seed's configuration).
    """

    source: str  # the report and section that printed the configuration
    options: Mapping[str, str]

    def describe(self) -> dict[str, Any]:
        return {"source": self.source, "options": dict(self.options)}


def profile_knob(stock: str, presets: Mapping[str, Preset] | None = None) -> Knob:
    """profile: crest's tuned configuration, the distribution's `stock` one (file `stock`), or a preset."""
    seeds = "".join(f", or {name} ({preset.source})" for name, preset in (presets or {}).items())
    return Knob(f"tuned (crest's configuration) or stock ({stock} as the package ships it, only the listen "
                f"address, docroot, pid file and log paths changed; no other knob with it){seeds}", "tuned",
                stock, choices=(*PROFILES, *(presets or {})))  # fmt: skip


@dataclass(frozen=True)
class ServerSettings:
    """What a run asks of its target; adapters turn it into their server's configuration."""

    docroot: Path
    cpus: tuple[int, ...] = ()  # cores the target is pinned to; () = not pinned
    workers: int = 1  # worker processes (or threads, for threaded servers); default = the cores given
    memory_bytes: int | None = None
    cpu_quota: CpuQuota | None = None  # a fractional --cpus: CFS quota on top of pinning to `cpus`
    access_log: bool = False
    tls: bool = False  # also listen for HTTPS on a second port
    tls_key: str = "ecdsa-p256"  # the certificate's key (crest.suite.models.TLS_KEYS)
    # Also serve HTTP/2: h2 by ALPN on the TLS listener (when tls), and h2c with prior knowledge on
    # Target.h2c_url (the main port, or a port of its own on servers that need one: Site.h2c_port).
    http2: bool = False
    # Also serve HTTP/3 (QUIC over UDP) on the TLS listener's port; needs tls.
    http3: bool = False
    kinds: frozenset[str] = frozenset()  # SERVER_KINDS the workload sends (dynamic web kinds, or loadfile)
    keepalive: bool = True
    options: Mapping[str, str] = field(default_factory=dict)  # --server-opt KEY=VALUE
    # Loopback unless the user put the target on a cluster node (--target-node): then the node's address.
    bind_host: str = "127.0.0.1"
    # The network namespace the target runs in (--network: the network's target namespace); None: this one.
    netns: str | None = None


@dataclass(frozen=True)
class Helper:
    """A process a server needs beside it (crest-fcgi, fcgiwrap)."""

    name: str
    argv: tuple[str, ...]
    socket: Path  # ready once this exists
    user: str | None = None  # the account it runs as (crest as root); None: crest's own


@dataclass(frozen=True)
class Login:
    """The account clients log in with, on targets that require one (file servers)."""

    user: str
    # The password alone (no newline), mode 0600 in a 0700 directory of the site: the password is
    # never on a command line, in an environment or in stored metadata, only in this file.
    secret_file: Path


@dataclass(frozen=True)
class Part:
    """Something a server needs only for some workloads and that Debian packages apart from it
    (a module or helper that comes only as a Recommends, so `--no-install-recommends` leaves it out)."""

    what: str  # completes "<server> ...", e.g. "runs CGI through fcgiwrap"
    needed_for: str  # "tls" or "cgi": the workloads that need it
    package: str  # the Debian package that provides it
    present: bool

    def needed(self, settings: ServerSettings) -> bool:
        return settings.tls if self.needed_for == "tls" else wants_cgi(settings)


class Adapter(ABC):
    """One kind of server: how to find, configure and start it."""

    name: ClassVar[str]
    title: ClassVar[str]  # e.g. "nginx", "Apache httpd (event MPM)"
    package: ClassVar[str]  # the Debian package that provides it ("" when nothing needs installing)
    kinds: ClassVar[frozenset[str]] = frozenset()  # dynamic kinds it can serve; {"loadfile"}: a file server
    # What to tell a user who asks for a kind this server cannot serve.
    alternatives: ClassVar[Mapping[str, str]] = {}
    knobs: ClassVar[Mapping[str, Knob]] = {}  # --server-opt keys it understands
    # --server-opt profile values beyond tuned and stock: a seed's printed configuration (its profile knob
    # lists them among its choices: profile_knob(..., presets)).
    presets: ClassVar[Mapping[str, Preset]] = {}
    # The distribution's default configuration file, when the adapter can run it (--server-opt profile=stock).
    stock_config: ClassVar[Path | None] = None
    # Whether that stock configuration logs every request (its access log is then counted like --access-log's).
    stock_logs_access: ClassVar[bool] = False
    # How long after the last request its access-log line is surely on disk (servers that buffer it).
    access_log_flush_s: ClassVar[float] = 0.2
    # The server has no CGI of its own: crest starts fcgiwrap and the server passes /cgi-bin/ to it.
    cgi_through_fcgiwrap: ClassVar[bool] = False
    # It can serve HTTP/2 (ServerSettings.http2); when not, `no_http2` says what to do instead.
    serves_http2: ClassVar[bool] = False
    no_http2: ClassVar[str] = "use a server that serves it, e.g. --server nginx (see `crest servers`)"
    # It can serve HTTP/3 (ServerSettings.http3) on its TLS port over UDP.
    serves_http3: ClassVar[bool] = False
    # Its h2c (prior knowledge) cannot share the main HTTP/1 port: the site gets a port for it (Site.h2c_port).
    h2c_own_port: ClassVar[bool] = False
    # What the access-log line it writes for each HTTP/2 connection (not a request) contains; None: it writes none.
    h2_connection_log_line: ClassVar[bytes | None] = None

    # -- what a subclass provides ------------------------------------------------

    @abstractmethod
    def binary(self) -> Path | None:
        """The server's executable, or None when it is not installed."""

    @abstractmethod
    def version(self) -> str:
        """The server's version as it prints it (e.g. "nginx/1.22.1")."""

    @abstractmethod
    def config_files(self, site: Site, settings: ServerSettings) -> dict[Path, str]:
        """The configuration files to write into the site, by path."""

    @abstractmethod
    def command(self, site: Site, settings: ServerSettings) -> list[str]:
        """The command that runs the server in the foreground with that configuration."""

    def helpers(self, site: Site, settings: ServerSettings) -> list[Helper]:
        """Processes to start before the server: crest's FastCGI responder when FastCGI (or the
        in-process kind, which real servers serve through it) is asked for, and fcgiwrap for CGI
        on servers that run CGI only through FastCGI (`cgi_through_fcgiwrap`)."""
        helpers = []
        if wants_fastcgi(settings):
            from crest.dynamic import responder_path  # only then: it raises when crest-fcgi is not built

            threads = str(max(1, settings.workers))
            helpers.append(Helper("crest-fcgi", (str(responder_path()), "--socket", str(site.fcgi_socket),
                                                 "--threads", threads, "--specweb99-dir", str(site.specweb99_dir)),
                                  site.fcgi_socket))  # fmt: skip
        if self.cgi_through_fcgiwrap and wants_cgi(settings):
            children = int_option(settings, "fcgiwrap_children", max(8, 4 * settings.workers))
            helpers.append(fcgiwrap_helper(site, children))
        return helpers

    def parts(self) -> list[Part]:
        """Parts packaged apart from the server that some workloads need; `check` refuses a workload
        whose part is missing, and `crest servers` lists what is missing."""
        if self.cgi_through_fcgiwrap:
            return [Part("runs CGI through fcgiwrap", "cgi", "fcgiwrap", which("fcgiwrap") is not None)]
        return []

    def env(self, site: Site, settings: ServerSettings) -> dict[str, str] | None:
        """The server's environment (None: crest's own)."""
        return None

    def provision(self, site: Site, settings: ServerSettings) -> Login | None:
        """Make what the server needs beyond its configuration files (its directories, an account and
        its password), once they are written and before they are checked; returns the login clients use.

        Raises:
            TargetError: what the server needs could not be made.
        """
        return None

    def url(self, site: Site, login: Login | None) -> str:
        """Where clients reach the server."""
        return f"http://{site.host}:{site.port}"

    def answers(self, site: Site, login: Login | None) -> bool:
        """Whether the started server is ready for clients: by default, its ports accept connections.

        Raises:
            TargetError: it answers, but wrongly (a file server refusing its own login).
        """
        return all(answers_on(site.host, p) for p in site.ports)

    def check_command(self, site: Site, settings: ServerSettings) -> list[str] | None:
        """The server's own configuration test (`nginx -t`), run before it starts; None: it has none.

        A server can bind its ports while reading a configuration it then rejects, so
        readiness alone would not catch every bad configuration (or --server-opt value).
        """
        return None

    # -- shared behaviour ---------------------------------------------------------

    def installed(self) -> bool:
        return self.binary() is not None

    def install_hint(self) -> str:
        return f"apt-get install -y {self.package}" if self.package else ""

    def check(self, settings: ServerSettings) -> None:
        """Refuse, before anything starts, what this server cannot do.

        Raises:
            ConfigError: not installed, a web suite asked of a file server (or the reverse), a dynamic
                kind or HTTP/2 it cannot serve, or an unknown --server-opt.
        """
        if not self.installed():
            raise ConfigError(f"{self.title} is not installed: {self.install_hint()}")
        if wants_files(settings) and not self.serves_files():
            raise ConfigError(f"{self.name} is a web server and cannot serve a file-operation (loadfile) suite: "
                              "use a file server, e.g. --server samba (see `crest servers`)")  # fmt: skip
        if self.serves_files() and not wants_files(settings):
            raise ConfigError(f"{self.name} is a file server and serves only file-operation (loadfile) suites: "
                              "a web suite needs a web server, e.g. --server nginx (see `crest servers`)")  # fmt: skip
        for kind in sorted(settings.kinds - self.kinds):
            alt = self.alternatives.get(kind, "use another server (see `crest servers`)")
            raise ConfigError(f"{self.name} cannot serve {kind} requests: {alt}")
        if settings.http2 and not self.serves_http2:
            raise ConfigError(f"{self.name} cannot serve HTTP/2: {self.no_http2}")
        if settings.http3 and not self.serves_http3:
            raise ConfigError(f"{self.name} cannot serve HTTP/3: use --server caddy or --server builtin "
                              "(see `crest servers`)")  # fmt: skip
        names = self.knob_names()
        unknown = sorted(set(settings.options) - set(names))
        if unknown:
            known = ", ".join(sorted(self.knobs)) or "none"
            raise ConfigError(f"--server-opt {unknown[0]} is not a setting of {self.name}: use one of {known}")
        for key, value in sorted(settings.options.items()):
            if not OPTION_VALUE.fullmatch(value):
                raise ConfigError(
                    f"--server-opt {key}={value!r}: a value may hold only letters, digits, spaces and . : / + = , @ -"
                )
            knob = self.knobs[names[key]]
            if knob.choices and value.lower() not in knob.choices:
                raise ConfigError(f"--server-opt {key}={value!r}: give one of {', '.join(knob.choices)}")
            if knob.minimum is not None:
                int_option(settings, key, knob.minimum, minimum=knob.minimum)
        given: dict[str, str] = {}
        for key in sorted(settings.options):
            if names[key] in given:
                raise ConfigError(f"--server-opt {given[names[key]]} and {key} set the same thing: give one of them")
            given[names[key]] = key
        log = settings.options.get("access_log", "").lower()
        if settings.access_log and log == "off":
            raise ConfigError("--access-log and --server-opt access_log=off disagree: give one of them")
        if settings.options.get("profile", "").lower() == "stock":
            self._check_stock(settings)
        if self.cgi_through_fcgiwrap:
            int_option(settings, "fcgiwrap_children", 1)
        for part in self.parts():
            if not part.present and part.needed(settings):
                raise ConfigError(f"{self.name} {part.what}, which is not installed: apt-get install -y {part.package}")

    def _check_stock(self, settings: ServerSettings) -> None:
        """Refuse what the distribution's configuration cannot do: it runs unchanged, so nothing else is set."""
        fix = "use profile=tuned (crest's configuration) for that"
        if self.stock_config is None:
            raise ConfigError(f"{self.name} has no stock configuration crest can run: {fix}")
        if not self.stock_config.is_file():
            raise ConfigError(f"{self.name}'s stock configuration {self.stock_config} is missing: "
                              f"apt-get install --reinstall {self.package}, or {fix}")  # fmt: skip
        others = sorted(set(settings.options) - {"profile"})
        if others:
            raise ConfigError(f"--server-opt {others[0]} cannot be combined with profile=stock, which runs "
                              f"{self.stock_config} unchanged: drop it, or {fix}")  # fmt: skip
        if settings.kinds:
            raise ConfigError(f"{self.name}'s stock configuration serves static files only, not "
                              f"{sorted(settings.kinds)[0]} requests: {fix}")  # fmt: skip
        if settings.tls:
            raise ConfigError(f"{self.name}'s stock configuration has no HTTPS: {fix}")
        if settings.http2:
            raise ConfigError(f"{self.name}'s stock configuration is not set up for HTTP/2 by crest: {fix}")
        if settings.access_log and not self.stock_logs_access:
            raise ConfigError(f"{self.name}'s stock configuration keeps no access log: drop --access-log, or {fix}")

    def knob_names(self) -> dict[str, str]:
        """Every name a --server-opt key may be given by (the knob's own and its aliases) -> the knob's key."""
        return {alias: key for key, knob in self.knobs.items() for alias in (key, *knob.aliases)}

    def effective(self, settings: ServerSettings) -> ServerSettings:
        """`settings` (already checked) as the adapter uses them: every knob under its own key (aliases
        resolved), on/off values in lower case, a preset profile's values spelled out (those given beside
        it win), and access logging on when --access-log or access_log=on asked for it (or a stock
        configuration that logs runs), so the runner counts it."""
        names = self.knob_names()
        options = {}
        for key, value in settings.options.items():
            canonical = names.get(key, key)
            knob = self.knobs.get(canonical)
            options[canonical] = value.lower() if knob is not None and knob.choices else value
        preset = self.presets.get(options.get("profile", ""))
        if preset is not None:
            # Stored and disclosed as the server ran: the profile's name, then every value it set.
            options = {"profile": options["profile"], **preset.options, **options}
        stock = options.get("profile") == "stock"
        access_log = settings.access_log or options.get("access_log") == "on" or (stock and self.stock_logs_access)
        return replace(settings, options=options, access_log=access_log)

    def stock_files(self, site: Site, settings: ServerSettings) -> dict[Path, str]:
        """The stock configuration's files, changed only where they name a port, docroot, pid file or log."""
        raise NotImplementedError

    @classmethod
    def serves_files(cls) -> bool:
        """A file server: it serves loadfile suites and nothing else."""
        return bool(cls.kinds & set(FILE_KINDS))

    def describe(self) -> dict[str, Any]:
        """What `crest servers` shows."""
        binary = self.binary()
        return {
            "name": self.name,
            "title": self.title,
            "installed": binary is not None,
            "version": self.version() if binary is not None else None,
            "binary": str(binary) if binary else None,
            "install": None if binary is not None else self.install_hint(),
            "kinds": sorted(self.kinds),
            "http2": self.serves_http2,
            "http3": self.serves_http3,
            "options": {key: knob.describe() for key, knob in self.knobs.items()},
            "presets": {name: preset.describe() for name, preset in self.presets.items()},
            "missing": [
                {"part": p.what, "needed_for": p.needed_for, "install": f"apt-get install -y {p.package}"}
                for p in self.parts()
                if binary is not None and not p.present
            ],
        }


def which(*names: str) -> Path | None:
    """The first of `names` found on PATH or in /usr/sbin and /usr/bin (root's tools live in sbin)."""
    for name in names:
        found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/bin:/sbin:/bin")
        if found:
            return Path(found)
    return None


def render(template: str, **values: Any) -> str:
    """One of the adapters' configuration templates (python/crest/servers/templates/) filled in.

    Undefined names are errors, so a template and its adapter cannot drift apart silently.
    """
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    return env.get_template(template).render(**values)


def int_option(settings: ServerSettings, key: str, default: int, *, minimum: int = 1) -> int:
    """A --server-opt that crest computes with (not only pastes): a whole number ≥ `minimum`.

    Raises:
        ConfigError: the value is not such a number.
    """
    value = settings.options.get(key)
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        number = minimum - 1
    if number < minimum:
        raise ConfigError(f"--server-opt {key}={value!r}: give a whole number of at least {minimum}")
    return number


def switch(settings: ServerSettings, key: str, default: bool) -> bool:
    """An on/off knob's value (settings as `Adapter.effective` gives them)."""
    value = settings.options.get(key)
    return default if value is None else ON_OFF[value.lower()]


def docroot_files(docroot: Path) -> list[Path]:
    """Every regular file under the docroot, for servers that cache named files at start-up
    (Apache's mod_file_cache); names a config file cannot quote are left out."""
    found = []
    for path in sorted(docroot.rglob("*")):
        if path.is_file() and not path.is_symlink() and OPTION_VALUE.fullmatch(str(path)) and " " not in str(path):
            found.append(path)
    return found


def wants_files(settings: ServerSettings) -> bool:
    """A file-operation (loadfile) suite: it needs a file server."""
    return bool(settings.kinds & set(FILE_KINDS))


def wants_cgi(settings: ServerSettings) -> bool:
    return bool(settings.kinds & _CGI_KINDS)


def wants_fastcgi(settings: ServerSettings) -> bool:
    """FastCGI and the in-process kind, which real servers serve through crest's FastCGI responder."""
    return bool(settings.kinds & _FASTCGI_KINDS)


def fcgiwrap_helper(site: Site, children: int) -> Helper:
    """fcgiwrap on site.cgi_socket with `children` prefork processes, for servers without CGI of their own.

    It runs as the site's account, like the server's workers, so the socket it makes is theirs to
    connect to and the CGI programs run unprivileged.
    """
    binary = which("fcgiwrap")
    if binary is None:
        raise ConfigError("CGI through fcgiwrap needs fcgiwrap: apt-get install -y fcgiwrap")
    argv = (str(binary), "-s", f"unix:{site.cgi_socket}", "-c", str(children))
    return Helper("fcgiwrap", argv, site.cgi_socket, user=site.user)


def version_output(argv: list[str], pattern: str) -> str:
    """The first match of `pattern` in what `argv` prints (stdout and stderr), else the first line."""
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    text = (out.stdout or "") + (out.stderr or "")
    match = re.search(pattern, text)
    if match:
        return match.group(0)
    return text.strip().splitlines()[0] if text.strip() else "unknown"


class Target:
    """A provisioned, running target: `with Target(adapter, settings) as t: t.url`."""

    def __init__(self, adapter: Adapter, settings: ServerSettings) -> None:
        adapter.check(settings)
        self.adapter = adapter
        self.settings = adapter.effective(settings)  # what the server runs with: aliases resolved, logging settled
        self.site: Site | None = None
        self.processes = Processes()
        self.cgroup: Cgroup | None = None  # the memory limit and the CPU quota, when asked
        self.evicted_bytes: int | None = None  # the docroot's bytes evicted from the page cache before the start
        self.config_text = ""
        self.config_sha256 = ""  # of everything that configures it, this run's site and ports aside
        self.keep_logs: Path | None = None  # where stop() copies the server's logs before removing the site
        self.login: Login | None = None  # the account clients log in with (file servers), once provisioned

    @property
    def memory(self) -> Cgroup | None:
        """The cgroup when it holds a memory limit."""
        return self.cgroup if self.cgroup is not None and self.settings.memory_bytes is not None else None

    @property
    def url(self) -> str:
        """http://HOST:PORT for web servers; for file servers their own scheme, e.g. smb://USER@HOST:PORT/SHARE."""
        assert self.site is not None
        return self.adapter.url(self.site, self.login)

    @property
    def secret_file(self) -> Path | None:
        """The file holding the login's password (mode 0600), on targets with a login; None otherwise."""
        return self.login.secret_file if self.login is not None else None

    def login_password(self) -> Secret | None:
        """The login's password, read from its file (a file server's; None for others).

        Raises:
            TargetError: the file cannot be read.
        """
        secret = self.secret_file
        if secret is None:
            return None
        try:
            return Secret(secret.read_text().strip())
        except (OSError, UnicodeDecodeError) as exc:
            raise TargetError(f"cannot read the file server's password file {secret}: {exc}") from None

    @property
    def tls_url(self) -> str | None:
        """https://HOST:PORT when TLS was asked (its listener also speaks h2 by ALPN with http2); else None."""
        assert self.site is not None
        return f"https://{self.site.host}:{self.site.tls_port}" if self.site.tls_port else None

    @property
    def h2c_url(self) -> str | None:
        """http://HOST:PORT where the server takes h2c with prior knowledge, when http2 was asked; else None.
        The main port, or the site's h2c port on servers whose main port cannot also take h2c (nginx)."""
        assert self.site is not None
        if not self.settings.http2:
            return None
        return f"http://{self.site.host}:{self.site.h2c_port or self.site.port}"

    def start(self) -> None:
        """Provision the site, start helpers and the server, and wait until it answers.

        Raises:
            ConfigError: the site or the memory limit cannot be made.
            TargetError: the server did not start or answer; everything started is stopped again.
        """
        try:
            self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> None:
        settings = self.settings
        reap_dead()  # what a killed crest left of its targets goes first
        # Free ports are found where the server will listen (its namespace has its own ports).
        self.site = site = call_in(settings.netns, lambda: create_site(
            settings.docroot, tls=settings.tls, host=settings.bind_host, cgi=not self.adapter.serves_files(),
            tls_key=settings.tls_key, h2c=settings.http2 and self.adapter.h2c_own_port))  # fmt: skip
        if settings.memory_bytes is not None or settings.cpu_quota is not None:
            self.cgroup = Cgroup(memory_bytes=settings.memory_bytes, cpu_quota=settings.cpu_quota)
            self.cgroup.create()
        if settings.memory_bytes is not None:
            # The docroot's cached pages belong to whoever read them first (crest, an earlier target):
            # evicted, the target's reads are charged to its own limit, so the limit can matter.
            self.evicted_bytes = pagecache.evict(settings.docroot)
        helpers = self._start_helpers(site)
        stock = settings.options.get("profile") == "stock"
        files = self.adapter.stock_files(site, settings) if stock else self.adapter.config_files(site, settings)
        for path, text in files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        self.config_text = "\n".join(f"# {p.relative_to(site.root)}\n{t}" for p, t in files.items())
        self.login = self.adapter.provision(site, settings)  # before the check: it makes what the config names
        check = self.adapter.check_command(site, settings)
        if check is not None:
            self._check_config(check, site)
        for port in site.ports:
            # free_port() released it a moment ago; if another program took it since, the
            # readiness check below would mistake that program for the server.
            if call_in(settings.netns, partial(answers_on, site.host, port)):
                raise TargetError(f"port {port} was taken by another program before {self.adapter.title} "
                                  "started: start the target again")  # fmt: skip
        command, env = self.adapter.command(site, settings), self.adapter.env(site, settings)
        self.config_sha256 = _settings_digest(site, self.config_text, command, env, helpers)
        self._start_server(site)

    def _start_helpers(self, site: Site) -> list[Helper]:
        """Start the adapter's helpers and wait until each made its socket; returns them."""
        settings = self.settings
        procs_file = self.cgroup.procs_files if self.cgroup else ()
        helpers = self.adapter.helpers(site, settings)
        for helper in helpers:
            self.processes.start(helper.name, helper.argv, log=site.logs / f"{helper.name}.log",
                                 cpus=settings.cpus, cgroup_procs=procs_file, user=helper.user,
                                 netns=settings.netns)  # fmt: skip
            wait_until(helper.socket.exists, timeout_s=READY_TIMEOUT_S,
                       what=f"{helper.name} did not create {helper.socket}", processes=self.processes)  # fmt: skip
        return helpers

    def _start_server(self, site: Site) -> None:
        """Start the server itself (its configuration written and checked) and wait until it answers."""
        settings = self.settings
        procs_file = self.cgroup.procs_files if self.cgroup else ()
        ports = site.ports
        command, env = self.adapter.command(site, settings), self.adapter.env(site, settings)
        self.processes.start(self.adapter.name, command, log=site.logs / "server.log", cwd=site.root, env=env,
                             cpus=settings.cpus, cgroup_procs=procs_file, netns=settings.netns)  # fmt: skip
        wait_until(lambda: call_in(settings.netns, lambda: self.adapter.answers(site, self.login)),
                   timeout_s=READY_TIMEOUT_S,
                   what=f"{self.adapter.title} did not answer on port {', '.join(map(str, ports))}",
                   processes=self.processes)  # fmt: skip
        self.processes.check_alive()

    def restart(self) -> None:
        """Stop every process of the target and start them again: the same site, configuration, ports and
        login, new processes (a restart between mixes, as Mindcraft restarted Apache at 256 clients).

        Raises:
            TargetError: the server did not come back; everything started is stopped again.
        """
        assert self.site is not None, "restart() a started target"
        self.processes.stop()
        try:
            self._start_helpers(self.site)
            self._start_server(self.site)
        except BaseException:
            self.stop()
            raise

    def _check_config(self, argv: list[str], site: Site) -> None:
        """Raises TargetError with the server's own words when it rejects its configuration."""
        if self.settings.netns is not None:  # the test binds the server's ports, which exist only there
            argv = ["ip", "netns", "exec", self.settings.netns, *argv]
        try:
            out = subprocess.run(argv, capture_output=True, text=True, timeout=READY_TIMEOUT_S, cwd=site.root,
                                 env=self.adapter.env(site, self.settings), check=False)  # fmt: skip
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise TargetError(f"cannot test {self.adapter.title}'s configuration ({argv[0]}): {exc}") from None
        if out.returncode != 0:
            lines = [line.strip() for line in (out.stdout + out.stderr).splitlines() if line.strip()]
            said = " | ".join(lines[-LOG_TAIL_LINES:]) or f"exit code {out.returncode}"
            raise TargetError(f"{self.adapter.title} rejected its configuration: {said}")

    @property
    def access_log_flush_s(self) -> float:
        """How long the server may take to write a request's log line after answering it."""
        return self.adapter.access_log_flush_s

    def check_alive(self) -> None:
        """Raises TargetError when the server or one of its helpers has exited."""
        self.processes.check_alive()

    def pids(self) -> list[int]:
        """Every live process of the target (server, its workers, helpers and their children)."""
        return self.processes.pids()

    def access_log_lines(self) -> int:
        """Requests the server has logged so far (0 with access logging off)."""
        if self.site is None or not self.settings.access_log:
            return 0
        connection_line = self.adapter.h2_connection_log_line if self.settings.http2 else None
        try:
            with self.site.access_log.open("rb") as f:
                if connection_line is not None:  # line by line, to leave the connections' lines out
                    return sum(1 for line in f if line.endswith(b"\n") and connection_line not in line)
                return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 16), b""))
        except FileNotFoundError:
            return 0

    def metadata(self) -> dict[str, Any]:
        """What the run stores about its target."""
        return {
            "name": self.adapter.name,
            "title": self.adapter.title,
            "version": self.adapter.version(),
            "cpus": list(self.settings.cpus),
            "workers": self.settings.workers,
            "memory_bytes": self.settings.memory_bytes,
            "page_cache_evicted_bytes": self.evicted_bytes,
            "cpu_quota": (
                {"quota_us": self.settings.cpu_quota.quota_us, "period_us": self.settings.cpu_quota.period_us}
                if self.settings.cpu_quota
                else None
            ),
            "options": dict(self.settings.options),
            "access_log": self.settings.access_log,
            "tls_key": self.settings.tls_key if self.settings.tls else None,
            "http2": self.settings.http2,
            "http3": self.settings.http3,
            "config_text": self.config_text,
            "config_sha256": self.config_sha256,
        }

    def stop(self) -> None:
        """Stop every process (SIGTERM, then SIGKILL), remove the cgroup and the site; safe to call twice.

        Raises:
            MachineError: the logs could not be copied to `keep_logs` (a full disk): everything else is
                stopped and removed, and the logs stay in the site's logs directory, which the message names.
        """
        try:
            self.processes.stop()
        except KeyboardInterrupt:
            # Ctrl-C or SIGTERM while the target stops (it can come during the SIGTERM grace): finish
            # the stop, with its SIGKILL, so no process and no cgroup outlive crest; then pass it on.
            self.processes.stop()
            self._remove()
            raise
        self._remove()

    def _remove(self) -> None:
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None
        if self.site is not None:
            site, self.site, self.login = self.site, None, None
            try:
                if self.keep_logs is not None:
                    shutil.copytree(site.logs, self.keep_logs, dirs_exist_ok=True)
            except OSError as exc:  # shutil.Error too: one per file that failed
                # Nothing lost: the logs stay where the server wrote them; the rest of the site goes.
                for part in site.root.iterdir():
                    if part == site.logs:
                        continue
                    if part.is_dir() and not part.is_symlink():
                        shutil.rmtree(part, ignore_errors=True)
                    else:
                        part.unlink(missing_ok=True)
                raise MachineError(
                    f"cannot keep the target's logs in {self.keep_logs}: {_copy_failure(exc, self.keep_logs)}:"
                    f" they stay in {site.logs}"
                ) from None
            remove_site(site)

    def __enter__(self) -> Target:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def _copy_failure(exc: OSError, to: Path | None) -> str:
    """Why a copy failed, in words: a full disk by name, else the first file's error."""
    failed = exc.args[0] if exc.args else None
    whys = [str(f[-1]) for f in failed] if isinstance(exc, shutil.Error) and isinstance(failed, list) else [str(exc)]
    if exc.errno == errno.ENOSPC or any(os.strerror(errno.ENOSPC) in why for why in whys):
        return f"the disk holding {to} is full ({os.strerror(errno.ENOSPC)})"
    return whys[0] if whys else "copy failed"


def _settings_digest(
    site: Site, config_text: str, command: list[str], env: Mapping[str, str] | None, helpers: list[Helper]
) -> str:
    """A digest of what configures a server (its files, command line, environment beyond crest's own,
    helpers) with this run's private directory and ports replaced by placeholders: equal for two runs
    of the same settings, different when any setting differs, so analysis can key configurations on it."""
    changed = sorted(f"{k}={v}" for k, v in (env or {}).items() if os.environ.get(k) != v)
    text = "\n".join([config_text, "# command", shlex.join(command), "# environment", *changed, "# helpers",
                      *(shlex.join(h.argv) for h in helpers)])  # fmt: skip
    text = text.replace(str(site.root), "{site}")
    if site.host != "127.0.0.1":
        # A target on a cluster node binds that node's address: the same settings on another node
        # are the same configuration (loopback is left as is, so earlier runs' digests still match).
        text = text.replace(site.host, "{host}")
    for name, port in (("port", site.port), ("tls_port", site.tls_port), ("h2c_port", site.h2c_port)):
        if port:
            text = re.sub(rf"(?<!\d){port}(?!\d)", "{" + name + "}", text)
    return hashlib.sha256(text.encode()).hexdigest()


def answers_on(host: str, port: int) -> bool:
    """Whether something accepts connections on the target's port (readiness, not correctness)."""
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False
