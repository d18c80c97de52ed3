"""`make demo`: serve a temporary docroot with the built-in target and load it with `crest bench`.

The target runs inside this process, so it stops with it: on success, on an
error and on Ctrl-C alike; no process is left behind.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from crest.servers import BuiltinServer, ServeSpec

BENCH_ARGS = ["-c", "32", "-t", "2", "-d", "3s"]
# After Ctrl-C the bench cancels its run and prints the partial result; this bounds the wait.
BENCH_STOP_TIMEOUT_S = 15.0


def make_docroot(root: Path) -> None:
    """Write 1k.html (1024 bytes) and 10k.html (10240 bytes)."""
    for name, size in (("1k.html", 1024), ("10k.html", 10240)):
        head = f"<!-- crest demo: {name}, {size} bytes -->\n".encode()
        (root / name).write_bytes(head + b"x" * (size - len(head) - 1) + b"\n")


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="crest-demo-") as tmp:
        docroot = Path(tmp)
        make_docroot(docroot)
        with BuiltinServer(ServeSpec(docroot=docroot)) as server:
            url = server.url + "1k.html"
            print(f"crest demo: built-in target serving {docroot} at {server.url}", flush=True)
            command = [sys.executable, "-m", "crest", "bench", *BENCH_ARGS, url]
            print("$ crest bench " + " ".join([*BENCH_ARGS, url]), flush=True)
            # The bench is a separate process so that its CPU use is its own, as in a real test.
            bench = subprocess.Popen(command)
            try:
                return bench.wait()
            except KeyboardInterrupt:
                return wait_after_interrupt(bench)


def wait_after_interrupt(bench: subprocess.Popen[bytes]) -> int:
    """The bench got the same Ctrl-C: let it print its partial result, but not forever."""
    try:
        return bench.wait(timeout=BENCH_STOP_TIMEOUT_S)
    except (subprocess.TimeoutExpired, KeyboardInterrupt):
        bench.kill()
        bench.wait()
        return 130


if __name__ == "__main__":
    sys.exit(main())
