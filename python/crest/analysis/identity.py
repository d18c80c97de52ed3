"""What a stored run is, in the words `crest runs`, `crest show` and the report share: its kind (ladder,
size sweep, capacity search, SPECweb99 test, published table; on a cluster or not), its experiment, its
configuration in one label, its trial counted from 1, and its result in one short phrase.

The label names every part of the configuration that was set (server or the target's URL, cores,
memory, client network, server options, HTTP version, other factors) and nothing that was not, so
two runs that differ in any of them read differently. Reads stored records only (a listing's
RunSummary or a whole RunDetail); the capacity answer and the SPECweb99 verdict come from
crest.analysis.capacity and crest.analysis.specweb99. Must not print, nor compute statistics of its own.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from crest.analysis.capacity import CapacityResult, capacity_result
from crest.analysis.peak import peak_rps_of
from crest.analysis.specweb99 import Result as Specweb99Result
from crest.analysis.specweb99 import specweb99_result
from crest.store import RunDetail, RunSummary

KINDS = ("ladder", "sweep", "capacity", "specweb99", "published")
# How each kind reads in a sentence.
KIND_WORDS = {
    "ladder": "ladder",
    "sweep": "size sweep",
    "capacity": "capacity search",
    "specweb99": "SPECweb99 test",
    "published": "published table",
}
_CAPACITY_UNITS = {"clients": "clients", "connections": "connections", "rate": "req/s"}
# The factors the label names through the stored options (any other factor is named as k=v after them).
_NAMED_FACTORS = ("server", "cpus", "memory", "network", "http", "streams")
_EXTERNAL = "external"  # --server external: the URL given with --target
_MBIT = 1e6


@dataclass(frozen=True)
class RunIdentity:
    """What tells a run from every other: its kind, whether it ran on a cluster, its experiment, its
    configuration label and its trial (1-based; the store keeps repeat_index, 0-based)."""

    kind: str  # one of KINDS
    cluster: bool
    experiment: str | None
    configuration: str
    trial: int

    @property
    def kind_words(self) -> str:
        """The kind in a sentence: "capacity search", "ladder on a cluster"."""
        return KIND_WORDS[self.kind] + (" on a cluster" if self.cluster else "")


@dataclass(frozen=True)
class RunResult:
    """A run's result in one short phrase (`text`), and the figure behind it: the peak req/s of a
    ladder, the peak Mbit/s of a run judged by throughput, the search of a capacity run, the test of
    a SPECweb99 run (None where it does not apply)."""

    text: str
    peak_rps: float | None = None
    peak_mbit_s: float | None = None
    capacity: CapacityResult | None = None
    specweb99: Specweb99Result | None = None

    def capacity_phrase(self) -> str | None:
        """The capacity answer alone, e.g. "1024 clients"; None for other runs or no answer."""
        return None if self.capacity is None else _answer(self.capacity)


def identity(detail: RunDetail) -> RunIdentity:
    """A stored run's identity."""
    meta = detail.meta
    return _identity(
        meta.config, meta.factors, meta.target, meta.repeat_index,
        specweb99=any(m.specweb99 is not None for m in detail.mixes),
        sweep=any(m.size_bytes is not None for m in detail.mixes),
    )  # fmt: skip


def summary_identity(summary: RunSummary) -> RunIdentity:
    """A listed run's identity (the same as identity() of its whole record)."""
    return _identity(
        summary.config, summary.factors, summary.target, summary.repeat_index,
        specweb99=summary.specweb99_mixes > 0, sweep=summary.sized_mixes > 0,
    )  # fmt: skip


def needs_detail(summary: RunSummary) -> bool:
    """Whether a listed run's result needs its whole record (its mixes replayed): capacity and SPECweb99."""
    return summary_identity(summary).kind in ("capacity", "specweb99")


def summary_result(summary: RunSummary) -> RunResult:
    """A listed run's result from its mixes' req/s and throughput; for a capacity or SPECweb99 run
    (needs_detail) use run_result on its whole record."""
    return _figures(summary.config, summary.mix_rps, summary.mix_throughput_Bps, summary_identity(summary).kind)


def run_result(detail: RunDetail) -> RunResult:
    """A stored run's result: the capacity answer, the SPECweb99 verdict with its conforming
    connections, else the peak (req/s, or Mbit/s for a run judged by throughput)."""
    kind = identity(detail).kind
    if kind == "capacity":
        search = capacity_result(detail)
        return RunResult(_capacity_text(search), capacity=search)
    if kind == "specweb99":
        test = specweb99_result(detail)
        # The cell says VALID or INVALID; the whole verdict (a VALID test too short to report) is the test's.
        text = (
            f"{test.median.conforming} conn {'VALID' if test.valid else 'INVALID'}" if test.median else "no iteration"
        )
        return RunResult(text, specweb99=test)
    mixes = sorted(detail.mixes, key=lambda m: m.index)
    return _figures(detail.meta.config, [m.rps for m in mixes], [m.throughput_Bps for m in mixes], kind)


def configuration_label(config: dict[str, Any], factors: dict[str, Any], target: str) -> str:
    """Every part of a run's configuration that was set, e.g. "nginx cpus=1 network=webcat-100mbit
    worker_processes=2"; an external target by its URL ("http://198.18.0.2:8080/ http=2")."""
    options = config.get("options") if isinstance(config, dict) else None
    if not isinstance(options, dict):
        # Published tables and runs stored before crest kept its options: their factors are all there is.
        return " ".join(f"{k}={_text(v)}" for k, v in factors.items()) or target
    server = options.get("server") or factors.get("server")
    parts = [_target(options, target) if server in (None, _EXTERNAL) else str(server)]
    if options.get("target_node"):
        parts[0] += f" on {options['target_node']}"
    cpus = options.get("cpus") if options.get("cpus") is not None else factors.get("cpus")
    if cpus is not None:
        parts.append(f"cpus={_text(cpus)}")
    memory = factors.get("memory") or (_size(int(options["memory_bytes"])) if options.get("memory_bytes") else None)
    if memory:
        parts.append(f"memory={memory}")
    network = options.get("network") or factors.get("network")
    if network:
        parts.append(f"network={network}")
    server_options = options.get("server_options") or {}
    parts += [f"{k}={_text(v)}" for k, v in server_options.items()]
    parts += _protocol(config, factors)
    parts += [
        f"{k}={_text(v)}" for k, v in factors.items() if k not in _NAMED_FACTORS and k not in server_options
    ]  # fmt: skip
    return " ".join(parts)


def _identity(
    config: dict[str, Any], factors: dict[str, Any], target: str, repeat_index: int, *, specweb99: bool, sweep: bool
) -> RunIdentity:
    config = config if isinstance(config, dict) else {}
    experiment = config.get("experiment")
    return RunIdentity(
        kind=_kind(config, specweb99=specweb99, sweep=sweep),
        cluster=isinstance(config.get("cluster"), dict),
        experiment=str(experiment) if experiment is not None else None,
        configuration=configuration_label(config, factors, target),
        trial=repeat_index + 1,
    )


def _kind(config: dict[str, Any], *, specweb99: bool, sweep: bool) -> str:
    # A SPECweb99 capacity search is a capacity search: its answer is the connections, its probes iterations.
    if isinstance(config.get("capacity"), dict):
        return "capacity"
    if specweb99:
        return "specweb99"
    if isinstance(config.get("published"), dict):
        return "published"
    return "sweep" if sweep else "ladder"


def _figures(config: dict[str, Any], rps: Sequence[float], throughput_Bps: Sequence[float], kind: str) -> RunResult:
    """The peak of a ladder, a sweep or a published table: req/s, or Mbit/s where the run is judged by
    throughput (a file workload, a table of throughput only) or its mixes differ in size (a sweep)."""
    peak = peak_rps_of(list(rps))
    measured = [b for b in throughput_Bps if not math.isnan(b)]
    mbit_s = max(measured) * 8 / _MBIT if measured else None
    if mbit_s is not None and (kind == "sweep" or peak is None or _file_workload(config)):
        return RunResult(f"{mbit_s:,.1f} Mbit/s", peak_rps=peak, peak_mbit_s=mbit_s)
    if peak is None:
        return RunResult("-", peak_mbit_s=mbit_s)
    return RunResult(f"{peak:,.1f} req/s", peak_rps=peak, peak_mbit_s=mbit_s)


def _answer(search: CapacityResult) -> str | None:
    if search.answer is None or not search.complete:
        return None
    return f"{search.answer:g} {_CAPACITY_UNITS.get(search.axis, search.axis)}"


def _capacity_text(search: CapacityResult) -> str:
    """The answer, and first what decided it when the target did not (client-bound, the ceiling)."""
    answer = _answer(search)
    if answer is None:
        return "unfinished" if not search.complete else "none met the rule"
    caveats = [v.kind.replace("_", "-") for v in search.limited_by[:1]] + (["at --max"] if search.at_ceiling else [])
    return answer + (f" ({', '.join(caveats)})" if caveats else "")


def _file_workload(config: dict[str, Any]) -> bool:
    suite = config.get("suite")
    classes = ((suite.get("workload") or {}).get("classes") or []) if isinstance(suite, dict) else []
    return any(isinstance(c, dict) and c.get("kind") == "loadfile" for c in classes)


def _target(options: dict[str, Any], target: str) -> str:
    """An external target: its URL (each role's, for per-class targets)."""
    roles = options.get("role_targets")
    if isinstance(roles, dict) and roles:
        return ",".join(f"{role}={url}" for role, url in roles.items())
    return str(options.get("target") or target)


def _protocol(config: dict[str, Any], factors: dict[str, Any]) -> list[str]:
    """The HTTP version when it is not HTTP/1.1 or was chosen as a factor, and HTTP/2's or HTTP/3's streams."""
    suite = config.get("suite")
    workload = (suite.get("workload") or {}) if isinstance(suite, dict) else {}
    version = factors.get("http", workload.get("http_version"))
    if version is None or (str(version) == "1.1" and "http" not in factors):
        return []
    parts = [f"http={version}"]
    streams = factors.get("streams", workload.get("streams"))
    if str(version) in ("2", "3") and streams is not None:
        parts.append(f"streams={streams}")
    return parts


def _size(n: int) -> str:
    """Bytes as --memory takes them (binary units): 268435456 → 256M."""
    for suffix, unit in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= unit:
            return f"{n / unit:g}{suffix}"
    return str(n)


def _text(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return value if isinstance(value, str) else json.dumps(value, default=str)


__all__ = [
    "KINDS",
    "KIND_WORDS",
    "RunIdentity",
    "RunResult",
    "configuration_label",
    "identity",
    "needs_detail",
    "run_result",
    "summary_identity",
    "summary_result",
]
