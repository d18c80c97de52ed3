"""Shared fixtures: a docroot (and `www`, the servers' FILES docroot for a module), the built-in target on a free port, a silent listening socket, a closed port;
and the rule that only tests marked integration start a server or a subprocess.

Everything here is real: the compiled engine, real sockets, real subprocesses.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from servers_support import make_docroot
from support import SilentListener

try:
    from crest import _engine  # imported to learn whether the build produced it

    ENGINE_IMPORT_ERROR: ImportError | None = None
except ImportError as exc:
    ENGINE_IMPORT_ERROR = exc

pytest_plugins = ["alone"]  # the `alone` marker and the lock that gives such a test the machine to itself


# pytest-xdist's workers (`make test` runs the unit tests with -n 2) start with COLUMNS=80 and LINES=24, which
# the serial run does not have: the CLI's width rule (crest.cli.width) reads COLUMNS, so tests that print
# through it would wrap at 80 columns in a worker and not in the serial run.
if os.environ.get("PYTEST_XDIST_WORKER"):
    for name in ("COLUMNS", "LINES"):
        os.environ.pop(name, None)


@pytest.fixture(autouse=True)
def _require_engine(request: pytest.FixtureRequest) -> None:
    """Integration tests fail (never skip) when the extension is missing: it is part of the build."""
    if request.node.get_closest_marker("integration") and ENGINE_IMPORT_ERROR is not None:
        pytest.fail(f"crest._engine is not built ({ENGINE_IMPORT_ERROR}): run `make test`")


_FAILED = pytest.StashKey[bool]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    if outcome.get_result().failed:  # type: ignore[attr-defined]
        item.stash[_FAILED] = True


@pytest.fixture(autouse=True)
def _unit_tests_start_nothing(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A test not marked integration fails if it starts a subprocess or a server (a listening socket, the
    engine's built-in target): `pytest -m "not integration"` must stay fast and self-contained.

    The attempt raises pytest's Failed (a BaseException, so no `except Exception` hides it) and is
    recorded, so the test fails even if the code under test swallowed it."""
    if request.node.get_closest_marker("integration"):
        yield
        return
    started: list[str] = []

    def refuse(what: str) -> Callable[..., Any]:
        def refused(*args: Any, **kwargs: Any) -> Any:
            started.append(what)
            pytest.fail(f"{what} in a test not marked integration: mark it @pytest.mark.integration")

        return refused

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse("a subprocess"))
    monkeypatch.setattr(os, "fork", refuse("a fork"))
    monkeypatch.setattr(os, "posix_spawn", refuse("a subprocess"))
    monkeypatch.setattr(socket.socket, "listen", refuse("a listening socket"))
    if ENGINE_IMPORT_ERROR is None:
        monkeypatch.setattr(_engine, "start_server", refuse("the built-in target"))
    yield
    # Only when the code under test swallowed the failure: otherwise it has been reported already.
    if started and not request.node.stash.get(_FAILED, False):
        pytest.fail(
            f"{', '.join(sorted(set(started)))} in a test not marked integration: mark it @pytest.mark.integration"
        )


@pytest.fixture(scope="module")
def www() -> Iterator[Path]:
    """servers_support.FILES in a docroot the real servers' workers can read, for one test module."""
    root = make_docroot()
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


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
