"""Reads suites: TOML files and the built-in suites shipped as package data; it never prints.

Every problem is reported as one line naming the file, the dotted key, the rule
and the value, and all problems of a file are reported at once.
"""

from __future__ import annotations

import functools
import importlib.resources
import re
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from crest.errors import ConfigError
from crest.suite.errors import SuiteError, problems_from
from crest.suite.har import har_suite
from crest.suite.models import Suite
from crest.suite.replay import Replay, default_connections, default_timing, log_suite
from crest.suite.script import read_users

tomllib: types.ModuleType | None
try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the same parser, published as tomli
    try:
        import tomli as tomllib  # type: ignore[no-redef, import-not-found, unused-ignore]
    except ModuleNotFoundError:
        tomllib = None

# The built-in suites in listing order: by seed report, then simple before elaborate.
BUILTIN_ORDER = (
    "veritest-static",
    "veritest-static-mt4",
    "veritest-cgi",
    "veritest-isapi",
    "veritest-ecommerce",
    "veritest-ecommerce-isapi",
    "veritest-large",
    "veritest-large-mt4",
    "veritest-static-mt",
    "veritest-large-cgi",
    "veritest-large-isapi",
    "veritest-isapi-mt",
    "veritest-large-ecommerce",
    "veritest-large-ecommerce-isapi",
    "mindcraft-webbench",
    "mindcraft-webbench-restart",
    "mindcraft-netbench",
    "netbench-nbdm60",
    "kornecki-detail-static",
    "kornecki-detail-dynamic",
    "kornecki-screening-static",
    "kornecki-screening-dynamic",
    "zeus-cached",
    "zeus-noncached",
    "zeus-dynamic",
    "specweb99",
    "webcat-webstone",
    "webcat-large-filemix",
    "webcat-memory",
    "webcat-cgi-html",
)
_BUILTIN_PACKAGE = "crest.suite"
_BUILTIN_DIR = "builtin"


def parse_suite(data: Mapping[str, Any], origin: str = "suite") -> Suite:
    """Validate a suite given as a mapping (a parsed TOML document); origin prefixes every problem."""
    try:
        return Suite.model_validate(dict(data))
    except ValidationError as exc:
        raise SuiteError(problems_from(exc, origin, Suite)) from None


def parse_toml(text: str, origin: str = "suite.toml") -> Suite:
    """Validate a suite written as TOML text."""
    if tomllib is None:
        raise SuiteError(
            f"{origin}: reading suite files needs Python ≥ 3.11 (tomllib) or the tomli package: pip install tomli"
        )
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # The parser's message already ends with "(at line L, column C)".
        raise SuiteError(f"{origin}: TOML syntax error: {exc}") from None
    return parse_suite(data, origin)


def _read_text(raw: bytes, origin: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SuiteError(f"{origin}: not UTF-8 text (byte {exc.start}): save the file as UTF-8") from None


def load_file(path: str | Path) -> Suite:
    """Load and validate one suite .toml file; problems are prefixed with the path as given.

    A replay workload's log and site are resolved against the file's directory, and the log must exist;
    without [ladder] or [timing], the log's summary gives them (crest.suite.replay's defaults).
    """
    origin = str(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise SuiteError(f"{origin}: cannot read the suite file: {exc.strerror or exc}") from None
    text = _read_text(raw, origin)
    if tomllib is None:
        return parse_toml(text, origin)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SuiteError(f"{origin}: TOML syntax error: {exc}") from None
    workload = data.get("workload")
    replay = workload.get("replay") if isinstance(workload, dict) else None
    if isinstance(replay, dict):
        data = _with_replay_paths(data, replay, Path(path).resolve().parent, origin)
    har = workload.get("har") if isinstance(workload, dict) else None
    if isinstance(har, dict) and isinstance(har.get("file"), str) and har["file"]:
        data = _with_har_path(data, har, Path(path).resolve().parent, origin)
    script = workload.get("script") if isinstance(workload, dict) else None
    if isinstance(script, dict) and isinstance(script.get("users"), str) and script["users"]:
        data = _with_users_path(data, script, Path(path).resolve().parent, origin)
    return parse_suite(data, origin)


def _with_users_path(data: dict[str, Any], script: dict[str, Any], here: Path, origin: str) -> dict[str, Any]:
    """The suite with its script's CSV of users as an absolute path, read once here so that a missing or
    malformed file stops the run before anything starts."""
    users = here / script["users"]
    if not users.is_file():
        raise SuiteError(f"{origin}: workload.script.users: no file {users}: give the path of a CSV of users"
                         " (relative to the suite file)")  # fmt: skip
    try:
        read_users(users)
    except ConfigError as exc:
        raise SuiteError(f"{origin}: workload.script.users: {exc}") from None
    return {**data, "workload": {**data["workload"], "script": {**script, "users": str(users)}}}


def _with_har_path(data: dict[str, Any], har: dict[str, Any], here: Path, origin: str) -> dict[str, Any]:
    """The suite with its HAR file as an absolute path, read once here so that a missing or malformed
    recording stops the run before anything starts."""
    from crest.replay.har import read_har

    where = here / har["file"]
    try:
        read_har(where)
    except ConfigError as exc:
        raise SuiteError(f"{origin}: workload.har.file: {exc}") from None
    site = har.get("site")
    if isinstance(site, str) and site:
        har = {**har, "site": str(here / site)}
        if not Path(har["site"]).is_dir():
            raise SuiteError(f"{origin}: workload.har.site: no directory {har['site']}: give the directory the"
                             " target serves (relative to the suite file), or leave site out")  # fmt: skip
    return {**data, "workload": {**data["workload"], "har": {**har, "file": str(where)}}}


def _with_replay_paths(data: dict[str, Any], replay: dict[str, Any], here: Path, origin: str) -> dict[str, Any]:
    """The suite with its log and site as absolute paths, the log checked, and a ladder and timing from the
    log's summary where the file gives none."""
    replay = dict(replay)
    for key in ("log", "site"):
        if isinstance(replay.get(key), str) and replay[key]:
            replay[key] = str(here / replay[key])
    log = replay.get("log")
    if isinstance(log, str) and log and not _is_file(log):
        raise SuiteError(f"{origin}: workload.replay.log: no file {log}: give the path of an access log"
                         " (relative to the suite file)")  # fmt: skip
    data = {**data, "workload": {**data["workload"], "replay": replay}}
    if ("ladder" in data and "timing" in data) or not isinstance(log, str) or not log:
        return data
    try:
        settings = Replay.model_validate(replay)
    except ValidationError:
        return data  # parse_suite names each problem at its key
    from crest.replay import scan

    summary = scan(log, settings.reader_options())
    data.setdefault("ladder", {"clients": [default_connections(summary.peak_concurrency)]})
    data.setdefault("timing", default_timing(settings, summary.duration_s))
    return data


def _is_file(path: str) -> bool:
    try:
        return Path(path).is_file()
    except (OSError, ValueError):  # a NUL in the name, a name too long
        return False


def looks_like_log(path: str) -> bool:
    """Whether a suite argument names an access log rather than a suite: an existing file not named .toml
    whose first line is no TOML (a key, a [table] or a comment)."""
    where = Path(path)
    if path.endswith(".toml") or not _is_file(path):
        return False
    try:
        with where.open("rb") as f:
            first = f.readline(4096).decode("utf-8", "replace").strip()
    except OSError:
        return False
    return bool(first) and not (first.startswith(("[", "#")) or _TOML_KEY.match(first))


_TOML_KEY = re.compile(r"[A-Za-z0-9_.\"'-]+\s*=")


def looks_like_har(path: str) -> bool:
    """Whether a suite argument names a HAR recording: an existing file named .har, or one whose JSON
    starts with its "log" object (a Caddy log's JSON lines start otherwise)."""
    if not _is_file(path):
        return False
    if path.lower().endswith(".har"):
        return True
    try:
        with Path(path).open("rb") as f:
            head = f.read(4096).decode("utf-8", "replace")
    except OSError:
        return False
    return bool(_HAR_START.match(head))


_HAR_START = re.compile(r"\s*\{\s*\"log\"\s*:")


def har_as_suite(path: str) -> Suite:
    """The suite of a bare HAR file: one browser loading its pages in turn.

    Raises:
        ConfigError: the file is no HAR crest can replay (crest.replay.har's one line).
    """
    from crest.replay.har import read_har

    where = Path(path).resolve()
    read_har(where)
    return parse_suite(har_suite(str(where)), path)


def log_as_suite(path: str) -> Suite:
    """The suite of a bare log: its request mix (mode mix) for any ladder or capacity search."""
    from crest.replay import A_BARE_LOG, scan

    summary = scan(path, said=A_BARE_LOG)
    data = log_suite(str(Path(path).resolve()), duration_s=summary.duration_s,
                     peak_concurrency=summary.peak_concurrency)  # fmt: skip
    return parse_suite(data, path)


# Experiments published as one test but needing several workloads: each member
# suite runs as its own run, tagged with the factor that tells them apart.
GROUPS: dict[str, tuple[str, dict[str, tuple[str, str]]]] = {
    "kornecki-detail": (
        "Kornecki et al. (seed 002), the detail experiment: static and dynamic workloads"
        " × 1, 2, 4, 8, 16, 32 clients × 3 repeats",
        {"workload": ("kornecki-detail-static", "kornecki-detail-dynamic")},
    ),
}


def load_group(name: str) -> list[tuple[Suite, dict[str, str]]]:
    """The member suites of a group with each one's factor values, or [] when `name` is no group."""
    if name not in GROUPS:
        return []
    _, factors = GROUPS[name]
    members = []
    for factor, suite_names in factors.items():
        for suite_name in suite_names:
            level = suite_name.rsplit("-", 1)[-1]
            members.append((load_suite(suite_name), {factor: level}))
    return members


def builtin_names() -> list[str]:
    """The names of the built-in suites, in listing order."""
    return list(BUILTIN_ORDER)


@functools.cache
def _builtins() -> tuple[Suite, ...]:
    folder = importlib.resources.files(_BUILTIN_PACKAGE).joinpath(_BUILTIN_DIR)
    suites = []
    for name in BUILTIN_ORDER:
        origin = f"{name}.toml"
        suite = parse_toml(_read_text(folder.joinpath(origin).read_bytes(), origin), origin)
        if suite.name != name:
            raise SuiteError(f"{origin}: name: must match the file name (got '{suite.name}')")
        suites.append(suite)
    return tuple(suites)


def builtin_suites() -> list[Suite]:
    """Every built-in suite, validated, in listing order."""
    return list(_builtins())


def load_suite(path_or_name: str) -> Suite:
    """A built-in suite by name, or a suite .toml file by path.

    A value ending in .toml or containing a path separator is always a path;
    otherwise a built-in name wins over a file of the same name.
    """
    looks_like_path = path_or_name.endswith(".toml") or "/" in path_or_name or "\\" in path_or_name
    if not looks_like_path and path_or_name in BUILTIN_ORDER:
        return next(s for s in _builtins() if s.name == path_or_name)
    if looks_like_har(path_or_name):
        return har_as_suite(path_or_name)
    if looks_like_log(path_or_name):
        return log_as_suite(path_or_name)
    if looks_like_path or Path(path_or_name).is_file():
        return load_file(path_or_name)
    raise SuiteError(
        f"no built-in suite or file named '{path_or_name}': use a suite .toml file"
        f" or one of {', '.join(BUILTIN_ORDER)} (`crest suites` lists them)"
    )
