"""`make soak`: whether crest stays flat over a long run. Not part of `make test`.

Three parts, each against the built-in target (pinned to one core, crest to the other):
1. `crest bench` for SOAK_S seconds (default 1800), its RSS and open descriptors sampled every
   SAMPLE_S; goal: RSS grows less than 10 MB after the first minute, descriptors do not grow.
2. `crest run` of a suite of many short mixes (SOAK_MIXES, default 120 of 2 s), sampled the same way;
   goal: the same, and every mix stored.
3. Two `crest run`s writing one results file at once; goal: both complete with every mix stored.

Prints each part's figures and a verdict, and exits 1 when a goal is missed. Owns the method only; it
starts the target itself and leaves no process behind.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

CREST = [sys.executable, "-m", "crest"]
TARGET_CPU, CLIENT_CPU = "0", "1"
SOAK_S = int(os.environ.get("SOAK_S", "1800"))
SOAK_MIXES = int(os.environ.get("SOAK_MIXES", "120"))
SAMPLE_S = 5.0
WARM_S = 60.0  # growth is measured from the first sample after this
RSS_GROWTH_LIMIT_BYTES = 10 * 2**20


@dataclass
class Samples:
    """RSS and open descriptors of one process, sampled over its life."""

    at_s: list[float] = field(default_factory=list)
    rss_bytes: list[int] = field(default_factory=list)
    fds: list[int] = field(default_factory=list)

    def take(self, pid: int, at_s: float) -> None:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            # Sockets come and go with each mix's connections; a leak shows in the rest (files, pipes,
            # epoll and event descriptors), so those are what must stay flat.
            fds = sum(1 for fd in os.listdir(f"/proc/{pid}/fd") if not _is_socket(pid, fd))
        except OSError:
            return  # it ended between two samples
        rss_kb = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))
        self.at_s.append(at_s)
        self.rss_bytes.append(rss_kb * 1024)
        self.fds.append(fds)

    def verdict(self, what: str) -> bool:
        """Print the figures after the warm-up and whether they stayed flat; True when they did."""
        warm = [i for i, t in enumerate(self.at_s) if t >= min(WARM_S, self.at_s[-1] / 2)] if self.at_s else []
        if len(warm) < 2:
            print(f"{what}: too few samples ({len(self.at_s)}) to judge")
            return False
        first, rss = warm[0], [self.rss_bytes[i] for i in warm]
        growth = max(rss) - self.rss_bytes[first]
        fd_growth = max(self.fds[i] for i in warm) - self.fds[first]
        ok = growth < RSS_GROWTH_LIMIT_BYTES and fd_growth <= 0
        print(
            f"{what}: {len(self.at_s)} samples over {self.at_s[-1]:.0f} s; RSS {self.rss_bytes[first] / 2**20:.1f} MiB"
            f" at {self.at_s[first]:.0f} s, at most {max(rss) / 2**20:.1f} MiB after (growth"
            f" {growth / 2**20:+.1f} MiB, limit 10); descriptors other than sockets {self.fds[first]} -> at most"
            f" {max(self.fds[i] for i in warm)} ({fd_growth:+d}): {'flat' if ok else 'GREW'}"
        )
        return ok


def _is_socket(pid: int, fd: str) -> bool:
    try:
        return os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
    except OSError:
        return True  # closed since the listing: not one that stayed open


def sampled(cmd: list[str], env: dict[str, str] | None = None) -> tuple[int, Samples, str]:
    """Run `cmd` on the client core, sampling it every SAMPLE_S; (exit code, samples, stdout)."""
    samples = Samples()
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(["taskset", "-c", CLIENT_CPU, *cmd], stdout=out, stderr=subprocess.STDOUT, env=env)
        start = time.monotonic()
        while proc.poll() is None:
            samples.take(proc.pid, time.monotonic() - start)
            try:
                proc.wait(SAMPLE_S)
            except subprocess.TimeoutExpired:
                pass
        out.seek(0)
        return proc.returncode, samples, out.read()


def suite(path: Path, name: str, clients: list[int]) -> Path:
    path.write_text(f"""
name = "{name}"
description = "many short mixes for make soak"
source = "crest make soak"
[workload]
fileset = "webcat-large-filemix"
http_version = "1.1"
keepalive = true
[[workload.classes]]
name = "static"
kind = "static"
weight = 1
[ladder]
clients = {clients}
threads_per_client = 1
[timing]
length_s = 2
ramp_up_s = 0
ramp_down_s = 0
""")
    return path


def stored(db: Path) -> dict[str, tuple[str, int]]:
    out = subprocess.run([*CREST, "runs", "--db", str(db), "--json"], capture_output=True, text=True, check=True)
    return {r["id"]: (r["status"], r["mixes"]) for r in json.loads(out.stdout)}


def main() -> int:
    if shutil.which("taskset") is None:
        print("soak: taskset is missing: apt-get install -y util-linux")
        return 1
    work = Path(tempfile.mkdtemp(prefix="crest-soak-"))
    work.chmod(0o755)
    ok = True
    target = None
    try:
        fileset = work / "fs"
        subprocess.run([*CREST, "fileset", "generate", "webcat-large-filemix", str(fileset)], check=True,
                       stdout=subprocess.DEVNULL)  # fmt: skip
        target = subprocess.Popen(
            ["taskset", "-c", TARGET_CPU, *CREST, "serve", "--docroot", str(fileset), "--port", "0", "--threads", "1"],
            stdout=subprocess.PIPE, text=True, start_new_session=True,
        )  # fmt: skip
        assert target.stdout is not None
        url = target.stdout.readline().strip().rstrip("/")
        page = next(p for p in sorted(fileset.rglob("*.html")))
        print(f"soak: target {url}, {SOAK_S} s of bench, {SOAK_MIXES} mixes of 2 s")

        code, samples, out = sampled([*CREST, "bench", "-c", "64", "-t", "1", "-d", f"{SOAK_S}s", "-q", "--json",
                                      f"{url}/{page.relative_to(fileset)}"])  # fmt: skip
        report = json.loads(out) if code == 0 else {}
        print(f"bench: exit {code}, {report.get('requests', 0):,} requests, errors {report.get('errors')}")
        ok &= code == 0 and samples.verdict("bench")

        # One process, SOAK_MIXES mixes of one load (a one-mix suite repeated): what grows is crest's, not the
        # load's (a ladder's later mixes hold more connections and their buffers).
        db = work / "soak.db"
        code, samples, _ = sampled([*CREST, "run", str(suite(work / "many.toml", "soak-many", [8])), "--repeat",
                                    str(SOAK_MIXES), "--target", url, "--db", str(db), "-q"])  # fmt: skip
        runs = stored(db)
        every = sorted(runs.values()) == [("complete", 1)] * SOAK_MIXES
        print(f"run: exit {code}, {len(runs)} runs of 1 mix: {'every mix stored' if every else 'MIXES MISSING'}")
        ok &= code == 0 and every and samples.verdict("run")

        shared = work / "shared.db"
        two = [
            subprocess.Popen([*CREST, "run", str(suite(work / f"two{i}.toml", f"soak-two-{i}", list(range(1, 21)))),
                              "--target", url,
                              "--db", str(shared), "-q"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            for i in (1, 2)
        ]  # fmt: skip
        codes = [p.wait() for p in two]
        runs = stored(shared)
        both = codes == [0, 0] and sorted(runs.values()) == [("complete", 20), ("complete", 20)]
        print(f"two writers: exits {codes}, runs {sorted(runs.values())}: {'both whole' if both else 'LOST'}")
        ok &= both
    finally:
        if target is not None:
            os.killpg(target.pid, signal.SIGTERM)
            target.wait(10)
        shutil.rmtree(work, ignore_errors=True)
    print("soak: flat" if ok else "soak: a goal was missed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
