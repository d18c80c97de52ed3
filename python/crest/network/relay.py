"""crest's delay line as a process: carries IP packets between pairs of TUN devices (one in a subnet's
namespace, one in the router's) through a DelayLine each way, where the kernel has no netem. The
TUN devices exist already (topology.py made them); this only attaches to them, relays, and writes its
counters. It dies with its parent (PR_SET_PDEATHSIG), so a killed crest leaves no relay behind.

    python -m crest.network.relay --pair NS_A:DEV_A:NS_B:DEV_B [--pair ...] --delay-ms D
        [--jitter-ms J] [--loss-pct P] [--seed S] --ready-file PATH --stats-file PATH

The delay given is one way (a round trip is twice it). Packets are written when due and never block
the loop: a device that cannot take one now counts it dropped, as a full NIC queue would.
"""

from __future__ import annotations

import argparse
import ctypes
import errno
import fcntl
import json
import os
import select
import signal
import struct
import sys
import time
from dataclasses import dataclass
from functools import partial

from crest.network import netns
from crest.network.delayline import DelayLine

TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
PR_SET_PDEATHSIG = 1
STATS_EVERY_S = 0.5
MAX_PACKET_BYTES = 65_536
READS_PER_WAKE = 256  # bounded so one busy direction cannot starve the others' due packets


@dataclass
class Direction:
    """Packets read from `src` go to `dst` through `line`."""

    src: int
    dst: int
    line: DelayLine
    write_drops: int = 0


def attach(ns: str, dev: str) -> int:
    """An fd on the TUN device `dev` of namespace `ns` (the process moves into `ns` to open it)."""
    netns.enter(ns)
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_CLOEXEC)
    ifreq = struct.pack("16sH22x", dev.encode(), IFF_TUN | IFF_NO_PI)
    fcntl.ioctl(fd, TUNSETIFF, ifreq)
    os.set_blocking(fd, False)
    return fd


def _die_with_parent() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() == 1:  # the parent died before the line above: nobody will stop us
        sys.exit(0)


def _write_stats(path: str, pairs: list[tuple[str, str, Direction, Direction]]) -> None:
    doc = {
        "pairs": [
            {"a": a, "b": b,
             "a_to_b": {**ab.line.counters(), "dropped": ab.line.dropped + ab.write_drops},
             "b_to_a": {**ba.line.counters(), "dropped": ba.line.dropped + ba.write_drops}}
            for a, b, ab, ba in pairs
        ],
        "written_at_unix_s": time.time(),
    }  # fmt: skip
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    os.replace(tmp, path)


def relay(directions: list[Direction], on_tick: object = None, stop: list[bool] | None = None) -> None:
    """Carry packets until `stop[0]` is set; calls `on_tick()` about every STATS_EVERY_S."""
    stop = stop if stop is not None else [False]
    poller = select.poll()
    by_fd: dict[int, list[Direction]] = {}
    for d in directions:
        by_fd.setdefault(d.src, []).append(d)
        poller.register(d.src, select.POLLIN)
    next_tick = time.monotonic() + STATS_EVERY_S
    while not stop[0]:
        now = time.monotonic()
        due = [t for t in (d.line.next_due() for d in directions) if t is not None]
        wait_ms = max(0, int((min(due) - now) * 1000) + 1) if due else int(STATS_EVERY_S * 1000)
        for fd, _ in poller.poll(min(wait_ms, int(STATS_EVERY_S * 1000))):
            for d in by_fd[fd]:
                for _ in range(READS_PER_WAKE):
                    try:
                        packet = os.read(fd, MAX_PACKET_BYTES)
                    except BlockingIOError:
                        break
                    d.line.offer(packet, time.monotonic())
        now = time.monotonic()
        for d in directions:
            for packet in d.line.pop_due(now):
                try:
                    os.write(d.dst, packet)
                except OSError as exc:
                    if exc.errno not in (errno.EAGAIN, errno.ENOBUFS, errno.EIO):
                        raise
                    d.write_drops += 1
        if now >= next_tick and callable(on_tick):
            on_tick()
            next_tick = now + STATS_EVERY_S


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m crest.network.relay", description=__doc__.splitlines()[0])
    parser.add_argument("--pair", action="append", required=True, metavar="NS_A:DEV_A:NS_B:DEV_B")
    parser.add_argument("--delay-ms", type=float, required=True, help="one-way delay")
    parser.add_argument("--jitter-ms", type=float, default=0.0, help="± this, uniform, each way")
    parser.add_argument("--loss-pct", type=float, default=0.0, help="the share of packets lost each way")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ready-file", required=True)
    parser.add_argument("--stats-file", required=True)
    args = parser.parse_args(argv)
    ends = [p.split(":") for p in args.pair]
    if any(len(e) != 4 or not all(e) for e in ends):
        parser.error("--pair takes NS_A:DEV_A:NS_B:DEV_B")
    if args.delay_ms < 0 or args.jitter_ms < 0 or not 0 <= args.loss_pct < 100:
        parser.error("--delay-ms and --jitter-ms must be ≥ 0 and --loss-pct in [0, 100)")
    _die_with_parent()
    stop = [False]

    def on_signal(_sig: int, _frame: object) -> None:
        stop[0] = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    pairs = []
    try:
        for k, (ns_a, dev_a, ns_b, dev_b) in enumerate(ends):
            fd_a, fd_b = attach(ns_a, dev_a), attach(ns_b, dev_b)
            line = partial(DelayLine, args.delay_ms / 1e3, args.jitter_ms / 1e3, args.loss_pct / 100)
            pairs.append((f"{ns_a}:{dev_a}", f"{ns_b}:{dev_b}", Direction(fd_a, fd_b, line(seed=args.seed * 2 + 2 * k)),
                          Direction(fd_b, fd_a, line(seed=args.seed * 2 + 2 * k + 1))))  # fmt: skip
    except OSError as exc:
        print(f"crest delay line: cannot attach to a TUN device: {exc}", file=sys.stderr)
        return 1
    directions = [d for _, _, ab, ba in pairs for d in (ab, ba)]
    _write_stats(args.stats_file, pairs)
    with open(args.ready_file, "w", encoding="ascii") as f:
        f.write("ready")
    relay(directions, lambda: _write_stats(args.stats_file, pairs), stop)
    _write_stats(args.stats_file, pairs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
