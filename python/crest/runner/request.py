"""What `crest run` was asked (RunRequest), the events a run reports, and every check of the request
that needs nothing started: option combinations, per-class targets, cluster and network options.

Owns the words of those refusals (ConfigError, before anything is recorded or sent). Never prints,
never starts anything.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from crest.errors import ConfigError
from crest.load.runspec import RunSpec
from crest.network.lines import check_fits
from crest.network.spec import NetworkSpec, network_level, parse_network
from crest.network.url import on_network
from crest.secrets import Secret
from crest.servers import cpus as cpu_split
from crest.store import DEFAULT_PATH, MixRecord
from crest.suite import Mix, Suite
from crest.suite.roles import is_role_map, parse_role_map, roles_by_class
from crest.units import parse_size


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
    # The preflight's one request per origin before the first mix (--no-preflight: none, so the target sees
    # exactly the load's requests); the target is still connected to.
    answer_check: bool = True
    seed: int = 0
    validate_content: bool = False  # check each static body's first line, not only its size
    engine_threads: int | None = None  # None: one per available CPU, at most one per connection
    # Under load the engine naps instead of blocking on its sockets (crest.load.runspec); False: it always blocks.
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
    # A capacity search's settings (crest.capacity.runner): stored with the run, whose mixes are its probes.
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
    about: dict[str, Any] = field(default_factory=dict)  # run-started: suite, server, target, factors, placement


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


def server_roles(request: RunRequest) -> dict[str, str] | None:
    """Per-class targets as a role map of servers (`--server static=lighttpd,dynamic=...`), else None."""
    if request.server is not None and is_role_map(request.server):
        return parse_role_map(request.server, what="--server", example="static=lighttpd,dynamic=apache-event")
    return None


def check_request(request: RunRequest, mixes: list[Mix]) -> NetworkSpec | None:
    """Every check of `request` that needs nothing started; returns its client network's spec, if any.

    Raises:
        ConfigError: the first option that does not fit, with the fix.
    """
    if request.cluster is None and request.cpus:
        cpu_split.split(cpu_split.share(request.cpus).cpus)  # --cpus fits this machine, asked first
    if request.server is None:
        if request.target is None:
            raise ConfigError("give a target URL (--target) or a server to provision (--server)")
        if request.cpus or request.memory_bytes or request.server_options or request.access_log:
            raise ConfigError(
                "--cpus, --memory, --server-opt and --access-log need a target crest starts:"
                " give --server NAME instead of --target (see `crest servers`)"
            )
    roles = server_roles(request)
    _check_lab_options(request, roles)
    _check_cluster_options(request)
    net_spec = _check_network_options(request, roles, mixes)
    if request.server is not None and any(c.kind == "url" for c in request.suite.workload.classes):
        raise ConfigError(
            f"suite {request.suite.name} requests a URL as given, which only a --target has: give --target URL"
        )
    return net_spec


def _check_lab_options(request: RunRequest, server_roles: dict[str, str] | None) -> None:
    """Per-class targets, restarts and warm-up passes fit the run (ConfigError before anything starts)."""
    workload = request.suite.workload
    roles: dict[str, str] | None = server_roles or request.role_targets or None
    if workload.replay is not None and request.fileset_dir is not None:
        raise ConfigError(f"suite {request.suite.name} replays an access log: the target serves the log's site,"
                          " not a fileset: drop --fileset (workload.replay.site names a site)")  # fmt: skip
    if workload.har is not None and request.fileset_dir is not None:
        raise ConfigError(f"suite {request.suite.name} replays a HAR: the target serves the recorded site, not a"
                          " fileset: drop --fileset (workload.har.site names a directory to serve)")  # fmt: skip
    if roles is not None:
        if workload.har is not None:
            raise ConfigError(f"suite {request.suite.name} replays a HAR, whose hosts map to URLs in"
                              " workload.har.hosts: give one --server or --target, not a role map")  # fmt: skip
        if workload.replay is not None:
            raise ConfigError(f"suite {request.suite.name} replays an access log, whose requests go to one target:"
                              " give one --server or --target, not a role map")  # fmt: skip
        if workload.is_file:
            raise ConfigError(f"suite {request.suite.name} is a file workload: give one target, not a role map")
        tls = {"tls": request.tls_target} if request.tls_target and request.role_targets else {}
        roles_by_class(workload, {**roles, **tls})
    ladder = request.suite.ladder
    if ladder.restart_target not in (False, []):
        if request.server is None:
            raise ConfigError(f"suite {request.suite.name} restarts its target between mixes, which only a"
                              " target crest starts can do: give --server NAME (see `crest servers`)")  # fmt: skip
    if ladder.warmup != "none" and (workload.specweb99 is not None or workload.is_file):
        raise ConfigError(f"suite {request.suite.name}: warmup requests every entry of the request table"
                          " once, and SPECweb99 and file workloads draw their own requests: drop warmup")  # fmt: skip


def _check_network_options(
    request: RunRequest, server_roles: dict[str, str] | None, mixes: list[Mix]
) -> NetworkSpec | None:
    """The --network spec, checked against the rest of the request (`none`: no network)."""
    text = network_level(request.network)
    if text is None:
        return None
    spec = parse_network(text)
    if request.role_targets:
        raise ConfigError(
            "--network reaches targets crest starts side by side (--server static=NAME,dynamic=NAME) or one --target"
            " URL, not a map of URLs: give the role map as servers"
        )
    for url in filter(None, (request.target, request.tls_target)) if request.cluster is None else ():
        on_network(url)  # a target on this machine (with --cluster: on each load node's, checked there)
    check_fits(stand_in(max(mixes, key=lambda m: m.connections)), spec)  # every client line its own address
    return spec


def stand_in(mix: Mix) -> RunSpec:
    """A spec with only the mix's clients, for sizing a network before a target is bound."""
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
    from crest.cluster.address import parse_cluster

    parse_cluster(request.cluster)
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


# Where an smb:// target's password comes from when no --password-file is given.
PASSWORD_ENV = "CREST_SMB_PASSWORD"


def smb_password(password_file: Path | None) -> Secret | None:
    """The SMB password, as a Secret: the first line of `password_file` (which only its owner may read),
    else $CREST_SMB_PASSWORD; None when neither is given (the engine then names what is missing).

    Raises:
        ConfigError: the file cannot be read, or others may read it.
    """
    if password_file is None:
        found = os.environ.get(PASSWORD_ENV)
        return None if found is None else Secret(found)
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
    return Secret(text.splitlines()[0] if text else "")


def fileset_connections(suite: Suite) -> int | None:
    """The `--connections` a suite's fileset is generated with (SPECweb99 scales directories by it)."""
    if suite.workload.fileset != "specweb99":
        return None
    return suite.workload.fileset_connections or max(m.connections for m in suite.mixes("full"))


def fileset_copies(suite: Suite) -> int | None:
    """How many times a sized table fileset repeats its table (workload fileset_copies or fileset_size);
    None: once, as published."""
    workload = suite.workload
    if workload.fileset is None or (workload.fileset_copies is None and workload.fileset_size is None):
        return None
    if workload.fileset_copies is not None:
        return workload.fileset_copies
    from crest.filesets import copies_for

    assert workload.fileset_size is not None
    return copies_for(workload.fileset, parse_size(workload.fileset_size, what="fileset_size"))
