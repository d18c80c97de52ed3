"""What a placement is: where one run's load runs, seen through the faces the runner needs.

A placement is chosen once per run (crest.placement.choose) and answers every question whose answer
depends on where the clients and the target are: checking that they can be placed, starting the
target, the load of one mix, what is sampled beside it, dropping the page cache, calling from where the
clients stand. The runner asks these and never branches on a mode. Owns only the faces (protocols and
the shared base); each placement is its own module, and none of them prints.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol, TypeVar

from crest.load.client import ProgressCallback, RunResult
from crest.load.runspec import RunSpec
from crest.servers.base import ServerSettings
from crest.store import MixRecord
from crest.verdicts import Verdict

T = TypeVar("T")


class Load(Protocol):
    """One mix's load, wherever it runs: `preflight()` checks the target from where the clients stand
    (nothing sent), `run()` sends the mix and returns the merged report."""

    config: dict[str, Any]

    def preflight(self) -> None: ...

    def run(self, on_progress: ProgressCallback | None = None) -> RunResult: ...


class Probe(Protocol):
    """Something sampled beside a mix's load (the target's processes, the engine, the links), which
    writes its figures for the window into the mix's record."""

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def apply(self, record: MixRecord, window: tuple[float, float]) -> None: ...

    def live(self) -> dict[str, Any]:
        """Its latest figures while the mix runs (for a watcher; {} when it has none to give cheaply)."""
        ...


@dataclass(frozen=True)
class TargetPlan:
    """The target crest is to start for a run, as the runner asks for it: one server or a role map, the
    settings for a docroot (None: the run's own fileset), and the fileset a remote node makes itself."""

    server: str
    roles: Mapping[str, str] | None  # per-class targets: role -> server (started side by side)
    settings: Callable[[Path | None], ServerSettings]
    by_server: Callable[[Path | None], dict[str, ServerSettings]]  # each server of a role map, serving a docroot
    cpus: float | None  # --cpus as asked (a node splits its own cores)
    fileset: tuple[str | None, int | None, int | None]  # the fileset's name, the connections and copies it is made with
    empty_docroot: Callable[[], Path]  # made on first use (a cache directory), for checks that read none


class Placement:
    """The faces every placement has, with this machine's answers as the defaults."""

    def check(self) -> None:
        """Everything this placement needs before anything is recorded or started (ConfigError)."""

    def preflight_target(self, check: Callable[[], None]) -> None:
        """Run `check` of a --target (it accepts connections) where it tells the truth: here by default."""
        check()

    def check_server(self, plan: TargetPlan) -> None:
        """Whether the target can be provisioned where this placement runs targets, starting nothing."""
        raise NotImplementedError

    @contextmanager
    def around_run(self) -> Iterator[None]:
        """What one run holds around its target, from before it starts to after it stops (a network)."""
        yield

    @contextmanager
    def loading(self) -> Iterator[None]:
        """What one run holds for its mixes once its record exists (the cluster's load actors, a watch):
        a failure to set it up fails the run like a failure of a mix."""
        yield

    def start_target(self, plan: TargetPlan) -> Any:
        """Start the target of one run where this placement runs targets; the caller stops it."""
        raise NotImplementedError

    def reach(self, url: str | None) -> str | None:
        """A --target URL as the clients reach it from where they stand."""
        return url

    def server_settings(self, settings: ServerSettings) -> ServerSettings:
        """A target's settings with where it listens and the cores it gets (here: every core, unpinned)."""
        return replace(settings, workers=os.cpu_count() or 1)

    def engine_cores(self) -> int:
        """The cores an engine of one mix may use (its threads: one per core)."""
        raise NotImplementedError

    def load(self, spec: RunSpec, clients: int, mix_index: int, target: Any) -> Load:
        """The load of one mix of `clients` whole clients."""
        raise NotImplementedError

    def probes(self, target: Any) -> list[Probe]:
        """What is sampled beside one mix's load."""
        return []

    def annotate(self, record: MixRecord, report: dict[str, Any]) -> None:
        """What the placement adds to a mix's record from its merged report (start instant, per-node or
        per-subnet figures); the record's start is the load's common start when it had one."""

    def drop_page_cache(self, target: Any) -> list[Verdict]:
        """Empty the page cache where the target reads its files."""
        raise NotImplementedError

    def from_clients(self, fn: Callable[[], T]) -> T:
        """Call `fn` from where the clients stand (their namespace): reachability checks, warm-up passes."""
        return fn()

    def pinned(self) -> AbstractContextManager[None]:
        """The engine's cores for the length of a mix's load."""
        return nullcontext()

    def verdicts(self) -> list[Verdict]:
        """What the placement itself says of every mix (e.g. cores shared between target and engine)."""
        return []

    def engine_own_cores(self) -> bool:
        """Whether the engine has cores of its own (its wait for a CPU is then the host's noise)."""
        return False

    def shares_cores(self) -> bool:
        """Whether the target and the engine run on the same cores of one host (not pinned apart): then
        their CPU use together can run the host out (host_cpu_bound)."""
        return False

    def describe(self, target: Any) -> dict[str, Any]:
        """Entries of the run's stored config that say where it ran: the cores each side got, or the cluster."""
        return {}

    def network_facts(self) -> dict[str, Any]:
        """The client network's description for the disclosure."""
        return {"not_applicable": "no --network: the clients reached the target over loopback"}

    def disclosure(self, target: Any, url: str | None, tls_url: str | None) -> dict[str, Any]:
        """The run's disclosure (crest.host.disclosure), read on the machine the target runs on."""
        from crest.host import disclosure

        docroot = getattr(getattr(target, "settings", None), "docroot", None)
        return {**disclosure.collect(docroot, url, tls_url), "read_on": "this machine (the target's and the clients')"}


class Sampler(Protocol):
    """A monitor of processes and the machine: crest.host.monitor.Monitor, or one on another node."""

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def summary(self, window_start: float, window_end: float) -> dict[str, Any]: ...

    def latest(self) -> dict[str, Any]: ...


@dataclass
class MonitorProbe:
    """A monitor as a probe: its summary over the window goes into the record's monitor figures."""

    monitor: Sampler

    def start(self) -> None:
        self.monitor.start()

    def stop(self) -> None:
        self.monitor.stop()

    def apply(self, record: MixRecord, window: tuple[float, float]) -> None:
        record.monitor.update(self.monitor.summary(*window))

    def live(self) -> dict[str, Any]:
        return self.monitor.latest()
