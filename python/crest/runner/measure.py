"""Measuring one mix into its record: what happens around the load (the page cache, a warm-up pass, the
probes, the access log) and how the load's report, the probes' figures and the verdicts become one
MixRecord over the mix's window.

Asks the placement for everything that depends on where the load runs; owns no run status (the trial
loop in crest.runner.trials does) and never stores or prints.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial
from typing import Any

from crest import verdicts
from crest.host.monitor import client_bound_verdict, host_cpu_bound_verdict, host_verdicts
from crest.load import vantage
from crest.load.client import LoadClient, ProgressCallback, RunResult
from crest.load.runspec import RunSpec
from crest.placement.base import Load, Placement, Probe
from crest.runner.warmup import warmup_figures, warmup_spec
from crest.store import MixRecord, mix_from_report
from crest.suite import Mix, Suite
from crest.verdicts import Verdict

# A memory limit "with room to spare" holds the workload's files this many times: the rest is the
# server's own memory and the kernel's per-page overhead, which the limit counts too.
MEMORY_ROOM = 2
# How long a restarted target may take to fork its pool again before its new pids are read.
RESTART_SETTLE_S = 5.0


class LoadFailed(Exception):
    """The mix's load failed while it ran; the trial fails with `cause`, which is raised on."""

    def __init__(self, cause: Exception) -> None:
        super().__init__(str(cause))
        self.cause = cause


class Interrupted(Exception):
    """Ctrl-C during the mix's load (during its warm-up pass it is a KeyboardInterrupt: between mixes)."""


@dataclass
class MixMeasure:
    """Measures the mixes of one trial on one placement, against one target (None: a URL)."""

    suite: Suite
    placement: Placement
    target: Any
    memory_limit_bytes: int | None = None  # the target's --memory
    working_set_bytes: int | None = None  # every file the workload can request; None: not a file workload

    def memory_verdicts(self) -> list[Verdict]:
        """memory_irrelevant when the limit holds the whole working set MEMORY_ROOM times over."""
        limit, files = self.memory_limit_bytes, self.working_set_bytes
        if limit is None or files is None or files * MEMORY_ROOM > limit:
            return []
        return [verdicts.memory_irrelevant(files, limit)]

    def restart_if_asked(self, mix: Mix) -> dict[str, Any]:
        """Restart the started target before a mix that asks it; the pids before and after are stored."""
        lab: dict[str, Any] = {}
        if mix.restart_target and self.target is not None:
            before = sorted(self.target.pids())
            self.target.restart()
            # A server answers before its pool is back (Apache prefork forks StartServers children after it
            # listens): the pids after are read once it has as many processes again, or after a few seconds.
            deadline = time.monotonic() + RESTART_SETTLE_S
            while len(self.target.pids()) < len(before) and time.monotonic() < deadline:
                time.sleep(0.1)
            lab["restart"] = {"pids_before": before, "pids_after": sorted(self.target.pids())}
        return lab

    def warm_up(self, spec: RunSpec) -> dict[str, Any]:
        """Request every entry of the mix's table once before its window (never measured): the figures.

        Raises:
            KeyboardInterrupt: Ctrl-C during the pass (the run is then stored as interrupted between mixes).
        """
        started = time.monotonic()
        # Sent from where the clients stand: a subnet's namespace, or a cluster's load node (vantage).
        result = self.placement.from_clients(partial(vantage.call, warm_up_run, warmup_spec(spec)))
        if result.interrupted:
            raise KeyboardInterrupt
        return warmup_figures(result.report, len(spec.requests), time.monotonic() - started)

    def measure(
        self, mix: Mix, spec: RunSpec, load: Load, lab: dict[str, Any], on_progress: ProgressCallback
    ) -> MixRecord:
        """Run the mix's load and make its record.

        Raises:
            LoadFailed: the load failed while it ran.
            Interrupted: Ctrl-C stopped it.
        """
        workload = self.suite.workload
        drop = workload.drop_caches
        found = self.placement.drop_page_cache(self.target) if drop else []
        found += self.placement.verdicts() + self.memory_verdicts()
        if mix.warmup:
            lab["warmup"] = self.warm_up(spec)
        target = self.target
        probes = self.placement.probes(target)
        logged_before = target.access_log_lines() if target is not None else 0
        by_role = getattr(target, "roles", None) is not None  # a role map's servers, here or on a node
        by_role_before = target.access_log_lines_by_role() if by_role else {}
        started = time.time()
        for probe in probes:
            probe.start()
        try:
            with self.placement.pinned():
                result = load.run(partial(_with_probes, on_progress, probes))
        except Exception as exc:
            raise LoadFailed(exc) from exc
        finally:
            for probe in probes:
                probe.stop()
        ended = time.time()
        if result.interrupted:
            raise Interrupted
        record = mix_from_report(mix, result.report, started, ended, found)
        if workload.har is not None:
            # A HAR's client is a browser with connections of its own: the engine's count, not clients × threads.
            record.connections = spec.connections
        if workload.specweb99 is not None:
            # Every POST the iteration sent, window or not: the POST-log check counts them all.
            record.specweb99 = {"issued_by_class": dict(result.report.get("issued_by_class") or {})}
        self.placement.annotate(record, result.report)
        t = mix.timing
        window = (record.started_at + t.ramp_up_s, record.started_at + t.length_s - t.ramp_down_s)
        for probe in probes:
            probe.apply(record, window)
        for bound in (client_bound_verdict(record.monitor),
                      host_cpu_bound_verdict(record.monitor, cores_shared=self.placement.shares_cores())):  # fmt: skip
            if bound:
                record.verdicts.append(bound)
        # The engine's wait for a CPU is noise only when it has cores of its own (else: the target's).
        record.verdicts += host_verdicts(
            record.monitor, cached=not drop, engine_own_cores=self.placement.engine_own_cores()
        )
        if target is not None and target.settings.access_log:  # --access-log or access_log=on
            time.sleep(target.access_log_flush_s)
            record.access_log_requests = target.access_log_lines() - logged_before
            if by_role:
                after_roles = target.access_log_lines_by_role()
                lab["access_log_requests_by_role"] = {r: after_roles[r] - by_role_before[r] for r in after_roles}
        record.lab = lab or None
        return record


def _with_probes(on_progress: ProgressCallback, probes: list[Probe], live: dict[str, Any]) -> None:
    """The engine's live counters and the probes' latest figures (target and engine CPU, links), as one."""
    seen: dict[str, Any] = {}
    for probe in probes:
        seen.update(probe.live())
    on_progress({**live, "probes": seen} if seen else live)


def warm_up_run(spec: RunSpec) -> RunResult:
    """A warm-up pass's engine run, wherever it is sent from (a module-level function: it can be shipped)."""
    return LoadClient(spec).run()
