"""Every knob a web adapter offers reaches the server's effective configuration, read back from the server.

One start per adapter with every knob set away from its default; what the server itself reports is then
compared: its own configuration dump (nginx -T, Apache's DUMP_CONFIG through mod_info, lighttpd -p,
caddy adapt; H2O has none, so its checked file), the listen socket's backlog (`ss`, Send-Q of a listening
socket), its processes and threads, its environment (/proc), and its access log. profile=stock runs the
distribution's configuration and answers from the docroot.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from crest.errors import ConfigError
from crest.servers.apache import MODULES_DIR
from crest.servers.base import ServerSettings, Target
from crest.servers.registry import adapter as make_adapter
from servers_support import FILES, HTTP_TIMEOUT_S, LOG_WAIT_S, installed

pytestmark = pytest.mark.integration

# Knobs each adapter offers that the one start below does not set, and why.
ELSEWHERE = {
    "profile": "test_stock_profile_serves_the_docroot, test_mindcraft_profile_reaches_the_running_server",
    "fcgiwrap_children": "needs a CGI workload (tests/test_servers_<name>.py)",
    "open_file_cache": "file_cache's directive with nginx's own value (test_servers_nginx.py)",
    "server.network-backend": "sendfile's directive with lighttpd's own value",
    "server.stat-cache-engine": "file_cache's directive with lighttpd's own value",
}

BACKLOG = 77
# Per adapter: knob -> value, and what the server's own dump must show for it (a regex), or None when
# the running server is checked instead (backlog, workers, access_log, Caddy's environment).
KNOBS: dict[str, dict[str, tuple[str, str | None]]] = {
    "nginx": {
        "workers": ("3", r"worker_processes 3;"),
        "worker_connections": ("1000", r"worker_connections 1000;"),
        "backlog": (str(BACKLOG), r"listen [\d.:]+ backlog=77;"),
        "keepalive_timeout": ("33", r"keepalive_timeout 33;"),
        "keepalive_requests": ("444", r"keepalive_requests 444;"),
        "sendfile": ("off", r"sendfile off;"),
        "file_cache": ("off", r"open_file_cache off;"),
        "access_log": ("on", r"access_log \S+access\.log crest;"),
    },
    "lighttpd": {
        "workers": ("2", r"server\.max-worker\s+= 2\b"),
        "server.max-connections": ("500", r"server\.max-connections\s+= 500\b"),
        "server.max-fds": ("3000", r"server\.max-fds\s+= 3000\b"),
        "backlog": (str(BACKLOG), r"server\.listen-backlog\s+= 77\b"),
        "keepalive_requests": ("50", r"server\.max-keep-alive-requests\s+= 50\b"),
        "keepalive_timeout": ("7", r"server\.max-keep-alive-idle\s+= 7\b"),
        "sendfile": ("off", r'server\.network-backend\s+= "writev"'),
        "file_cache": ("off", r'server\.stat-cache-engine\s+= "disable"'),
        "access_log": ("on", r"accesslog\.filename\s+= \"\S+access\.log\""),
    },
    "caddy": {
        "workers": ("3", None),
        "GOGC": ("50", None),
        "idle_timeout": ("7s", r'"idle_timeout":7000000000'),
        "read_timeout": ("9s", r'"read_header_timeout":9000000000'),
        "write_timeout": ("11s", r'"write_timeout":11000000000'),
        "max_header_size": ("2MB", r'"max_header_bytes":2000000'),
        "access_log": ("on", r'"logs":\{"logger_names"'),
    },
    "h2o": {
        "workers": ("3", r"num-threads: 3\n"),
        "max-connections": ("99", r"max-connections: 99\n"),
        "http1-request-timeout": ("7", r"http1-request-timeout: 7\n"),
        "access_log": ("on", r"access-log:\n  path: "),
    },
}
_APACHE = {
    "max_request_workers": ("96", r"MaxRequestWorkers 96"),
    "server_limit": ("3", r"ServerLimit 3"),
    "start_servers": ("2", r"StartServers 2"),
    "requests_per_child": ("1000", r"MaxConnectionsPerChild 1000"),
    "backlog": (str(BACKLOG), r"ListenBacklog 77"),
    "keepalive_timeout": ("7", r"KeepAliveTimeout 7"),
    "keepalive_requests": ("50", r"MaxKeepAliveRequests 50"),
    "sendfile": ("off", r"EnableSendfile Off"),
    "mmap": ("off", r"EnableMMAP Off"),
    "file_cache": ("on", None),  # DUMP_CONFIG leaves MMapFile out: the children's memory maps show it
    "access_log": ("on", r"CustomLog \"\S+access\.log\" crest"),
}
KNOBS["apache-event"] = KNOBS["apache-worker"] = {
    **_APACHE,
    "threads_per_child": ("32", r"ThreadsPerChild 32"),
    "min_spare_threads": ("32", r"MinSpareThreads 32"),
    "max_spare_threads": ("64", r"MaxSpareThreads 64"),
}
KNOBS["apache-prefork"] = {
    **_APACHE,
    "max_request_workers": ("20", r"MaxRequestWorkers 20"),
    "server_limit": ("20", r"ServerLimit 20"),
    "start_servers": ("3", r"StartServers 3"),
    "min_spare_servers": ("3", r"MinSpareServers 3"),
    "max_spare_servers": ("6", r"MaxSpareServers 6"),
}


def dump(target: Target) -> str:
    """The configuration as the server itself parsed it."""
    adapter, site = target.adapter, target.site
    assert site is not None
    conf, binary = str(site.conf_dir / next(iter(_conf_names(target)))), str(adapter.binary())
    argv = {
        "nginx": [binary, "-p", f"{site.root}/", "-c", conf, "-e", str(site.error_log), "-T"],
        "lighttpd": [binary, "-p", "-f", conf],
        "caddy": [binary, "adapt", "--config", conf, "--adapter", "caddyfile"],
    }.get(adapter.name)
    if adapter.name.startswith("apache"):
        # mod_info, loaded from the command line only for this dump, prints the parsed directives.
        argv = [binary, "-d", str(site.root), "-f", conf, "-C", f"LoadModule info_module {MODULES_DIR}/mod_info.so",
                "-t", "-D", "DUMP_CONFIG"]  # fmt: skip
    if argv is None:  # H2O prints no configuration: the file its own test (h2o -t) passed before it started
        return target.config_text
    out = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=True)
    text = out.stdout + out.stderr
    return json.dumps(json.loads(text[text.index("{") :]), separators=(",", ":")) if adapter.name == "caddy" else text


def _conf_names(target: Target) -> list[str]:
    assert target.site is not None
    return [p.name for p in sorted(target.site.conf_dir.iterdir()) if p.is_file()]


def eventually(check: Callable[[], bool], what: str, timeout_s: float = 10.0) -> None:
    """A bounded poll: servers start children and flush logs a moment after they answer."""
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def listen_backlog(port: int) -> int:
    """The backlog of the socket listening on `port`, as the kernel holds it (Send-Q of a listener)."""
    out = subprocess.run(["ss", "-ltnH", f"sport = :{port}"], capture_output=True, text=True, timeout=10, check=True)
    return int(out.stdout.split()[2])


def processes(target: Target, name: str) -> list[psutil.Process]:
    return [p for p in map(psutil.Process, target.pids()) if p.name() == name]


def running_checks(target: Target, knobs: dict[str, tuple[str, str | None]]) -> dict[str, Callable[[], bool]]:
    """What the running server shows for the knobs it can show."""
    assert target.site is not None
    port, name = target.site.port, target.adapter.name
    server = processes(target, {"apache-event": "apache2", "apache-worker": "apache2",
                                "apache-prefork": "apache2"}.get(name, name))  # fmt: skip
    checks: dict[str, Callable[[], bool]] = {"backlog": lambda: listen_backlog(port) == BACKLOG}
    if name in ("nginx", "lighttpd"):  # a master (watcher) and its workers
        checks["workers"] = lambda: len(server) == 1 + int(knobs["workers"][0])
    if name == "h2o":  # its main thread and one per event loop
        checks["workers"] = lambda: server[0].num_threads() == 1 + int(knobs["workers"][0])
    if name == "caddy":
        environ = Path(f"/proc/{server[0].pid}/environ").read_bytes().split(b"\0")
        checks["workers"] = lambda: b"GOMAXPROCS=" + knobs["workers"][0].encode() in environ
        checks["GOGC"] = lambda: b"GOGC=" + knobs["GOGC"][0].encode() in environ
    if name.startswith("apache"):  # mod_file_cache maps the docroot's files into every process
        docroot_file = str(target.site.docroot / "1k.html")
        checks["file_cache"] = lambda: all(docroot_file in Path(f"/proc/{p.pid}/maps").read_text() for p in server)
    if name in ("apache-event", "apache-worker"):  # the parent and StartServers children of threads each
        children = [p for p in server if p.ppid() in {s.pid for s in server}]
        checks["start_servers"] = lambda: len(children) == int(knobs["start_servers"][0])
        # Each child: ThreadsPerChild workers, a listener and its main thread.
        checks["threads_per_child"] = lambda: (
            {c.num_threads() for c in children} == {int(knobs["threads_per_child"][0]) + 2}
        )
    return checks


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", sorted(KNOBS))
def test_every_knob_reaches_the_running_server(name: str, www: Path) -> None:
    adapter = installed(name)
    knobs = KNOBS[name]
    assert set(adapter.knobs) == set(knobs) | (set(ELSEWHERE) & set(adapter.knobs)), "a knob no test sets"
    settings = ServerSettings(docroot=www, cpus=(0,), tls=False, options={k: v for k, (v, _) in knobs.items()})
    with Target(adapter, settings) as target:
        assert target.settings.access_log  # access_log=on counts like --access-log
        body = urllib.request.urlopen(f"{target.url}/1k.html", timeout=HTTP_TIMEOUT_S).read()
        assert body == FILES["1k.html"]
        text = dump(target)
        for knob, (value, shown) in knobs.items():
            if shown is not None:
                assert re.search(shown, text), f"{knob}={value}: {shown!r} not in what {name} reports"
        for knob, check in running_checks(target, knobs).items():
            if knob in knobs:
                eventually(check, f"{name} does not show {knob}={knobs[knob][0]}")
        assert target.site is not None
        log = target.site.access_log
        eventually(lambda: log.exists() and log.stat().st_size > 0, f"{name} logged no request with access_log=on",
                   LOG_WAIT_S)  # fmt: skip


@pytest.mark.timeout(60)
def test_mindcraft_profile_reaches_the_running_server(www: Path) -> None:
    """Mindcraft's Apache 1.3.4 configuration (seed 001), read back from Apache's own dump, its processes
    and its access log."""
    adapter = installed("apache-prefork")
    settings = ServerSettings(docroot=www, cpus=(0,), tls=False, keepalive=False, options={"profile": "mindcraft"})
    with Target(adapter, settings) as target:
        assert target.metadata()["options"]["max_request_workers"] == "290"  # stored as the server runs
        body = urllib.request.urlopen(f"{target.url}/1k.html", timeout=HTTP_TIMEOUT_S).read()
        assert body == FILES["1k.html"]
        text = dump(target)
        for line in ("ServerLimit 500", "MaxRequestWorkers 290", "StartServers 10", "MinSpareServers 1",
                     "MaxSpareServers 290", "MaxConnectionsPerChild 10000", "KeepAlive Off"):  # fmt: skip
            assert re.search(rf"\b{line}\b", text), f"{line!r} not in what apache-prefork reports"

        def children() -> int:
            server = processes(target, "apache2")
            return sum(1 for p in server if p.ppid() in {s.pid for s in server})

        # StartServers 10, and MaxSpareServers 290 stops none of them while they idle.
        eventually(lambda: children() == 10, "apache-prefork does not run StartServers 10 children")
        assert target.site is not None
        log = target.site.access_log
        eventually(lambda: log.exists() and log.stat().st_size > 0, "no request logged", LOG_WAIT_S)
        # The common log format Mindcraft printed: host ident user [time] "request" status bytes.
        common = r'^127\.0\.0\.1 - - \[[^]]+\] "GET /1k\.html HTTP/1\.[01]" 200 1024$'
        assert re.match(common, log.read_text().splitlines()[0])


def test_apache_names_are_aliases_of_the_common_knobs() -> None:
    """The lead's sweep (MaxRequestWorkers × requests per child) in either spelling, never both."""
    adapter = make_adapter("apache-event")
    asked = ServerSettings(docroot=Path("/tmp"), options={"MaxRequestWorkers": "128", "requests_per_child": "50"})
    adapter.check(asked)
    assert adapter.effective(asked).options == {"max_request_workers": "128", "requests_per_child": "50"}
    both = ServerSettings(docroot=Path("/tmp"), options={"MaxRequestWorkers": "128", "max_request_workers": "64"})
    with pytest.raises(ConfigError, match=r"^--server-opt MaxRequestWorkers and max_request_workers set the same"):
        adapter.check(both)
    with pytest.raises(ConfigError, match=r"^--access-log and --server-opt access_log=off disagree"):
        adapter.check(ServerSettings(docroot=Path("/tmp"), access_log=True, options={"access_log": "off"}))


STOCK = ("nginx", "apache-event", "lighttpd", "caddy", "h2o")


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", STOCK)
def test_stock_profile_serves_the_docroot(name: str, www: Path) -> None:
    adapter = installed(name)
    stock = adapter.stock_config
    assert stock is not None
    if not stock.is_file():
        pytest.skip(f"apt-get install --reinstall {adapter.package}")
    tuned_text = ""
    with Target(adapter, ServerSettings(docroot=www, tls=False)) as tuned:
        tuned_text = tuned.config_text
    with Target(adapter, ServerSettings(docroot=www, tls=False, options={"profile": "stock"})) as target:
        body = urllib.request.urlopen(f"{target.url}/1k.html", timeout=HTTP_TIMEOUT_S).read()
        assert body == FILES["1k.html"]
        assert f"# {stock} as the distribution ships it" in target.config_text
        assert target.config_text != tuned_text
        assert target.settings.access_log == adapter.stock_logs_access


@pytest.mark.parametrize(
    ("name", "settings", "refusal"),
    [
        ("nginx", {"options": {"profile": "stock", "workers": "2"}}, r"--server-opt workers cannot be combined"),
        ("nginx", {"options": {"profile": "stock"}, "kinds": frozenset({"cgi"})}, r"serves static files only"),
        ("lighttpd", {"options": {"profile": "stock"}, "tls": True}, r"has no HTTPS"),
        ("lighttpd", {"options": {"profile": "stock"}, "access_log": True}, r"keeps no access log"),
        ("apache-prefork", {"options": {"profile": "stock"}}, r"stock Apache runs the event MPM"),
        ("nginx", {"options": {"profile": "vanilla"}}, r"give one of tuned, stock"),
    ],
)
def test_what_stock_cannot_do_is_refused(name: str, settings: dict[str, object], refusal: str) -> None:
    adapter = installed(name)
    with pytest.raises(ConfigError, match=refusal) as refused:
        adapter.check(ServerSettings(docroot=Path("/tmp"), **settings))  # type: ignore[arg-type]
    assert ("\n" not in str(refused.value) and "profile=tuned" in str(refused.value)) or "tuned, stock" in refusal
