"""The target on a cluster node, seen from the driver: a server provisioned there through its adapter
(NodeTarget), or a watch beside a target crest did not start (NodeWatch); both give the runner the
per-mix monitor it uses locally (NodeMonitor), sampling on the target's node. Never prints."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from crest.cluster import clock
from crest.cluster.placement import Node
from crest.cluster.session import ClusterSession, ray_failure
from crest.errors import CrestError, MachineError, NodeLostError, TargetError
from crest.secrets import Secret
from crest.servers.base import ServerSettings
from crest.verdicts import Verdict

# Starting a server (its site, helpers, readiness) on a node; the local adapters' own limit is 10 s.
PROVISION_TIMEOUT_S = 60.0
CALL_TIMEOUT_S = 10.0
# The adapters' SIGTERM grace, then SIGKILL; a node that does not answer in this time is gone.
STOP_TIMEOUT_S = 15.0


class NodeActor:
    """A TargetNode actor and the node it runs on, with crest's words for Ray's failures."""

    def __init__(self, session: ClusterSession, node: Node) -> None:
        self.session = session
        self.node = node
        self.actor = session.place_target(node)
        self.offset = clock.Offset(0.0, 0.0, 0.0)  # measured before each mix (NodeMonitor.start)

    def call(self, method: str, *args: Any, timeout_s: float = CALL_TIMEOUT_S) -> Any:
        ray = self.session.ray
        try:
            return ray.get(getattr(self.actor, method).remote(*args), timeout=timeout_s)
        except ray.exceptions.RayError as exc:
            when = f"(the target's node) in {method}" + (
                f" (no reply in {timeout_s:g}s)" if isinstance(exc, ray.exceptions.GetTimeoutError) else ""
            )
            raise ray_failure(ray, exc, self.node, when) from None

    def release(self) -> None:
        self.session.release([self.actor])


class NodeTarget:
    """A provisioned target on its node, with the face of crest.servers.base.Target the runner uses."""

    def __init__(self, session: ClusterSession, node: Node, server: str, settings: ServerSettings,
                 cpus: float | None, fileset: tuple[str | None, int | None, int | None], roles: dict[str, str] | None = None,
                 by_server: dict[str, ServerSettings] | None = None) -> None:  # fmt: skip
        self.remote = NodeActor(session, node)
        self.settings = settings
        self.roles = roles  # a role map's servers, side by side on the node (None: one server)
        self.keep_logs: Path | None = None  # where stop() writes the logs it brings back from the node
        try:
            info = self.remote.call("provision", server, settings, cpus, fileset, roles, by_server,
                                    timeout_s=PROVISION_TIMEOUT_S)  # fmt: skip
        except BaseException:
            self.stop()
            raise
        # The node's adapter resolved the settings (access_log=on, a stock profile that logs): count as it logs.
        self.settings = replace(
            settings, access_log=bool(info.get("metadata", {}).get("access_log", settings.access_log))
        )
        self.url: str = info["url"]
        self.tls_url: str | None = info["tls_url"]
        self.h2c_url: str | None = info.get("h2c_url")  # HTTP/2 with prior knowledge, when http2 was asked
        self._metadata: dict[str, Any] = {**info["metadata"], "node_id": node.node_id, "node_ip": node.ip,
                                          "node_names": list(node.resources)}  # fmt: skip
        self.access_log_flush_s: float = float(info["access_log_flush_s"])
        self._password: Secret | None = info.get("password")  # a file server's login, read on its node
        self._role_urls: dict[str, tuple[str | None, str | None]] | None = info.get("role_urls")

    def metadata(self) -> dict[str, Any]:
        return dict(self._metadata)

    def login_password(self) -> Secret | None:
        return self._password

    def access_log_lines(self) -> int:
        return int(self.remote.call("access_log_lines"))

    def role_urls(self) -> dict[str, tuple[str | None, str | None]] | None:
        """Each role's (http, https) base URLs on the node: a role map's; None for one server."""
        return None if self._role_urls is None else {r: (u[0], u[1]) for r, u in self._role_urls.items()}

    def access_log_lines_by_role(self) -> dict[str, int]:
        return {str(r): int(n) for r, n in self.remote.call("access_log_lines_by_role").items()}

    def pids(self) -> list[int]:
        return [int(p) for p in self.remote.call("pids")]

    def restart(self) -> None:
        """New processes on its node (same site, ports and login): a restart between mixes."""
        self.remote.call("restart", timeout_s=PROVISION_TIMEOUT_S)

    def drop_page_cache(self) -> list[Verdict]:
        """Drop the page cache where the target reads its files: its node."""
        return list(self.remote.call("drop_page_cache"))

    def check_alive(self) -> None:
        try:
            self.remote.call("check_alive")
        except NodeLostError as exc:
            raise TargetError(str(exc)) from None

    def monitor(self) -> NodeMonitor:
        return NodeMonitor(self.remote)

    def stop(self) -> None:
        """Stop the server on its node, then its actor; a node already gone took both with it. The logs
        come back into `keep_logs` when it is set, as a local target's are copied there.

        Raises:
            MachineError: the logs could not be written (a full disk).
        """
        logs: dict[str, bytes] = {}
        try:
            logs = dict(self.remote.call("stop", self.keep_logs is not None, timeout_s=STOP_TIMEOUT_S))
        except CrestError:
            pass
        finally:
            self.remote.release()
        if self.keep_logs is not None and logs:
            try:
                for name, data in logs.items():
                    path = self.keep_logs / name
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_bytes(data)
            except OSError as exc:
                raise MachineError(f"cannot keep the target's logs in {self.keep_logs}: {exc.strerror}") from None


class NodeWatch:
    """The monitor's half beside a target crest did not start: processes by pid or name on a node."""

    def __init__(self, session: ClusterSession, node: Node, pid: int | None, name: str | None) -> None:
        self.remote = NodeActor(session, node)
        try:
            self.remote.call("watch", pid, name)
        except BaseException:
            self.remote.release()
            raise

    def monitor(self) -> NodeMonitor:
        return NodeMonitor(self.remote)

    def drop_page_cache(self) -> list[Verdict]:
        return list(self.remote.call("drop_page_cache"))

    def stop(self) -> None:
        try:
            self.remote.call("unroute")  # routes back to the load nodes' networks, if any were made
        except CrestError:
            pass
        finally:
            self.remote.release()


class NodeMonitor:
    """The runner's per-mix monitor when the target is on another node: sampling happens there."""

    def __init__(self, remote: NodeActor) -> None:
        self.remote = remote

    def start(self) -> None:
        # Offsets drift: measured again before each mix, like the load nodes'.
        self.remote.offset = clock.measure(lambda: float(self.remote.call("now_unix_s")))
        self.remote.call("start_monitor")

    def stop(self) -> None:
        """Nothing to do here: summary() stops the node's sampler and reads it in one call."""

    def latest(self) -> dict[str, Any]:
        """Nothing: the node's samples come back when the mix ends (a round trip a second would cost more
        than the figure is worth to a watcher)."""
        return {}

    def summary(self, window_start: float, window_end: float) -> dict[str, Any]:
        off = self.remote.offset.offset_s
        return dict(self.remote.call("stop_monitor", window_start + off, window_end + off))
