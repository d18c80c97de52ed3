"""Several provisioned targets side by side, each serving some of a workload's classes (per-class targets).

Owns starting, restarting and stopping the group as one target, and the face
the runner uses (URLs by role, pids, liveness, access-log counts, metadata):
VeriTest ran TUX for the static files with Apache behind it for the dynamic
ones. It never decides which class goes where (crest.suite.roles does) and never
configures a server (the adapters do).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from crest.servers.base import ServerSettings, Target
from crest.servers.registry import adapter as server_adapter


class TargetGroup:
    """The targets of a role map: `roles` names each role's adapter; servers named twice are started once.

    `settings_for(adapter name)` gives each server the settings for the classes it serves (its kinds, TLS).
    """

    def __init__(self, roles: Mapping[str, str], settings: Mapping[str, ServerSettings]) -> None:
        self.roles = dict(roles)
        self.members: dict[str, Target] = {}
        for name in dict.fromkeys(self.roles.values()):
            self.members[name] = Target(server_adapter(name), settings[name])  # checks; starts nothing

    @property
    def primary(self) -> Target:
        """The server of the first role (static when given): its URL is the run's target URL."""
        return self.members[next(iter(self.roles.values()))]

    @property
    def settings(self) -> ServerSettings:
        return self.primary.settings

    @property
    def url(self) -> str:
        return self.primary.url

    @property
    def tls_url(self) -> str | None:
        return self.primary.tls_url

    @property
    def h2c_url(self) -> str | None:
        return self.primary.h2c_url

    @property
    def secret_file(self) -> Path | None:
        return None  # file servers serve file suites alone: never part of a group

    def login_password(self) -> None:
        return None

    @property
    def keep_logs(self) -> Path | None:
        return self.primary.keep_logs

    @keep_logs.setter
    def keep_logs(self, path: Path | None) -> None:
        """Where stop() copies the servers' logs: one directory per server under `path`."""
        for name, target in self.members.items():
            target.keep_logs = None if path is None else path / name

    @property
    def access_log_flush_s(self) -> float:
        return max(t.access_log_flush_s for t in self.members.values())

    def role_urls(self) -> dict[str, tuple[str | None, str | None]]:
        """(http base URL, https base URL or None) of each role's server, once started."""
        return {role: (self.members[name].url, self.members[name].tls_url) for role, name in self.roles.items()}

    def start(self) -> None:
        """Start every server; when one fails, the ones started are stopped again.

        Raises:
            ConfigError, TargetError: as Target.start.
        """
        try:
            for target in self.members.values():
                target.start()
        except BaseException:
            self.stop()
            raise

    def restart(self) -> None:
        for target in self.members.values():
            target.restart()

    def check_alive(self) -> None:
        for target in self.members.values():
            target.check_alive()

    def pids(self) -> list[int]:
        return [pid for target in self.members.values() for pid in target.pids()]

    def access_log_lines(self) -> int:
        return sum(t.access_log_lines() for t in self.members.values())

    def access_log_lines_by_role(self) -> dict[str, int]:
        """Each role's server's access-log lines so far (a server serving two roles counts for both)."""
        return {role: self.members[name].access_log_lines() for role, name in self.roles.items()}

    def metadata(self) -> dict[str, Any]:
        """The primary server's metadata, with every server's under `roles` (role → its metadata)."""
        by_name = {name: t.metadata() for name, t in self.members.items()}
        return {**by_name[self.primary.adapter.name], "roles": {r: by_name[n] for r, n in self.roles.items()}}

    def stop(self) -> None:
        """Stop every member, each even when stopping another one failed (then that failure is raised)."""
        failure: BaseException | None = None
        for target in self.members.values():
            try:
                target.stop()
            except BaseException as exc:
                failure = failure or exc
        if failure is not None:
            raise failure


def settings_by_server(roles: Mapping[str, str], base: ServerSettings, kinds_by_role: Mapping[str, set[str]],
                       tls_roles: set[str]) -> dict[str, ServerSettings]:  # fmt: skip
    """Each server's settings: the base with only the kinds (and TLS) of the classes its roles serve."""
    out: dict[str, ServerSettings] = {}
    for name in dict.fromkeys(roles.values()):
        served = [r for r, n in roles.items() if n == name]
        kinds = frozenset(k for r in served for k in kinds_by_role.get(r, set()))
        out[name] = replace(base, kinds=kinds, tls=any(r in tls_roles for r in served))
    return out
