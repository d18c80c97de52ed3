"""Samba's smbd through crest's adapter: the share through smbclient, the generated login and its private
password, pinning, the memory limit, the per-connection processes monitored, clean stops, and web suites
refused before anything starts (file suites likewise by web servers)."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import stat
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from crest.errors import ConfigError, TargetError
from crest.servers import samba
from crest.servers import site as servers_site
from crest.servers.base import Login, ServerSettings, Target
from crest.servers.cpus import allowed_list
from crest.servers.registry import adapter as make_adapter
from crest.servers.site import Site
from servers_support import Recorder, identities, render_config, still_running, wait_for
from support import run_cli_in_process

SMBCLIENT_TIMEOUT_S = 15.0
LOADFILE = frozenset({"loadfile"})
WEB_SUITE = """
name = "web"
description = "a web suite, which a file server cannot serve"
source = "crest tests"
[workload]
fileset = "specweb99"
[[workload.classes]]
name = "static"
kind = "static"
weight = 1
[ladder]
clients = [1]
[timing]
length_s = 1
ramp_up_s = 0
ramp_down_s = 0
"""


@pytest.fixture(scope="module")
def installed() -> samba.SambaAdapter:
    adapter = samba.SambaAdapter()
    if not adapter.installed() or shutil.which("smbclient") is None:
        pytest.skip("apt-get install samba smbclient")
    return adapter


@pytest.fixture(scope="module")
def www() -> Iterator[Path]:
    """The docroot a run would give: samba must leave it alone (the share is the site's own)."""
    root = Path(tempfile.mkdtemp(prefix="crest-docroot-"))
    root.chmod(0o555)
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def target(installed: samba.SambaAdapter, www: Path) -> Iterator[Target]:
    with Target(installed, ServerSettings(docroot=www, cpus=(0,), kinds=LOADFILE)) as target:
        yield target


def auth_file(directory: Path, user: str, password: str) -> Path:
    """An smbclient authentication file, 0600 from its creation."""
    path = directory / "auth"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(f"username = {user}\npassword = {password}\ndomain = {samba.DOMAIN}\n")
    return path


def smbclient(target: Target, auth: Path, commands: str) -> subprocess.CompletedProcess[str]:
    assert target.site is not None
    argv = ["smbclient", "-s", str(samba.SambaAdapter().config_path(target.site)), "-A", str(auth),
            "-p", str(target.site.port), "//127.0.0.1/crest", "-c", commands]  # fmt: skip
    return subprocess.run(argv, capture_output=True, text=True, timeout=SMBCLIENT_TIMEOUT_S, check=False)


def login(target: Target, tmp_path: Path, password: str | None = None) -> Path:
    assert target.login is not None and target.secret_file is not None
    return auth_file(tmp_path, target.login.user, target.secret_file.read_text() if password is None else password)


# -- serving ----------------------------------------------------------------------------


@pytest.mark.integration
def test_the_share_takes_a_directory_and_a_file(target: Target, tmp_path: Path, www: Path) -> None:
    assert target.site is not None
    local = tmp_path / "payload.bin"
    local.write_bytes(bytes(range(256)) * 100)
    out = smbclient(target, login(target, tmp_path), f"mkdir x; put {local} x/payload.bin; ls")
    assert out.returncode == 0, out.stdout + out.stderr
    assert re.search(r"^\s+x\s+D\s", out.stdout, re.MULTILINE), out.stdout
    share = target.site.share_dir
    assert (share / "x").is_dir()
    assert (share / "x" / "payload.bin").read_bytes() == local.read_bytes()
    assert list(www.iterdir()) == []  # the docroot is not the share


@pytest.mark.integration
def test_url_names_the_generated_user_and_no_password(target: Target) -> None:
    assert target.site is not None and target.login is not None and target.secret_file is not None
    assert re.fullmatch(r"crest[0-9a-f]{8}", target.login.user)
    assert target.url == f"smb://{target.login.user}@127.0.0.1:{target.site.port}/crest"
    assert target.tls_url is None
    password = target.secret_file.read_text()
    assert len(password) >= 24 and password not in target.url


@pytest.mark.integration
def test_a_wrong_password_is_refused(target: Target, tmp_path: Path) -> None:
    out = smbclient(target, login(target, tmp_path, password="not-the-password"), "ls")
    assert out.returncode != 0
    assert "NT_STATUS_LOGON_FAILURE" in out.stdout + out.stderr


@pytest.mark.integration
def test_the_password_is_only_in_private_files(target: Target) -> None:
    assert target.secret_file is not None
    password = target.secret_file.read_text()
    assert stat.S_IMODE(target.secret_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(target.secret_file.parent.stat().st_mode) == 0o700
    for proc in psutil.process_iter():
        for name in ("cmdline", "environ"):
            try:
                text = Path(f"/proc/{proc.pid}/{name}").read_bytes()
            except OSError:
                continue  # gone, or not ours to read
            assert password.encode() not in text, f"the password is in /proc/{proc.pid}/{name}"
    assert password not in json.dumps(target.metadata())


# -- pinning, monitoring, limits -----------------------------------------------------------


@pytest.mark.integration
def test_each_connection_process_is_monitored_and_pinned(target: Target, tmp_path: Path) -> None:
    assert target.site is not None
    before = set(target.pids())
    argv = ["smbclient", "-s", str(samba.SambaAdapter().config_path(target.site)), "-A", str(login(target, tmp_path)),
            "-p", str(target.site.port), "//127.0.0.1/crest"]  # fmt: skip
    client = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:  # an open session: smbd has forked its process for this connection
        assert wait_for(lambda: len(set(target.pids()) - before) >= 1, SMBCLIENT_TIMEOUT_S)
        pids = target.pids()
        assert {allowed_list(pid) for pid in pids} == {"0"}
        # smbd, its helpers (smbd-notifyd, cleanupd) and the connection's process: all the one smbd binary.
        assert {Path(psutil.Process(pid).cmdline()[0]).name for pid in pids} == {"smbd"}
    finally:
        client.communicate(b"exit\n", timeout=SMBCLIENT_TIMEOUT_S)


@pytest.mark.integration
def test_memory_limit_holds_every_smbd_process(installed: samba.SambaAdapter, www: Path) -> None:
    settings = ServerSettings(docroot=www, kinds=LOADFILE, memory_bytes=256 << 20)
    target = Target(installed, settings)
    try:
        target.start()
    except ConfigError as exc:  # not permitted here: the error says so in one line
        assert "cgroup" in str(exc)
        pytest.skip(f"no writable cgroup here: {exc}")
    try:
        assert target.memory is not None
        limit_file = "memory.max" if target.memory.version == 2 else "memory.limit_in_bytes"
        assert int((target.memory.path / limit_file).read_text()) == 256 << 20
        # The target's processes first, then the group's: smbd forks as it likes, and a child forked in
        # between would be in the group but not yet seen (its children start in its cgroup). One that
        # exited in between is no longer anywhere.
        pids = target.pids()
        members = {int(p) for p in (target.memory.path / "cgroup.procs").read_text().split()}
        assert pids and {p for p in pids if psutil.pid_exists(p)} <= members
        cgroup_dir = target.memory.path
    finally:
        target.stop()
    assert not cgroup_dir.exists()


# -- leaving nothing behind --------------------------------------------------------------------


@pytest.mark.integration
def test_stop_leaves_no_smbd_and_no_site(installed: samba.SambaAdapter, www: Path, tmp_path: Path) -> None:
    target = Target(installed, ServerSettings(docroot=www, kinds=LOADFILE))
    target.start()
    assert target.site is not None
    root = target.site.root
    assert smbclient(target, login(target, tmp_path), "mkdir left; ls").returncode == 0
    running = identities(target.pids())
    assert running
    target.stop()
    assert still_running(running) == [] and not root.exists()
    assert [p.pid for p in psutil.process_iter(["cmdline"]) if str(root) in " ".join(p.info["cmdline"] or [])] == []
    assert target.login is None and target.secret_file is None
    target.stop()  # twice is harmless


@pytest.mark.integration
def test_a_server_refusing_its_own_login_fails_at_once_and_leaves_nothing(
    installed: samba.SambaAdapter, www: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorder = Recorder(monkeypatch)
    provision = samba.SambaAdapter.provision

    def wrong_secret(self: samba.SambaAdapter, site: Site, settings: ServerSettings) -> Login:
        made = provision(self, site, settings)
        samba._auth_file(site).write_text(f"username = {made.user}\npassword = wrong\n")
        return made

    monkeypatch.setattr(samba.SambaAdapter, "provision", wrong_secret)
    started = time.monotonic()
    with pytest.raises(TargetError, match=r"refused its own login crest[0-9a-f]+ .*NT_STATUS_LOGON_FAILURE") as failed:
        Target(installed, ServerSettings(docroot=www, kinds=LOADFILE)).start()
    assert "\n" not in str(failed.value)
    assert time.monotonic() - started < 10  # not the readiness timeout
    recorder.assert_nothing_left()


@pytest.mark.integration
def test_port_taken_fails_start_and_leaves_nothing(
    installed: samba.SambaAdapter, www: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorder = Recorder(monkeypatch)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))  # bound, not listening: only smbd's own bind can fail
        monkeypatch.setattr(servers_site, "free_port", lambda host="127.0.0.1": taken.getsockname()[1])
        with pytest.raises(TargetError) as failed:  # smbd panics when it cannot bind: at once, not at the timeout
            Target(installed, ServerSettings(docroot=www, kinds=LOADFILE)).start()
    assert "\n" not in str(failed.value)
    recorder.assert_nothing_left()


# -- refusals before anything starts ------------------------------------------------------------


def test_a_web_suite_is_refused_by_samba_and_a_file_suite_by_web_servers(www: Path) -> None:
    if shutil.which("smbd") is None and not Path("/usr/sbin/smbd").exists():
        pytest.skip("apt-get install samba smbclient")
    for kinds in (frozenset(), frozenset({"cgi"})):
        with pytest.raises(ConfigError, match=r"^samba is a file server and serves only file-operation") as refused:
            Target(make_adapter("samba"), ServerSettings(docroot=www, kinds=kinds))
        assert "\n" not in str(refused.value) and "--server nginx" in str(refused.value)
    with pytest.raises(ConfigError, match=r"^builtin is a web server and cannot serve a file-operation") as refused:
        Target(make_adapter("builtin"), ServerSettings(docroot=www, kinds=LOADFILE))
    assert "\n" not in str(refused.value) and "--server samba" in str(refused.value)
    with pytest.raises(ConfigError, match=r"^samba cannot serve cgi requests"):
        Target(make_adapter("samba"), ServerSettings(docroot=www, kinds=LOADFILE | {"cgi"}))


@pytest.mark.integration  # crest run: the CLI in this process, nothing started
def test_crest_run_of_a_web_suite_on_samba_is_one_line_and_makes_no_fileset(
    installed: samba.SambaAdapter, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CREST_CACHE_DIR", str(tmp_path / "cache"))
    suite = tmp_path / "web.toml"
    suite.write_text(WEB_SUITE)
    result = run_cli_in_process("run", str(suite), "--server", "samba", "--db", str(tmp_path / "r.db"))
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("crest: error: samba is a file server"), result.stderr
    assert not (tmp_path / "cache" / "filesets").exists()  # refused before the fileset was made
    assert not (tmp_path / "r.db").exists()


def test_options_are_checked(installed: samba.SambaAdapter, www: Path) -> None:
    settings = ServerSettings(docroot=www, kinds=LOADFILE)
    cases = [
        ({"no such knob": "1"}, r"^--server-opt no such knob is not a setting of samba: use one of "),
        ({"oplocks": "maybe"}, r"^--server-opt oplocks='maybe': use one of yes, no$"),
        ({"aio read size": "lots"}, r"^--server-opt aio read size='lots': give a whole number of at least 0$"),
        ({"server max protocol": "NT1"}, r"^--server-opt server max protocol='NT1': use one of SMB2_02, "),
        ({"strict locking": "yes\n[evil]"}, r"^--server-opt strict locking="),
    ]
    for options, refusal in cases:
        with pytest.raises(ConfigError, match=refusal):
            Target(installed, ServerSettings(docroot=www, kinds=LOADFILE, options=options))
    with pytest.raises(ConfigError, match=r"^samba serves no TLS"):
        Target(installed, ServerSettings(docroot=www, kinds=LOADFILE, tls=True))
    with pytest.raises(ConfigError, match=r"^samba keeps no access log"):
        Target(installed, ServerSettings(docroot=www, kinds=LOADFILE, access_log=True))
    Target(installed, ServerSettings(docroot=www, kinds=LOADFILE, options={"aio read size": "0", "oplocks": "no"}))
    Target(installed, settings)


def test_config_is_self_contained_and_on_loopback(tmp_path: Path) -> None:
    text = render_config(samba.SambaAdapter(), tmp_path, tls=False, kinds=LOADFILE,
                         options={"aio write size": "0", "server max protocol": "SMB3_00"})  # fmt: skip
    for line in ("interfaces = 127.0.0.1", "bind interfaces only = yes", "smb ports = 18080",
                 "disable netbios = yes", "disable spoolss = yes", "server min protocol = SMB2_02",
                 "server role = standalone server", f"path = {tmp_path / 'share'}", "read only = no",
                 f"passdb backend = tdbsam:{tmp_path / 'samba' / 'private'}/passdb.tdb",
                 "aio write size = 0", "server max protocol = SMB3_00", "[crest]"):  # fmt: skip
        assert f"    {line}\n" in text or f"{line}\n" in text, line
    settings = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    paths = re.findall(r"(?<![\w.])/[\w./-]+", settings)
    assert paths and all(Path(p).is_relative_to(tmp_path) or p == "/dev/null" for p in paths), paths
    assert "0.0.0.0" not in text and "::" not in text


@pytest.mark.integration  # describe() asks smbd its version
def test_crest_servers_lists_samba(installed: samba.SambaAdapter) -> None:
    row = installed.describe()
    assert row["installed"] and row["version"].startswith("Samba 4.") and row["kinds"] == ["loadfile"]
    result = run_cli_in_process("servers")
    assert result.returncode == 0
    assert "samba" in result.stdout and "Samba smbd (SMB2/3 file server); file server: loadfile" in result.stdout
    missing = samba.SambaAdapter.install_hint(samba.SambaAdapter())
    assert missing == "apt-get install -y samba smbclient"
