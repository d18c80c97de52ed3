"""Configuration: the runs that are trials of one target configuration, and a short label for each.

Runs are trials of one configuration only when every setting is equal (the
repeat index aside): suite (name and stored content), profile, factors, the
run's stored settings (server, server options, cores, memory, access log,
timeout, content checks, engine threads), a URL target's address, and the
digest of the provisioned server's effective configuration (its files,
command line and environment with the run's own site directory and ports
taken out) and the server's version (an upgrade alone changes what is
measured). Runs stored without settings (published tables) are told apart
by suite, profile and factors, and by target when they have no factors. Labels
name only what differs between the configurations at hand, so a table of
nginx vs apache says "server=nginx", not every factor; a target crest did not
start is named by its URL, never "server=none cpus=none". It must not compute
statistics.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from crest.analysis.points import LoadPoint, points_from_run
from crest.store import RunDetail

_MISSING = "none"  # how a factor a configuration lacks shows in a label
# The stored run options that are settings of what was measured; the others (seed, results file,
# fileset directory, repeat count, experiment) say how or where a run was made, not what it measured.
_SETTINGS = (
    "server", "server_options", "cpus", "memory_bytes", "access_log", "timeout_s", "validate_content",
    "engine_threads",
)  # fmt: skip
_DIGEST_LABEL = 8  # hex digits of a server configuration's digest shown when only it tells two apart
# The factors that set a target crest starts (crest.experiment.plan's), and how --server names a URL target.
_STARTED_TARGET = ("server", "cpus", "memory")
_EXTERNAL = "external"


@dataclass
class Configuration:
    """One configuration and its trials, in trial (repeat_index) order."""

    label: str
    factors: dict[str, Any]
    trials: list[RunDetail] = field(default_factory=list)

    def trial_count(self) -> int:
        """How many trials the configuration's curve has (a merged configuration counts its own)."""
        return len(self.trials)

    def trial_points(self, load_axis: str = "clients") -> list[list[LoadPoint]]:
        """Each trial's curve, in trial order."""
        return [points_from_run(trial, load_axis) for trial in self.trials]


def configurations(details: Sequence[RunDetail]) -> list[Configuration]:
    """Group runs into configurations, in the order each configuration first appears."""
    groups: dict[str, list[RunDetail]] = {}
    for detail in details:
        groups.setdefault(_key(detail), []).append(detail)
    trials = [sorted(g, key=lambda d: (d.meta.repeat_index, d.started_at, d.id)) for g in groups.values()]
    labels = _labels([t[0] for t in trials])
    return [Configuration(label, dict(t[0].meta.factors), t) for label, t in zip(labels, trials)]


def factor_label(factors: dict[str, Any], names: Sequence[str]) -> str:
    """ "k=v k2=v2" over the given factor names, in that order."""
    return " ".join(f"{name}={_value(factors.get(name, _MISSING))}" for name in names)


def differing_factors(factor_sets: Sequence[dict[str, Any]]) -> list[str]:
    """The factor names whose values are not the same in every set, in first-seen order."""
    names: dict[str, None] = {}
    for factors in factor_sets:
        names.update(dict.fromkeys(factors))
    return [
        name for name in names
        if len({_canonical(f.get(name, _MISSING)) for f in factor_sets}) > 1
    ]  # fmt: skip


def settings(detail: RunDetail) -> dict[str, Any]:
    """The settings a run stored beside its factors (see the module comment); {} for published runs."""
    config = detail.meta.config
    options = config.get("options")
    if not isinstance(options, dict):
        return {}
    out = {name: options[name] for name in _SETTINGS if name in options}
    # Runs stored before the option existed count as its default, not as another setting.
    out["nap"] = options.get("nap", True) is not False
    if options.get("server") is None:
        out["target"] = detail.meta.target
    server = config.get("server")
    if isinstance(server, dict) and server.get("config_sha256"):
        out["server_config"] = server["config_sha256"]
    if isinstance(server, dict) and server.get("version"):
        out["server_version"] = server["version"]  # an upgrade alone is another configuration
    return out


def _key(detail: RunDetail) -> str:
    meta = detail.meta
    stored = settings(detail)
    # Factors are what a run says about its configuration; a run without them or stored settings
    # can only be told apart by where it went.
    target = meta.target if not meta.factors and not stored else None
    suite = meta.config.get("suite")
    return json.dumps([meta.suite, meta.profile, target, meta.factors, stored, suite], sort_keys=True, default=str)


def _labels(firsts: list[RunDetail]) -> list[str]:
    if len(firsts) == 1:
        only = firsts[0]
        return [factor_label(only.meta.factors, list(only.meta.factors)) or f"{only.meta.suite} on {only.meta.target}"]
    names = differing_factors([d.meta.factors for d in firsts])
    if names:
        labels = [_factor_label(d, names) for d in firsts]
    else:
        labels = _settings_labels(firsts) or _fallback(firsts)
    if len(set(labels)) < len(labels):  # different configurations must never share a label
        labels = [f"{label} ({d.id})" for label, d in zip(labels, firsts)]
    return labels


def _factor_label(detail: RunDetail, names: list[str]) -> str:
    """factor_label, but a target crest did not start is named by its URL: the settings of a started
    target (server, cpus, memory) do not apply to it, so they never read "none" there."""
    factors = detail.meta.factors
    options = detail.meta.config.get("options") if isinstance(detail.meta.config, dict) else None
    external = isinstance(options, dict) and not options.get("server") and factors.get("server") in (None, _EXTERNAL)
    if not external:
        return factor_label(factors, names)
    rest = [n for n in names if n not in _STARTED_TARGET or (n in factors and n != "server")]
    return " ".join(filter(None, [detail.meta.target if "server" in names else "", factor_label(factors, rest)]))


def _settings_labels(firsts: list[RunDetail]) -> list[str]:
    """Labels by the stored settings that differ, when the factors do not: "access_log=true"."""
    shown = []
    for d in firsts:
        s = settings(d)
        if "server_config" in s:
            s["server_config"] = str(s["server_config"])[:_DIGEST_LABEL]
        shown.append(s)
    names = [n for n in differing_factors(shown) if n != "target"]
    return [factor_label(s, names) for s in shown] if names else []


def _fallback(firsts: list[RunDetail]) -> list[str]:
    differing = [a for a in ("suite", "target", "profile") if len({str(getattr(d.meta, a)) for d in firsts}) > 1]
    if not differing:
        return [d.id for d in firsts]
    return [" ".join(str(getattr(d.meta, a)) for a in differing) for d in firsts]


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)
