"""Factorial experiments (`crest doe DESIGN.toml`): a 2^k or 2^(k−p) design turned into runs, and the
runs' responses turned into the table the analysis takes.

Owns the design file's model, mapping each factor onto a run (server, cores
and memory of a provisioned target; workload, load point, threads, receive
buffer, keep-alive, TLS share of the suite) and reading each run's response.
Never prints; running goes through SuiteRunner, the arithmetic is
crest.analysis.doe's.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from crest.analysis.doe import design
from crest.errors import ConfigError
from crest.runner import EventCallback, RunRequest, SuiteRunner
from crest.store import RunDetail, Store
from crest.suite import Suite, load_suite
from crest.suite.models import RequestClass
from crest.units import parse_size

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser, published as tomli
    import tomli as tomllib  # type: ignore[no-redef, import-not-found, unused-ignore]

# Factors a design may vary, and what each changes.
FACTORS = {
    "server": "the target crest starts (an adapter name; see `crest servers`)",
    "cpus": "cores the target is pinned to",
    "memory": "the target's memory limit, e.g. 256M",
    "workload": "the suite (a built-in name or a .toml file)",
    "clients": "one load point of that many clients (the ladder is replaced by it)",
    "threads": "threads per client",
    "receive_buffer": "the engine's read buffer (bytes per read, WebBench's receive buffer; not SO_RCVBUF)",
    "keepalive": "keep-alive on (true) or off (false)",
    "tls_share": "the share of every request class sent over TLS, 0 to 1",
}
RESPONSES = ("peak_rps", "peak_throughput_Bps", "mean_latency_us")


class DesignFile(BaseModel):
    """A design file as written."""

    model_config = ConfigDict(extra="forbid")

    name: str = "design"
    suite: str | None = None  # required unless `workload` is a factor
    profile: str = "quick"
    replications: int = Field(default=1, ge=1)
    response: str = "peak_rps"
    generators: list[str] = []
    server: str | None = None  # the target when `server` is not a factor
    target: str | None = None  # an external URL, when no server is provisioned
    factors: dict[str, list[Any]] = Field(min_length=1)

    @field_validator("factors")
    @classmethod
    def _known(cls, value: dict[str, list[Any]]) -> dict[str, list[Any]]:
        for name, levels in value.items():
            if name not in FACTORS:
                raise ValueError(f"unknown factor {name!r}: use {', '.join(FACTORS)}")
            if len(levels) != 2 or levels[0] == levels[1]:
                raise ValueError(f"factor {name!r} needs exactly two different levels, low and high (got {levels})")
        return value

    @field_validator("response")
    @classmethod
    def _response(cls, value: str) -> str:
        if value not in RESPONSES:
            raise ValueError(f"unknown response {value!r}: use {', '.join(RESPONSES)}")
        return value


@dataclass(frozen=True)
class Experiment:
    """One row of the design: the factor values and the run request that realises them."""

    levels: dict[str, Any]
    request: RunRequest
    replication: int  # stored as the run's trial number, so analysis groups replications as trials


def load_design(path: Path) -> DesignFile:
    """Read a design file.

    Raises:
        ConfigError: unreadable, not TOML, or not a valid design (one line naming the field).
    """
    try:
        data = tomllib.loads(Path(path).read_text())
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
    return d


def experiments(d: DesignFile, *, store_path: Path, experiment_id: str) -> list[Experiment]:
    """Every run of the design, replications included, in the order they should run (replications
    outermost, so each one's runs spread over the whole experiment)."""
    rows = design(d.factors, d.generators, d.replications)
    per_rep = len(rows) // d.replications
    out = []
    for i, levels in enumerate(rows):
        suite = _suite(d, levels)
        server = str(levels.get("server", d.server)) if ("server" in levels or d.server) else None
        memory = levels.get("memory")
        request = RunRequest(
            suite=suite,
            target=None if server else d.target,
            profile=d.profile,
            repeat=1,
            store_path=store_path,
            factors=dict(levels),
            experiment=experiment_id,
            server=server,
            cpus=int(levels["cpus"]) if "cpus" in levels else None,
            memory_bytes=parse_size(str(memory), what="memory level") if memory is not None else None,
        )
        out.append(Experiment(levels=levels, request=request, replication=i // per_rep))
    return out


def run_design(
    d: DesignFile,
    *,
    store_path: Path,
    experiment_id: str,
    on_event: EventCallback | None = None,
    on_run: Callable[[Experiment, RunDetail], None] | None = None,
) -> list[dict[str, Any]]:
    """Run every experiment (each checked before any sends) and return one row per run: the factor
    levels plus the response, ready for crest.analysis.doe.analyze."""
    plan = experiments(d, store_path=store_path, experiment_id=experiment_id)
    runners = [SuiteRunner(e.request, on_event) for e in plan]
    for runner in runners:
        runner.preflight()
    rows = []
    with Store(store_path) as store:
        for e, runner in zip(plan, runners):
            run_id = runner.run_trial(store, e.replication)
            detail = store.run(run_id)
            if on_run is not None:
                on_run(e, detail)
            rows.append({**e.levels, d.response: response_of(detail, d.response), "run_id": run_id})
    return rows


def response_of(detail: RunDetail, response: str) -> float:
    """The response of one run: its peak req/s or throughput, or its mean latency over the mixes."""
    mixes = [m for m in detail.mixes if not math.isnan(m.rps)]
    if not mixes:
        raise ConfigError(f"run {detail.id} stored no mix: its response cannot be read")
    if response == "peak_rps":
        return max(m.rps for m in mixes)
    if response == "peak_throughput_Bps":
        return max(m.throughput_Bps for m in mixes)
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


def _bool(value: Any, name: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).lower()
    if text in ("true", "on", "yes", "1"):
        return True
    if text in ("false", "off", "no", "0"):
        return False
    raise ConfigError(f"factor {name} level {value!r}: give true or false")
