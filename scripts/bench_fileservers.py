"""`make bench`, file servers: crest's file runs side by side with the reference tools in one invocation,
each pinned to the same core (taskset), alternately: crest fileio vs Debian's dbench on the same directory,
crest smb vs smbtorture's BENCH.NBENCH against the same private smbd (pinned to the other core). Prints the
ratios and rewrites the "File servers" section of docs/benchmarks.md with the figures and command lines.
Owns this method only; it starts and stops its own smbd and leaves nothing behind.

Against dbench crest measures what dbench measures (docs/fileservers.md#crest-and-dbench): its window
starts after dbench's warm-up (a fifth of the time, whole seconds) and lasts the time, and the like-with-like
row looks every path up as dbench's fileio does (`resolve_names = "every-path"`); a second row gives
crest's default. `--fileio-only` runs the dbench rows alone and prints them, leaving the docs as they are.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOADFILE = "/usr/share/dbench/client.txt"
CLIENTS = int(os.environ.get("BENCH_FILE_CLIENTS", "4"))
SECONDS = int(os.environ.get("BENCH_SECONDS", "8"))
SERVER_CPU, CLIENT_CPU = "0", "1"
# dbench 4's default warm-up: timelimit / 5 in whole seconds, not counted, before its `-t` seconds.
WARMUP_S = SECONDS // 5
CREST_RUN = """
import json, sys
from crest import _engine
cfg = json.loads(sys.argv[1])
run = _engine.start_run(json.dumps(cfg))
while (r := run.wait(1.0)) is None:
    pass
print(r)
"""


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def crest(url: str, password: str | None, resolve_names: str | None = None) -> tuple[float, int, float, str]:
    """MB/s (10^6), operations, client CPU s, and the command, for one crest file run; with `resolve_names`
    (a fileio run set beside dbench), counted over dbench's window."""
    config = {"url": url, "connections": CLIENTS, "threads": 1, "duration_s": SECONDS,
              "loadfile": {"path": LOADFILE, "cleanup": True, "password": password}}  # fmt: skip
    if resolve_names is not None:
        config["duration_s"] = WARMUP_S + SECONDS
        config["window_s"] = [WARMUP_S, WARMUP_S + SECONDS]
        config["loadfile"]["resolve_names"] = resolve_names
    cmd = ["taskset", "-c", CLIENT_CPU, sys.executable, "-c", CREST_RUN, json.dumps(config)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=SECONDS + 120).stdout
    r = json.loads(out)
    shown = json.dumps({**config, "loadfile": {**config["loadfile"], "password": "…" if password else None}})
    return r["throughput_Bps"] / 1e6, r["requests"], r["client_cpu_s"], f"crest engine RunConfig {shown}"


def dbench(directory: Path) -> tuple[float, int, float, str]:
    cmd = [
        "taskset",
        "-c",
        CLIENT_CPU,
        "dbench",
        "-c",
        LOADFILE,
        "-D",
        str(directory),
        "-t",
        str(SECONDS),
        str(CLIENTS),
    ]
    before = children_cpu()
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=SECONDS + 120).stdout
    cpu = children_cpu() - before
    mbs = float(re.findall(r"Throughput ([\d.]+) MB/sec", out)[-1])
    ops = sum(int(n) for n in re.findall(r"^ \w+\s+(\d+)\s+[\d.]+\s+[\d.]+$", out, re.M))
    return mbs, ops, cpu, " ".join(cmd)


def nbench(port: int, auth: Path) -> tuple[float, int, float, str]:
    cmd = ["taskset", "-c", CLIENT_CPU, "smbtorture", "//127.0.0.1/crest", "BENCH.NBENCH", "-p", str(port),
           "-A", str(auth), f"--num-progs={CLIENTS}", f"--loadfile={LOADFILE}", f"--option=torture:timelimit={SECONDS}"]  # fmt: skip
    before = children_cpu()
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=SECONDS + 120).stdout
    cpu = children_cpu() - before
    mbs = float(re.findall(r"Throughput ([\d.]+) MB/sec", out)[-1])
    lines = [int(n) for n in re.findall(rf"^\s+{CLIENTS}\s+(\d+)\s+[\d.]+ MB/sec", out, re.M)]
    return mbs, CLIENTS * (lines[-1] if lines else 0), cpu, " ".join(cmd)


def start_smbd(work: Path) -> tuple[subprocess.Popen[bytes], int, Path]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for d in ("private", "lock", "state", "cache", "pid", "ncalrpc", "share"):
        (work / d).mkdir(parents=True)
    (work / "private").chmod(0o700)
    conf = work / "smb.conf"
    conf.write_text(
        "[global]\n server role = standalone server\n interfaces = 127.0.0.1\n bind interfaces only = yes\n"
        f" smb ports = {port}\n disable netbios = yes\n load printers = no\n printing = bsd\n printcap name = /dev/null\n"
        " disable spoolss = yes\n rpc start on demand helpers = no\n"
        # smbtorture's NBENCH speaks SMB1 only: the server takes NT1 too (crest speaks SMB2).
        " server min protocol = NT1\n"
        + "".join(f" {k} directory = {work / d}\n" for k, d in (("lock", "lock"), ("state", "state"), ("cache", "cache"), ("pid", "pid")))
        + f" private dir = {work / 'private'}\n ncalrpc dir = {work / 'ncalrpc'}\n log file = {work / 'log'}\n"
        f" passdb backend = tdbsam:{work / 'private' / 'passdb.tdb'}\n"
        f"[crest]\n path = {work / 'share'}\n read only = no\n"
    )  # fmt: skip
    user = os.environ.get("USER") or "root"
    password = os.urandom(9).hex()
    subprocess.run(["pdbedit", "-s", str(conf), "-a", "-u", user, "-t"], input=f"{password}\n{password}\n",
                   text=True, capture_output=True, check=True)  # fmt: skip
    auth = work / "private" / "auth"
    auth.write_text(f"username = {user}\npassword = {password}\ndomain = WORKGROUP\n")
    auth.chmod(0o600)
    proc = subprocess.Popen(["taskset", "-c", SERVER_CPU, "smbd", "--foreground", "--no-process-group", "-s", str(conf)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.1)
    (work / "password").write_text(password)
    return proc, port, auth


TABLE_HEAD = (
    "| comparison | crest MB/s | reference MB/s | ratio | crest CPU µs/op | reference CPU µs/op | ratio |\n"
    "|---|---|---|---|---|---|---|"
)


def row(name: str, a: tuple[float, int, float, str], b: tuple[float, int, float, str]) -> str:
    us = lambda s: s[2] / s[1] * 1e6 if s[1] else float("nan")  # noqa: E731
    return f"| {name} | {a[0]:.1f} | {b[0]:.1f} | {a[0] / b[0]:.2f} | {us(a):.1f} | {us(b):.1f} | {us(a) / us(b):.2f} |"


def fileio_rows(work: Path) -> tuple[list[str], list[str]]:
    """crest fileio (dbench's lookups, then crest's default) and dbench, alternately, twice: rows, commands."""
    (work / "fileio").mkdir()
    url = f"file://{work / 'fileio'}"
    results: dict[str, list[tuple[float, int, float, str]]] = {"every-path": [], "queries": [], "ref": []}
    for _ in range(2):
        results["every-path"].append(crest(url, None, "every-path"))
        results["queries"].append(crest(url, None, "queries"))
        results["ref"].append(dbench(work / "fileio"))
    ref = max(results["ref"])
    like, default = max(results["every-path"]), max(results["queries"])
    rows = [row(f"fileio, every path looked up as dbench's fileio, vs dbench, {CLIENTS} clients", like, ref),
            row(f"fileio, crest's default (queries looked up), vs dbench, {CLIENTS} clients", default, ref)]  # fmt: skip
    return rows, [like[3], default[3], ref[3]]


def main() -> None:
    if sys.argv[1:] == ["--fileio-only"]:
        if shutil.which("dbench") is None or not Path(LOADFILE).exists():
            print("bench (fileio vs dbench): skipped: apt-get install dbench")
            return
        with tempfile.TemporaryDirectory(prefix="crest-bench-files-") as tmp:
            rows, commands = fileio_rows(Path(tmp))
        print("\n".join([TABLE_HEAD, *rows, "", *commands]))
        return
    missing = [t for t in ("dbench", "smbd", "smbtorture", "pdbedit") if shutil.which(t) is None]
    if missing or not Path(LOADFILE).exists():
        print(f"bench (file servers): skipped, missing {', '.join(missing) or LOADFILE}:"
              " apt-get install dbench samba samba-testsuite")  # fmt: skip
        return
    rows, commands = [], []
    with tempfile.TemporaryDirectory(prefix="crest-bench-files-") as tmp:
        work = Path(tmp)
        rows, commands = fileio_rows(work)
        smbd, port, auth = start_smbd(work / "smb")
        try:
            password = (work / "smb" / "password").read_text()
            url = f"smb://{os.environ.get('USER') or 'root'}@127.0.0.1:{port}/crest"
            results = {"crest": [], "ref": []}
            for _ in range(2):
                results["crest"].append(crest(url, password))
                results["ref"].append(nbench(port, auth))
            a, b = max(results["crest"]), max(results["ref"])
            rows.append(row(f"smb (SMB2) vs smbtorture NBENCH (SMB1), {CLIENTS} clients", a, b))
            commands += [a[3], b[3]]
        finally:
            os.killpg(smbd.pid, signal.SIGTERM)
            smbd.wait(timeout=10)
    table = "\n".join([TABLE_HEAD, *rows])
    print(table)
    section = (
        "## File servers\n\n"
        f"Measured by `make bench` (scripts/bench_fileservers.py) on {os.cpu_count()} CPUs; load generators pinned to"
        f" core {CLIENT_CPU}, smbd to core {SERVER_CPU}; {SECONDS} s runs of {LOADFILE}, the better of two alternating"
        " rounds. MB/s = 10^6 bytes/s of ReadX+WriteX data (the sizes asked for); against dbench over dbench's window"
        f" ({WARMUP_S} s of warm-up not counted, then {SECONDS} s), against NBENCH over the whole run; CPU = the load"
        " generator's user+system time over the whole run per operation counted. Why crest's fileio and dbench"
        " differ, with counts per pass: [fileservers.md](fileservers.md#crest-and-dbench).\n\n"
        + table
        + "\n\nCommands:\n\n"
        + "".join(f"- `{c}`\n" for c in commands)
    )
    doc = ROOT / "docs" / "benchmarks.md"
    text = doc.read_text() if doc.exists() else ""
    text = re.sub(r"\n## File servers\n.*?(?=\n## |\Z)", "", text, flags=re.S).rstrip() + "\n\n" + section
    doc.write_text(text)


if __name__ == "__main__":
    main()
