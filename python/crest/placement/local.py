"""This machine: the target (when crest starts it) pinned to its cores and the load engine to the rest.

The placement every other one starts from: a client network runs its target here too (subnets.py).
Owns the split of this machine's cores between target and engine, and starting a target here; never
prints.
"""

from __future__ import annotations

import os
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from typing import Any

from crest.host.facts import drop_page_cache
from crest.host.monitor import Monitor
from crest.load.client import LoadClient
from crest.load.runspec import RunSpec
from crest.placement.base import Load, MonitorProbe, Placement, Probe, TargetPlan
from crest.servers import cpus as cpu_split
from crest.servers.base import ServerSettings, Target
from crest.servers.cgroup import Cgroup
from crest.servers.group import TargetGroup
from crest.servers.registry import adapter as server_adapter
from crest.store import MixRecord
from crest.verdicts import Verdict, cores_shared, target_oom


class LocalPlacement(Placement):
    """Load and target on this machine; `cpus` (--cpus) splits its cores between them."""

    def __init__(self, cpus: float | None) -> None:
        self.share = cpu_split.share(cpus) if cpus else None
        self.split = cpu_split.split(self.share.cpus) if self.share else None

    def check_server(self, plan: TargetPlan) -> None:
        if plan.roles is not None:
            TargetGroup(plan.roles, plan.by_server(None))  # checks each server; starts nothing
            return
        adapter = server_adapter(plan.server)
        # First what the server can serve (a web suite of a file server...), before the suite's fileset
        # is generated for it; the docroot is not looked at by the check.
        adapter.check(plan.settings(plan.empty_docroot()))
        settings = plan.settings(None)
        Target(adapter, settings)  # checks; starts nothing
        if settings.memory_bytes is not None or settings.cpu_quota is not None:
            with Cgroup(memory_bytes=settings.memory_bytes, cpu_quota=settings.cpu_quota):
                pass

    def start_target(self, plan: TargetPlan) -> Any:
        target: Target | TargetGroup
        if plan.roles is not None:
            target = TargetGroup(plan.roles, plan.by_server(None))
        else:
            target = Target(server_adapter(plan.server), plan.settings(None))
        target.start()  # stops whatever it started when it fails
        return target

    def server_settings(self, settings: ServerSettings) -> ServerSettings:
        cores = self.split.target if self.split else ()
        return replace(
            settings,
            cpus=cores,
            workers=len(cores) if cores else (os.cpu_count() or 1),
            cpu_quota=self.share.quota if self.share else None,
        )

    def engine_cores(self) -> int:
        return len(self.split.engine) if self.split else len(cpu_split.available())

    def load(self, spec: RunSpec, clients: int, mix_index: int, target: Any) -> Load:
        return LoadClient(spec)

    def probes(self, target: Any) -> list[Probe]:
        memory = getattr(target, "memory", None)  # a Target's cgroup when it has a memory limit
        return [MonitorProbe(self.monitor(target)), *([MemoryProbe(memory)] if memory is not None else [])]

    def monitor(self, target: Any) -> Monitor:
        return Monitor(
            target.pids if target is not None else None,
            target_cores=_target_cores(target),
            engine_cores=self.engine_cores(),
        )

    def drop_page_cache(self, target: Any) -> list[Verdict]:
        return drop_page_cache()

    def pinned(self) -> AbstractContextManager[None]:
        return cpu_split.pinned(self.split.engine) if self.split else nullcontext()

    def verdicts(self) -> list[Verdict]:
        return [cores_shared(len(self.split.target))] if self.split is not None and self.split.shared else []

    def engine_own_cores(self) -> bool:
        return self.split is not None and not self.split.shared

    def shares_cores(self) -> bool:
        return self.split is None or self.split.shared

    def describe(self, target: Any) -> dict[str, Any]:
        if target is None:
            return {}
        return {
            "cpus": {
                "target": list(target.settings.cpus),
                "engine": list(self.split.engine) if self.split else [],
                **(self.share.metadata() if self.share else {}),
            }
        }


@dataclass
class MemoryProbe:
    """The target's memory cgroup beside a mix: the processes the kernel killed for going over the limit
    during the mix (target_oom), and the most the cgroup has used since the target started."""

    cgroup: Cgroup
    _kills_before: int = 0
    _kills_after: int = 0

    def start(self) -> None:
        self._kills_before = self.cgroup.oom_kills()

    def stop(self) -> None:
        self._kills_after = self.cgroup.oom_kills()

    def apply(self, record: MixRecord, window: tuple[float, float]) -> None:
        kills, peak = self._kills_after - self._kills_before, self.cgroup.peak_bytes()
        limit = self.cgroup.memory_bytes or 0
        record.monitor["target_memory"] = {"limit_bytes": limit, "peak_bytes": peak, "oom_kills": kills}
        if kills > 0:
            record.verdicts.append(target_oom(kills, limit, peak))

    def live(self) -> dict[str, Any]:
        return {}


def _target_cores(target: Any) -> float:
    """What the target may use: its share under a quota, else its pinned cores (all when not pinned)."""
    if target is None:
        return 0
    if target.settings.cpu_quota is not None:
        return float(target.settings.cpu_quota.cpus)
    return len(target.settings.cpus) or (os.cpu_count() or 1)
