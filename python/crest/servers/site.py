"""A target's private run directory: its ports, TLS key and certificate, cgi-bin, sockets, logs, SPECweb99 state
and (for file servers) the share.

Owns laying out and removing that directory; never writes a server's own
configuration (adapters do) and never starts servers.
"""

from __future__ import annotations

import grp
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from crest.dynamic import install_cgi
from crest.errors import ConfigError

# The account servers switch to when crest runs as root (Debian's packages use it).
UNPRIVILEGED_USER = "www-data"
# The site's directories the server's account writes into.
_GROUP_WRITABLE = ("run", "logs", "specweb99")


@dataclass
class Site:
    """Where one provisioned target lives; every path is inside `root` (mode 0750)."""

    root: Path
    docroot: Path
    port: int
    tls_port: int | None
    user: str | None  # the account the server's workers run as when crest is root; None: crest's own
    group: str | None
    host: str = "127.0.0.1"  # the address it listens on: loopback, or a cluster node's own address when asked
    # h2c (HTTP/2 with prior knowledge) on a port of its own, for servers whose main HTTP/1 port cannot
    # also take it (Adapter.h2c_own_port); None: h2c, when asked, is served on `port`.
    h2c_port: int | None = None

    @property
    def ports(self) -> list[int]:
        """Every port the server listens on."""
        return [p for p in (self.port, self.tls_port, self.h2c_port) if p]

    @property
    def conf_dir(self) -> Path:
        return self.root / "conf"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def run_dir(self) -> Path:
        """Sockets and pid files."""
        return self.root / "run"

    @property
    def cgi_bin(self) -> Path:
        return self.root / "cgi-bin"

    @property
    def specweb99_dir(self) -> Path:
        """SPECweb99's dynamic state (User.Personality, Custom.Ads, post.log), written by the server's
        workers, crest-fcgi and the CGI program crest-specweb99 (which finds it as ../specweb99 from
        cgi-bin); never the docroot, which is a shared fileset that may be read-only to the server."""
        return self.root / "specweb99"

    @property
    def share_dir(self) -> Path:
        """What a file server shares and its clients write (its adapter makes it); never the docroot,
        which is a shared fileset cache that must not be written."""
        return self.root / "share"

    @property
    def cert(self) -> Path:
        return self.root / "tls" / "cert.pem"

    @property
    def key(self) -> Path:
        return self.root / "tls" / "key.pem"

    @property
    def access_log(self) -> Path:
        return self.logs / "access.log"

    @property
    def error_log(self) -> Path:
        return self.logs / "error.log"

    @property
    def fcgi_socket(self) -> Path:
        """crest's FastCGI responder."""
        return self.run_dir / "crest-fcgi.sock"

    @property
    def cgi_socket(self) -> Path:
        """fcgiwrap, for servers that run CGI only through FastCGI."""
        return self.run_dir / "fcgiwrap.sock"


def create_site(
    docroot: Path,
    *,
    tls: bool,
    base: Path | None = None,
    host: str = "127.0.0.1",
    cgi: bool = True,
    tls_key: str = "ecdsa-p256",
    h2c: bool = False,
) -> Site:
    """Make a private run directory with free ports (with `h2c`, one more for h2c: Site.h2c_port),
    installed CGI programs (unless `cgi` is false: file servers run none) and (with `tls`) a key pair
    of kind `tls_key` (see make_certificate).

    Raises:
        ConfigError: the directory, the programs or the key cannot be made.
    """
    root = Path(tempfile.mkdtemp(prefix=f"crest-target-{os.getpid()}-", dir=base))  # the owner, for reap.py
    user, group = _server_account()
    try:
        for sub in ("conf", "logs", "run", "tls", "specweb99"):
            (root / sub).mkdir()
        if cgi:
            install_cgi(root / "cgi-bin")
        site = Site(root=root, docroot=docroot.resolve(), port=free_port(host),
                    tls_port=free_port(host) if tls else None, user=user, group=group, host=host,
                    h2c_port=free_port(host) if h2c else None)  # fmt: skip
        if tls:
            make_certificate(site.cert, site.key, tls_key)
        _share_with(root, group)
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    return site


def remove_site(site: Site) -> None:
    shutil.rmtree(site.root, ignore_errors=True)


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on now (the server binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


# openssl req's -newkey arguments per key kind (crest.suite.models.TLS_KEYS).
_NEWKEY = {
    "ecdsa-p256": ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"),
    "rsa2048": ("-newkey", "rsa:2048"),
    "rsa1024": ("-newkey", "rsa:1024"),
}


def make_certificate(cert: Path, key: Path, kind: str = "ecdsa-p256") -> None:
    """A self-signed certificate for 127.0.0.1 and localhost with a key of `kind`; the key is created
    with mode 0600.

    Raises:
        ConfigError: the kind is unknown, or openssl is missing or failed.
    """
    if kind not in _NEWKEY:
        raise ConfigError(f"unknown TLS key {kind!r}: choose one of {', '.join(_NEWKEY)}")
    openssl = shutil.which("openssl")
    if openssl is None:
        raise ConfigError("TLS targets need openssl to make a certificate: apt-get install -y openssl")
    key.touch(mode=0o600)
    try:
        subprocess.run(
            [openssl, "req", "-x509", *_NEWKEY[kind], "-nodes",
             "-keyout", str(key), "-out", str(cert), "-days", "7", "-subj", "/CN=localhost",
             "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1",
             # A leaf, not a CA: Apache warns about CA certificates and rustls refuses them as server certs.
             "-addext", "basicConstraints=critical,CA:FALSE"],
            check=True, capture_output=True, timeout=30,
        )  # fmt: skip
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        raise ConfigError(f"openssl could not make a TLS certificate: {exc}") from None
    key.chmod(0o600)


def _server_account() -> tuple[str | None, str | None]:
    """As root, servers drop to www-data (Apache refuses to serve as root); otherwise they run as we do."""
    if os.geteuid() != 0:
        return None, None
    try:
        pw = pwd.getpwnam(UNPRIVILEGED_USER)
        return pw.pw_name, grp.getgrgid(pw.pw_gid).gr_name
    except KeyError:
        return None, None


def _share_with(root: Path, group: str | None) -> None:
    """Private to crest, readable by the server's group: dirs 0750; the dirs the server writes (sockets,
    logs, SPECweb99's state) writable by the group."""
    gid = grp.getgrnam(group).gr_gid if group else -1
    for path in [root, *root.rglob("*")]:
        if path == root / "tls" / "key.pem":
            continue  # read by the server's master as root, never by its workers
        if gid >= 0:
            os.chown(path, -1, gid, follow_symlinks=False)
        if path.is_dir():
            path.chmod(0o770 if path.name in _GROUP_WRITABLE else 0o750)
