"""The records the store keeps (run meta, mixes, summaries); plain data, no SQL and no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from crest.verdicts import Verdict

STATUSES = ("running", "complete", "interrupted", "failed")
# The statuses a run can end in; "running" is only ever set by create_run.
FINAL_STATUSES = STATUSES[1:]


@dataclass
class RunMeta:
    """What the runner knows when a run starts."""

    suite: str
    target: str
    profile: str
    repeat_index: int
    config: dict[str, Any]  # the full resolved suite + options
    factors: dict[str, Any]  # e.g. {"server": "builtin", "cpus": 2}
    host: dict[str, Any]  # hostname, kernel, cpu_model, cpus, python, crest_version, engine_version


@dataclass
class MixRecord:
    """One finished mix, as the runner hands it over; times are unix seconds, latencies microseconds.

    `clients` is the number of simulated clients; the per-client scores are
    `client_scores` (one name cannot mean both the count and the list).
    """

    index: int
    clients: int
    threads_per_client: int
    connections: int
    started_at: float
    ended_at: float
    window_s: float
    requests: int
    responses: int
    bytes: int
    body_bytes: int
    rps: float
    throughput_Bps: float
    errors: dict[str, int]  # by kind: connect, tls, timeout, read, write, status, parse, validation, reset
    latency_us: dict[str, float]  # p50, p90, p99, p999, max, mean, min, stdev
    status: dict[str, int]  # "200" -> count
    classes: dict[str, dict[str, Any]]  # per request class: requests, bytes, errors, rps, throughput_Bps, latency_us
    client_scores: list[
        dict[str, Any]
    ]  # WebBench's per-client scores: client, requests, bytes, errors, rps, throughput_Bps
    timeline: list[dict[str, Any]]  # per second: second, requests, errors, bytes
    histogram_b64: str  # HDR histogram of the window, in the engine's serialization
    monitor: dict[str, Any] = field(default_factory=dict)  # resource samples (crest.host.monitor's summary)
    verdicts: list[Verdict] = field(default_factory=list)  # what a reader must mind about this mix
    size_bytes: int | None = None  # the content length of a sweep's mix, None otherwise
    client_cpu_s: float | None = None  # CPU seconds the load engine's threads used over the whole mix
    connections_opened: int | None = None  # connections the engine opened over the whole mix
    access_log_requests: int | None = None  # lines the target's access log gained (only with --access-log)
    # A cluster mix: {"start_at_unix_s", "nodes": [{node_id, names, ip, first_client, clients, requests, rps,
    # client_cpu_s, engine_cpu_util_pct, client_bound, clock_offset_s, clock_uncertainty_s, ...}]}; None locally.
    cluster: dict[str, Any] | None = None
    rate_rps: float | None = None  # an open-loop mix's total request rate; None for a closed loop
    # A SPECweb99 iteration: the harness's figures (per-connection bit rates, conformance, POST-log
    # check, validity rules); see crest.specweb99. None for other mixes.
    specweb99: dict[str, Any] | None = None
    # What the lab did and saw around the mix beside its load, never part of its figures: "restart" (the
    # target restarted before it: {"pids_before", "pids_after"}), "warmup" (crest.runner.warmup's figures),
    # "access_log_requests_by_role" (per-class targets). None when nothing.
    lab: dict[str, Any] | None = None
    # The mix's TLS handshakes, whole mix: {"handshakes", "resumed", "handshake_us": {p50, p99, ...},
    # "negotiated": [{"protocol", "cipher", "handshakes"}]}; None when no handshake was made.
    tls: dict[str, Any] | None = None
    network: dict[str, Any] | None = None  # the client network's links and TCP in the window (--network)
    # An HTTP/2 or HTTP/3 mix's counters as the engine gave them (streams_opened, streams_in_use_sum/_max,
    # header block and raw bytes, goaways, resets, refused; crest.analysis.h2 derives the figures; the run's
    # workload says which version); None for HTTP/1.x.
    h2: dict[str, Any] | None = None
    # How often the engine's threads napped instead of blocking on their sockets, whole mix (0: it always
    # blocked, as with --no-nap or at light load); None for a mix stored before crest napped.
    naps: int | None = None

    @property
    def error_count(self) -> int:
        """All errors of the mix, every kind together."""
        return sum(int(n) for n in self.errors.values())


@dataclass
class RunSummary:
    """One line of `crest runs`: a run without its mixes, plus what the mixes add up to so far."""

    id: str
    suite: str
    target: str
    profile: str
    repeat_index: int
    status: str
    reason: str | None
    started_at: float
    ended_at: float | None
    mixes: int  # mixes stored so far
    mix_rps: list[float]  # each stored mix's req/s in ladder order (NaN: not measured); empty until one is stored
    factors: dict[str, Any]
    # What tells one run from another (crest.analysis.identity reads them): the run's stored config
    # (experiment, options, server, capacity, cluster), each stored mix's throughput in ladder order,
    # and how many of its mixes are SPECweb99 iterations or have a content length (a sweep).
    config: dict[str, Any] = field(default_factory=dict)
    mix_throughput_Bps: list[float] = field(default_factory=list)
    specweb99_mixes: int = 0
    sized_mixes: int = 0


@dataclass
class RunDetail:
    """A whole run: its meta, where it stands, and every stored mix in ladder order."""

    id: str
    meta: RunMeta
    status: str
    reason: str | None
    started_at: float
    ended_at: float | None
    mixes: list[MixRecord]


def missing(value: Any) -> str | None:
    """Why a stored fact holds no value ("not applicable: …" or "unavailable: …"), or None when it has one.

    A run's disclosure (crest.host.disclosure) stores {"not_applicable": why} for a field that does not
    apply and {"unavailable": why} for one that could not be read; readers test for those two keys here.
    """
    if isinstance(value, dict) and len(value) == 1:
        for key in ("not_applicable", "unavailable"):
            if key in value:
                return f"{key.replace('_', ' ')}: {value[key]}"
    return None
