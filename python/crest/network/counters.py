"""Reading a client network's links during a mix: each link end's transmitted bytes and packets (the
device's counters), its queue's drops, overlimits and backlog (tc), each client line's bytes (its HTB
class), and TCP's counters inside the target's and the clients' namespaces. A LinkSampler samples in
a thread; `figures(start, end)` turns the samples inside the window into the mix's network figures
(the dict documented in docs/networks.md), the delay line's among them (its stats file, read with each
sample). Owns measuring; judging (link_bound, delay_line_bound) is placement's.
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from crest.network import netns
from crest.network.topology import LinkEnd, Network

SAMPLE_INTERVAL_S = 0.5
_TIMEOUT_S = 10.0
_CLASS = re.compile(r"class htb 1:([0-9a-f]+) .*?\n\s*Sent (\d+) bytes (\d+) pkt", re.S)
_LINE_MAX = ("cpu_cores", "late_mean_us", "late_p99_us", "late_max_us", "max_rss_bytes")  # per node's line, not summed
_TCP_FIELDS = {"RetransSegs": "retrans_segs", "OutSegs": "out_segs", "InSegs": "in_segs", "OutRsts": "resets_sent"}


@dataclass
class Sample:
    """One reading of every link end and TCP side, at `at` (unix seconds)."""

    at: float
    ends: dict[tuple[str | None, str], dict[str, Any]] = field(default_factory=dict)
    tcp: dict[str, dict[str, int]] = field(default_factory=dict)
    delay_line: dict[str, Any] | None = None  # the delay line's stats file as it was then


def _json(argv: list[str]) -> Any:
    out = subprocess.run(argv, capture_output=True, text=True, timeout=_TIMEOUT_S, check=False)
    try:
        return json.loads(out.stdout) if out.returncode == 0 and out.stdout.strip() else []
    except ValueError:
        return []


def _ns_args(ns: str | None) -> list[str]:
    return ["-n", ns] if ns else []


def _read_tcp() -> dict[str, int]:
    """TCP's counters of the calling thread's namespace (/proc/thread-self/net is per thread)."""
    found: dict[str, int] = {}
    for name in ("snmp", "netstat"):
        with open(f"/proc/thread-self/net/{name}", encoding="ascii") as f:
            lines = f.read().splitlines()
        for head, values in zip(lines[::2], lines[1::2]):
            keys, nums = head.split()[1:], values.split()[1:]
            prefix = head.split(":")[0]
            for k, v in zip(keys, nums):
                if prefix == "Tcp" and k in _TCP_FIELDS:
                    found[_TCP_FIELDS[k]] = int(v)
                elif prefix == "TcpExt" and k == "ListenOverflows":
                    found["listen_overflows"] = int(v)
    return found


def sample(network: Network) -> Sample:
    """Read every link end and both TCP sides now."""
    s = Sample(time.time())
    by_ns: dict[str | None, list[LinkEnd]] = {}
    for end in network.ends:
        by_ns.setdefault(end.ns, []).append(end)
    for ns, ends in by_ns.items():
        links = {d.get("ifname"): d for d in _json(["ip", *_ns_args(ns), "-s", "-j", "link", "show"])}
        qdiscs = {q.get("dev"): q for q in _json(["tc", *_ns_args(ns), "-s", "-j", "qdisc", "show"]) if q.get("root")}
        for end in ends:
            tx = links.get(end.dev, {}).get("stats64", {}).get("tx", {})
            q = qdiscs.get(end.dev, {})
            reading: dict[str, Any] = {
                "bytes": int(tx.get("bytes", 0)), "packets": int(tx.get("packets", 0)),
                "drops": int(q.get("drops", 0)), "overlimits": int(q.get("overlimits", 0)),
                "backlog": int(q.get("backlog", 0)),
            }  # fmt: skip
            if end.shape is not None and end.shape.client_bps is not None and end.shape.clients:
                text = subprocess.run(["tc", *_ns_args(ns), "-s", "class", "show", "dev", end.dev],
                                      capture_output=True, text=True, timeout=_TIMEOUT_S, check=False).stdout  # fmt: skip
                reading["classes"] = {int(m, 16): int(b) for m, b, _ in _CLASS.findall(text)}
            s.ends[(end.ns, end.dev)] = reading
    s.tcp["target"] = netns.call_in(network.target_ns, _read_tcp)
    clients: dict[str, int] = {}
    for k in range(1, network.spec.subnets + 1):
        for key, value in netns.call_in(network.subnet_ns(k), _read_tcp).items():
            clients[key] = clients.get(key, 0) + value
    s.tcp["clients"] = clients
    s.delay_line = network.delay_line_stats()
    return s


class LinkSampler:
    """Samples a network every SAMPLE_INTERVAL_S in a thread between start() and stop()."""

    def __init__(self, network: Network) -> None:
        self.network = network
        self.samples: list[Sample] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self.samples.append(sample(self.network))
        self._thread = threading.Thread(target=self._loop, name="crest-link-sampler", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(SAMPLE_INTERVAL_S):
            self.samples.append(sample(self.network))

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.samples.append(sample(self.network))

    def run_figures(self, report: dict[str, Any]) -> dict[str, Any]:
        """The figures over a whole bench run: from its subnets' common start (else the first sample) for
        its duration."""
        start = float(report.get("subnets", {}).get("start_at_unix_s", self.samples[0].at))
        return self.figures(start, start + float(report.get("duration_s", 0.0)))

    def latest(self) -> dict[str, Any]:
        """The links over the last sampling interval: each link's direction, rate and utilisation."""
        samples = self.samples[-2:]
        if len(samples) < 2:
            return {}
        links = self.figures(samples[0].at, samples[1].at).get("links", [])
        keep = ("link", "scope", "direction", "utilisation", "rate_bps", "bits_per_s", "subnet")
        return {"links": [{k: link[k] for k in keep if k in link} for link in links]}

    def figures(self, start: float, end: float) -> dict[str, Any]:
        """The mix's network figures over the samples inside [start, end] (the first and last sample
        when fewer than two fall inside: a window shorter than the sampling)."""
        inside = [s for s in self.samples if start - 0.05 <= s.at <= end + 0.05]
        if len(inside) < 2:
            inside = [self.samples[0], self.samples[-1]]
        first, last = inside[0], inside[-1]
        window = max(1e-9, last.at - first.at)
        links = []
        for end_ in self.network.ends:
            a, b = first.ends.get((end_.ns, end_.dev), {}), last.ends.get((end_.ns, end_.dev), {})
            links.append(_link(end_, a, b, window, [s.ends.get((end_.ns, end_.dev), {}) for s in inside]))
            client = _clients(end_, a, b, window)
            if client is not None:
                links.append(client)
        tcp = {side: {k: last.tcp[side].get(k, 0) - first.tcp[side].get(k, 0) for k in last.tcp[side]}
               for side in last.tcp}  # fmt: skip
        out: dict[str, Any] = {"window_s": round(window, 3), "links": links, "tcp": tcp}
        stats = [s.delay_line for s in inside if s.delay_line is not None]
        latest = self.network.delay_line_stats()
        if stats or latest is not None:
            out["delay_line"] = delay_line_figures(stats[0] if len(stats) > 1 else None, stats[-1] if stats else latest)
        return out


def _line_sum(stats: dict[str, Any] | None, key: str) -> int:
    if stats is None:
        return 0
    return sum(int(p[d].get(key, 0)) for p in stats.get("pairs", []) for d in ("a_to_b", "b_to_a"))


def late_percentile_us(buckets: list[int], share: float) -> int | None:
    """The upper bound, in µs, of the lateness bucket holding the `share` quantile (crates/delayline's
    buckets: 0 under 1 µs, i under 2^i µs); None when no packet was written."""
    total = sum(buckets)
    if not total:
        return None
    seen = 0
    for i, n in enumerate(buckets):
        seen += n
        if seen >= share * total:
            return 1 << i
    return 1 << (len(buckets) - 1)


def delay_line_figures(first: dict[str, Any] | None, last: dict[str, Any] | None) -> dict[str, Any]:
    """The delay line's figures between two readings of its stats file (`first` None: since it started):
    packets carried and dropped (loss, and devices that refused a write) and refused by its full queue;
    its CPU in cores; how late packets left past their due time (the mean; p99 and the latest, each the upper
    bound of its power-of-two bucket); its peak RSS."""
    if last is None:
        return {}
    delta = {key: _line_sum(last, key) - _line_sum(first, key) for key in ("packets", "dropped", "overflow")}
    wall_s = float(last.get("written_at_unix_s", 0.0)) - float((first or {}).get("written_at_unix_s", 0.0))
    cpu_s = float(last.get("cpu_s", 0.0)) - float((first or {}).get("cpu_s", 0.0))
    late_now, late_then = last.get("late_us_buckets", []), (first or {}).get("late_us_buckets", [])
    late = [n - (late_then[i] if i < len(late_then) else 0) for i, n in enumerate(late_now)]
    out: dict[str, Any] = {**delta}
    if first is not None and wall_s > 0:
        out["cpu_cores"] = round(cpu_s / wall_s, 3)
    if late and sum(late):
        late_sum_ns = int(last.get("late_sum_ns", 0)) - int((first or {}).get("late_sum_ns", 0))
        out["late_mean_us"] = round(late_sum_ns / sum(late) / 1e3, 1)
        out["late_p99_us"] = late_percentile_us(late, 0.99)
        out["late_max_us"] = 1 << max(i for i, n in enumerate(late) if n)
    if "max_rss_kib" in last:
        out["max_rss_bytes"] = int(last["max_rss_kib"]) * 1024
    return out


def _delta(a: dict[str, Any], b: dict[str, Any], key: str) -> int:
    return max(0, int(b.get(key, 0)) - int(a.get(key, 0)))


def _link(
    end: LinkEnd, a: dict[str, Any], b: dict[str, Any], window: float, seen: list[dict[str, Any]]
) -> dict[str, Any]:
    nbytes = _delta(a, b, "bytes")
    bps = nbytes * 8 / window
    rate = end.shape.rate_bps if end.shape is not None else None
    return {
        "link": end.link, "scope": end.scope, "subnet": end.subnet, "direction": end.direction,
        "rate_bps": rate, "bytes": nbytes, "packets": _delta(a, b, "packets"),
        "drops": _delta(a, b, "drops"), "overlimits": _delta(a, b, "overlimits"),
        "backlog_max_bytes": max((int(s.get("backlog", 0)) for s in seen), default=0),
        "bits_per_s": round(bps, 1), "utilisation": round(bps / rate, 4) if rate else None,
    }  # fmt: skip


def _clients(end: LinkEnd, a: dict[str, Any], b: dict[str, Any], window: float) -> dict[str, Any] | None:
    shape = end.shape
    if shape is None or shape.client_bps is None or not shape.clients or "classes" not in b:
        return None
    before, after = a.get("classes", {}), b["classes"]
    sent = [max(0, after.get(shape.client_minor(i), 0) - before.get(shape.client_minor(i), 0))
            for i in range(len(shape.clients))]  # fmt: skip
    # Lines no client used in this mix (a ladder's lower rungs) would only dilute the mean.
    utils = [n * 8 / window / shape.client_bps for n in sent if n > 0] or [0.0]
    total = sum(sent)
    return {
        "link": f"clients of {end.link}", "scope": "client", "subnet": end.subnet, "direction": end.direction,
        "rate_bps": shape.client_bps, "bytes": total, "packets": None, "drops": None, "overlimits": None,
        "backlog_max_bytes": None, "bits_per_s": round(total * 8 / window, 1),
        "utilisation": round(max(utils), 4), "utilisation_mean": round(sum(utils) / len(utils), 4),
        "clients": len(utils),
    }  # fmt: skip


def take_nodes(nodes: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The network figures of a cluster mix's nodes (each node's own network: nested placement), taken out
    of their entries (crest.cluster.driver's) as one mix's figures; None when no node had a network."""
    figures = [(_node_name(n), n.pop("network")) for n in nodes if "network" in n]
    return merge_nodes(figures) if figures else None


def _node_name(node: dict[str, Any]) -> str:
    """A node as the user names it (node1 of --cluster local:N), else its address."""
    names = node.get("names") or []
    return str(names[0]) if names else str(node.get("ip"))


def merge_nodes(figures: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Cluster nodes' network figures (each node's own network, named as the user names the node) as one
    mix's: every link kept and named with its node, TCP's counters and the delay lines' counts summed (their
    CPU, lateness and RSS: the largest node's)."""
    links: list[dict[str, Any]] = []
    tcp: dict[str, dict[str, int]] = {}
    delay: dict[str, int] = {}
    for name, one in figures:
        links += [{**link, "link": f"{name} {link['link']}", "node": name} for link in one.get("links", [])]
        for side, counts in one.get("tcp", {}).items():
            into = tcp.setdefault(side, {})
            for key, value in counts.items():
                into[key] = into.get(key, 0) + value
        for key, value in one.get("delay_line", {}).items():
            delay[key] = max(delay.get(key, 0), value) if key in _LINE_MAX else delay.get(key, 0) + value
    out: dict[str, Any] = {"window_s": max((float(f.get("window_s", 0.0)) for _, f in figures), default=0.0),
                           "links": links, "tcp": tcp}  # fmt: skip
    if delay:
        out["delay_line"] = delay
    return out
