"""The contract every real-server adapter meets, as a test class each test_servers_<name>.py subclasses.

Everything is real: the installed server, crest's CGI programs, crest-fcgi
when it is built, pinning through sched_setaffinity. A subclass names the
adapter and, for the start-up failure test, an option value the server
itself rejects. Nothing here is timed: waits are bounded polls.
"""

from __future__ import annotations

import http.client
import os
import re
import shutil
import socket
import ssl
import stat
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import psutil
import pytest

from crest.errors import ConfigError, TargetError
from crest.servers import base as servers_base
from crest.servers import site as servers_site
from crest.servers.base import DYNAMIC_KINDS, Adapter, ServerSettings, Target
from crest.servers.cpus import allowed_list
from crest.servers.process import Processes
from crest.servers.registry import adapter as make_adapter

HTTP_TIMEOUT_S = 10.0
# lighttpd writes its access log in batches (every 4 s or 8 KiB); the others line by line.
LOG_WAIT_S = 15.0

# name -> bytes of the files in the test docroot: text, binary (every byte value), no extension, nested.
FILES = {
    "1k.html": b"<!-- 1024 bytes -->\n" + b"x" * 1003 + b"\n",
    "bin/all-bytes.bin": bytes(range(256)) * 40,
    "dir/sub/no-extension": bytes((i * 7 + 3) % 256 for i in range(5000)),
    "large.dat": bytes((i * 31) % 251 for i in range(300_000)),
}


def installed(name: str, *, tls: bool = False) -> Adapter:
    """The adapter `name`; skips the test (with the install command) when its server, or with `tls` a part
    its TLS needs, is not installed."""
    adapter = make_adapter(name)
    if not adapter.installed():
        pytest.skip(adapter.install_hint())
    for part in adapter.parts() if tls else ():
        if not part.present and part.needed_for == "tls":
            pytest.skip(f"{name} {part.what}, which is not installed: apt-get install -y {part.package}")
    return adapter


def make_docroot() -> Path:
    """A docroot outside pytest's private tmp dirs: servers read it from workers that dropped root."""
    root = Path(tempfile.mkdtemp(prefix="crest-docroot-"))
    root.chmod(0o755)
    for name, data in FILES.items():
        path = root / name
        for parent in reversed(path.relative_to(root).parents):
            (root / parent).mkdir(mode=0o755, exist_ok=True)
        path.write_bytes(data)
        path.chmod(0o644)
    return root


def responder_built() -> bool:
    """Whether crest's FastCGI responder (crest-fcgi) is built."""
    try:
        from crest.dynamic import responder_path  # type: ignore[attr-defined,unused-ignore]

        path = Path(responder_path())
    except (ImportError, ConfigError):
        return False
    return path.is_file() and os.access(path, os.X_OK)


def fetch(url: str, cert: Path | None = None) -> bytes:
    """GET `url` and return the body; https is verified against the site's own certificate."""
    context = ssl.create_default_context(cafile=str(cert)) if url.startswith("https") else None
    with urllib.request.urlopen(url, timeout=HTTP_TIMEOUT_S, context=context) as response:
        body: bytes = response.read()
        return body


def get_on(conn: http.client.HTTPConnection, path: str) -> http.client.HTTPResponse:
    """One HTTP/1.1 GET on an open connection, body read."""
    conn.request("GET", path)
    response = conn.getresponse()
    response.read()
    return response


def wait_for(check: Callable[[], bool], timeout_s: float) -> bool:
    """Poll `check` until true or `timeout_s` passes; returns its last value."""
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() >= deadline:
            return check()
        time.sleep(0.05)
    return True


def identities(pids: list[int]) -> set[tuple[int, float]]:
    """(pid, start time) of live processes, so a reused pid is never mistaken for ours."""
    found = set()
    for pid in pids:
        try:
            found.add((pid, psutil.Process(pid).create_time()))
        except psutil.Error:
            pass
    return found


def still_running(recorded: set[tuple[int, float]]) -> list[str]:
    """The recorded processes that still run (zombies waiting for init to reap them do not count)."""
    left = []
    for pid, created in recorded:
        try:
            proc = psutil.Process(pid)
            if proc.create_time() == created and proc.status() != psutil.STATUS_ZOMBIE:
                left.append(f"{pid} {' '.join(proc.cmdline())[:80]}")
        except psutil.Error:
            pass
    return left


def render_config(adapter: Adapter, root: Path, *, tls: bool = True, h2c_port: int | None = None,
                  **settings: Any) -> str:  # fmt: skip
    """An adapter's configuration for a made-up site under `root`, every file joined (no server started)."""
    site = servers_site.Site(root=root, docroot=root / "www", port=18080, tls_port=18443 if tls else None,
                             user=None, group=None, h2c_port=h2c_port)  # fmt: skip
    asked = ServerSettings(docroot=site.docroot, tls=tls, **settings)
    files = adapter.config_files(site, adapter.effective(asked))  # as Target passes them: aliases resolved
    assert all(path.is_relative_to(root) for path in files)
    return "\n".join(files.values())


class Recorder:
    """Remembers every site created and every process seen while a target starts (even one that fails)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.sites: list[Path] = []
        self.processes: set[tuple[int, float]] = set()
        create_site = servers_base.create_site
        check_alive = Processes.check_alive

        def recording_create_site(*args: Any, **kwargs: Any) -> servers_site.Site:
            site = create_site(*args, **kwargs)
            self.sites.append(site.root)
            return site

        def recording_check_alive(processes: Processes) -> None:
            self.processes |= identities(processes.pids())
            check_alive(processes)

        monkeypatch.setattr(servers_base, "create_site", recording_create_site)
        monkeypatch.setattr(Processes, "check_alive", recording_check_alive)

    def assert_nothing_left(self) -> None:
        assert self.sites, "no site was created"
        assert self.processes, "no process was seen"
        assert still_running(self.processes) == []
        assert [root for root in self.sites if root.exists()] == []


class ServerContract:
    """What every adapter does; subclasses set `name` and `bad_option`, and may set `no_keepalive_switch`."""

    name: ClassVar[str]
    # An option crest passes through (a valid key, a value of allowed characters) that the server rejects.
    bad_option: ClassVar[tuple[str, str]]
    # Why keep-alive cannot be turned off on this server, when it cannot.
    no_keepalive_switch: ClassVar[str] = ""

    # -- fixtures -------------------------------------------------------------------

    @pytest.fixture(scope="class")
    @classmethod
    def installed(cls) -> Adapter:
        adapter = make_adapter(cls.name)
        if not adapter.installed():
            pytest.skip(adapter.install_hint())
        return adapter

    @pytest.fixture(scope="class")
    @classmethod
    def www(cls) -> Iterator[Path]:
        root = make_docroot()
        try:
            yield root
        finally:
            shutil.rmtree(root, ignore_errors=True)

    @pytest.fixture(scope="class")
    @classmethod
    def target(cls, installed: Adapter, www: Path) -> Iterator[Target]:
        """One target for the read-only checks: pinned to core 0, TLS, every dynamic kind it can serve."""
        kinds = set(installed.kinds) & set(DYNAMIC_KINDS)
        if not responder_built():
            kinds -= {"fastcgi", "inproc"}
        settings = ServerSettings(docroot=www, cpus=(0,), workers=2, tls=True, kinds=frozenset(kinds))
        with Target(installed, settings) as target:
            yield target

    def settings(self, www: Path, **changes: Any) -> ServerSettings:
        return ServerSettings(docroot=www, cpus=(0,), **changes)

    # -- what the server reports about itself -------------------------------------

    def test_version_is_reported(self, installed: Adapter) -> None:
        version = installed.version()
        assert version and version != "unknown"
        described = installed.describe()
        assert described["installed"] and described["version"] == version
        assert set(described["options"]) == set(installed.knobs)
        assert all(o["meaning"].strip() and o["directive"].strip() for o in described["options"].values())

    # -- serving -------------------------------------------------------------------

    def test_static_files_come_back_byte_for_byte(self, target: Target) -> None:
        for name, data in FILES.items():
            assert fetch(f"{target.url}/{name}") == data, name

    def test_cgi_programs(self, target: Target) -> None:
        if "cgi" not in target.adapter.kinds:
            pytest.skip(f"{self.name} serves no CGI")
        assert len(fetch(f"{target.url}/cgi-bin/crest-env")) == 1024
        assert len(fetch(f"{target.url}/cgi-bin/crest-bytes?size=5000")) == 5000
        assert len(fetch(f"{target.url}/cgi-bin/crest-bytes?size=1000000")) == 1_000_000  # past every buffer

    def test_fastcgi_and_inproc_pages(self, target: Target) -> None:
        if not responder_built():
            pytest.skip("crest-fcgi is not built: run `make build`")
        assert len(fetch(f"{target.url}/fcgi/crest-env")) == 1024
        assert len(fetch(f"{target.url}/dyn/env")) == 1024
        assert len(fetch(f"{target.url}/fcgi/crest-bytes?size=5000")) == 5000
        assert len(fetch(f"{target.url}/fcgi/crest-bytes?size=1000000")) == 1_000_000

    def test_tls(self, target: Target) -> None:
        assert target.site is not None and target.tls_url is not None
        assert stat.S_IMODE(target.site.key.stat().st_mode) == 0o600
        assert fetch(f"{target.tls_url}/1k.html", cert=target.site.cert) == FILES["1k.html"]
        if "cgi" in target.adapter.kinds:
            assert len(fetch(f"{target.tls_url}/cgi-bin/crest-env", cert=target.site.cert)) == 1024

    def test_keepalive_is_on_by_default(self, target: Target) -> None:
        assert target.site is not None
        conn = http.client.HTTPConnection("127.0.0.1", target.site.port, timeout=HTTP_TIMEOUT_S)
        try:
            for _ in range(3):
                response = get_on(conn, "/1k.html")
                assert response.status == 200 and not response.will_close
        finally:
            conn.close()

    def test_every_process_is_pinned(self, target: Target) -> None:
        cores = {}
        for pid in target.pids():
            try:
                cores[pid] = allowed_list(pid)
            except OSError:
                pass  # a CGI program that finished its request after it was listed
        assert len(cores) >= 1
        assert cores == {pid: "0" for pid in cores}

    def test_access_log_is_off_by_default(self, target: Target) -> None:
        assert target.site is not None
        fetch(f"{target.url}/1k.html")
        assert target.access_log_lines() == 0
        assert not target.site.access_log.exists() or target.site.access_log.stat().st_size == 0

    def test_access_log_has_a_line_per_request(self, installed: Adapter, www: Path) -> None:
        requests = 7
        with Target(installed, self.settings(www, access_log=True)) as target:
            for _ in range(requests):
                fetch(f"{target.url}/1k.html")
            wait_for(lambda: target.access_log_lines() >= requests, LOG_WAIT_S)
            assert target.access_log_lines() == requests
            assert target.site is not None
            lines = target.site.access_log.read_text().splitlines()
            assert all(re.search(r"\b200\b", line) and "/1k.html" in line for line in lines)

    def test_keepalive_off(self, installed: Adapter, www: Path) -> None:
        with Target(installed, self.settings(www, keepalive=False)) as target:
            assert target.site is not None
            conn = http.client.HTTPConnection("127.0.0.1", target.site.port, timeout=HTTP_TIMEOUT_S)
            try:
                if self.no_keepalive_switch:
                    # The server cannot refuse keep-alive, but the workloads without it send
                    # HTTP/1.0 or Connection: close, and that closes the connection.
                    conn.putrequest("GET", "/1k.html")
                    conn.putheader("Connection", "close")
                    conn.endheaders()
                    response = conn.getresponse()
                    response.read()
                else:
                    response = get_on(conn, "/1k.html")
                assert response.status == 200 and response.will_close
            finally:
                conn.close()

    # -- leaving nothing behind --------------------------------------------------------

    def test_stop_leaves_nothing(self, installed: Adapter, www: Path) -> None:
        target = Target(installed, self.settings(www, kinds=frozenset({"cgi"}) & installed.kinds))
        target.start()
        assert target.site is not None
        root, running = target.site.root, identities(target.pids())
        assert running
        target.stop()
        assert still_running(running) == [] and not root.exists()
        target.stop()  # twice is harmless

    def test_an_error_inside_with_leaves_nothing(self, installed: Adapter, www: Path) -> None:
        seen: dict[str, Any] = {}
        with pytest.raises(RuntimeError, match="boom"):
            with Target(installed, self.settings(www)) as target:
                assert target.site is not None
                seen.update(root=target.site.root, running=identities(target.pids()))
                raise RuntimeError("boom")
        assert seen["running"] and still_running(seen["running"]) == []
        assert not seen["root"].exists()

    def test_port_taken_fails_start_and_leaves_nothing(
        self, installed: Adapter, www: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        recorder = Recorder(monkeypatch)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
            taken.bind(("127.0.0.1", 0))  # bound, not listening: only the server's own bind can fail
            monkeypatch.setattr(servers_site, "free_port", lambda host="127.0.0.1": taken.getsockname()[1])
            with pytest.raises(TargetError) as failed:
                Target(installed, self.settings(www)).start()
        assert "\n" not in str(failed.value)
        recorder.assert_nothing_left()

    def test_port_answered_by_another_program_is_refused(
        self, installed: Adapter, www: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        recorder = Recorder(monkeypatch)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen(8)
            monkeypatch.setattr(servers_site, "free_port", lambda host="127.0.0.1": taken.getsockname()[1])
            with pytest.raises(TargetError, match=r"port \d+ was taken by another program"):
                Target(installed, self.settings(www)).start()
        assert [root for root in recorder.sites if root.exists()] == []

    def test_option_the_server_rejects_fails_start_and_leaves_nothing(
        self, installed: Adapter, www: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        recorder = Recorder(monkeypatch)
        key, value = self.bad_option
        with pytest.raises(TargetError, match=re.escape(installed.title)) as failed:
            Target(installed, self.settings(www, options={key: value})).start()
        assert "\n" not in str(failed.value)
        assert [root for root in recorder.sites if root.exists()] == []
        assert still_running(recorder.processes) == []

    # -- configuration ------------------------------------------------------------------

    def test_config_listens_on_loopback_only(self, tmp_path: Path) -> None:
        adapter = make_adapter(self.name)
        text = render_config(adapter, tmp_path, kinds=adapter.kinds, access_log=True)
        assert "0.0.0.0" not in text and "[::]" not in text and "::1" not in text
        assert "127.0.0.1" in text and "18080" in text
        assert str(tmp_path / "logs" / "access.log") in text and str(tmp_path / "logs" / "error.log") in text

    # -- refusals before anything starts --------------------------------------------------

    def test_unknown_option_is_refused(self, installed: Adapter, www: Path) -> None:
        refusal = rf"^--server-opt no_such_knob is not a setting of {self.name}: use one of "
        with pytest.raises(ConfigError, match=refusal):
            Target(installed, self.settings(www, options={"no_such_knob": "1"}))

    def test_option_value_that_could_break_the_config_is_refused(self, installed: Adapter, www: Path) -> None:
        key = sorted(installed.knobs)[0]
        with pytest.raises(ConfigError, match=rf"^--server-opt {key}="):
            Target(installed, self.settings(www, options={key: '1; include "/etc/passwd"'}))

    def test_kind_it_cannot_serve_is_refused(self, installed: Adapter, www: Path) -> None:
        with pytest.raises(ConfigError) as refused:
            Target(installed, self.settings(www, kinds=frozenset({"specweb99-post"})))
        message = str(refused.value)
        assert "\n" not in message
        assert message.startswith(f"{self.name} cannot serve specweb99-post requests: ")
