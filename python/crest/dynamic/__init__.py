"""Owns the CGI programs crest installs on targets (built from crates/dynamic), its FastCGI
responder (crates/fcgi) and its delay line (crates/delayline): where `make build` put them; never
runs them itself."""

from __future__ import annotations

import filecmp
import os
import shutil
import tempfile
from pathlib import Path

from crest.errors import ConfigError

__all__ = [
    "CGI_BYTES",
    "CGI_ENV",
    "CGI_SPECWEB99",
    "DELAY_LINE",
    "FCGI_RESPONDER",
    "PROGRAMS",
    "delay_line_path",
    "install_cgi",
    "program_path",
    "responder_path",
]

CGI_ENV = "crest-env"
"""WebBench-style CGI: the request's CGI environment as an HTML page of exactly 1024 bytes."""

CGI_BYTES = "crest-bytes"
"""WebStone-style CGI: `?size=N` (default 10240, at most 10^8) pseudo-random bytes, a function of N."""

CGI_SPECWEB99 = "crest-specweb99"
"""SPECweb99's dynamic set as CGI (GET, custom-ad GET, POST, command/Reset, command/Fetch).

Its tables and POST log live in `../specweb99` from the directory it is installed in (a site's
`<root>/specweb99`, see crest.servers.site); the files it names are read under DOCUMENT_ROOT."""

PROGRAMS = (CGI_ENV, CGI_BYTES, CGI_SPECWEB99)

FCGI_RESPONDER = "crest-fcgi"
"""crest's FastCGI responder: crest-env's page at .../crest-env and /dyn/env, crest-bytes' at .../crest-bytes.

Not one of PROGRAMS: a web server talks to it over a socket (`--socket PATH`, `--listen IP:PORT`, or
a listening socket on fd 0), it is never installed into a cgi-bin."""

DELAY_LINE = "crest-delayline"
"""crest's delay line: carries a client network's TUN pairs with delay, jitter and loss (crest.network.topology
starts it; its command line is in crates/delayline/src/cli.rs)."""

# Where `make build` copies the binaries from the workspace's target/release/.
# Where `make build` puts the compiled programs; the built-in target serves them as its cgi-bin.
PROGRAMS_DIR = Path(__file__).resolve().parent / "bin"
_BIN_DIR = PROGRAMS_DIR
_MODE = 0o755


def program_path(name: str) -> Path:
    """The built binary of one of crest's CGI programs.

    Raises:
        ConfigError: `name` is not one of PROGRAMS, or the programs are not built.
    """
    if name not in PROGRAMS:
        raise ConfigError(f"unknown CGI program {name!r}: use one of {', '.join(PROGRAMS)}")
    path = _BIN_DIR / name
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise ConfigError("crest's CGI programs are not built: run `make build`")
    return path


def responder_path() -> Path:
    """The built binary of crest's FastCGI responder (FCGI_RESPONDER).

    Raises:
        ConfigError: the responder is not built.
    """
    path = _BIN_DIR / FCGI_RESPONDER
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise ConfigError("crest's FastCGI responder is not built: run `make build`")
    return path


def delay_line_path() -> Path:
    """The built binary of crest's delay line (DELAY_LINE).

    Raises:
        ConfigError: the delay line is not built.
    """
    path = _BIN_DIR / DELAY_LINE
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise ConfigError("crest's delay line is not built: run `make build`")
    return path


def install_cgi(cgi_dir: Path) -> list[Path]:
    """Copy every CGI program into `cgi_dir` (created if needed) with mode 0755.

    Copies, never symlinks, so a target running in a chroot or as another user
    can execute them. Idempotent: a program already there with the same bytes
    is left alone (its mode is still set to 0755); anything else at that name
    (an older build, a symlink) is replaced atomically, so a target running the
    old binary at that moment is not disturbed.

    Returns:
        The installed paths, in PROGRAMS order.

    Raises:
        ConfigError: the programs are not built, or `cgi_dir` cannot take them.
    """
    sources = [program_path(name) for name in PROGRAMS]
    try:
        cgi_dir.mkdir(parents=True, exist_ok=True)
        return [_install(src, cgi_dir / src.name) for src in sources]
    except OSError as exc:
        raise ConfigError(
            f"cannot install CGI programs into {str(cgi_dir)!r} ({exc.strerror or exc}): give a writable directory"
        ) from None


def _install(src: Path, dst: Path) -> Path:
    if not dst.is_symlink() and dst.is_file() and filecmp.cmp(src, dst, shallow=False):
        if dst.stat().st_mode & 0o7777 != _MODE:
            dst.chmod(_MODE)
        return dst
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dst.name}.", dir=dst.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out, src.open("rb") as data:
            shutil.copyfileobj(data, out)
        tmp.chmod(_MODE)
        os.replace(tmp, dst)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return dst
