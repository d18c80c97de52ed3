"""Every shell example of README.md and docs/*.md checked against the real command tree, without running it.

A line of a ```sh (bash, shell, console) block that invokes `crest` (or .venv/bin/crest, after `sudo`,
`taskset -c N`, VAR=value, in a `&&` chain or a pipe) must name a subcommand that exists, options it
has, and values its parser takes (click's own parsing, `make_context`), plus what crest checks later:
suites, built-in designs, servers and their --server-opt keys, networks, profiles, CPU lists, durations,
counts and rates. Local URLs must reach something the page itself started: a `crest serve --port N` of the same
page, serving a file of the fileset generated into its docroot (or of any fileset crest ships when
the page starts no server). Values in capitals (RUN_ID, URL, DIR, N) are placeholders and pass. A
synopsis line (one with `[--optional]` parts) and a line marked `# error:` (an example that fails on
purpose) are checked for their command and option names only. A crest command written in a block
that is not marked as shell fails too, so no example escapes these checks; so does a citation of a
repository file that is not there.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import typer.core

from crest.cli.main import COMMANDS, load_command
from crest.errors import ConfigError
from crest.experiment.design import BUILTIN_DESIGNS
from crest.filesets import NAMES as FILESETS
from crest.filesets import build_manifest
from crest.load.runspec import HTTP_VERSIONS
from crest.machines.plan import parse as parse_lab
from crest.network.spec import network_level, parse_network
from crest.servers import cpus as cpu_split
from crest.servers.registry import EXTERNAL, adapter
from crest.servers.registry import NAMES as SERVERS
from crest.suite import GROUPS, PROFILES, builtin_names, load_group, load_suite
from crest.units import parse_count, parse_duration, parse_rate, parse_share, parse_size

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL = {"sh", "bash", "shell", "console"}
FENCE = re.compile(r"^\s*(```+|~~~+)\s*([\w+-]*)")
PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9_]*(\.[a-z]+)?(\.\.\.|…)?$")
OPERATORS = {"&&", "||", ";", "|", "&"}
REDIRECTS = {">", ">>", "<", "2>", "2>>", "&>"}
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}
# Pages crest serve answers besides its docroot's files (docs/serve.md).
SERVE_PAGES = ("cgi-bin/crest-env", "cgi-bin/crest-bytes", "dyn/env", "specweb99/dynamic")
# The parameters whose value is a URL (a suite's base URL, or the URL to load).
URL_PARAMS = {"url", "target", "tls_target", "suite"}
# Citations of repository paths (not crest's own relative code paths such as `load/fanout.py`).
CITED = re.compile(r"(?<![\w/.-])((?:reference|python|crates|docs|tests|scripts)/[\w./-]*\w)")

_ClickException: type[Exception] = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


@dataclass
class Example:
    """One shell line of a page (continuations joined), where it is, and how strictly to check it."""

    page: Path
    line: int
    text: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}: {self.text}"

    @property
    def names_only(self) -> bool:
        """A synopsis (`[--json]`) or an example that fails on purpose: its names are checked, not its values."""
        return "# error:" in self.text or any(t.startswith("[") for t in words(self.text))


@dataclass
class Page:
    """What the examples of one page set up: fileset docroots and the ports `crest serve` listens on."""

    docroots: dict[str, str] = field(default_factory=dict)  # DIR -> fileset
    ports: dict[int, str | None] = field(default_factory=dict)  # port -> the fileset it serves (None: unknown)
    serves: bool = False


def blocks(page: Path) -> Iterator[tuple[str, int, str]]:
    """(fence language, line number, line) of every line inside a fenced block, continuations joined."""
    lang: str | None = None
    fence = ""
    pending: tuple[int, str] | None = None
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        match = FENCE.match(line)
        if match and (lang is None or match.group(1).startswith(fence)):
            if lang is None:
                lang, fence = match.group(2).lower(), match.group(1)
            else:
                lang = None
            continue
        if lang is None:
            continue
        start, text = pending if pending else (number, "")
        text += line
        if text.endswith("\\") and lang in SHELL:
            pending = (start, text[:-1] + " ")
            continue
        pending = None
        yield lang, start, text


def words(text: str) -> list[str]:
    try:
        return shlex.split(text, comments=True)
    except ValueError:
        return text.split()


def invocations(text: str) -> Iterator[list[str]]:
    """The arguments after `crest` of every crest command on a shell line."""
    command: list[str] = []
    for token in [*words(text), ";"]:
        if token in OPERATORS:
            start = next((i for i, t in enumerate(command) if t == "crest" or t.endswith("/crest")), None)
            if start is not None:
                yield _drop_redirects(command[start + 1 :])
            command = []
        elif token[-1:] in (";", "&") and len(token) > 1:  # `a;` or `a&`: the word, then the operator
            yield from invocations(" ".join([*map(shlex.quote, command), shlex.quote(token[:-1]), token[-1]]))
            command = []
        else:
            command.append(token)


def _drop_redirects(args: list[str]) -> list[str]:
    out: list[str] = []
    skip = False
    for token in args:
        if skip:
            skip = False
        elif token in REDIRECTS:
            skip = True
        elif not re.match(r"^\d?>>?&?\d*$", token):
            out.append(token)
    return out


def leads_with_crest(text: str) -> bool:
    """True when a line's command (past VAR=value, sudo, taskset -c N) is crest with a subcommand or option."""
    tokens = words(text)
    while tokens and (re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", tokens[0]) or tokens[0] == "sudo"):
        tokens = tokens[1:]
    if tokens[:1] == ["taskset"]:
        tokens = tokens[3:]
    return (
        len(tokens) > 1
        and (tokens[0] == "crest" or tokens[0].endswith("/crest"))
        and (tokens[1] in COMMANDS or tokens[1].startswith("-"))
    )


def examples() -> list[Example]:
    found = []
    for page in PAGES:
        for lang, number, text in blocks(page):
            if lang in SHELL and any(True for _ in invocations(text)):
                found.append(Example(page, number, text))
    return found


# -- the command tree ------------------------------------------------------------------------------------------------


@cache
def command(name: str) -> Any:
    return load_command(name)


def resolve(args: list[str]) -> tuple[Any, str, list[str]]:
    """The click command that `crest ARGS` runs, its name and its own arguments."""
    if not args or args[0] not in COMMANDS:
        raise AssertionError(f"no command `crest {' '.join(args[:1])}`: use one of {', '.join(COMMANDS)}")
    cmd, name, rest = command(args[0]), args[0], args[1:]
    while isinstance(cmd, typer.core.TyperGroup):
        if not rest or rest[0] not in cmd.commands:
            raise AssertionError(f"`crest {name}` needs one of {', '.join(cmd.commands)}")
        cmd, name, rest = cmd.commands[rest[0]], f"{name} {rest[0]}", rest[1:]
    return cmd, name, rest


def options(cmd: Any) -> dict[str, Any]:
    return {opt: p for p in cmd.params for opt in [*p.opts, *getattr(p, "secondary_opts", [])] if opt.startswith("-")}


def check_names(cmd: Any, name: str, args: list[str]) -> None:
    known = options(cmd)
    for token in args:
        token = token.strip("[]")
        if token.startswith("-") and token not in ("-", "--") and not re.match(r"^-\d", token):
            flag = token.split("=", 1)[0]
            assert flag in known or flag in ("-h", "--help"), f"`crest {name}` has no option {flag}"


def with_placeholders_filled(cmd: Any, args: list[str]) -> list[str]:
    """ARGS with a placeholder given to a numeric option (--threads N) replaced by a number click accepts."""
    known = options(cmd)
    out = list(args)
    for i, token in enumerate(args[:-1]):
        param = known.get(token)
        if param is None or getattr(param, "is_flag", False) or not PLACEHOLDER.match(args[i + 1]):
            continue
        if getattr(param, "type_descriptor", None) is not None and param.type_descriptor.annotation in (int, float):
            out[i + 1] = "1"
    return out


def parse(cmd: Any, name: str, args: list[str]) -> dict[str, Any]:
    """The parameters click gives the command for ARGS (nothing is run)."""
    try:
        ctx = cmd.make_context(f"crest {name}", with_placeholders_filled(cmd, args), resilient_parsing=False)
    except _ClickException as exc:
        raise AssertionError(f"`crest {name}`: {exc.format_message()}") from None  # type: ignore[attr-defined]
    return dict(ctx.params)


# -- what crest checks after parsing ---------------------------------------------------------------------------------


def placeholder(value: object) -> bool:
    return isinstance(value, str) and (bool(PLACEHOLDER.match(value)) or value.endswith(".toml"))


def check_suite(value: str) -> None:
    # An access log stands for its request mix, a HAR for its page loads (docs/replay.md).
    if value.startswith(("http://", "https://")) or placeholder(value) or value.endswith((".log", ".har")):
        return
    known = [*builtin_names(), *GROUPS]
    assert value in known, f"no built-in suite {value!r}: use one of {', '.join(known)}"


def check_design(value: str) -> None:
    if placeholder(value) or "/" in value:  # a design file
        return
    assert value in BUILTIN_DESIGNS, f"no built-in design {value!r}: use one of {', '.join(BUILTIN_DESIGNS)}"


def check_servers(value: str) -> None:
    for item in value.split(","):
        name = item.split("=", 1)[-1]
        assert placeholder(name) or name in SERVERS, f"no server {name!r}: use one of {', '.join(SERVERS)}"


def check_server_options(pairs: list[str], servers: str | None) -> None:
    names = [s.split("=", 1)[-1] for s in (servers or "").split(",") if s and s.split("=", 1)[-1] != EXTERNAL]
    for pair in pairs:
        key = pair.split("=", 1)[0]
        for name in names:
            knobs = adapter(name).knobs
            assert key in knobs, f"--server-opt {key}: `crest servers` lists {name}'s keys as {', '.join(knobs)}"


def check_http(value: str) -> None:
    for version in value.split(","):
        assert version in HTTP_VERSIONS, f"--http {version}: use one of {', '.join(HTTP_VERSIONS)}"


def check_profile(value: str) -> None:
    assert value in PROFILES, f"--profile {value}: use one of {', '.join(PROFILES)}"


def check_fileset(value: str) -> None:
    assert value in FILESETS, f"no fileset {value!r}: use one of {', '.join(FILESETS)}"


# Each parameter, by its name in the commands, and what checks its value (ConfigError or AssertionError).
VALUES: dict[str, Callable[[str], object]] = {
    "server": check_servers,
    "network": lambda v: network_level(v) is None or parse_network(v),  # `none`: a run without one
    "spec": parse_network,
    "lab_spec": parse_lab,  # crest machines plan|up SPEC
    "profile": check_profile,
    "cpus": cpu_split.parse,
    "http": check_http,
    "duration": lambda v: parse_duration(v, what="--duration"),
    "timeout": lambda v: parse_duration(v, what="--timeout"),
    "length": lambda v: parse_duration(v, what="--length"),
    "think_time": lambda v: parse_duration(v, what="--think-time", allow_zero=True),
    "service_time": lambda v: parse_duration(v, what="--service-time"),
    "requests": lambda v: parse_count(v, what="--requests"),
    "connections": lambda v: parse_count(v, what="--connections"),
    "threads": lambda v: parse_count(v, what="--threads"),
    "streams": lambda v: parse_count(v, what="--streams"),
    "rate": lambda v: parse_rate(v, what="--rate"),
    "precision": lambda v: parse_share(v, what="--precision"),
    "memory": lambda v: [parse_size(m, what="--memory") for m in v.split(",")],
}


def check_values(name: str, params: dict[str, Any]) -> None:
    for key, check in VALUES.items():
        values = params.get(key)
        for value in values if isinstance(values, (list, tuple)) else [values]:
            if isinstance(value, str) and not placeholder(value):
                try:
                    check(value)
                except ConfigError as exc:
                    raise AssertionError(str(exc)) from None
    if name in ("run", "capacity", "suites") and isinstance(params.get("suite"), str):
        check_suite(params["suite"])
    if name == "doe" and isinstance(params.get("design"), str):
        check_design(params["design"])
    if name == "fileset generate" and not placeholder(params["name"]):
        check_fileset(params["name"])
    if params.get("server_opt"):
        check_server_options(params["server_opt"], params.get("server"))


# -- local URLs ------------------------------------------------------------------------------------------------------


@cache
def files(fileset: str) -> frozenset[str]:
    return frozenset(entry.path for entry in build_manifest(fileset).files)


def learn(page: Page, name: str, params: dict[str, Any]) -> None:
    """What a fileset generate or a crest serve example sets up for the examples after it."""
    if name == "fileset generate" and not placeholder(params["name"]):
        page.docroots[str(params["directory"]).rstrip("/")] = params["name"]
    if name == "serve":
        page.serves = True
        served = page.docroots.get(str(params["docroot"]).rstrip("/"))
        for port in (params.get("port"), params.get("tls_port")):
            if port:  # 0 (the default) picks a free port: nothing can name it beforehand
                page.ports[port] = served


def check_urls(page: Page, params: dict[str, Any]) -> None:
    for key in URL_PARAMS:
        value = params.get(key)
        if not isinstance(value, str) or "://" not in value:
            continue
        for url in re.findall(r"https?://[^,\s]+", value):
            check_url(page, url, loaded=key == "url")


def check_url(page: Page, url: str, *, loaded: bool = False) -> None:
    """A local URL reaches what the page started. `loaded`: the URL itself is requested (crest bench's), so
    its path must be a page there, `/` included; a suite's base URL (--target) only names the server."""
    parts = urlsplit(url)
    if parts.hostname not in LOCAL_HOSTS:
        return  # another machine: a placeholder for the reader's own target
    port = parts.port
    if page.serves:
        assert port in page.ports, (
            f"{url}: no `crest serve --port {port}` (or --tls-port {port}) on this page; crest serve picks a free"
            " port unless told one"
        )
    path = parts.path.lstrip("/")
    if loaded and not path:
        path = "index.html"  # what crest serve answers `/` with (a fileset has none: 404)
    if not path or path.startswith(SERVE_PAGES):
        return
    served = page.ports.get(port) if port is not None else None
    if served is not None:
        assert path in files(served), f"{url}: the {served} fileset served there has no {path}"
    else:
        owners = [f for f in FILESETS if path in files(f)]
        assert owners, f"{url}: no fileset crest generates has {path} (see docs/filesets.md)"


def check_suite_matches_fileset(page: Page, params: dict[str, Any]) -> None:
    """`crest run SUITE --target` at a local `crest serve` of this page: the suite loads the fileset served."""
    suite, target = params.get("suite"), params.get("target")
    if not isinstance(suite, str) or placeholder(suite) or not isinstance(target, str) or "://" not in target:
        return
    port = urlsplit(target).port
    served = page.ports.get(port) if port is not None else None
    if served is None:
        return
    members = [s for s, _ in load_group(suite)] or [load_suite(suite)]
    for member in members:
        wanted = member.workload.fileset
        assert wanted in (None, served), f"suite {member.name} loads the {wanted} fileset; port {port} serves {served}"


# -- the tests -------------------------------------------------------------------------------------------------------


EXAMPLES = examples()


def test_the_examples_are_found() -> None:
    pages = {e.page.name for e in EXAMPLES}
    assert len(EXAMPLES) > 100 and {"README.md", "bench.md", "running.md", "reports.md", "specweb99.md"} <= pages


def check(example: Example, page: Page) -> None:
    """Every crest command of one example line, against the tree and what the page set up before it.

    Raises:
        AssertionError: the first problem, in one line.
    """
    for args in invocations(example.text):
        if not args or args[0] in ("--version", "--help", "-h"):
            continue
        cmd, name, rest = resolve(args)
        check_names(cmd, name, rest)
        if example.names_only or "--help" in rest or "-h" in rest:
            continue
        params = parse(cmd, name, rest)
        check_values(name, params)
        check_urls(page, params)
        if name == "run":
            check_suite_matches_fileset(page, params)
        learn(page, name, params)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_crest_example_parses_and_names_what_crest_has(page: Path) -> None:
    state = Page()
    problems = []
    for example in (e for e in EXAMPLES if e.page == page):
        try:
            check(example, state)
        except AssertionError as exc:
            problems.append(f"{example.where}\n    {str(exc).splitlines()[0]}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_crest_command_outside_a_shell_block(page: Path) -> None:
    stray = [
        f"{page.relative_to(ROOT)}:{number}: {text}"
        for lang, number, text in blocks(page)
        if lang not in SHELL and lang in ("", "text") and leads_with_crest(text)
    ]
    assert not stray, "mark these blocks ```sh so that their examples are checked:\n" + "\n".join(stray)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_cited_files_are_in_the_repository(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    cited = {m.group(1).rstrip(".") for m in CITED.finditer(text)}
    missing = sorted(p for p in cited if not (ROOT / p).exists() and not (page.parent / p).exists())
    links = {m.group(1) for m in re.finditer(r"\]\(([^)#\s]+)", text) if "://" not in m.group(1)}
    missing += sorted(link for link in links if not (page.parent / link).exists())
    # Notes kept beside the repository (reference §3.2, reference specweb99.md) are not there for a reader.
    missing += sorted({m.group() for m in re.finditer(r"\breference (§[\d.]+|[\w-]+\.md)", text)})
    assert not missing, f"{page.relative_to(ROOT)} cites files the repository does not have: {', '.join(missing)}"


# -- the checker itself ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("crest bnech http://x/", "no command `crest bnech`"),
        ("crest bench --conections 3 http://x/", "has no option --conections"),
        ("crest bench -c many http://x/", "-c"),
        ("crest bench -d 10 parsecs http://x/", "unexpected extra argument"),
        ("crest bench --rate fast http://x/", "--rate"),
        ("crest run veritest-statik --server nginx", "no built-in suite 'veritest-statik'"),
        ("crest run veritest-static --server ngnix", "no server 'ngnix'"),
        ("crest doe kornecki-screenig --profile quick", "no built-in design 'kornecki-screenig'"),
        ("crest run veritest-static --server apache-event --server-opt MaxRequestWorkers=4", "max_request_workers"),
        ("crest run veritest-static --server nginx --network webcat-1gbit", "unknown network preset"),
        ("crest run veritest-static --server nginx --profile fast", "--profile fast"),
        ("crest run veritest-static --server nginx --cpus 1,,2", "empty item"),
        ("crest fileset generate webbnech ./www", "no fileset 'webbnech'"),
        ("crest bench http://127.0.0.1:8080/1k.html", "no fileset crest generates has 1k.html"),
        ("crest fileset generate sizes ./www && crest serve --docroot ./www --port 8080 &"
         " crest bench http://127.0.0.1:8080/wb/class1/0001.html", "the sizes fileset served there has no wb/"),
        ("crest serve --docroot ./www & crest bench http://127.0.0.1:8080/", "crest serve picks a free port"),
        ("crest fileset generate sizes ./www; crest serve --docroot ./www --port 8080 &"
         " crest run veritest-static --target http://127.0.0.1:8080", "loads the webbench fileset"),
    ],
)  # fmt: skip
def test_the_checker_catches(text: str, problem: str) -> None:
    with pytest.raises(AssertionError, match=re.escape(problem)):
        check(Example(ROOT / "README.md", 1, text), Page())


@pytest.mark.parametrize(
    "text",
    [
        "crest fileset generate webbench ./www && crest serve --docroot ./www --port 8080 &"
        " crest bench -c 32 http://127.0.0.1:8080/wb/class1/0001.html",
        "CREST_SMB_PASSWORD=… sudo taskset -c 1 .venv/bin/crest show RUN_ID --json | jq .  # placeholders pass",
        "crest serve --docroot DIR [--port 0] [--threads N]",
        "crest bench --pipeline 300 http://x/  # error: --pipeline must be 1 to 256",
        "crest report EXP_ID --format md > report.md",
        "crest bench --threads N -d 5s URL",
    ],
)
def test_the_checker_passes(text: str) -> None:
    check(Example(ROOT / "README.md", 1, text), Page())
