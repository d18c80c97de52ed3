"""Verdicts: typed judgements stored with a mix or drawn over a curve: a kind, a message and figures.

Owns the kinds and the wording of each (one constructor per kind below). It
does not decide when a verdict applies: the monitor, the runner and the
analysis do, and pass their figures in. Readers test `kind`, never the text:
the message is for people and may be reworded at any time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Stored with a mix (the runner, the monitor, the engine's report):
CLIENT_BOUND = "client_bound"  # the load engine, not the target, was the bottleneck (also over a curve)
HOST_CPU_BOUND = "host_cpu_bound"  # target and engine on the same cores (not pinned apart) used all of them together
ERRORS = "errors"  # one of the engine's error notes: an error kind, its count and a first example
CUT_SHORT = "cut_short"  # the mix was cancelled before its window ended
PAGE_CACHE = "page_cache"  # drop_caches was asked for but not permitted
CPU_SPLIT = "cpu_split"  # the load engine shares the target's cores
PEAK_ONLY = "peak_only"  # a published peak without the load it was measured at
NOTE = "note"  # a warning of a results file written before verdicts were typed, kept as its text
LISTEN_OVERFLOW = "listen_overflow"  # the target host's accept queues overflowed in the window (connections dropped)
NOISY_HOST = "noisy_host"  # steal time, or the load engine waiting for a CPU: this host's figures are unreliable
CACHE_COLD = "cache_cold"  # a cached test whose target read its files from storage in the window
LINK_BOUND = "link_bound"  # a shaped link of the client network ran at its rate: the network limited the mix
DELAY_LINE_BOUND = "delay_line_bound"  # crest's delay line ran at its limit: packets waited for its CPU, not the delay
TARGET_OOM = "target_oom"  # the kernel killed target processes for going over --memory during the mix
MEMORY_IRRELEVANT = "memory_irrelevant"  # the workload's files fit in the target's --memory with room to spare
# Drawn over a configuration's curve by the analysis:
TARGET_IDLE = "target_idle"  # at the peak the target had idle CPU: something else limited it
ERROR_RATE = "error_rate"  # points whose errors exceed a share of attempts
NOT_SATURATED = "not_saturated"  # req/s still rising at the highest load: the real peak is higher
COLLAPSE = "collapse"  # past the peak req/s fell below half of it

KINDS = (
    CLIENT_BOUND, HOST_CPU_BOUND, ERRORS, CUT_SHORT, PAGE_CACHE, CPU_SPLIT, PEAK_ONLY, NOTE, LISTEN_OVERFLOW, NOISY_HOST, CACHE_COLD,
    LINK_BOUND, DELAY_LINE_BOUND, TARGET_OOM, MEMORY_IRRELEVANT,
    TARGET_IDLE, ERROR_RATE, NOT_SATURATED, COLLAPSE,
)  # fmt: skip
# Verdicts that say something other than the target decided a measurement, in the order a reader should
# hear them: the load generator (alone, or with the target on the host's shared CPUs), the network, the
# target's memory limit, its accept queues, a noisy host.
DECIDING = (CLIENT_BOUND, HOST_CPU_BOUND, LINK_BOUND, DELAY_LINE_BOUND, TARGET_OOM, LISTEN_OVERFLOW, NOISY_HOST)
# The one order every output lists verdicts in (the console, `crest show`, the report's headline and its
# "Mind these", `crest compare`, the capacity statement): what decided the result first, then the curve's
# reach (not saturated: the load, not the target, ran out), then what qualifies the figures.
RANK = (
    *DECIDING, NOT_SATURATED, TARGET_IDLE, ERROR_RATE, COLLAPSE, ERRORS, CUT_SHORT, MEMORY_IRRELEVANT, CACHE_COLD,
    CPU_SPLIT, PAGE_CACHE, PEAK_ONLY, NOTE,
)  # fmt: skip
# What a result is limited by when one of these is found where it peaked (or answered): DECIDING, and a curve
# that never peaked.
LIMITS = (*DECIDING, NOT_SATURATED)
# A limit in a few words, for a table cell or a list of configurations ("nginx and lighttpd were both ...").
LIMIT_NAMES = {
    CLIENT_BOUND: "client-bound (the load engine)",
    HOST_CPU_BOUND: "host-bound (target and load engine shared the CPUs)",
    LINK_BOUND: "link-bound (the client network)",
    DELAY_LINE_BOUND: "delay-line-bound (crest's delay line)",
    TARGET_OOM: "out of memory (--memory)",
    LISTEN_OVERFLOW: "dropping connections (accept queue)",
    NOISY_HOST: "on a noisy host",
    NOT_SATURATED: "not saturated",
}
# A peak decided by one of these was not the target saturating: the saturation column names the limit instead
# (report.fmt.saturation), and the curve's summary does not call itself saturated.
BOUND_WORDS = {CLIENT_BOUND: "client-bound", HOST_CPU_BOUND: "host-bound", LINK_BOUND: "link-bound",
               DELAY_LINE_BOUND: "delay-line-bound"}  # fmt: skip
# What to change so that the target, not this, decides the next result.
LIMIT_FIXES = {
    CLIENT_BOUND: "give the engine more cores (a lower --cpus) or more load nodes (--cluster)",
    HOST_CPU_BOUND: "pin the target and the engine apart (--cpus N) or load from other machines (--cluster)",
    LINK_BOUND: "give the clients faster or more links (--network)",
    DELAY_LINE_BOUND: "give crest's delay line a core of its own (fewer engine cores, or a larger machine), or lower the load",
    TARGET_OOM: "raise --memory",
    LISTEN_OVERFLOW: "raise the server's backlog (and net.core.somaxconn)",
    NOISY_HOST: "repeat on a quieter machine, or give the engine cores of its own",
    NOT_SATURATED: "add load (more clients, a longer ladder)",
}
# At the peak, a target using less than this share of its cores was not the bottleneck (target_idle:
# the analysis applies it at the peak of a configuration's curve; the monitor only measures).
BUSY_AT_PEAK_PCT = 75.0
# A figure's name may not shadow the two fixed keys of a verdict's JSON.
_RESERVED = ("kind", "message")


@dataclass(frozen=True)
class Verdict:
    """One judgement: `kind` (one of KINDS), `message` (a sentence for people), `figures` (numbers
    named with their unit, e.g. {"engine_cpu_util_pct": 99.1, "engine_cores": 1})."""

    kind: str
    message: str
    figures: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.kind or not self.message:
            raise ValueError(f"a verdict needs a kind and a message, got {self.kind!r}: {self.message!r}")
        clash = [k for k in self.figures if k in _RESERVED]
        if clash:
            raise ValueError(f"verdict figure names may not be {', '.join(clash)}")

    def to_json(self) -> dict[str, Any]:
        """{"kind": ..., "message": ..., **figures}: the stored and reported form."""
        return {"kind": self.kind, "message": self.message, **self.figures}

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> Verdict:
        """The verdict of to_json's form (a kind this crest does not know is kept as it is)."""
        figures = {k: v for k, v in value.items() if k not in _RESERVED}
        return cls(str(value["kind"]), str(value["message"]), figures)


def has(verdicts: list[Verdict], kind: str) -> bool:
    """Whether any of the verdicts is of this kind."""
    return any(v.kind == kind for v in verdicts)


def rank_of(kind: str) -> int:
    """A kind's place in RANK (a kind this crest does not know goes last)."""
    return RANK.index(kind) if kind in RANK else len(RANK)


def ranked(verdicts: list[Verdict]) -> list[Verdict]:
    """The verdicts in RANK order (stable: equal kinds keep their order)."""
    return sorted(verdicts, key=lambda v: rank_of(v.kind))


def limit(verdicts: list[Verdict]) -> Verdict | None:
    """The verdict that decided a result, the first in RANK of kinds in LIMITS; None: the target did."""
    found = [v for v in verdicts if v.kind in LIMITS]
    return ranked(found)[0] if found else None


# -- one constructor per kind: the only place each message is worded ------------------------


def client_bound(engine_cpu_util_pct: float, engine_cores: int) -> Verdict:
    """A mix whose load engine used nearly all of its cores."""
    return Verdict(
        CLIENT_BOUND,
        f"client-bound: the load engine used {engine_cpu_util_pct:.0f}% of its {engine_cores} core(s) in the"
        " window, so the target may take more: give the engine more cores (a lower --cpus) or fewer connections",
        {"engine_cpu_util_pct": engine_cpu_util_pct, "engine_cores": engine_cores},
    )


def host_cpu_bound(host_cpu_util_pct: float, host_cores: float, target_cpu_util_pct: float,
                   engine_cpu_util_pct: float) -> Verdict:  # fmt: skip
    """A mix whose target and load engine, on the same cores (not pinned apart), found them nearly all busy
    (`host_cpu_util_pct`: the target's, the engine's, the kernel's network work and other processes' use);
    each share is a percentage of the `host_cores` they shared."""
    rest = host_cpu_util_pct - target_cpu_util_pct - engine_cpu_util_pct
    others = f", the other {rest:.0f}% the kernel's network work and other processes" if rest >= 5 else ""
    return Verdict(
        HOST_CPU_BOUND,
        f"host-bound: the target ({target_cpu_util_pct:.0f}%) and the load engine ({engine_cpu_util_pct:.0f}%)"
        f" shared the host's {host_cores:g} CPU(s), {host_cpu_util_pct:.0f}% busy in the window{others}, so the"
        " host's CPUs, not the target, ran out: the target's idle share was not its to use; pin target and"
        " engine apart (--cpus N) or load from other machines (--cluster)",
        {"host_cpu_util_pct": host_cpu_util_pct, "host_cores": host_cores,
         "target_cpu_util_pct": target_cpu_util_pct, "engine_cpu_util_pct": engine_cpu_util_pct},
    )  # fmt: skip


def client_bound_points(loads: list[float]) -> Verdict:
    """A curve some of whose points were client-bound."""
    return Verdict(
        CLIENT_BOUND,
        f"client-bound at load {', '.join(_load(x) for x in loads)}: the load generator, not the target,"
        " limited these points; add client CPUs or machines",
        {"loads": list(loads)},
    )


def engine_error(note: str) -> Verdict:
    """One of the engine's error notes (its own sentence: error kind, count, first example)."""
    return Verdict(ERRORS, note)


def cut_short() -> Verdict:
    return Verdict(CUT_SHORT, "the mix was cut short")


def page_cache_kept(reason: str) -> Verdict:
    """drop_caches was refused; `reason` is the OS's (e.g. "Permission denied")."""
    return Verdict(PAGE_CACHE, f"page cache not dropped ({reason}; needs root): files may have been served from memory")


def page_cache_elsewhere() -> Verdict:
    """A cluster run's external target on a node crest was not told (no --monitor-node): its cache stays."""
    return Verdict(
        PAGE_CACHE,
        "page cache not dropped: the target runs on a node crest was not told (give --monitor-node NODE):"
        " files may have been served from memory",
    )


def cores_shared(target_cores: int) -> Verdict:
    """The target was given every core this process may use, so the engine shares them."""
    return Verdict(
        CPU_SPLIT,
        f"the target has all {target_cores} cores this process may use, so the load engine shares them:"
        " its CPU use competes with the target's",
        {"target_cores": target_cores},
    )


def target_oom(kills: int, limit_bytes: int, peak_bytes: int | None) -> Verdict:
    """The kernel killed `kills` of the target's processes for going over its memory limit in the mix."""
    peak = f" (its cgroup peaked at {peak_bytes / 1e6:,.1f} MB)" if peak_bytes is not None else ""
    figures: dict[str, Any] = {"oom_kills": kills, "memory_limit_bytes": limit_bytes}
    if peak_bytes is not None:
        figures["memory_peak_bytes"] = peak_bytes
    return Verdict(
        TARGET_OOM,
        f"the kernel killed {kills} of the target's processes for going over its --memory limit of"
        f" {limit_bytes / 1e6:,.1f} MB{peak}: the limit, not the load, decided this mix",
        figures,
    )


def memory_irrelevant(working_set_bytes: int, limit_bytes: int) -> Verdict:
    """Every file the workload can request fits in the target's memory limit with room to spare."""
    return Verdict(
        MEMORY_IRRELEVANT,
        f"memory irrelevant: every file the workload can request ({working_set_bytes / 2**20:,.1f} MiB) fits in the"
        f" target's --memory limit of {limit_bytes / 2**20:,.1f} MiB with room to spare, so the limit cannot decide"
        " this mix: size the fileset past it (workload fileset_size or fileset_copies)",
        {"working_set_bytes": working_set_bytes, "memory_limit_bytes": limit_bytes},
    )


def decided_by(kind: str, where: str, what: str = "it", figures: dict[str, Any] | None = None) -> str | None:
    """How a result opens when a LIMITS verdict of `kind` was found `where` (e.g. "at the answer"): what
    `what` (the result: "it", "the peak") then measures instead of the target; None for a kind that decides
    nothing. The verdict's `figures` name the link of a link-bound result."""
    link = _link_words(figures or {}) or "a shaped link of the client network ran at its rate"
    measures = "measure" if what.endswith("s") else "measures"  # "their peaks measure", "the peak measures"
    return {
        CLIENT_BOUND: f"the load engine was client-bound {where}, so {what} {measures} crest, not the target:"
        " give the engine more cores (a lower --cpus) or more load nodes (--cluster)",
        HOST_CPU_BOUND: f"the host's CPUs, which the target and the load engine shared, were all busy {where}, so"
        f" {what} {measures} the host, not the target: pin them apart (--cpus N) or load from other machines"
        " (--cluster)",
        LINK_BOUND: f"{link} {where}, so {what} {measures} the network, not the target",
        DELAY_LINE_BOUND: f"crest's delay line ran at its limit {where} (packets waited for its CPU, not for the delay"
        f" asked for), so {what} {measures} the line, not the target",
        NOT_SATURATED: f"req/s was still rising at the highest load, so {what} is not the target's peak: add load"
        " (more clients, a longer ladder) to find it",
        TARGET_OOM: f"the kernel killed target processes for going over --memory {where}",
        LISTEN_OVERFLOW: f"the target host's accept queues overflowed {where} (connections were dropped)",
        NOISY_HOST: f"this host was noisy {where} (steal time or the engine waiting for a CPU): its figures"
        " are unreliable",
    }.get(kind)


def _link_words(figures: dict[str, Any]) -> str | None:
    """`subnet 1's link (100 Mbit/s, down) ran at 99.8% of its rate` from link_bound's figures; None without them."""
    if "rate_bps" not in figures or "utilisation_pct" not in figures:
        return None
    if figures.get("per_client"):
        who = "a client's own line"
    elif figures.get("subnet"):
        who = f"subnet {figures['subnet']}'s link"
    else:
        who = "the target's link"
    if figures.get("node"):  # a cluster node's own network: its subnets, its link toward the target
        who = f"{figures['node']}'s " + (
            "link toward the target" if who == "the target's link" else who.removeprefix("a ")
        )
    way = "down" if figures.get("downstream") else "up"
    return f"{who} ({_human_bps(float(figures['rate_bps']))}, {way}) ran at {figures['utilisation_pct']:g}% of its rate"


def limited_points(kind: str, loads: list[float], example: Verdict) -> Verdict:
    """A curve some of whose points carry a DECIDING verdict of `kind` (other than client-bound, which has
    its own): the loads, then one point's own sentence (`example`: the peak's, when it is one of them)."""
    name = {HOST_CPU_BOUND: "host-bound", LINK_BOUND: "link-bound", DELAY_LINE_BOUND: "delay-line-bound", TARGET_OOM: "out of memory",
            LISTEN_OVERFLOW: "listen queue overflow", NOISY_HOST: "noisy host"}.get(kind, kind)  # fmt: skip
    said = example.message.removeprefix(f"{name}: ")  # a sentence that names its kind is not named twice
    return Verdict(kind, f"{name} at load {', '.join(_load(x) for x in loads)}: {said}",
                   {**example.figures, "loads": list(loads)})  # fmt: skip


def peak_only() -> Verdict:
    return Verdict(PEAK_ONLY, "published peak only: the report gives no load for this point")


def note(text: str) -> Verdict:
    """A warning kept as its text (from a results file written before verdicts were typed)."""
    return Verdict(NOTE, text)


def listen_overflow(listen_overflows: int, listen_drops: int) -> Verdict:
    """The target host's TCP counters show connections dropped at a full accept queue in the window."""
    return Verdict(
        LISTEN_OVERFLOW,
        f"listen queue overflowed: the target host dropped {max(listen_overflows, listen_drops)} connection"
        f" attempt(s) at a full accept queue in the window ({listen_overflows} overflows, {listen_drops} drops),"
        " so clients waited on SYN retries: raise the server's backlog (and net.core.somaxconn) or accept faster",
        {"listen_overflows": listen_overflows, "listen_drops": listen_drops},
    )


def noisy_host(steal_cores: float, engine_runq_wait_pct: float) -> Verdict:
    """CPU was taken from this host (steal) or the load engine waited for a CPU: figures are unreliable."""
    return Verdict(
        NOISY_HOST,
        f"noisy host: steal {steal_cores * 100:.0f}% of a core, the load engine waited for a CPU"
        f" {engine_runq_wait_pct:.0f}% of its time in the window: measurements on this host are unreliable;"
        " repeat on a quieter machine or give the engine cores of its own",
        {"steal_cores": steal_cores, "engine_runq_wait_pct": engine_runq_wait_pct},
    )


def cache_cold(target_storage_read_bytes: int) -> Verdict:
    """A cached test (the workload keeps the page cache) whose target read from storage in the window."""
    return Verdict(
        CACHE_COLD,
        f"cache cold: the target read {target_storage_read_bytes / 2**20:.1f} MiB from storage in the window of"
        " a cached test, so some files were served from disk: warm it up (a longer ramp-up) or give it more memory",
        {"target_storage_read_bytes": target_storage_read_bytes},
    )


def target_idle(load: float, target_idle_pct: float | None) -> Verdict:
    """At the peak of a curve (at `load`) the target had idle CPU."""
    detail = f" ({target_idle_pct:.0f}% idle)" if target_idle_pct is not None else ""
    return Verdict(
        TARGET_IDLE,
        f"target idle at the peak (load {_load(load)}){detail}: something other than the target's CPU"
        " limited the peak (network, client, locks)",
        {"load": load, **({"target_idle_pct": target_idle_pct} if target_idle_pct is not None else {})},
    )


def error_rate(threshold: float, points: int, worst_error_rate: float, worst_load: float) -> Verdict:
    """`points` points of a curve had errors above `threshold` of attempts."""
    return Verdict(
        ERROR_RATE,
        f"errors above {threshold:.0%} of attempts at {points} load point(s)"
        f" (worst {worst_error_rate:.1%} at load {_load(worst_load)}): see the errors by kind",
        {"threshold": threshold, "points": points, "worst_error_rate": worst_error_rate, "worst_load": worst_load},
    )


def not_saturated(highest_load: float) -> Verdict:
    """A curve whose req/s still rose at its highest load (VeriTest's single-thread suites)."""
    return Verdict(
        NOT_SATURATED,
        f"not saturated: req/s was still rising at the highest load ({_load(highest_load)}), so the real peak is"
        " higher; add load to find it",
        {"highest_load": highest_load},
    )


def collapse(past_peak_ratio: float) -> Verdict:
    """A curve whose req/s fell below half of its peak past it (Mindcraft's Apache fell to 7%)."""
    return Verdict(
        COLLAPSE,
        f"collapsed past its peak: req/s fell to {past_peak_ratio:.0%} of the peak as load grew",
        {"past_peak_ratio": past_peak_ratio},
    )


def _load(load: float) -> str:
    return f"{load:g}"


# A link this busy over a whole window was the bottleneck (Zeus: "limited by the 100 Mbit network").
LINK_BOUND_UTILISATION = 0.90


def _human_bps(bps: float) -> str:
    for unit, scale in (("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3)):
        if bps >= scale:
            return f"{bps / scale:g} {unit}"
    return f"{bps:g} bit/s"


# crest's delay line at its limit (delay_line_bound): packets leaving later than due by this much on average
# (half a millisecond: half of each way's delay at rtt=2ms), or the line's process using this much of a core, in
# the window. The mean, not a high percentile: a line sharing a core with the engine waits out a time slice now
# and then (its p99 is milliseconds even where it carries the whole rate), while a line short of CPU falls
# behind on every packet.
DELAY_LINE_LATE_MEAN_US = 500.0
DELAY_LINE_CPU_CORES = 0.9


def delay_line_bound(cpu_cores: float | None, late_mean_us: float | None, late_p99_us: int | None = None) -> Verdict:
    """crest's delay line ran at its limit in the window: packets left `late_mean_us` after their due time on
    average (≥ DELAY_LINE_LATE_MEAN_US), or its process used `cpu_cores` (≥ DELAY_LINE_CPU_CORES); on a cluster,
    the busiest node's line. `late_p99_us`: the upper bound of the power-of-two bucket holding the 99th
    percentile, for the reader."""
    said = []
    if late_mean_us is not None and late_mean_us >= DELAY_LINE_LATE_MEAN_US:
        p99 = f", 1% {late_p99_us // 2:,} µs or more" if late_p99_us else ""
        said.append(f"its packets left {late_mean_us:,.0f} µs after they were due on average{p99}")
    if cpu_cores is not None and cpu_cores >= DELAY_LINE_CPU_CORES:
        said.append(f"it used {cpu_cores:.2f} of a core")
    return Verdict(
        DELAY_LINE_BOUND,
        f"crest's delay line ran at its limit in the window ({' and '.join(said) or 'at its limit'}): packets waited"
        " for the line's CPU, not only for the delay asked for, so the line, not only the target, limited this mix",
        {
            **({"cpu_cores": cpu_cores} if cpu_cores is not None else {}),
            **({"late_mean_us": late_mean_us} if late_mean_us is not None else {}),
            **({"late_p99_us": late_p99_us} if late_p99_us is not None else {}),
        },
    )


def delay_line_limited(figures: dict[str, Any]) -> bool:
    """Whether a delay line's window figures (crest.network.counters' `delay_line`) show it at its limit."""
    late, cpu = figures.get("late_mean_us"), figures.get("cpu_cores")
    return (late is not None and late >= DELAY_LINE_LATE_MEAN_US) or (cpu is not None and cpu >= DELAY_LINE_CPU_CORES)


def link_bound(link: str, direction: str, utilisation: float, rate_bps: float, subnet: int | None = None,
               per_client: bool = False, node: str | None = None) -> Verdict:  # fmt: skip
    """A shaped link ran at `utilisation` (≥ LINK_BOUND_UTILISATION) of `rate_bps` in the window. Figures
    name the link by numbers: `subnet` (0: the target's link), `downstream` (1: toward the clients),
    `per_client` (1: a client's own line, the busiest one); and `node`, the cluster node whose own network
    it is, by name (nested placement)."""
    return Verdict(
        LINK_BOUND,
        f"the {link} link ({direction}) ran at {utilisation * 100:.1f}% of its {_human_bps(rate_bps)} in the window:"
        " the network, not the server, limited this mix",
        {
            "utilisation_pct": round(utilisation * 100, 1),
            "rate_bps": rate_bps,
            "subnet": subnet or 0,
            "downstream": int(direction == "down"),
            "per_client": int(per_client),
            **({"node": node} if node else {}),
        },
    )
