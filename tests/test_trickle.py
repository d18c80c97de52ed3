"""A peer that trickles (one byte a second, in the head or in the body) ends every wait of crest by its deadline:
the preflight's exchange (crest.deadlines) and `crest bench` as a whole, judged against the host's own start-up
time rather than a fixed allowance."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from crest.errors import TargetError
from crest.load.preflight import check_answers, parse_url
from support import run_cli

pytestmark = pytest.mark.integration

_BODY_BYTES = 1 << 20


class Trickler:
    """A loopback HTTP/1.1 peer that reads a request, then sends its answer one byte a second: the head
    (`in_head`) or, after a whole head announcing 1 MiB, the body. Counts the requests it was sent."""

    def __init__(self, in_head: bool) -> None:
        self.in_head = in_head
        self.requests = 0
        self._stop = threading.Event()
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self._threads: list[threading.Thread] = []
        self._accepter = threading.Thread(target=self._accept, daemon=True)
        self._accepter.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/"

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            thread.start()
            self._threads.append(thread)

    def _serve(self, conn: socket.socket) -> None:
        head = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % _BODY_BYTES
        with conn:
            conn.settimeout(0.2)
            seen = b""
            while b"\r\n\r\n" not in seen and not self._stop.is_set():
                try:
                    data = conn.recv(4096)
                except TimeoutError:
                    continue
                except OSError:
                    return
                if not data:
                    return
                seen += data
            self.requests += 1
            try:
                if not self.in_head:
                    conn.sendall(head)
                drip = head if self.in_head else b"x" * _BODY_BYTES
                for byte in drip:
                    if self._stop.wait(1.0):
                        return
                    conn.sendall(bytes([byte]))
            except OSError:
                return  # crest gave up on it: what the test wants

    def close(self) -> None:
        self._stop.set()
        self.sock.close()
        self._accepter.join(5)
        for thread in self._threads:
            thread.join(5)


@contextmanager
def trickler(in_head: bool) -> Iterator[Trickler]:
    peer = Trickler(in_head)
    try:
        yield peer
    finally:
        peer.close()


def test_a_head_that_trickles_fails_the_preflight_at_its_deadline() -> None:
    with trickler(in_head=True) as peer:
        started = time.monotonic()
        with pytest.raises(TargetError, match=r"no head within --timeout 1s.*raise --timeout"):
            check_answers(parse_url(peer.url), path="/", timeout_s=1.0)
        took = time.monotonic() - started
    # A per-read timeout would wait for the whole 38-byte head (38 s); the deadline ends it at 1 s.
    assert took < 1.0 + 1.0


def test_a_body_that_trickles_ends_the_preflight_at_its_deadline_with_the_answer_it_had() -> None:
    with trickler(in_head=False) as peer:
        started = time.monotonic()
        assert check_answers(parse_url(peer.url), path="/", timeout_s=1.0) == 1  # the one GET it sent
        took = time.monotonic() - started
        assert peer.requests == 1
    assert took < 1.0 + 1.0


def _startup_s() -> float:
    """What this host takes to start crest and have it refuse an input (no connection made)."""
    started = time.monotonic()
    done = run_cli("bench", "-c", "4", "-d", "2s", "--timeout", "0s", "http://127.0.0.1:9/")
    assert done.returncode == 2, done.stderr
    return time.monotonic() - started


@pytest.mark.parametrize("in_head", [True, False], ids=["head", "body"])
def test_crest_bench_against_a_trickling_peer_ends_on_time(in_head: bool) -> None:
    """`crest bench -c 4 -d 2s --timeout 1s` ends within its duration and timeout, plus the host's start-up
    time and one second, whether the peer trickles its head (the preflight stops the command) or its body
    (the preflight has its answer at the deadline; every request of the load then times out)."""
    startup_s = _startup_s()
    with trickler(in_head) as peer:
        started = time.monotonic()
        done = run_cli("bench", "-c", "4", "-d", "2s", "--timeout", "1s", "--json", peer.url, timeout_s=60)
        took = time.monotonic() - started
    if in_head:
        assert done.returncode == 2, done.stderr
        assert "no head within --timeout 1s" in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
        bound = 1.0
    else:
        assert done.returncode == 1, done.stderr  # no request succeeded: a peer's failure
        report = json.loads(done.stdout)
        assert report["preflight_requests"] == 1
        assert report["requests"] == 0 and report["errors"]["timeout"] > 0
        bound = 1.0 + 2.0 + 1.0  # the preflight's deadline, the run, the last requests' own timeout
    assert took < startup_s + bound + 1.0, (took, startup_s, done.stderr)
