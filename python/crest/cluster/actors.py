"""What runs on a node: a LoadNode (one engine over the node's share of the clients, and the node's own
monitor) and a TargetNode (a provisioned target through its adapter, or a watch over an external one).

Plain classes: crest.cluster.session makes them Ray actors, so they import no Ray themselves. Every
method returns plain data (dicts, JSON text) that crosses Ray's object store unchanged. Never prints.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import psutil

from crest.cluster import clock
from crest.errors import ConfigError, MachineError
from crest.host.monitor import Monitor
from crest.load import fanout
from crest.load.client import LoadClient
from crest.load.runspec import RunSpec
from crest.servers.reap import running_named

# A target on a cluster node gets its fileset from that node's own cache (TargetNode.provision), so the
# driver does not build one it would not serve; a --fileset DIR is passed as is (it must exist there).
NODE_DOCROOT = Path("/nonexistent/crest-node-docroot")
# A target's logs travel back to the driver's logs directory when its run ends, up to this much (Ray's
# object store carries them); larger ones stay on their node and go with its site.
LOGS_CARRIED_BYTES = 64 * 1024 * 1024


def node_cpus() -> int:
    """The CPUs this process may run on (its affinity), which the node's engine threads use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


class LoadNode:
    """One node's engine for one mix at a time: prepare (its half of the ready barrier), start at T, poll.
    With a client network of its own (open_network: nested placement) the node's share is sent from its
    subnets, their links counted beside it, and each subnet's part handed back for the driver's merge."""

    def __init__(self) -> None:
        self._client: LoadClient | None = None
        self._subnets: Any = None  # crest.network.load.SubnetLoad of the prepared mix, with a network
        self._run: Any = None
        self._monitor: Monitor | None = None
        self._links: Any = None  # crest.network.counters.LinkSampler during a mix, with a network
        self._window: tuple[float, float] = (0.0, 0.0)
        self._network: Any = None  # crest.network.topology.Network for the length of a run
        self._start_at = 0.0

    def now_unix_s(self) -> float:
        """This node's clock, for the driver's offset rounds."""
        return clock.wall()

    def call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        """fn(*args, **kwargs) on this node (crest.load.vantage: a request the SPECweb99 harness sends from
        where the clients stand)."""
        return fn(*args, **kwargs)

    def open_network(self, spec: Any, lines: int, slot: int) -> None:
        """Build this node's client network (a crest.network.spec.NetworkSpec with room for `lines` client
        lines per subnet) as cluster slot `slot`: its own blocks and target address. Raises the crest error
        a local network would (no CAP_NET_ADMIN, a command failed)."""
        from crest.network.topology import Network

        self.close_network()
        network = Network(spec, lines, target_in_root=True, slot=slot)
        network.create()
        self._network = network

    def close_network(self) -> None:
        """Remove this node's client network (idempotent)."""
        if self._network is not None:
            network, self._network = self._network, None
            network.close()

    def prepare(self, spec: RunSpec) -> int:
        """Build and check this node's plan: validate, open-file limit, the target reachable from here.
        Returns the engine threads it will use. Raises the crest error a local run would."""
        spec = replace(spec, threads=max(1, min(node_cpus(), spec.connections)))
        self._client = self._subnets = None
        if self._network is not None:
            from crest.network.load import SubnetLoad, spec_on_network

            subnets = SubnetLoad(spec_on_network(spec, self._network, node=True), self._network)
            subnets.preflight()
            self._subnets = subnets
            return spec.threads
        client = LoadClient(spec)
        client.preflight()
        self._client = client
        return spec.threads

    def start(self, start_at_unix_s: float, window: tuple[float, float]) -> None:
        """Start the prepared plan at `start_at_unix_s` on this node's clock; sample this node over `window`."""
        if self._client is None and self._subnets is None:
            raise MachineError("a node was told to start before its plan was prepared")
        self._monitor = Monitor(None, target_cores=0, engine_cores=node_cpus())
        # The driver speaks this node's clock; the engine and the sampler wait on the system's.
        start_at_unix_s = clock.to_system(start_at_unix_s)
        self._window = (clock.to_system(window[0]), clock.to_system(window[1]))
        self._start_at = start_at_unix_s
        self._monitor.start()
        try:
            if self._subnets is not None:
                from crest.network.counters import LinkSampler

                self._links = LinkSampler(self._network)
                self._links.start()
                self._run = self._subnets.start(start_at_unix_s)
            else:
                assert self._client is not None
                self._run = fanout.start_part(self._client.config, start_at_unix_s)
        except BaseException:
            self._stop_samplers()
            raise

    def _stop_samplers(self) -> None:
        if self._monitor is not None:
            self._monitor.stop()
        if self._links is not None:
            self._links.stop()

    def poll(self, timeout_s: float) -> dict[str, Any]:
        """{"live": totals} while the engine runs (waiting up to `timeout_s` for it to end), then
        {"done": {"report": JSON (with its mergeable part, or merged over the node's subnets), "monitor":
        this node's summary}}; with a network also "parts" (each subnet's part and its first client within
        the node), "subnets" (their shares) and "network" (the links' figures over the window)."""
        if self._run is None:
            return {"live": {}}
        if self._subnets is not None:
            if not self._run.wait(timeout_s):
                return {"live": dict(self._run.live())}
            text = ""
        else:
            text = self._run.wait(timeout_s)
            if text is None:
                return {"live": dict(self._run.live())}
        run, self._run = self._run, None
        self._stop_samplers()
        summary: dict[str, Any] = {}
        if self._monitor is not None:
            summary = self._monitor.summary(*self._window)
            summary.pop("samples", None)
            self._monitor = None
        done: dict[str, Any] = {"report": text, "monitor": summary}
        if self._subnets is not None:
            merged, parts = self._subnets.merge(run.texts, self._start_at)
            shares = merged.pop("subnets")["shares"]
            done.update(report=json.dumps(merged), parts=parts, subnets=shares)
            done["network"] = self._links.figures(*self._window)
            done["network"]["tcp"].pop("target", None)  # this node's own namespace, not the target's
            self._links = None
        return {"done": done}

    def cancel(self) -> None:
        """Stop the engine promptly; `poll` then returns its partial report."""
        if self._run is not None:
            self._run.cancel()


class TargetNode:
    """The target's side on its node: a server provisioned through its adapter, or a watch on
    processes crest did not start; the per-mix monitor runs here, beside them."""

    def __init__(self, node_ip: str) -> None:
        self.node_ip = node_ip  # the node's address as Ray knows it: what the load nodes reach it on
        self._routes: Any = None  # crest.network.routed.ReturnRoutes to load nodes' client networks
        self._target: Any = None
        self._pids: list[int] = []
        self._name: str | None = None
        self._cores: float = 0.0
        self._monitor: Monitor | None = None

    def now_unix_s(self) -> float:
        """This node's clock, for the driver's offset rounds."""
        return clock.wall()

    def check(self, server: str, settings: Any, roles: dict[str, str] | None = None,
              by_server: dict[str, Any] | None = None) -> None:  # fmt: skip
        """Whether `server` (or a role map's servers, each with its settings) can be provisioned here as asked
        (installed, serves the workload's kinds), starting nothing: the preflight of a target on this node."""
        from crest.servers.base import Target
        from crest.servers.group import TargetGroup
        from crest.servers.registry import adapter

        if roles is not None and by_server is not None:
            TargetGroup(roles, by_server)
            return
        Target(adapter(server), settings)

    def provision(
        self, server: str, settings: Any, cpus: float | None, fileset: tuple[str | None, int | None, int | None],
        roles: dict[str, str] | None = None, by_server: dict[str, Any] | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """Start `server` (an adapter name) with `settings` on this node, listening on this node's address,
        pinned to the first ceil(`cpus`) of its cores (a quota for a fraction) when `cpus` is given: no
        engine shares this node, so the split is the node's own. `fileset` (a name, its connections and copies)
        is taken from this node's cache, made here when missing. With a role map (`roles`, and each
        server's settings in `by_server`) its servers start side by side here, as on one machine.
        Returns its URLs (each role's too) and metadata."""
        from crest.servers.base import Target
        from crest.servers.group import TargetGroup
        from crest.servers.registry import adapter

        target: Any
        if roles is not None and by_server is not None:
            target = TargetGroup(roles, {n: self._here(s, cpus, fileset) for n, s in by_server.items()})
        else:
            target = Target(adapter(server), self._here(settings, cpus, fileset))
        target.start()
        self._target = target
        quota = target.settings.cpu_quota
        self._cores = quota.cpus if quota is not None else (len(target.settings.cpus) or node_cpus())
        return {"url": target.url, "tls_url": target.tls_url, "h2c_url": target.h2c_url, "metadata": target.metadata(),
                "role_urls": target.role_urls() if roles is not None else None,
                # A file server's login (Samba's) crosses the authenticated cluster as a Secret.
                "access_log_flush_s": target.access_log_flush_s, "password": target.login_password()}  # fmt: skip

    def _here(self, settings: Any, cpus: float | None, fileset: tuple[str | None, int | None, int | None]) -> Any:
        """A server's settings as this node runs it: its fileset from this node's cache, its cores, its address."""
        from crest.filesets.cache import cached_fileset, empty_docroot
        from crest.servers import cpus as cpu_split

        name, connections, copies = fileset
        if settings.docroot == NODE_DOCROOT:
            docroot = cached_fileset(name, connections=connections, copies=copies) if name else empty_docroot()
            settings = replace(settings, docroot=docroot)
        if cpus is not None:
            share = cpu_split.share(cpus)
            cores = cpu_split.split(share.cpus).target
            settings = replace(settings, cpus=cores, workers=len(cores), cpu_quota=share.quota)
        else:
            settings = replace(settings, workers=node_cpus())
        return replace(settings, bind_host=self.node_ip)

    def watch(self, pid: int | None, name: str | None) -> dict[str, Any]:
        """Watch an external target: a pid (and its children) or every process of a name."""
        if pid is not None and not psutil.pid_exists(pid):
            raise ConfigError(f"--monitor-pid {pid}: no such process on the monitor node: check the pid")
        self._pids = [pid] if pid is not None else []
        self._name = name
        self._cores = node_cpus()
        if name is not None and not self._named():
            raise ConfigError(f"--monitor-name {name!r}: no process of that name on the monitor node: check the name")
        return {"pids": self.pids()}

    def _named(self) -> list[int]:
        return running_named(self._name) if self._name is not None else []

    def pids(self) -> list[int]:
        """The processes watched now (a provisioned target's tree, or the watched pid and its children)."""
        if self._target is not None:
            return list(self._target.pids())
        roots = self._named() if self._name is not None else self._pids
        out: list[int] = []
        for pid in roots:
            try:
                proc = psutil.Process(pid)
                out += [pid, *(c.pid for c in proc.children(recursive=True))]
            except psutil.Error:
                continue
        return out

    def route_back(self, routes: list[tuple[str, str]]) -> None:
        """Route each load node's client blocks back to it (block, node address): nested placement on a real
        cluster, whose subnets' addresses this machine otherwise cannot answer."""
        from crest.network.routed import ReturnRoutes
        from crest.network.topology import STATE_DIR

        if self._routes is None:
            self._routes = ReturnRoutes(STATE_DIR)
        self._routes.add(routes)

    def unroute(self) -> None:
        """Remove the routes back (idempotent)."""
        if self._routes is not None:
            routes, self._routes = self._routes, None
            routes.remove()

    def disclosure(self, url: str | None, tls_url: str | None) -> dict[str, Any]:
        """The run's disclosure (hardware, OS, tuning, the docroot's filesystem, the NIC) read on this node."""
        from crest.host import disclosure

        docroot = self._target.settings.docroot if self._target is not None else None
        return disclosure.collect(docroot, url, tls_url)

    def access_log_lines(self) -> int:
        return int(self._target.access_log_lines()) if self._target is not None else 0

    def access_log_lines_by_role(self) -> dict[str, int]:
        """Each role's server's access-log lines so far (a role map's)."""
        return dict(self._target.access_log_lines_by_role()) if self._target is not None else {}

    def restart(self) -> None:
        """Stop the provisioned target's processes and start them again, as a local restart does."""
        if self._target is None:
            raise MachineError("a node was told to restart a target it did not start")
        self._target.restart()

    def drop_page_cache(self) -> list[Any]:
        """Empty this node's page cache (the target's files come from its disk); verdicts when not permitted."""
        from crest.host.facts import drop_page_cache

        return list(drop_page_cache())

    def check_alive(self) -> None:
        if self._target is not None:
            self._target.processes.check_alive()

    def start_monitor(self) -> None:
        if self._monitor is not None:  # a mix that failed never read its summary
            self._monitor.stop()
        self._monitor = Monitor(self.pids, target_cores=self._cores, engine_cores=1)
        self._monitor.start()

    def stop_monitor(self, window_start: float, window_end: float) -> dict[str, Any]:
        """This mix's target figures over the window (this node's clock), as the local monitor stores them."""
        if self._monitor is None:
            return {}
        self._monitor.stop()
        summary = self._monitor.summary(clock.to_system(window_start), clock.to_system(window_end))
        self._monitor = None
        return {k: v for k, v in summary.items() if k in ("target", "target_idle_pct", "host")}

    def stop(self, keep_logs: bool = False) -> dict[str, bytes]:
        """Stop the provisioned target (idempotent); with `keep_logs`, return its logs (path within the logs
        directory -> bytes, LOGS_CARRIED_BYTES in all; what does not fit is named in NOT-CARRIED.txt)."""
        if self._monitor is not None:
            self._monitor.stop()
            self._monitor = None
        self.unroute()
        if self._target is None:
            return {}
        target, self._target = self._target, None
        if not keep_logs:
            target.stop()
            return {}
        with tempfile.TemporaryDirectory(prefix="crest-node-logs-") as tmp:
            target.keep_logs = Path(tmp)
            target.stop()
            return _carry(Path(tmp))


def _carry(logs: Path) -> dict[str, bytes]:
    """The files under `logs` by relative path, smallest first, up to LOGS_CARRIED_BYTES in all."""
    files = sorted((p for p in logs.rglob("*") if p.is_file()), key=lambda p: p.stat().st_size)
    out: dict[str, bytes] = {}
    left, skipped = LOGS_CARRIED_BYTES, []
    for path in files:
        size = path.stat().st_size
        name = str(path.relative_to(logs))
        if size <= left:
            out[name] = path.read_bytes()
            left -= size
        else:
            skipped.append(f"{name}: {size} bytes, left on the node and removed with its site")
    if skipped:
        out["NOT-CARRIED.txt"] = ("\n".join(skipped) + "\n").encode()
    return out
