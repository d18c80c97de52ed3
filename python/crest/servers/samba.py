"""Samba smbd: an SMB2/3 file server for file-operation (loadfile) suites; it forks one process per connection.

Owns smbd's configuration (templates/smb.conf.j2), the login it is provisioned
with and its readiness check through smbclient; the lifecycle (pinning, the
cgroup, monitoring, stopping) is `Target`'s, since every smbd process is a
child of the one crest starts (--workers does not apply: smbd has no pool).
The login is a generated SMB name mapped to the Unix account the server's
clients become, with a random password that lives only in 0600 files of the
site's 0700 private directory: never on a command line, in an environment or
in what a run stores.
"""

from __future__ import annotations

import os
import pwd
import secrets
import subprocess
from pathlib import Path
from typing import ClassVar

from crest.errors import ConfigError, TargetError
from crest.servers.base import (
    READY_TIMEOUT_S,
    Adapter,
    Knob,
    Login,
    ServerSettings,
    answers_on,
    int_option,
    render,
    version_output,
    which,
)
from crest.servers.process import LOG_TAIL_LINES
from crest.servers.site import Site

# The one share, on the site's share directory (never the docroot: a shared, read-only fileset cache).
SHARE = "crest"
# What smbclient's authentication file names as the domain; a standalone server takes its logins under any.
DOMAIN = "WORKGROUP"
_YES_NO = ("yes", "no")
# --server-opt: smb.conf's own names -> (meaning, the values it takes; () = a byte count).
OPTIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    "server max protocol": ("highest SMB dialect offered (default SMB3_11)",
                            ("SMB2_02", "SMB2_10", "SMB3_00", "SMB3_02", "SMB3_11")),
    "aio read size": ("reads of at least this many bytes are asynchronous; 0 = never (default 1)", ()),
    "aio write size": ("writes of at least this many bytes are asynchronous; 0 = never (default 1)", ()),
    "strict locking": ("check byte-range locks on every read and write: yes, no or auto (default auto)",
                       ("yes", "no", "auto")),
    "oplocks": ("grant opportunistic locks (client caching): yes or no (default yes)", _YES_NO),
    "kernel oplocks": ("back oplocks with kernel leases: yes or no (default no)", _YES_NO),
    "smb2 leases": ("grant SMB2.1+ leases: yes or no (default yes)", _YES_NO),
    "strict sync": ("honour clients' flush requests with fsync: yes or no (default yes)", _YES_NO),
    "use sendfile": ("send read data with sendfile(2): yes or no (default no)", _YES_NO),
    "server signing": ("SMB signing: default, auto, mandatory or disabled (default: default)",
                       ("default", "auto", "mandatory", "disabled")),
    "server smb encrypt": ("SMB3 encryption: default, off, if_required, desired or required (default: default)",
                           ("default", "off", "if_required", "desired", "required")),
}  # fmt: skip
# One readiness probe through smbclient; short, so that the probes stay within Target's readiness limit.
PROBE_TIMEOUT_S = 5.0
# smbclient's words for a server that answers but refuses its own login or share: no point waiting.
_REFUSALS = ("NT_STATUS_LOGON_FAILURE", "NT_STATUS_ACCESS_DENIED", "NT_STATUS_BAD_NETWORK_NAME",
             "NT_STATUS_WRONG_PASSWORD", "NT_STATUS_NO_SUCH_USER")  # fmt: skip


class SambaAdapter(Adapter):
    name = "samba"
    title = "Samba smbd (SMB2/3 file server)"
    package = "samba"
    kinds: ClassVar[frozenset[str]] = frozenset({"loadfile"})
    knobs = {key: Knob(meaning, "in the meaning", key) for key, (meaning, _) in OPTIONS.items()}
    no_http2 = "it is a file server (SMB); HTTP/2 is for web suites on a web server, e.g. --server nginx"

    def binary(self) -> Path | None:
        return which("smbd")

    def version(self) -> str:
        binary = self.binary()
        found = version_output([str(binary), "--version"], r"\d+\.\d+\S*") if binary else "unknown"
        return f"Samba {found}" if found != "unknown" else found

    def install_hint(self) -> str:
        return "apt-get install -y samba smbclient"  # smbclient: the readiness check

    def check(self, settings: ServerSettings) -> None:
        super().check(settings)
        if which("pdbedit") is None:  # Debian's samba has it; another build may not
            raise ConfigError(
                f"{self.name}'s login is added with pdbedit, which is not installed: apt-get install -y samba"
            )
        if which("smbclient") is None:
            raise ConfigError(f"{self.name} is checked through smbclient, which is not installed: "
                              "apt-get install -y smbclient")  # fmt: skip
        if settings.tls:
            raise ConfigError(
                f"{self.name} serves no TLS: SMB3 encrypts itself (--server-opt 'server smb encrypt=required')"
            )
        if settings.access_log:
            raise ConfigError(f"{self.name} keeps no access log: run it without --access-log")
        for key, value in settings.options.items():
            allowed = OPTIONS[key][1]
            if not allowed:
                int_option(settings, key, 0, minimum=0)
            elif value not in allowed:
                raise ConfigError(f"--server-opt {key}={value!r}: use one of {', '.join(allowed)}")

    def config_path(self, site: Site) -> Path:
        return site.conf_dir / "smb.conf"

    def config_files(self, site: Site, settings: ServerSettings) -> dict[Path, str]:
        text = render("smb.conf.j2", site=site, share=SHARE, samba_dir=_samba_dir(site),
                      private_dir=_private_dir(site), options=sorted(settings.options.items()))  # fmt: skip
        return {self.config_path(site): text}

    def command(self, site: Site, settings: ServerSettings) -> list[str]:
        # In the foreground, in crest's process group (so stopping the group stops every connection's
        # process), its log on stdout (the site's server.log, which start-up errors quote).
        return [str(self.binary()), "--foreground", "--no-process-group", "--debug-stdout",
                "-s", str(self.config_path(site))]  # fmt: skip

    def check_command(self, site: Site, settings: ServerSettings) -> list[str] | None:
        testparm = which("testparm")
        return [str(testparm), "-s", str(self.config_path(site))] if testparm else None

    def provision(self, site: Site, settings: ServerSettings) -> Login:
        """Samba's directories, the share, and the login: an SMB name (crest + random hex) mapped to
        the site's account, with a random password given to pdbedit on its stdin."""
        account = site.user or pwd.getpwuid(os.geteuid()).pw_name
        # 0755 like /run/samba: a connection's process runs as the clients' account while it serves them,
        # and must still reach the lock directory's message sockets (with 0700 smbd panics with "Could not
        # store share mode data" as soon as two clients contend). Secrets are in the private dir, 0700.
        _samba_dir(site).mkdir(mode=0o755)
        for sub in ("lock", "state", "cache", "ncalrpc"):
            (_samba_dir(site) / sub).mkdir(mode=0o755)
        private = _private_dir(site)
        private.mkdir(mode=0o700)  # the umask can only take bits away
        site.share_dir.mkdir()
        site.share_dir.chmod(0o755)
        if site.user:  # crest as root: the share belongs to the account the clients become
            pw = pwd.getpwnam(site.user)
            os.chown(site.share_dir, pw.pw_uid, pw.pw_gid)
        user, password = f"crest{secrets.token_hex(4)}", secrets.token_urlsafe(24)
        _write_private(private / "usermap", f"{account} = {user}\n")
        _write_private(_auth_file(site), f"username = {user}\npassword = {password}\ndomain = {DOMAIN}\n")
        secret = private / "password"
        _write_private(secret, password)
        # pdbedit keys its entry on a Unix account (it refuses the generated name); the username
        # map leads the generated name to it.
        argv = [str(which("pdbedit")), "-s", str(self.config_path(site)), "-a", "-u", account, "-t"]
        try:
            out = subprocess.run(argv, input=f"{password}\n{password}\n", capture_output=True, text=True,
                                 timeout=READY_TIMEOUT_S, check=False)  # fmt: skip
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise TargetError(f"cannot add {self.title}'s login with pdbedit: {exc}") from None
        if out.returncode != 0:
            said = _last_lines(out.stdout + out.stderr).replace(password, "***")
            raise TargetError(f"pdbedit could not add {self.title}'s login for {account}: {said}")
        return Login(user=user, secret_file=secret)

    def url(self, site: Site, login: Login | None) -> str:
        assert login is not None
        return f"smb://{login.user}@{site.host}:{site.port}/{SHARE}"

    def answers(self, site: Site, login: Login | None) -> bool:
        """The port accepts connections and smbclient, logged in as the login, can list the share."""
        if not answers_on(site.host, site.port):
            return False
        assert login is not None
        argv = [str(which("smbclient")), "-s", str(self.config_path(site)), "-A", str(_auth_file(site)),
                "-p", str(site.port), f"//{site.host}/{SHARE}", "-c", "ls"]  # fmt: skip
        try:
            out = subprocess.run(argv, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return False
        said = _last_lines(out.stdout + out.stderr)
        if out.returncode != 0 and any(status in said for status in _REFUSALS):
            raise TargetError(f"{self.title} refused its own login {login.user} to //{site.host}/{SHARE}: {said}")
        return out.returncode == 0


def _samba_dir(site: Site) -> Path:
    """Samba's own state (locks, tdb files, caches): root's alone, like its private dir."""
    return site.root / "samba"


def _private_dir(site: Site) -> Path:
    """The password database, the password and the username map (mode 0700)."""
    return _samba_dir(site) / "private"


def _auth_file(site: Site) -> Path:
    """smbclient's authentication file (username, password, domain), for the readiness check."""
    return _private_dir(site) / "smbclient.auth"


def _write_private(path: Path, text: str) -> None:
    """A new file only its owner can read, mode 0600 from its creation (never briefly readable)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text)


def _last_lines(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return " | ".join(lines[-LOG_TAIL_LINES:]) or "no output"
