"""Design files (`crest doe DESIGN.toml`): a 2^k or 2^(k−p) design's model, what each factor changes,
and each run's response.

Owns the file's syntax and validation, the built-in designs shipped beside
this module (`crest doe NAME`, e.g. kornecki-screening), what `crest doe`'s
--server and --profile replace, mapping the workload factors onto
the suite (workload, load point, threads, receive buffer, keep-alive, TLS
share), naming server options as factors, and reading each run's response.
Never prints; crest.experiment.plan plans and executes the runs (and maps
server, cores, memory and server options onto them), crest.analysis.doe owns
the design table and the arithmetic.
"""

from __future__ import annotations

import importlib.resources
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from crest.analysis.doe import design
from crest.analysis.peak import run_peak
from crest.errors import ConfigError
from crest.experiment.plan import Configuration, Plan, Trial, configure, execute, plan
from crest.runner.trials import EventCallback, RunRequest
from crest.store import RunDetail, Store
from crest.suite import PROFILES, Suite, load_suite
from crest.suite.models import RequestClass

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser, published as tomli
    import tomli as tomllib  # type: ignore[no-redef, import-not-found, unused-ignore]

# Server options are factors too: `server_opt.KEY = [low, high]` (or a `[factors.server_opt]` table)
# in [factors], fixed ones in a top-level [server_opt] table, as `--server-opt KEY=VALUE` would give them.
SERVER_OPT = "server_opt"
# Factors a design may vary, and what each changes.
FACTORS = {
    "server": "the target crest starts (an adapter name; see `crest servers`)",
    "cpus": "cores the target is pinned to",
    "memory": "the target's memory limit, e.g. 256M",
    "workload": "the suite (a built-in name or a .toml file)",
    "network": "the client network, as --network SPEC gives it (e.g. webcat-10mbit; see docs/networks.md)",
    "clients": "one load point of that many clients (the ladder is replaced by it)",
    "threads": "threads per client",
    "receive_buffer": "the engine's read buffer (bytes per read, WebBench's receive buffer; not SO_RCVBUF)",
    "keepalive": "keep-alive on (true) or off (false)",
    "http": "the HTTP version: 1.0, 1.1, 2 or 3 (HTTP/2 and HTTP/3 keep connections alive)",
    "streams": "HTTP/2 or HTTP/3 streams per connection",
    "tls_share": "the share of every request class sent over TLS, 0 to 1",
    f"{SERVER_OPT}.KEY": "a setting of the server, as --server-opt KEY=VALUE; the factor is named KEY",
}
RESPONSES = ("peak_rps", "peak_throughput_Bps", "mean_latency_us")
# The designs shipped as package data in builtin/, by name (the file is NAME.toml).
BUILTIN_DESIGNS = ("kornecki-screening",)
# What a server option's value may be in a design file (passed to the server as text).
_OPTION_TYPES = (str, int, float)


class DesignFile(BaseModel):
    """A design file as written; a server option factor's name is its KEY (as `factor_levels` lists it)."""

    model_config = ConfigDict(extra="forbid")

    name: str = "design"
    description: str = ""
    source: str = ""  # the seed report and figure a built-in design reproduces
    notes: str = ""  # what stands in for what the seed had, and what to expect of it
    suite: str | None = None  # required unless `workload` is a factor
    profile: str = "quick"
    replications: int = Field(default=1, ge=1)
    response: str = "peak_rps"
    generators: list[str] = []
    server: str | None = None  # the target when `server` is not a factor
    target: str | None = None  # an external URL, when no server is provisioned
    server_opt: dict[str, Any] = {}  # fixed settings of the server, as --server-opt KEY=VALUE
    # As written, except that a [factors.server_opt] table is flattened to "server_opt.KEY" names.
    factors: dict[str, list[Any]] = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _flatten(cls, data: Any) -> Any:
        factors = data.get("factors") if isinstance(data, dict) else None
        if isinstance(factors, dict) and isinstance(factors.get(SERVER_OPT), dict):
            flat: dict[str, Any] = {}
            for name, levels in factors.items():
                if name == SERVER_OPT:
                    flat.update({f"{SERVER_OPT}.{key}": value for key, value in levels.items()})
                else:
                    flat[name] = levels
            data = {**data, "factors": flat}
        return data

    @field_validator("factors")
    @classmethod
    def _known(cls, value: dict[str, list[Any]]) -> dict[str, list[Any]]:
        for name, levels in value.items():
            key = _option_key(name)
            if key is None and name not in FACTORS:
                raise ValueError(f"unknown factor {name!r}: use {', '.join(FACTORS)}")
            if key is not None:
                if not key or key in FACTORS:
                    raise ValueError(f"factor {name!r}: give {SERVER_OPT}.KEY with KEY a setting of the server"
                                     f" (see `crest servers`), not a design factor's name")  # fmt: skip
                if not all(isinstance(v, _OPTION_TYPES) and not isinstance(v, bool) for v in levels):
                    raise ValueError(f"factor {name!r}: a server option's levels are text or numbers (got {levels})")
                levels = [str(v) for v in levels]
            if len(levels) != 2 or levels[0] == levels[1]:
                raise ValueError(f"factor {name!r} needs exactly two different levels, low and high (got {levels})")
        return value

    @field_validator("server_opt")
    @classmethod
    def _fixed_options(cls, value: dict[str, Any]) -> dict[str, Any]:
        for key, setting in value.items():
            if not isinstance(setting, _OPTION_TYPES) or isinstance(setting, bool):
                raise ValueError(f'{key} = {setting!r}: give the setting as text or a number, e.g. {key} = "on"')
        return value

    @field_validator("response")
    @classmethod
    def _response(cls, value: str) -> str:
        if value not in RESPONSES:
            raise ValueError(f"unknown response {value!r}: use {', '.join(RESPONSES)}")
        return value

    @property
    def factor_levels(self) -> dict[str, list[Any]]:
        """Each factor's (low, high) under the name its runs, data and effects use (KEY for server options)."""
        return {_option_key(name) or name: levels for name, levels in self.factors.items()}

    @property
    def option_factors(self) -> list[str]:
        """The factors that are server options, by KEY."""
        return [key for key in map(_option_key, self.factors) if key]


@dataclass(frozen=True)
class DesignRun:
    """One run of a design: its row's levels, the trial (replication) and the response read from it."""

    levels: dict[str, Any]
    replication: int
    run_id: str
    response: float


def load_design(path_or_name: str | Path) -> DesignFile:
    """Read a design file, or a built-in design by name. As with suites, a value ending in .toml or
    holding a path separator is always a path; otherwise a built-in name wins over a file of that name.

    Raises:
        ConfigError: no such design, unreadable, not TOML, or not a valid design (one line naming the field).
    """
    path = str(path_or_name)
    looks_like_path = path.endswith(".toml") or "/" in path or "\\" in path
    try:
        if not looks_like_path and path in BUILTIN_DESIGNS:
            text = importlib.resources.files(__package__ or "crest.experiment").joinpath("builtin", f"{path}.toml")
            data = tomllib.loads(text.read_text(encoding="utf-8"))
        elif looks_like_path or Path(path).is_file():
            data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        else:
            raise ConfigError(
                f"no built-in design or file named {path!r}: give a design .toml file"
                f" or one of {', '.join(BUILTIN_DESIGNS)}"
            )
    except OSError as exc:
        raise ConfigError(f"cannot read design {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"design {path} is not valid TOML: {exc}") from None
    try:
        d = DesignFile.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "design"
        raise ConfigError(f"design {path}: {where}: {first['msg'].removeprefix('Value error, ')}") from None
    if "workload" not in d.factors and d.suite is None:
        raise ConfigError(f"design {path}: give suite = NAME (or make workload a factor)")
    provisioned = "server" in d.factors or d.server is not None
    if not provisioned and d.target is None:
        raise ConfigError(f"design {path}: give server = NAME (or make server a factor), or target = URL")
    if not provisioned and ({"cpus", "memory"} & set(d.factors)):
        raise ConfigError(f"design {path}: cpus and memory need a server crest starts: give server = NAME")
    if not provisioned and (d.option_factors or d.server_opt):
        raise ConfigError(f"design {path}: {SERVER_OPT} settings need a server crest starts: give server = NAME")
    both = sorted(set(d.option_factors) & set(d.server_opt))
    if both:
        raise ConfigError(f"design {path}: {SERVER_OPT}.{both[0]} is both fixed and a factor: give it once")
    if d.profile not in PROFILES:
        raise ConfigError(f"design {path}: profile: unknown profile {d.profile!r}: use one of {', '.join(PROFILES)}")
    return d


def builtin_designs() -> list[DesignFile]:
    """Every built-in design, validated, in BUILTIN_DESIGNS order."""
    return [load_design(name) for name in BUILTIN_DESIGNS]


def with_overrides(d: DesignFile, *, server: str | None = None, profile: str | None = None) -> DesignFile:
    """The design with `crest doe`'s --server (the target crest starts, in place of the design's server
    or target URL) and --profile (mix lengths: quick runs a 2-minute design's experiments for 4 s each).

    Raises:
        ConfigError: --server for a design whose server is a factor, or an unknown profile.
    """
    update: dict[str, Any] = {}
    if server is not None:
        if "server" in d.factors:
            levels = ", ".join(map(str, d.factors["server"]))
            raise ConfigError(f"design {d.name} makes server a factor ({levels}): drop --server, or edit its levels")
        update.update(server=server, target=None)
    if profile is not None:
        if profile not in PROFILES:
            raise ConfigError(f"unknown --profile {profile!r}: use one of {', '.join(PROFILES)}")
        update["profile"] = profile
    return d.model_copy(update=update)


def plan_design(
    d: DesignFile, *, store_path: Path, placement: Mapping[str, Any] | None = None
) -> tuple[Plan, list[dict[str, Any]]]:
    """The design's experiment (one configuration per row, its replications as trials, interleaved by
    crest.experiment.plan) and each configuration's row of levels. `placement` holds the cluster options
    (cluster, nodes, target_node, ...) every run shares.

    Raises:
        ConfigError: a level that cannot be applied (a suite that does not load, a memory that is no size).
    """
    rows = design(d.factor_levels, d.generators, 1)
    fixed = {key: str(value) for key, value in d.server_opt.items()}
    requests = []
    for levels in rows:
        base = RunRequest(
            suite=_suite(d, levels),
            target=d.target,
            profile=d.profile,
            repeat=d.replications,
            store_path=store_path,
            factors=dict(fixed),  # fixed settings are stored like --server-opt's, so grouping sees them
            server=d.server,
            server_options=fixed,
            **dict(placement or {}),
        )
        requests.append(configure(base, levels, options=d.option_factors))
    return plan(requests, prefix="doe"), rows


def run_design(
    d: DesignFile,
    *,
    store_path: Path,
    on_event: EventCallback | None = None,
    on_run: Callable[[DesignRun], None] | None = None,
    placement: Mapping[str, Any] | None = None,
    on_ready: Callable[[Plan], None] | None = None,
) -> tuple[str, list[DesignRun]]:
    """Run every trial of the design (every configuration checked before any sends, then `on_ready` is
    told the plan); returns the experiment id and one DesignRun per run, in the order they ran."""
    p, rows = plan_design(d, store_path=store_path, placement=placement)
    out: list[DesignRun] = []

    def record(configuration: Configuration, trial: Trial, run_id: str) -> None:
        with Store(store_path) as store:
            detail = store.run(run_id)
        done = DesignRun(rows[trial.configuration], trial.index, run_id, response_of(detail, d.response))
        out.append(done)
        if on_run is not None:
            on_run(done)

    execute(p, store_path=store_path, on_event=on_event, on_run=record, on_ready=on_ready)
    return p.experiment, out


def response_of(detail: RunDetail, response: str) -> float:
    """The response of one run: its peak req/s or throughput, or its mean latency over the mixes."""
    mixes = [m for m in detail.mixes if not math.isnan(m.rps)]
    if not mixes:
        raise ConfigError(f"run {detail.id} stored no mix: its response cannot be read")
    if response == "peak_rps":
        return run_peak(detail).rps
    if response == "peak_throughput_Bps":
        return run_peak(detail).throughput_Bps
    return sum(float(m.latency_us.get("mean", 0.0)) for m in mixes) / len(mixes)


def _suite(d: DesignFile, levels: dict[str, Any]) -> Suite:
    """The design's suite with this row's workload factors applied."""
    suite = load_suite(str(levels.get("workload", d.suite)))
    workload = suite.workload
    if "keepalive" in levels:
        keepalive = _bool(levels["keepalive"], "keepalive")
        workload = workload.model_copy(
            update={"keepalive": keepalive, "http_version": "1.1" if keepalive else workload.http_version}
        )
    if "http" in levels or "streams" in levels:
        http = str(levels["http"]) if "http" in levels else None
        streams = int(levels["streams"]) if "streams" in levels else None
        workload = suite.with_protocol(http, streams).workload
    if "receive_buffer" in levels:
        workload = workload.model_copy(update={"read_buffer_bytes": int(levels["receive_buffer"])})
    if "tls_share" in levels:
        workload = workload.model_copy(update={"classes": _tls_split(workload.classes, float(levels["tls_share"]))})
    ladder = suite.ladder
    if "clients" in levels:
        ladder = ladder.model_copy(update={"clients": [int(levels["clients"])], "start": None, "step": None,
                                           "stop": None, "overrides": []})  # fmt: skip
    if "threads" in levels:
        ladder = ladder.model_copy(update={"threads_per_client": int(levels["threads"]), "overrides": []})
    return Suite.model_validate(suite.model_copy(update={"workload": workload, "ladder": ladder}).model_dump())


def _tls_split(classes: list[RequestClass], share: float) -> list[RequestClass]:
    """Each plain class split into a plain part and a TLS part carrying `share` of its weight."""
    if not 0.0 <= share <= 1.0:
        raise ConfigError(f"tls_share {share} is outside 0..1: give the share of requests sent over TLS")
    out = []
    for c in classes:
        if c.tls:
            out.append(c)
            continue
        if share < 1.0:
            out.append(c.model_copy(update={"weight": c.weight * (1.0 - share)}))
        if share > 0.0:
            out.append(c.model_copy(update={"name": f"{c.name}-tls", "tls": True, "weight": c.weight * share}))
    return out


def _option_key(name: str) -> str | None:
    """KEY for a factor named server_opt.KEY; None for any other factor."""
    prefix = f"{SERVER_OPT}."
    return name[len(prefix) :] if name.startswith(prefix) else None


def _bool(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).lower()
    if text in ("true", "on", "yes", "1"):
        return True
    if text in ("false", "off", "no", "0"):
        return False
    raise ConfigError(f"factor {name} level {value!r}: give true or false")
