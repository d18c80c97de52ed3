"""The connection to a Ray cluster for one crest invocation: connect (or start local:N, or machines:N's lab
and its nodes), list the alive nodes, place load actors and a target actor, and one teardown that removes
everything crest created.

The only module that starts or joins Ray, and only when --cluster is given (crest.cluster.auth asks a
head whether it checks tokens). local:N's and machines:N's nodes require a token; an existing cluster is
checked for one before ray.init. machines:N starts the head on the lab's control machine and one node on
each other machine, each at its own address, and the driver, in this namespace, reaches them through the
head's Ray client server: the path a laptop takes to a cluster of real machines. crest makes no outbound connection on the user's behalf: Ray's usage statistics stay off
and no dashboard is started. Never prints.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from crest.cluster import auth
from crest.cluster.actors import LoadNode, TargetNode
from crest.cluster.address import MACHINES_CLIENT_PORT, MACHINES_GCS_PORT, ClusterAddress, parse_cluster
from crest.cluster.placement import Node
from crest.errors import ConfigError, CrestError, MachineError, NodeLostError

# Each local:N node, and each node of the tests' cluster: a small object store, since crest moves only
# reports through it (Ray's default takes 30% of the machine's memory per node).
LOCAL_OBJECT_STORE_BYTES = 100 * 1024 * 1024
# Connecting to an address that answers nothing must fail in seconds, not after Ray's minute of retries.
CONNECT_CHECK_S = 3.0
# Placing the actors on their nodes (a new worker process each, importing crest).
PLACE_TIMEOUT_S = 60.0
# Stopping a server on its node: the adapters' SIGTERM grace, then SIGKILL.
STOP_TIMEOUT_S = 15.0
INSTALL = "pip install 'crest[cluster]'"
# machines:N: `ray start` on one machine (it returns once the node's processes run), and all nodes alive.
MACHINE_START_TIMEOUT_S = 120.0
NODES_ALIVE_TIMEOUT_S = 60.0
# The lab's control machine carries the head and no load: a resource marks it, so nodes() leaves it out.
CONTROL_RESOURCE = "crest_control"


def quiet_ray_environment(loopback: bool) -> None:
    """Environment every Ray process crest starts inherits: no usage statistics, and with a loopback
    cluster every node and the driver on 127.0.0.1 (Ray otherwise swaps 127.0.0.1 for the host's
    routable address)."""
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    if loopback:
        # Ray's switch for "clusters on this OS are loopback-only"; it is what keeps every address on lo.
        os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"


def import_ray() -> Any:
    """Ray, or a ConfigError naming the install command."""
    try:
        import ray
    except ImportError:
        raise ConfigError(f"--cluster needs Ray, which is not installed: {INSTALL}") from None
    return ray


class ClusterSession:
    """`with ClusterSession(parse_cluster("local:3")) as s: s.nodes()`; everything placed is removed on exit."""

    def __init__(self, address: ClusterAddress) -> None:
        self.address = address
        self._ray: Any = None
        self._local: Any = None  # ray.cluster_utils.Cluster for local:N
        self._lab: Any = None  # crest.machines.Lab for machines:N
        self._actors: list[Any] = []
        self._targets: list[Any] = []  # TargetNode actors: told to stop their server before they are killed
        self._groups: list[Any] = []
        # Whether the cluster checks Ray's token on every call (local:N's always does): what may travel to its
        # nodes can depend on it.
        self.authenticated = False

    def open(self) -> ClusterSession:
        """Connect (starting local:N first).

        Raises:
            ConfigError: Ray is missing, or the address answers nothing or is no Ray cluster.
        """
        quiet_ray_environment(self.address.loopback)  # read by Ray at import: set it first
        self._ray = ray = import_ray()
        if self.address.kind in ("gcs", "client"):
            _check_answers(self.address)
        if self.address.kind == "local":
            auth.use_local_token(auth.ensure_local_token())
            self._start_local(self.address.local_nodes)
            self.authenticated = True
        elif self.address.kind == "machines":
            auth.use_local_token(auth.ensure_local_token())
            self._start_machines()
            self.authenticated = True
        else:
            self.authenticated = _authenticate(self.address)
        kwargs: dict[str, Any] = {
            "include_dashboard": False,
            "logging_level": "ERROR",
            "log_to_driver": False,
            "configure_logging": True,
        }
        if self.address.kind != "client" and self.address.loopback:
            kwargs["_node_ip_address"] = "127.0.0.1"
        if self.address.kind in ("client", "machines"):
            kwargs = {"logging_level": "ERROR", "log_to_driver": False}
        target = self._local.address if self._local is not None else self.address.ray_address()
        try:
            ray.init(address=target, **kwargs)
        except getattr(ray.exceptions, "AuthenticationError", ()) as exc:
            self.close()
            raise ConfigError(
                f"--cluster {self.address.text}: the cluster refused this machine's Ray token ({first_line(exc)}):"
                f" set {auth.TOKEN_PATH_ENV} to a file holding the token its nodes were started with"
            ) from None
        except ConnectionError as exc:
            self.close()
            raise ConfigError(
                f"--cluster {self.address.text}: no Ray cluster there ({first_line(exc)}):"
                " start one with `ray start --head`, or use --cluster local:N"
            ) from None
        except Exception as exc:
            self.close()
            raise MachineError(
                f"--cluster {self.address.text}: Ray refused the connection: {first_line(exc)}"
            ) from None
        if self.address.kind == "machines":
            self._wait_for_machines()
        return self

    def _start_machines(self) -> None:
        """Build the lab, start the head on its control machine and a node on each other machine.

        Raises:
            ConfigError: no root (the lab needs it).
            MachineError: the lab or a node did not start (one line naming the machine).
        """
        from crest.machines import Lab

        lab_spec = self.address.lab
        assert lab_spec is not None
        self._lab = lab = Lab(lab_spec)
        try:
            lab.create()
            ray_cli = str(Path(sys.executable).with_name("ray"))
            control = lab.machine("control")
            common = ["--object-store-memory", str(LOCAL_OBJECT_STORE_BYTES), "--disable-usage-stats"]
            control.run([ray_cli, "start", "--head", "--node-ip-address", control.address, "--port",
                         str(MACHINES_GCS_PORT), "--ray-client-server-port", str(MACHINES_CLIENT_PORT),
                         "--num-cpus", "0", "--resources", json.dumps({CONTROL_RESOURCE: 1}),
                         "--include-dashboard=false", *common],
                        timeout_s=MACHINE_START_TIMEOUT_S)  # fmt: skip
            count = len(lab_spec.nodes)
            for machine in lab.machines[1:]:
                share = machine.spec.cpus
                cpus = max(1, round(share)) if share is not None else _local_cpus(count)
                machine.run([ray_cli, "start", "--address", f"{control.address}:{MACHINES_GCS_PORT}",
                             "--node-ip-address", machine.address, "--num-cpus", str(cpus),
                             "--resources", json.dumps({machine.name: 1}), *common],
                            timeout_s=MACHINE_START_TIMEOUT_S)  # fmt: skip
        except BaseException:
            self.close()
            raise

    def _wait_for_machines(self) -> None:
        """Every machine's node alive in the cluster, or a MachineError naming those that are not."""
        assert self._lab is not None
        wanted = {m.name for m in self._lab.machines[1:]}
        deadline = time.monotonic() + NODES_ALIVE_TIMEOUT_S
        while True:
            alive = {r for n in self.nodes() for r in n.resources}
            if wanted <= alive:
                return
            if time.monotonic() > deadline:
                self.close()
                raise MachineError(
                    f"--cluster {self.address.text}: {', '.join(sorted(wanted - alive))} did not join the cluster"
                    f" within {NODES_ALIVE_TIMEOUT_S:g}s"
                )
            time.sleep(0.2)

    def _start_local(self, count: int) -> None:
        from ray.cluster_utils import Cluster

        args = {"num_cpus": _local_cpus(count), "object_store_memory": LOCAL_OBJECT_STORE_BYTES,
                "node_ip_address": "127.0.0.1", "include_dashboard": False}  # fmt: skip
        try:
            # Each node also carries a resource named after it (node1 … nodeN): every local node shares
            # the IP 127.0.0.1, so --target-node node3 is how a user names one.
            self._local = Cluster(initialize_head=True, head_node_args={**args, "resources": {"node1": 1}},
                                  shutdown_at_exit=True)  # fmt: skip
            for i in range(2, count + 1):
                self._local.add_node(**args, resources={f"node{i}": 1})
            self._local.wait_for_nodes()
        except Exception as exc:
            self.close()
            raise MachineError(f"cannot start {count} local Ray nodes: {first_line(exc)}") from None

    def nodes(self) -> list[Node]:
        """The alive nodes, the head first, then in Ray's order."""
        out = []
        for n in self._ray.nodes():
            if not n.get("Alive"):
                continue
            resources = n.get("Resources", {})
            if CONTROL_RESOURCE in resources:  # machines:N's control machine: the head, no load
                continue
            custom = tuple(
                sorted(k for k in resources if k not in ("CPU", "GPU", "memory", "object_store_memory")
                       and not k.startswith("node:") and not k.startswith("accelerator_type:"))
            )  # fmt: skip
            out.append(Node(n["NodeID"], n["NodeManagerAddress"], float(resources.get("CPU", 0)), custom))
        return out

    def place_load(self, nodes: list[Node]) -> tuple[list[Any], Any]:
        """One LoadNode actor on each of `nodes`, through a placement group of one bundle per node
        (strict spread: no two on one node). Returns the actors and their group (release both).

        Raises:
            MachineError: the group could not be placed in time (a node too busy, or gone).
        """
        from ray.util.placement_group import placement_group
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        ray = self._ray
        # One CPU in Ray's books per load actor: the engine itself uses every core the node lets it.
        bundles = [{"CPU": 1.0} for _ in nodes]
        group = placement_group(
            bundles, strategy="STRICT_SPREAD", bundle_label_selector=[{"ray.io/node-id": n.node_id} for n in nodes]
        )
        self._groups.append(group)
        try:
            ray.get(group.ready(), timeout=PLACE_TIMEOUT_S)
        except ray.exceptions.GetTimeoutError:
            raise MachineError(
                f"could not place a load actor on each of {len(nodes)} nodes within {PLACE_TIMEOUT_S:g}s:"
                " check `ray status` for busy or dead nodes"
            ) from None
        remote = ray.remote(LoadNode)
        actors = [
            remote.options(
                num_cpus=1,
                scheduling_strategy=PlacementGroupSchedulingStrategy(group, placement_group_bundle_index=i),
                max_restarts=0,
            ).remote()
            for i in range(len(nodes))
        ]  # fmt: skip
        self._actors += actors
        return actors, group

    def remove_group(self, group: Any) -> None:
        """Give a placement group's CPUs back now (a run's load nodes, before the next run places its own)."""
        from ray.util.placement_group import remove_placement_group

        if group in self._groups:
            self._groups.remove(group)
            try:
                remove_placement_group(group)
            except Exception:
                pass

    def place_target(self, node: Node) -> Any:
        """A TargetNode actor pinned to `node` (it takes no CPU from Ray's books: the server's cores are its own)."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        actor = (
            self._ray.remote(TargetNode)
            .options(num_cpus=0, max_restarts=0,
                     scheduling_strategy=NodeAffinitySchedulingStrategy(node.node_id, soft=False))
            .remote(node.ip)
        )  # fmt: skip
        self._actors.append(actor)
        self._targets.append(actor)
        return actor

    def get(self, refs: Any, timeout_s: float) -> Any:
        """ray.get with a timeout (the caller maps Ray's errors, see crest.cluster.driver)."""
        return self._ray.get(refs, timeout=timeout_s)

    @property
    def ray(self) -> Any:
        return self._ray

    def release(self, actors: list[Any]) -> None:
        """Kill these actors now (their engines and targets stop with their processes)."""
        for actor in actors:
            try:
                self._ray.kill(actor, no_restart=True)
            except Exception:
                pass
            if actor in self._actors:
                self._actors.remove(actor)

    def close(self) -> None:
        """Remove every actor and placement group crest made, disconnect, and stop local:N's nodes."""
        ray = self._ray
        if ray is not None and ray.is_initialized():
            # A server runs in its own session on its node: killing its actor would not stop it.
            for actor in [a for a in self._targets if a in self._actors]:
                try:
                    ray.get(actor.stop.remote(), timeout=STOP_TIMEOUT_S)
                except Exception:
                    pass
            self._targets = []
            self.release(list(self._actors))
            from ray.util.placement_group import remove_placement_group

            for group in self._groups:
                try:
                    remove_placement_group(group)
                except Exception:
                    pass
            ray.shutdown()
        self._groups = []
        if self._local is not None:
            local, self._local = self._local, None
            local.shutdown()
        if self._lab is not None:  # every Ray process of its machines dies with them
            lab, self._lab = self._lab, None
            lab.close()

    def __enter__(self) -> ClusterSession:
        return self.open()

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def _local_cpus(count: int) -> int:
    """CPUs each local node announces: this machine's split over the nodes, at least one."""
    return max(1, (os.cpu_count() or 1) // count)


def _check_answers(address: ClusterAddress) -> None:
    try:
        with socket.create_connection((address.host.strip("[]"), address.port), timeout=CONNECT_CHECK_S):
            return
    except OSError as exc:
        raise ConfigError(
            f"--cluster {address.text}: nothing answers there ({(exc.strerror or str(exc)).lower()}):"
            " check the head's address and port (`ray status` on the head prints it)"
        ) from None


def _authenticate(address: ClusterAddress) -> bool:
    """Ask the cluster whether it requires a token (one call without one), refuse what crest must not use
    (see auth.check_authentication), and present the user's token only to a cluster that checks it.
    Returns whether the cluster checks it."""
    if address.kind == "auto":
        found = _auto_address()
        if found is None:
            auth.present_user_token()  # ray.init finds no cluster either, and says so
            return False
        kind, host, port = "gcs", *found
    else:
        kind, host, port = address.kind, address.host, address.port
    required = auth.requires_token(kind, host, port)
    token = None if os.environ.get(auth.MODE_ENV) == "disabled" else auth.user_token()
    refused = bool(required and token and auth.requires_token(kind, host, port, token[0]))
    auth.check_authentication(address.text, host, required, token, refused)
    if required:
        os.environ[auth.MODE_ENV] = "token"
        auth.refresh_ray()
    elif required is None:
        auth.present_user_token()  # nothing conclusive answered: do as Ray would
    # A cluster that checks no token is sent none, unless RAY_AUTH_MODE=token says to.
    return bool(required)


def _auto_address() -> tuple[str, int] | None:
    """The GCS address `auto` means (RAY_ADDRESS, or the cluster `ray start` joined last), as Ray finds it."""
    from ray._private.services import canonicalize_bootstrap_address

    try:
        found = canonicalize_bootstrap_address("auto")
    except Exception:
        return None
    host, _, port = (found or "").rpartition(":")
    return (host, int(port)) if host and port.isdigit() else None


def first_line(exc: BaseException) -> str:
    """An exception's first line (Ray's messages run to many)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def ray_failure(ray: Any, exc: BaseException, node: Node, when: str) -> CrestError:
    """crest's error for a failed call to an actor on `node`: the crest error the actor raised, the node
    lost (it died or did not answer in time), or Ray's own failure in one line."""
    errors = ray.exceptions
    if isinstance(exc, errors.RayTaskError):
        cause = getattr(exc, "cause", None)
        if isinstance(cause, CrestError):
            return cause
        return MachineError(f"node {node.short} failed {when}: {str(exc).strip().splitlines()[-1]}")
    if isinstance(exc, errors.GetTimeoutError):
        return NodeLostError(node.short, f"stopped answering {when}")
    if isinstance(exc, (errors.RayActorError, errors.ActorUnavailableError, errors.WorkerCrashedError)):
        return NodeLostError(node.short, f"was lost {when} ({type(exc).__name__})")
    return MachineError(f"Ray failed {when} on node {node.short}: {first_line(exc)}")


_sessions: dict[str, ClusterSession] = {}


def session(text: str) -> ClusterSession:
    """The open session for a --cluster value, opened on first use and shared by every run of the
    invocation (one ray.init per process); `close_all` ends them."""
    address = parse_cluster(text)
    if address.text not in _sessions:
        _sessions[address.text] = ClusterSession(address).open()
    return _sessions[address.text]


def close_all() -> None:
    """Tear down every session this process opened."""
    while _sessions:
        _, s = _sessions.popitem()
        s.close()
