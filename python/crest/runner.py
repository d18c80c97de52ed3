"""Runs a suite mix by mix through LoadClient and persists each mix as it ends.

Owns the order of a run: resolve the fileset manifest and the request table,
check the targets before any traffic, create the run record, then for each
mix build the engine config (its window cuts the ramps exactly), run it and
store it in one transaction before starting the next. Ctrl-C keeps every
finished mix and marks the run interrupted; a target that dies marks it
failed with the reason. Never prints: progress goes to a callback. Never
plans: which runs an experiment has and their order are crest.experiment's.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, NoReturn, Protocol

from crest import disclosure
from crest.errors import ConfigError, DiskFullError, MachineError, NodeLostError, TargetError
from crest.filesets import Manifest, build_manifest, load_manifest
from crest.filesets.cache import cached_fileset, empty_docroot
from crest.host import drop_page_cache, host_facts
from crest.loadclient import LoadClient
from crest.monitor import Monitor, client_bound_verdict, host_verdicts, nodes_engine_summary
from crest.network import netns
from crest.network.addresses import TARGET_ADDRESS
from crest.network.counters import LinkSampler
from crest.network.load import SubnetLoad, check_fits, lines_needed
from crest.network.spec import NetworkSpec, parse_network
from crest.network.topology import Network, check_capability
from crest.network.url import on_network
from crest.preflight import check_reachable, parse_file_url, parse_url
from crest.roles import RoleUrls, is_role_map, parse_role_map, roles_by_class, url_role_map
from crest.runspec import RunSpec
from crest.servers import cpus as cpu_split
from crest.servers.base import SERVER_KINDS, ServerSettings, Target
from crest.servers.cgroup import Cgroup
from crest.servers.group import TargetGroup, settings_by_server
from crest.servers.registry import adapter as server_adapter
from crest.store import DEFAULT_PATH, MixRecord, RunMeta, Store, StoreError, mix_from_report
from crest.suite import Mix, Suite
from crest.suite.specweb99 import Specweb99
from crest.urltable import RequestTable, build_table, specweb99_urls
from crest.verdicts import LINK_BOUND_UTILISATION, Verdict, cores_shared, link_bound, page_cache_elsewhere
from crest.warmup import warmup_figures, warmup_spec


@dataclass(frozen=True)
class RunRequest:
    """Everything `crest run` was asked, enough to start or resume a run."""

    suite: Suite
    target: str | None  # the URL; None when crest provisions the target (`server`)
    tls_target: str | None = None
    # Per-class targets given as URLs (`--target static=URL,dynamic=URL`): role -> base URL; `target` is
    # then the first role's URL. A role map of servers is `server` itself ("static=lighttpd,dynamic=...").
    role_targets: dict[str, str] = field(default_factory=dict)
    profile: str = "full"
    repeat: int | None = None  # None: the suite's own repeat count
    fileset_dir: Path | None = None
    store_path: Path = DEFAULT_PATH
    insecure: bool = False
    timeout_s: float = 10.0
    seed: int = 0
    validate_content: bool = False  # check each static body's first line, not only its size
    engine_threads: int | None = None  # None: one per available CPU, at most one per connection
    # Under load the engine naps instead of blocking on its sockets (crest.runspec); False: it always blocks.
    nap: bool = True
    factors: dict[str, Any] = field(default_factory=dict)  # stored with each run, for grouping in analysis
    experiment: str | None = None  # the id shared by every run of one `crest run` invocation
    # A target crest provisions, starts and stops for each run (an adapter name), and its factors.
    server: str | None = None
    cpus: float | None = (
        None  # CPUs of the target: ceil(cpus) cores pinned, a quota for a fraction; the engine gets the rest
    )
    memory_bytes: int | None = None  # the target's memory limit (cgroup)
    server_options: dict[str, str] = field(default_factory=dict)
    access_log: bool = False  # the target logs each request; each mix stores the count
    # Cluster mode (crest.cluster): the --cluster address, how many load nodes (None: every free one), the
    # node a provisioned target runs on, and a monitor beside an external target (a node and a pid or name).
    cluster: str | None = None
    nodes: int | None = None
    target_node: str | None = None
    monitor_node: str | None = None
    monitor_pid: int | None = None
    monitor_name: str | None = None
    # A capacity search's settings (crest.capacity_runner): stored with the run, whose mixes are its probes.
    capacity: dict[str, Any] | None = None
    # File workloads: the loadfile to replay instead of the suite's, and where an smb:// target's password
    # is (a 0600 file; else CREST_SMB_PASSWORD). The password itself is never part of the request.
    loadfile: str | None = None
    password_file: Path | None = None
    # A client network (--network SPEC, crest.network): the clients send from subnets in their own
    # network namespaces, over shaped links, to the target in its namespace (or this one, for a URL).
    network: str | None = None

    def options(self) -> dict[str, Any]:
        """The options as stored with the run (resume rebuilds the request from them)."""
        d = asdict(self)
        d.pop("suite")
        d["fileset_dir"] = str(self.fileset_dir) if self.fileset_dir else None
        d["password_file"] = str(self.password_file) if self.password_file else None
        d["store_path"] = str(self.store_path)
        return d


@dataclass(frozen=True)
class Event:
    """Progress for whoever watches (the CLI draws it); `kind` says which fields matter."""

    kind: str  # run-started | mix-started | mix-progress | mix-finished | run-finished
    run_id: str
    repeat_index: int
    mix: Mix | None = None
    mixes: int = 0
    live: dict[str, Any] = field(default_factory=dict)
    record: MixRecord | None = None
    status: str = ""
    reason: str | None = None


EventCallback = Callable[[Event], None]


class MixHooks(Protocol):
    """What a harness around the runner does at the seams (SPECweb99: operational validation once the
    target answers, Reset before each mix, the POST-log check after it, before the mix is stored).
    A hook that raises fails the run with its message, like any failure between mixes."""

    def target_ready(self, base_url: str) -> None: ...

    def before_mix(self, mix: Mix) -> None: ...

    def after_mix(self, mix: Mix, record: MixRecord) -> None: ...


class RunInterrupted(Exception):
    """Ctrl-C stopped a run; its finished mixes are stored and it is marked interrupted."""

    def __init__(self, run_id: str) -> None:
        super().__init__(
            f"run {run_id} interrupted: its finished mixes are stored; continue with `crest run --resume {run_id}`"
        )
        self.run_id = run_id


class SuiteRunner:
    """Runs one RunRequest: `run_trial()` for each new trial (crest.experiment orders them), `resume()`
    for an interrupted one."""

    def __init__(
        self, request: RunRequest, on_event: EventCallback | None = None, hooks: MixHooks | None = None
    ) -> None:
        self.request = request
        self.on_event = on_event or (lambda _event: None)
        self.hooks = hooks
        self.mixes = request.suite.mixes(request.profile)
        # In cluster mode the target has its node to itself: its --cpus are split there, not here.
        local_cpus = request.cpus if request.cluster is None else None
        self.share = cpu_split.share(local_cpus) if local_cpus else None
        self.split = cpu_split.split(self.share.cpus) if self.share else None
        self._docroot: Path | None = None
        self._watch: Any = None  # crest.cluster.target.NodeWatch during a run with --monitor-node
        # The password of the file server crest started (it made the user); never stored.
        self._target_password: str | None = None
        if request.server is None:
            if request.target is None:
                raise ConfigError("give a target URL (--target) or a server to provision (--server)")
            if request.cpus or request.memory_bytes or request.server_options or request.access_log:
                raise ConfigError(
                    "--cpus, --memory, --server-opt and --access-log need a target crest starts:"
                    " give --server NAME instead of --target (see `crest servers`)"
                )
        # Per-class targets: a role map of servers (started side by side) or of URLs.
        self.server_roles = (
            parse_role_map(request.server, what="--server", example="static=lighttpd,dynamic=apache-event")
            if request.server is not None and is_role_map(request.server)
            else None
        )
        self._check_lab_options()
        _check_cluster_options(request)
        self.net_spec = self._check_network_options()
        self._network: Network | None = None
        if request.server is not None and any(c.kind == "url" for c in request.suite.workload.classes):
            raise ConfigError(
                f"suite {request.suite.name} requests a URL as given, which only a --target has: give --target URL"
            )
        self.manifest = self._manifest()
        self.table: RequestTable | None = None
        # A sweep's mixes each have their own table (static files of one size); cached by size.
        self._sized_tables: dict[int, RequestTable] = {}
        if request.target is not None:
            self._bind(request)

    def _check_lab_options(self) -> None:
        """Per-class targets, restarts and warm-up passes fit the run (ConfigError before anything starts)."""
        request, workload = self.request, self.request.suite.workload
        roles: dict[str, str] | None = self.server_roles or request.role_targets or None
        if roles is not None:
            if request.cluster is not None:
                raise ConfigError("per-class targets (ROLE=... maps) run on one machine: drop --cluster")
            if workload.is_file:
                raise ConfigError(f"suite {request.suite.name} is a file workload: give one target, not a role map")
            tls = {"tls": request.tls_target} if request.tls_target and request.role_targets else {}
            roles_by_class(workload, {**roles, **tls})
        ladder = request.suite.ladder
        if ladder.restart_target not in (False, []):
            if request.server is None:
                raise ConfigError(f"suite {request.suite.name} restarts its target between mixes, which only a"
                                  " target crest starts can do: give --server NAME (see `crest servers`)")  # fmt: skip
            if request.cluster is not None:
                raise ConfigError(f"suite {request.suite.name} restarts its target between mixes, which crest"
                                  " does not do on a cluster node yet: run it without --cluster")  # fmt: skip
        if ladder.warmup != "none" and (workload.specweb99 is not None or workload.is_file):
            raise ConfigError(f"suite {request.suite.name}: warmup requests every entry of the request table"
                              " once, and SPECweb99 and file workloads draw their own requests: drop warmup")  # fmt: skip

    def _check_network_options(self) -> NetworkSpec | None:
        """The --network spec, checked against the rest of the request (ConfigError before anything starts)."""
        request = self.request
        if request.network is None:
            return None
        spec = parse_network(request.network)
        if request.cluster is not None:
            raise ConfigError("--network builds the client network on this machine: leave out --cluster or --network")
        if self.server_roles is not None or request.role_targets:
            raise ConfigError("--network carries one target: give one --server or --target, not a role map")
        if request.suite.workload.is_file:
            raise ConfigError(f"suite {request.suite.name} is a file workload; --network carries HTTP: drop --network")
        for url in filter(None, (request.target, request.tls_target)):
            on_network(url)  # a target on this machine
        most = max(self.mixes, key=lambda m: m.connections)
        check_fits(_stand_in(most), spec)  # every client line its own address
        return spec

    def _role_urls(self, request: RunRequest, target: Any = None) -> RoleUrls | None:
        """Each role's URLs: the started servers' (a TargetGroup) or the --target role map's; None for one target."""
        if isinstance(target, TargetGroup):
            return target.role_urls()
        if request.role_targets:
            return url_role_map(request.role_targets, request.tls_target)
        return None

    def _bind(self, request: RunRequest, role_urls: RoleUrls | None = None) -> None:
        """Point the runner at a target's URLs (a provisioned target gets new ports each run)."""
        self.request = request
        self._sized_tables = {}
        role_urls = role_urls or self._role_urls(request)
        self.table = build_table(
            request.suite.workload, self.manifest, request.target or "", request.tls_target,
            check_content=request.validate_content, role_urls=role_urls,
        )  # fmt: skip
        for size in request.suite.sweep_sizes() or []:
            self._sized_tables[size] = build_table(
                request.suite.workload, self.manifest, request.target or "", request.tls_target,
                check_content=request.validate_content, size_bytes=size, role_urls=role_urls,
            )  # fmt: skip

    def _table_for(self, mix: Mix) -> RequestTable:
        """The request table of one mix: the suite's, or for a sweep's mix the one of its size."""
        assert self.table is not None, "a runner is bound to its target before it builds engine configs"
        if mix.size_bytes is None:
            return self.table
        return self._sized_tables[mix.size_bytes]

    def preflight(self) -> None:
        """Check the target before anything is recorded or sent: a URL accepts connections, or a
        server can be provisioned as asked (installed, serves the workload's kinds, cores, memory).
        In cluster mode: the cluster answers and has the nodes asked for (each load node then checks
        the target from where it stands at the ready barrier before each mix)."""
        cluster = self.request.cluster is not None
        if self.net_spec is not None:
            check_capability()
        if self.request.server is not None:
            if cluster:
                self._check_on_node(self.request.server)
            elif self.server_roles is not None:
                TargetGroup(self.server_roles, self._settings_by_server())  # checks each server; starts nothing
            else:
                adapter = server_adapter(self.request.server)
                # First what the server can serve (a web suite of a file server...), before the suite's
                # fileset is generated for it; the docroot is not looked at by the check.
                adapter.check(self._settings(docroot=empty_docroot()))
                settings = self._settings()
                Target(adapter, settings)  # checks; starts nothing
                if settings.memory_bytes is not None or settings.cpu_quota is not None:
                    with Cgroup(memory_bytes=settings.memory_bytes, cpu_quota=settings.cpu_quota):
                        pass
            if self.table is None:
                # Validate one engine config against a stand-in for the target crest will start.
                file = self.request.suite.workload.is_file
                # HTTP/3 goes to the TLS port (see `_target`), so its stand-in is https too.
                http3 = self.request.suite.workload.over_quic
                stand_in = (
                    "smb://crest@127.0.0.1:1/crest"
                    if file
                    else "https://127.0.0.1:1"
                    if http3
                    else "http://127.0.0.1:1"
                )
                stand_ins = {r: ("http://127.0.0.1:1", "https://127.0.0.1:1") for r in self.server_roles or {}}
                self._bind(replace(self.request, target=stand_in, tls_target="https://127.0.0.1:1"), stand_ins or None)
                self._target_password = "stand-in" if file else None
                LoadClient(self._spec(self.mixes[0]))
                self.table = None
                self._target_password = None
                self.request = replace(self.request, target=None, tls_target=None)
            return
        if cluster:
            self._cluster_nodes()  # the cluster answers and has the nodes asked for
        elif self.request.suite.workload.is_file:
            LoadClient(self._spec(self.mixes[0])).preflight()  # the directory, or the SMB server and its login
        else:
            # Validate one engine config first, so a bad option fails before anything is sent.
            LoadClient(self._spec(self.mixes[0]))
            # HTTP/3 is QUIC over UDP, which a TCP connect cannot probe: only the names are resolved.
            tcp = not self.request.suite.workload.over_quic
            for url in dict.fromkeys(filter(None, (self.request.target, self.request.tls_target,
                                                   *self.request.role_targets.values()))):  # fmt: skip
                check_reachable(parse_url(url), tcp=tcp)
            return
        # Validate one engine config now so a bad option fails before the run exists.
        LoadClient(self._spec(self.mixes[0]))

    def _check_on_node(self, server: str) -> None:
        """The adapter checked where it will run: installed on the target's node, serving the workload."""
        from crest.cluster.actors import NODE_DOCROOT
        from crest.cluster.target import NodeActor

        cluster, _, node = self._cluster_nodes()
        remote = NodeActor(cluster, node)
        try:
            remote.call("check", server, self._settings(docroot=NODE_DOCROOT))
        finally:
            remote.release()

    def run_trial(self, store: Store, repeat_index: int, mixes: Iterable[Mix] | None = None) -> str:
        """One run of the suite (one trial), with a freshly started target when crest provisions it.

        mixes: the suite's ladder unless given; may be lazy (a capacity search makes each probe after
        the previous one is stored and judged through the mix-finished event).
        """
        with self._target() as target:
            run_id = store.create_run(self._meta(repeat_index, target))
            if target is not None:
                target.keep_logs = store.path.parent / "logs" / run_id
            self._execute(store, run_id, repeat_index, self.mixes if mixes is None else mixes, target)
            return run_id

    def _cluster_nodes(self) -> tuple[Any, list[Any], Any]:
        """The cluster session, its load nodes and the target's (or monitor's) node, checked against the
        suite: ConfigError before anything is recorded."""
        from crest.cluster import placement
        from crest.cluster.session import session

        assert self.request.cluster is not None
        cluster = session(self.request.cluster)
        alive = cluster.nodes()
        where = self.request.target_node or self.request.monitor_node
        option = "--target-node" if self.request.target_node else "--monitor-node"
        side = placement.find_node(alive, where, option) if where else None
        load = placement.choose_nodes(alive, self.request.nodes, {side.node_id} if side else set())
        placement.check_clients(max(m.clients for m in self.mixes), load)
        return cluster, load, side

    @contextmanager
    def _target(self) -> Iterator[Target | None]:
        """The target of one run inside its client network (--network), built before it and removed after."""
        if self.net_spec is None:
            with self._started_target() as target:
                yield target
            return
        most = max(self.mixes, key=lambda m: m.connections)
        lines = lines_needed(self._spec(most) if self.table else _stand_in(most), self.net_spec.subnets,
                             self.net_spec.link_per)  # fmt: skip
        network = Network(self.net_spec, lines, target_in_root=self.request.server is None)
        unbound = self.request
        with network:
            self._network = network
            try:
                if self.request.server is None:
                    self._bind(replace(self.request, target=on_network(self.request.target or ""),
                                       tls_target=on_network(self.request.tls_target) if self.request.tls_target
                                       else None))  # fmt: skip
                with self._started_target() as target:
                    yield target
            finally:
                self._network = None
                if self.request.server is None:
                    self._bind(unbound)

    @contextmanager
    def _started_target(self) -> Iterator[Target | None]:
        """The provisioned target for one run, started and bound; None for a URL target."""
        server = self.request.server
        if server is None:
            yield None
            return
        target: Any
        if self.request.cluster is not None:
            from crest.cluster.actors import NODE_DOCROOT
            from crest.cluster.target import NodeTarget

            cluster, _, node = self._cluster_nodes()
            fileset = self.request.suite.workload.fileset if self.request.fileset_dir is None else None
            # Provisioned on its node as it is made; it has the face of Target the runner uses.
            target = NodeTarget(cluster, node, server, self._settings(docroot=NODE_DOCROOT), self.request.cpus,
                                (fileset, fileset_connections(self.request.suite)))  # fmt: skip
        elif self.server_roles is not None:
            target = TargetGroup(self.server_roles, self._settings_by_server())
            target.start()  # stops whatever it started when it fails
        else:
            target = Target(server_adapter(server), self._settings())
            target.start()  # stops whatever it started when it fails
        try:
            # HTTP/2 in cleartext goes where the server takes h2c by prior knowledge (a port of its own for nginx);
            # HTTP/3 is always encrypted: every class goes to the TLS port (QUIC on its UDP twin).
            http3 = self.request.suite.workload.over_quic
            plain = target.tls_url if http3 and target.tls_url else (target.h2c_url or target.url)
            self._bind(replace(self.request, target=plain, tls_target=target.tls_url, insecure=True),
                       self._role_urls(self.request, target))  # fmt: skip
            # A file server crest started made its own login: the password is read here, never stored.
            secret = getattr(target, "secret_file", None)
            try:
                self._target_password = Path(secret).read_text().strip() if secret else None
            except (OSError, UnicodeDecodeError) as exc:
                raise TargetError(f"cannot read the file server's password file {secret}: {exc}") from None
            yield target
        finally:
            self._target_password = None
            target.stop()
            self.request = replace(self.request, target=None, tls_target=None)
            self.table = None

    def _cached_docroot(self) -> Path:
        """The suite's fileset from the cache, checked once per runner (not again for every trial)."""
        if self._docroot is None:
            workload = self.request.suite.workload
            self._docroot = (
                cached_fileset(workload.fileset, connections=fileset_connections(self.request.suite))
                if workload.fileset else empty_docroot()
            )  # fmt: skip
        return self._docroot

    def _settings_by_server(self) -> dict[str, ServerSettings]:
        """Each server of a role map with the kinds and TLS of the classes it serves."""
        assert self.server_roles is not None
        workload = self.request.suite.workload
        role = roles_by_class(workload, self.server_roles)
        kinds: dict[str, set[str]] = {}
        for c in workload.classes:
            if c.kind in SERVER_KINDS:
                kinds.setdefault(role[c.name], set()).add(c.kind)
        tls = {role[c.name] for c in workload.classes if c.tls}
        return settings_by_server(self.server_roles, self._settings(), kinds, tls)

    def _settings(self, docroot: Path | None = None) -> ServerSettings:
        workload = self.request.suite.workload
        kinds = {c.kind for c in workload.classes if c.kind in SERVER_KINDS}
        cores = self.split.target if self.split else ()
        docroot = docroot or self.request.fileset_dir or self._cached_docroot()
        return ServerSettings(
            docroot=docroot,
            cpus=cores,
            workers=len(cores) if cores else (os.cpu_count() or 1),
            memory_bytes=self.request.memory_bytes,
            cpu_quota=self.share.quota if self.share else None,
            access_log=self.request.access_log,
            tls=any(c.tls for c in workload.classes) or workload.over_quic,
            tls_key=workload.tls_settings().key,
            kinds=frozenset(kinds),
            keepalive=workload.keepalive,
            http2=workload.http_version == "2",
            http3=workload.over_quic,
            options=dict(self.request.server_options),
            bind_host=str(TARGET_ADDRESS) if self._network else "127.0.0.1",
            netns=self._network.target_ns if self._network else None,
        )

    @classmethod
    def resume(cls, run_id: str, store_path: Path = DEFAULT_PATH, on_event: EventCallback | None = None) -> str:
        """Continues a stored run with the mixes it has not finished."""
        try:
            return cls._resume(run_id, store_path, on_event)
        finally:
            close_clusters()

    @classmethod
    def _resume(cls, run_id: str, store_path: Path, on_event: EventCallback | None) -> str:
        with Store(store_path) as store:
            detail = store.run(run_id)
            if detail.status == "complete":
                raise ConfigError(f"run {detail.id} is already complete: nothing to resume")
            if detail.meta.config["options"].get("capacity"):
                raise ConfigError(
                    f"run {detail.id} is a capacity search, whose next probe depends on every earlier one:"
                    " start it again with crest capacity"
                )
            if (detail.meta.config.get("suite") or {}).get("workload", {}).get("specweb99") is not None:
                raise ConfigError(
                    f"run {detail.id} is a SPECweb99 test, whose iterations its harness makes: start it again"
                    " with crest specweb99"
                )
            options = dict(detail.meta.config["options"])
            options["fileset_dir"] = Path(options["fileset_dir"]) if options["fileset_dir"] else None
            options["store_path"] = store_path
            request = RunRequest(suite=Suite.model_validate(detail.meta.config["suite"]), **options)
            if request.server is not None:
                request = replace(request, target=None, tls_target=None)
            runner = cls(request, on_event)
            runner.preflight()
            done = {m.index for m in detail.mixes}
            store.reopen_run(detail.id)
            with runner._target() as target:
                if target is not None:
                    target.keep_logs = store.path.parent / "logs" / detail.id
                left = [m for m in runner.mixes if m.index not in done]
                runner._execute(store, detail.id, detail.meta.repeat_index, left, target)
            return detail.id

    def _execute(
        self, store: Store, run_id: str, repeat_index: int, mixes: Iterable[Mix], target: Target | None
    ) -> None:
        self.on_event(Event("run-started", run_id, repeat_index, mixes=len(self.mixes)))
        load_nodes = None
        try:
            if self.request.cluster is not None:
                from crest.cluster.driver import LoadNodes
                from crest.cluster.target import NodeWatch

                cluster, nodes, side = self._cluster_nodes()
                if self.request.monitor_node is not None:
                    self._watch = NodeWatch(cluster, side, self.request.monitor_pid, self.request.monitor_name)
                load_nodes = LoadNodes(cluster, nodes)
            if self.hooks is not None:
                self.hooks.target_ready(self.request.target or "")
            self._execute_mixes(store, run_id, repeat_index, mixes, target, load_nodes)
        except KeyboardInterrupt:
            # Ctrl-C outside a mix's load (a preflight, storing a mix): still interrupted, not "running".
            self._finish(store, run_id, repeat_index, "interrupted", "interrupted between mixes")
            raise RunInterrupted(run_id) from None
        except NodeLostError as exc:
            self._fail_if_running(store, run_id, repeat_index, str(exc))
            db = "" if store.path == DEFAULT_PATH else f" --db {store.path}"
            why = str(exc).removeprefix(f"node {exc.node} ")
            hint = f"the mixes before it are stored; when the cluster is whole again, crest run --resume {run_id}{db}"
            raise NodeLostError(exc.node, f"{why}: {hint}") from None
        except Exception as exc:
            # A failure outside a mix's load (placing nodes, a node's monitor, the access log): the run
            # must not stay "running".
            self._fail_if_running(store, run_id, repeat_index, str(exc))
            raise
        finally:
            if load_nodes is not None:
                load_nodes.close()
            if self._watch is not None:
                self._watch.stop()
                self._watch = None

    def _fail_if_running(self, store: Store, run_id: str, repeat_index: int, reason: str) -> None:
        try:
            if store.run(run_id).status == "running":
                self._finish(store, run_id, repeat_index, "failed", reason)
        except (StoreError, DiskFullError):
            pass  # the store cannot take it: --resume continues a "running" run all the same

    def _load(self, mix: Mix, repeat_index: int, load_nodes: Any, target: Target | None = None) -> Any:
        """The load of one mix: this machine's engine, or the cluster's nodes (the same face)."""
        spec = self._spec(mix, repeat_index)
        if self._network is not None:
            return SubnetLoad(spec, self._network)
        if load_nodes is None:
            return LoadClient(spec)
        side = getattr(target, "remote", None) or getattr(self._watch, "remote", None)  # NodeTarget / NodeWatch
        return load_nodes.load(spec, mix.clients, mix.index, side)

    def _drop_page_cache(self, target: Target | None) -> list[Verdict]:
        """Empty the page cache where the target reads its files: this machine, or its cluster node."""
        if self.request.cluster is None:
            return drop_page_cache()
        side: Any = target if target is not None else self._watch  # a NodeTarget or NodeWatch
        return list(side.drop_page_cache()) if side is not None else [page_cache_elsewhere()]

    def _monitor(self, target: Target | None) -> Any:
        """The mix's monitor: here, or on the target's node in cluster mode (the same face)."""
        if self.request.cluster is not None:
            if target is not None:
                return target.monitor()  # type: ignore[attr-defined]  # a NodeTarget
            if self._watch is not None:
                return self._watch.monitor()
            return None
        return Monitor(
            target.pids if target is not None else None,
            target_cores=self._target_cores(target),
            engine_cores=len(self.split.engine) if self.split else len(cpu_split.available()),
        )

    def _execute_mixes(
        self, store: Store, run_id: str, repeat_index: int, mixes: Iterable[Mix], target: Target | None,
        load_nodes: Any = None,
    ) -> None:  # fmt: skip
        for mix in mixes:
            self.on_event(Event("mix-started", run_id, repeat_index, mix=mix, mixes=len(self.mixes)))
            lab: dict[str, Any] = {}
            try:
                if mix.restart_target and target is not None:
                    lab["restart"] = self._restart(target)
                client = self._load(mix, repeat_index, load_nodes, target)
                client.preflight()
            except TargetError as exc:
                self._finish(store, run_id, repeat_index, "failed", f"target unreachable before mix {mix.index}: {exc}")
                raise
            except NodeLostError as exc:
                self._finish(store, run_id, repeat_index, "failed", f"before mix {mix.index}: {exc}")
                raise
            if self.hooks is not None:
                self.hooks.before_mix(mix)
            drop = self.request.suite.workload.drop_caches
            found = self._drop_page_cache(target) if drop else []
            if self.split is not None and self.split.shared:
                found.append(cores_shared(len(self.split.target)))
            if mix.warmup:
                lab["warmup"] = self._warm_up(mix, repeat_index)
            monitor = self._monitor(target)
            logged_before = target.access_log_lines() if target is not None else 0
            by_role_before: dict[str, int] = (
                target.access_log_lines_by_role() if isinstance(target, TargetGroup) else {}
            )
            started = time.time()
            progress = lambda live, m=mix: self.on_event(Event("mix-progress", run_id, repeat_index, mix=m, live=live))  # noqa: E731
            if monitor is not None:
                monitor.start()
            sampler = LinkSampler(self._network) if self._network is not None else None
            if sampler is not None:
                sampler.start()
            try:
                with cpu_split.pinned(self.split.engine) if self.split else nullcontext():
                    result = client.run(progress)
            except Exception as exc:
                self._finish(store, run_id, repeat_index, "failed", f"mix {mix.index}: {exc}")
                raise
            finally:
                if monitor is not None:
                    monitor.stop()
                if sampler is not None:
                    sampler.stop()
            ended = time.time()
            if result.interrupted:
                self._finish(store, run_id, repeat_index, "interrupted", f"interrupted during mix {mix.index}")
                raise RunInterrupted(run_id)
            record = mix_from_report(mix, result.report, started, ended, found)
            if self.request.suite.workload.specweb99 is not None:
                # Every POST the iteration sent, window or not: the POST-log check counts them all.
                record.specweb99 = {"issued_by_class": dict(result.report.get("issued_by_class") or {})}
            t = mix.timing
            if "cluster" in result.report:
                # The engine ran on the nodes: the mix starts at their common start, and each node's
                # own monitor judged its engine (the busiest node speaks for the mix).
                started = float(result.report["cluster"]["start_at_unix_s"])
                record.started_at = started
                record.cluster = result.report["cluster"]
                record.monitor.update(nodes_engine_summary(record.cluster["nodes"]))
            if "subnets" in result.report:  # the subnets' engines started together a moment after `started`
                started = float(result.report["subnets"]["start_at_unix_s"])
                record.started_at = started
            if sampler is not None:
                record.network = sampler.figures(started + t.ramp_up_s, started + t.length_s - t.ramp_down_s)
                record.verdicts += link_verdicts(record.network)
            if monitor is not None:
                record.monitor.update(monitor.summary(started + t.ramp_up_s, started + t.length_s - t.ramp_down_s))
            client_bound = client_bound_verdict(record.monitor)
            if client_bound:
                record.verdicts.append(client_bound)
            # The engine's wait for a CPU is noise only when it has cores of its own (else: the target's).
            own = self.split is not None and not self.split.shared
            record.verdicts += host_verdicts(record.monitor, cached=not drop, engine_own_cores=own)
            if target is not None and target.settings.access_log:  # --access-log or access_log=on
                time.sleep(target.access_log_flush_s)
                record.access_log_requests = target.access_log_lines() - logged_before
                if isinstance(target, TargetGroup):
                    after = target.access_log_lines_by_role()
                    lab["access_log_requests_by_role"] = {r: after[r] - by_role_before[r] for r in after}
            record.lab = lab or None
            if self.hooks is not None:
                self.hooks.after_mix(mix, record)
            try:
                store.add_mix(run_id, record)
            except DiskFullError as exc:
                self._stop_on_full_disk(store, run_id, repeat_index, mix, exc)
            self.on_event(Event("mix-finished", run_id, repeat_index, mix=mix, record=record, mixes=len(self.mixes)))
            if record.requests == 0 and record.errors.get("connect", 0) > 0:
                reason = self._dead_target_reason(mix, target)
                if reason:
                    self._finish(store, run_id, repeat_index, "failed", reason)
                    raise TargetError(reason)
        # Whether the target was idle at the peak is the analysis's to judge (over a configuration's
        # trials); each mix stores the target's CPU use for it.
        self._finish(store, run_id, repeat_index, "complete", None)

    def _restart(self, target: Target | TargetGroup) -> dict[str, Any]:
        """Restart the provisioned target before a mix; the pids before and after are stored with the mix."""
        before = sorted(target.pids())
        target.restart()
        return {"pids_before": before, "pids_after": sorted(target.pids())}

    def _warm_up(self, mix: Mix, repeat_index: int) -> dict[str, Any]:
        """Request every entry of the mix's table once before its window (never measured): the figures.

        Raises:
            KeyboardInterrupt: Ctrl-C during the pass (the run is then stored as interrupted between mixes).
        """
        spec = self._spec(mix, repeat_index)
        started = time.monotonic()
        client = LoadClient(warmup_spec(spec))
        result = netns.call_in(self._network.subnet_ns(1), client.run) if self._network else client.run()
        if result.interrupted:
            raise KeyboardInterrupt
        return warmup_figures(result.report, len(spec.requests), time.monotonic() - started)

    def _stop_on_full_disk(
        self, store: Store, run_id: str, repeat_index: int, mix: Mix, exc: DiskFullError
    ) -> NoReturn:
        """Fail the run (if the store can still write that) and say how to go on: the mixes stored stay."""
        reason = f"cannot store mix {mix.index}: {exc.problem}"
        try:
            self._finish(store, run_id, repeat_index, "failed", reason)
        except (DiskFullError, StoreError):
            pass  # left "running": --resume continues it all the same
        db = "" if store.path == DEFAULT_PATH else f" --db {store.path}"
        raise MachineError(f"{reason}: free space, then crest run --resume {run_id}{db}") from None

    def _finish(self, store: Store, run_id: str, repeat_index: int, status: str, reason: str | None) -> None:
        store.finish_run(run_id, status, reason)
        self.on_event(Event("run-finished", run_id, repeat_index, status=status, reason=reason))

    def _target_cores(self, target: Target | None) -> float:
        """What the target may use: its share under a quota, else its pinned cores (all when not pinned)."""
        if target is None:
            return 0
        if target.settings.cpu_quota is not None:
            return target.settings.cpu_quota.cpus
        return len(target.settings.cpus) or (os.cpu_count() or 1)

    def _dead_target_reason(self, mix: Mix, target: Target | None = None) -> str | None:
        try:
            if target is not None:
                target.check_alive()
            if self.request.suite.workload.is_file:
                if self.request.target and self.request.target.startswith("smb:"):
                    check_reachable(parse_file_url(self.request.target))
            else:
                tcp = not self.request.suite.workload.over_quic
                for url in filter(None, (self.request.target, self.request.tls_target)):
                    where = self._network.subnet_ns(1) if self._network else None
                    netns.call_in(where, partial(check_reachable, parse_url(url), tcp=tcp))
        except TargetError as exc:
            return f"the target stopped answering during mix {mix.index}: {exc}"
        return None

    def _spec(self, mix: Mix, repeat_index: int = 0) -> RunSpec:
        workload = self.request.suite.workload
        if workload.is_file:
            return self._file_spec(mix, repeat_index)
        t = mix.timing
        cpus = len(self.split.engine) if self.split else len(cpu_split.available())
        table = self._table_for(mix)
        # A window that runs to the end of the mix lets in-flight exchanges finish and count,
        # so its counts equal the target's own (bounded by the request timeout).
        drain_s = self.request.timeout_s if t.ramp_down_s == 0 else 0.0
        spec = workload.specweb99
        specweb = specweb99_config(spec, self.request.target or "", fileset_connections(self.request.suite) or 1, mix)
        return RunSpec(
            url=table.requests[0]["url"] if table.requests else (self.request.target or ""),
            http_version=workload.http_version,
            keepalive=workload.keepalive,
            streams=workload.streams,
            connections=mix.connections,
            threads=min(self.request.engine_threads or cpus, mix.connections),
            nap=self.request.nap,
            duration_s=t.length_s,
            think_time_s=t.think_time_s,
            timeout_s=self.request.timeout_s,
            insecure=self.request.insecure,
            tls_resumption=workload.tls_settings().resumption,
            read_buffer_bytes=workload.read_buffer_bytes,
            requests=table.requests,
            classes=() if spec else table.classes,  # SPECweb99's classes are the engine's own 20
            connections_per_client=mix.threads_per_client,
            window_s=(t.ramp_up_s, t.length_s - t.ramp_down_s + drain_s),
            drain_s=drain_s,
            client_start_delay_s=t.delay_s,
            seed=self.request.seed * 1_000_003 + repeat_index * 1009 + mix.index,
            selection=workload.selection,
            rate_rps=mix.rate_rps,
            line_speed_bps=spec.line_speed_bps if spec else None,
            keepalive_requests=(spec.keepalive_requests[0], spec.keepalive_requests[1]) if spec else None,
            keepalive_request_share=spec.keepalive_request_share if spec else 1.0,
            specweb99=specweb,
        )

    def _file_spec(self, mix: Mix, repeat_index: int) -> RunSpec:
        """A file-operation mix: each connection a dbench client replaying the loadfile against the target."""
        settings = self.request.suite.workload.loadfile_settings()
        t = mix.timing
        cpus = len(self.split.engine) if self.split else len(cpu_split.available())
        url = self.request.target or ""
        # NetBench's Save Workspace: trees stay between mixes and go after the last one.
        cleanup = not settings.save_workspace or mix.index >= len(self.mixes)
        loadfile = {
            "path": self.request.loadfile or settings.resolved_path(),
            "cleanup": cleanup,
            "password": (self._target_password or smb_password(self.request.password_file))
            if url.startswith("smb:")
            else None,
        }
        return RunSpec(
            url=url,
            connections=mix.connections,
            threads=min(self.request.engine_threads or cpus, mix.connections),
            nap=self.request.nap,
            duration_s=t.length_s,
            think_time_s=t.think_time_s,
            timeout_s=self.request.timeout_s,
            connections_per_client=mix.threads_per_client,
            window_s=(t.ramp_up_s, t.length_s - t.ramp_down_s),
            client_start_delay_s=t.delay_s,
            seed=self.request.seed * 1_000_003 + repeat_index * 1009 + mix.index,
            loadfile=loadfile,
        )

    def _manifest(self) -> Manifest | None:
        workload = self.request.suite.workload
        if workload.fileset is None:
            return None
        if self.request.fileset_dir is not None:
            manifest = load_manifest(self.request.fileset_dir)
            if manifest.fileset != workload.fileset:
                raise ConfigError(
                    f"{self.request.fileset_dir} holds the {manifest.fileset} fileset but suite"
                    f" {self.request.suite.name} needs {workload.fileset}: generate it with"
                    f" `crest fileset generate {workload.fileset} DIR`"
                )
            return manifest
        return build_manifest(workload.fileset, connections=fileset_connections(self.request.suite), seed=0)

    def _meta(self, repeat_index: int, target: Target | None = None) -> RunMeta:
        options = self.request.options()
        if target is not None:
            options.update(target=None, tls_target=None)  # new ports every run: resume provisions again
        config = {
            "suite": self.request.suite.model_dump(mode="json"),
            "options": options,
            "experiment": self.request.experiment,
        }
        if self.request.capacity is not None:
            config["capacity"] = dict(self.request.capacity)
        if self.request.cluster is not None:
            config["cluster"] = {"address": self.request.cluster, "nodes": self.request.nodes}
        if target is not None and self.request.cluster is not None:
            config["server"] = target.metadata()  # with the node it runs on, pinned there to its own cores
        elif target is not None:
            config["server"] = target.metadata()
            config["cpus"] = {
                "target": list(target.settings.cpus),
                "engine": list(self.split.engine) if self.split else [],
                **(self.share.metadata() if self.share else {}),
            }
        return RunMeta(
            suite=self.request.suite.name,
            target=f"{self.request.server} at {self.request.target}"
            if target is not None
            else str(self.request.target),
            profile=self.request.profile,
            repeat_index=repeat_index,
            config=config,
            factors=dict(self.request.factors),
            host={**host_facts(), "disclosure": self._disclosure(target)},
        )

    def _disclosure(self, target: Target | None) -> dict[str, Any]:
        docroot = getattr(getattr(target, "settings", None), "docroot", None) if self.request.cluster is None else None
        facts = disclosure.collect(docroot, self.request.target, self.request.tls_target)
        facts["network"] = (
            self._network.describe() if self._network is not None
            else {"not_applicable": "no --network: the clients reached the target over loopback"}
        )  # fmt: skip
        return facts


# Where an smb:// target's password comes from when no --password-file is given.
PASSWORD_ENV = "CREST_SMB_PASSWORD"


def smb_password(password_file: Path | None) -> str | None:
    """The SMB password: the first line of `password_file` (which only its owner may read), else
    $CREST_SMB_PASSWORD; None when neither is given (the engine then names what is missing).

    Raises:
        ConfigError: the file cannot be read, or others may read it.
    """
    if password_file is None:
        return os.environ.get(PASSWORD_ENV)
    try:
        mode = password_file.stat().st_mode
        text = password_file.read_text()
    except OSError as exc:
        raise ConfigError(f"cannot read --password-file {password_file}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(
            f"--password-file {password_file} is not text (UTF-8): its first line is the password"
        ) from None
    if mode & 0o077:
        raise ConfigError(
            f"--password-file {password_file} may be read by others (mode {mode & 0o777:04o}):"
            f" chmod 600 {password_file}"
        )
    return text.splitlines()[0] if text else ""


def specweb99_config(spec: Specweb99 | None, base_url: str, fileset_conns: int, mix: Mix) -> dict[str, Any] | None:
    """The engine's SPECweb99 generator for a target: its three URLs, the fileset's directories and the
    users Reset wrote (one per connection the fileset was made for, at least one per connection)."""
    if spec is None:
        return None
    from crest.filesets.specweb import specweb99_directories

    dynamic, cgi = specweb99_urls(base_url, spec.dynamic)
    return {
        "base_url": base_url.rstrip("/"), "dynamic_url": dynamic, "cgi_url": cgi,
        "dirs": specweb99_directories(fileset_conns), "users": max(fileset_conns, mix.connections),
        "request_mix": list(spec.request_mix), "class_mix": list(spec.class_mix),
    }  # fmt: skip


def fileset_connections(suite: Suite) -> int | None:
    """The `--connections` a suite's fileset is generated with (SPECweb99 scales directories by it)."""
    if suite.workload.fileset != "specweb99":
        return None
    return suite.workload.fileset_connections or max(m.connections for m in suite.mixes("full"))


def link_verdicts(figures: dict[str, Any]) -> list[Verdict]:
    """link_bound for each shaped link that ran at LINK_BOUND_UTILISATION of its rate or more in the window."""
    return [
        link_bound(
            str(link["link"]),
            str(link["direction"]),
            float(link["utilisation"]),
            float(link["rate_bps"]),
            link.get("subnet"),
            link.get("scope") == "client",
        )
        for link in figures.get("links", [])
        if link.get("utilisation") is not None and link["utilisation"] >= LINK_BOUND_UTILISATION
    ]


def _stand_in(mix: Mix) -> RunSpec:
    """A spec with only the mix's clients, for sizing a network before the runner is bound."""
    return RunSpec(url="http://127.0.0.1:1", connections=mix.connections, connections_per_client=mix.threads_per_client)


def _check_cluster_options(request: RunRequest) -> None:
    """The cluster options fit together (no Ray needed to tell).

    Raises:
        ConfigError: an option that needs another, or two that exclude each other.
    """
    if request.cluster is None:
        given = [flag for flag, v in (("--nodes", request.nodes), ("--target-node", request.target_node),
                 ("--monitor-node", request.monitor_node), ("--monitor-pid", request.monitor_pid),
                 ("--monitor-name", request.monitor_name)) if v is not None]  # fmt: skip
        if given:
            raise ConfigError(f"{given[0]} places work on a cluster's nodes: add --cluster ADDRESS (e.g. local:3)")
        return
    if request.suite.workload.is_file:
        # Each node would number its dbench clients from 0, so their trees would collide on the share.
        raise ConfigError(
            f"suite {request.suite.name} is a file workload, which runs from one machine for now: drop --cluster"
        )
    from crest.cluster.address import parse_cluster

    parse_cluster(request.cluster)
    if request.suite.workload.selection != "weighted":
        raise ConfigError(
            f"suite {request.suite.name} sends each request once, which --cluster cannot deal over nodes:"
            " run it without --cluster"
        )
    if request.server is not None and request.target_node is None:
        raise ConfigError(
            "with --cluster, a target crest starts needs its node: add --target-node NODE (a node id, IP or resource)"
        )
    if request.target_node is not None and request.server is None:
        raise ConfigError("--target-node runs a target crest starts: give --server NAME instead of --target")
    if request.monitor_node is not None:
        if request.server is not None:
            raise ConfigError("--monitor-node watches a target crest did not start: use it with --target, not --server")
        if (request.monitor_pid is None) == (request.monitor_name is None):
            raise ConfigError("--monitor-node needs what to watch there: --monitor-pid PID or --monitor-name NAME")
    elif request.monitor_pid is not None or request.monitor_name is not None:
        raise ConfigError("--monitor-pid and --monitor-name need --monitor-node NODE (where the target runs)")


def close_clusters() -> None:
    """End every cluster session this process opened (no Ray import when none was)."""
    session = sys.modules.get("crest.cluster.session")
    if session is not None:
        session.close_all()
