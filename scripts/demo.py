"""`make demo`: the main job on the built-in target. Generates the suite's fileset
(cached under .cache/), serves it with crest's built-in target, and runs the
veritest-static ladder with the quick profile through `crest run`, which
prints each mix, the summary and where the results are stored.

The target runs inside this process, so it stops with it: on success, on an
error and on Ctrl-C alike; no process is left behind.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from crest.servers import BuiltinServer, ServeSpec

SUITE = "veritest-static"
FILESET = "webbench"
CACHE = Path(__file__).resolve().parent.parent / ".cache" / "filesets" / FILESET
# After Ctrl-C the run stores what finished and exits; this bounds the wait.
BENCH_STOP_TIMEOUT_S = 15.0


def crest(*args: str) -> subprocess.Popen[bytes]:
    print("$ crest " + " ".join(args), flush=True)
    return subprocess.Popen([sys.executable, "-m", "crest", *args])


def main() -> int:
    generated = crest("fileset", "generate", FILESET, str(CACHE)).wait()
    if generated != 0:
        return generated
    with BuiltinServer(ServeSpec(docroot=CACHE)) as server:
        print(f"crest demo: built-in target serving {CACHE} at {server.url}", flush=True)
        # A separate process, so its CPU use is its own, as in a real test.
        run = crest("run", SUITE, "--target", server.url, "--profile", "quick", "--repeat", "1", "--fileset", str(CACHE))
        try:
            return run.wait()
        except KeyboardInterrupt:
            return wait_after_interrupt(run)


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
