"""Shared fixtures: a docroot, the built-in target on a free port, a silent listening socket, a closed port.

Everything here is real: the compiled engine, real sockets, real subprocesses.
"""

from __future__ import annotations

import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from support import SilentListener

try:
    from crest import _engine  # noqa: F401  (imported to learn whether the build produced it)

    ENGINE_IMPORT_ERROR: ImportError | None = None
except ImportError as exc:
    ENGINE_IMPORT_ERROR = exc


@pytest.fixture(autouse=True)
def _require_engine(request: pytest.FixtureRequest) -> None:
    """Integration tests fail (never skip) when the extension is missing: it is part of the build."""
    if request.node.get_closest_marker("integration") and ENGINE_IMPORT_ERROR is not None:
        pytest.fail(f"crest._engine is not built ({ENGINE_IMPORT_ERROR}): run `make test`")


@pytest.fixture
def docroot() -> Iterator[Path]:
    """A docroot with 1k.html (exactly 1024 bytes), 10k.html (10240 bytes) and an empty cgi-bin/.

    It lives outside pytest's tmp_path, whose parent is private (0700), because
    real servers such as nginx read it from workers that dropped root.
    """
    root = Path(tempfile.mkdtemp(prefix="crest-docroot-"))
    try:
        root.chmod(0o755)
        (root / "1k.html").write_bytes(_page(1024))
        (root / "10k.html").write_bytes(_page(10240))
        (root / "cgi-bin").mkdir(mode=0o755)
        for page in root.glob("*.html"):
            page.chmod(0o644)
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _page(size: int) -> bytes:
    head = f"<!-- {size} bytes -->\n".encode()
    return head + b"x" * (size - len(head) - 1) + b"\n"


@pytest.fixture
def builtin_target(docroot: Path) -> Iterator[str]:
    """The built-in target serving `docroot` on a free loopback port; yields its base URL."""
    from crest.servers import BuiltinServer, ServeSpec

    with BuiltinServer(ServeSpec(docroot=docroot)) as server:
        yield server.url


@pytest.fixture
def silent_listener() -> Iterator[SilentListener]:
    """A raw TCP socket listening on 127.0.0.1:<free port> (non-blocking, never accepts on its own)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        sock.setblocking(False)
        yield SilentListener(sock)


@pytest.fixture
def closed_port() -> int:
    """A loopback port that nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
