"""The stored mix of an engine report: maps the engine's report dict onto a MixRecord; no I/O.

Owns which report fields are kept and under which names (the engine's error
notes and a cancel become verdicts). It neither measures nor judges: the
monitor's figures and verdicts are added by the runner afterwards.
"""

from __future__ import annotations

from typing import Any, Protocol

from crest import verdicts
from crest.store.records import MixRecord
from crest.verdicts import Verdict


class MixShape(Protocol):
    """What the store needs of a planned mix (crest.suite.Mix has it; the store does not import suites)."""

    @property
    def index(self) -> int: ...
    @property
    def clients(self) -> int: ...
    @property
    def threads_per_client(self) -> int: ...
    @property
    def connections(self) -> int: ...
    @property
    def size_bytes(self) -> int | None: ...
    @property
    def rate_rps(self) -> float | None: ...


def mix_from_report(
    mix: MixShape,
    report: dict[str, Any],
    started_at: float,
    ended_at: float,
    verdicts_before: list[Verdict] | None = None,
) -> MixRecord:
    """A stored mix from the engine's report (whose counts already cover only the window).

    verdicts_before: what the runner found before the load started (page cache, cores).
    """
    found = [*(verdicts_before or []), *(verdicts.engine_error(str(n)) for n in report.get("error_notes", []))]
    if report.get("cancelled"):
        found.append(verdicts.cut_short())
    return MixRecord(
        index=mix.index,
        clients=mix.clients,
        threads_per_client=mix.threads_per_client,
        connections=mix.connections,
        started_at=started_at,
        ended_at=ended_at,
        window_s=report["window_s"],
        requests=report["requests"],
        responses=report["responses"],
        bytes=report["bytes"],
        body_bytes=report["body_bytes"],
        rps=report["rps"],
        throughput_Bps=report["throughput_Bps"],
        errors=dict(report["errors"]),
        latency_us=dict(report["latency_us"]),
        status=dict(report["status"]),
        classes=dict(report["classes"]),
        client_scores=list(report["clients"]),
        timeline=list(report["timeline"]),
        histogram_b64=report["histogram_b64"],
        verdicts=found,
        size_bytes=mix.size_bytes,
        client_cpu_s=float(report["client_cpu_s"]),
        connections_opened=int(report["connections_opened"]),
        # The rate asked for, not the engine's (it paces in whole ns, so its figure differs in the last
        # digits): a capacity search recognises its probe by this load.
        rate_rps=mix.rate_rps,
        tls=tls_facts(report),
        h2=h2_counters(report),
        naps=int(report.get("naps", 0)),
    )


def tls_facts(report: dict[str, Any]) -> dict[str, Any] | None:
    """What the mix's TLS handshakes negotiated, as the engine recorded it at each handshake; None without TLS."""
    handshakes = int(report.get("tls_handshakes", 0))
    if handshakes == 0:
        return None
    return {
        "handshakes": handshakes,
        "resumed": int(report.get("tls_resumed", 0)),
        "handshake_us": dict(report.get("tls_handshake_us", {})),
        "negotiated": [dict(n) for n in report.get("tls_negotiated", [])],
    }


def h2_counters(report: dict[str, Any]) -> dict[str, int] | None:
    """An HTTP/2 or HTTP/3 mix's counters as the engine gave them (whole mix, like the connection counts); None
    for HTTP/1.x."""
    counters = report.get("h2")
    if not isinstance(counters, dict) or not counters:
        return None
    return {str(k): int(v) for k, v in counters.items()}
