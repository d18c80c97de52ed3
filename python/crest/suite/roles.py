"""Per-class targets: the role-map syntax and the rule that picks each request class's target.

A workload's classes name a target role (static, dynamic, tls; see
RequestClass.role); a run may give one target per role, as URLs
(`--target static=URL,dynamic=URL`) or as servers crest starts side by side
(`--server static=lighttpd,dynamic=apache-event`). Owns parsing those maps and
resolving a class to its target's base URL; never starts servers or sends.
"""

from __future__ import annotations

from collections.abc import Mapping

from crest.errors import ConfigError
from crest.suite import TARGET_ROLES, RequestClass, Workload

# A role's targets once known: its http and https base URLs (either may be missing).
RoleUrls = Mapping[str, tuple[str | None, str | None]]


def is_role_map(value: str) -> bool:
    """Whether a --target or --server value is a role map (`static=...,dynamic=...`) rather than one target."""
    head = value.split(",", 1)[0]
    return "=" in head and head.split("=", 1)[0].strip() in TARGET_ROLES


def parse_role_map(value: str, *, what: str, example: str) -> dict[str, str]:
    """`static=A,dynamic=B` as {role: value}, in TARGET_ROLES order.

    Raises:
        ConfigError: an unknown role, a role given twice, or a part without ROLE=VALUE.
    """
    roles: dict[str, str] = {}
    for part in value.split(","):
        role, sep, target = (s.strip() for s in part.partition("="))
        if not sep or not role or not target:
            raise ConfigError(f"{what} {value!r}: give ROLE=VALUE pairs, comma-separated, e.g. {what} {example}")
        if role not in TARGET_ROLES:
            raise ConfigError(f"{what}: unknown role {role!r}: use {', '.join(TARGET_ROLES)}, e.g. {what} {example}")
        if role in roles:
            raise ConfigError(f"{what}: role {role} is given twice: give each role once, e.g. {what} {example}")
        roles[role] = target
    return {r: roles[r] for r in TARGET_ROLES if r in roles}


def format_role_map(roles: Mapping[str, str]) -> str:
    """The canonical text of a role map (roles in TARGET_ROLES order): how a run stores its server factor."""
    return ",".join(f"{r}={roles[r]}" for r in TARGET_ROLES if r in roles)


def role_of(cls: RequestClass, roles: Mapping[str, object], tls_route: str = "kind") -> str:
    """The role whose target serves `cls`: its own role when the map has it; a TLS class without a
    tls target goes to the target the workload's TLS route names (`Tls.route`: "kind", the target its
    kind implies, or "static" / "dynamic"), over that target's TLS listener.

    Raises:
        ConfigError: the map has no target for the class.
    """
    if cls.role in roles:
        return cls.role
    if cls.target_role is None and cls.tls:
        implied = tls_route if tls_route != "kind" else "static" if cls.kind == "static" else "dynamic"
        if implied in roles:
            return implied
        if tls_route != "kind":
            raise ConfigError(f"class {cls.name!r} goes to the {implied} target (the suite's [workload.tls] route"
                              f" = {implied!r}) or a tls target, but the targets given are {', '.join(roles)}:"
                              f" add {implied}=... or tls=... to the role map")  # fmt: skip
    given = ", ".join(roles)
    raise ConfigError(f"class {cls.name!r} goes to the {cls.role} target, but the targets given are {given}: "
                      f"add {cls.role}=... to the role map")  # fmt: skip


def roles_by_class(workload: Workload, roles: Mapping[str, object]) -> dict[str, str]:
    """Each class's role (class name → role); checks that every class has a target before anything starts."""
    route = workload.tls_settings().route
    return {c.name: role_of(c, roles, route) for c in workload.classes}


def base_url_of(cls: RequestClass, role_urls: RoleUrls, tls_route: str = "kind") -> str:
    """The base URL the class's requests go to: its role's https URL for a TLS class, else its http URL.

    Raises:
        ConfigError: the role's target has no URL of the scheme the class needs.
    """
    role = role_of(cls, role_urls, tls_route)
    http, https = role_urls[role]
    url = https if cls.tls else http
    if url is None:
        scheme = "an https" if cls.tls else "an http"
        raise ConfigError(f"class {cls.name!r} needs {scheme} URL for its {role} target: give {role}="
                          f"{'https' if cls.tls else 'http'}://HOST:PORT")  # fmt: skip
    return url.rstrip("/")


def url_role_map(targets: Mapping[str, str], tls_target: str | None) -> dict[str, tuple[str | None, str | None]]:
    """Role URLs from `--target ROLE=URL,...` (and --tls-target as the tls role's URL)."""
    out: dict[str, tuple[str | None, str | None]] = {}
    for role, url in targets.items():
        https = url.lower().startswith("https:")
        out[role] = (None if https else url, url if https else None)
    if tls_target is not None and "tls" not in out:
        out["tls"] = (None, tls_target)
    return out
