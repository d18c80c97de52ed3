"""The `crest` command: assembles the subcommands and turns every failure into one line and an exit code.

This is where exit codes are decided: 0 done, 1 runtime failure (EngineError,
MachineError: a full disk, a refused thread or event loop, a worker panic; PeerError:
a target that answers but fails a benchmark's own checks), 2 bad
input or unreachable target (nothing was sent), 130 interrupted.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import FrameType
from typing import Any

import typer
import typer.core

from crest.cli import EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from crest.errors import ConfigError, EngineError, MachineError, PeerError, TargetError

# typer now vendors click; find click's base exception through a public class so
# this works with the vendored copy and with plain click alike.
_ClickException: type[Exception] = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")

HELP = "crest: a web-server capacity lab. Run a suite against a target (run), load-test a URL (bench), serve a docroot (serve)."

HELP_OPTION_NAMES = ["-h", "--help"]


@dataclass(frozen=True)
class Entry:
    """Where a subcommand lives and its one-line summary for `crest --help`.

    Every command is imported only when it runs (or shows its own --help): `crest bench` must not pay
    for the runner, the suites, the servers or the store. The summary is the first paragraph of the
    command's docstring, repeated here so that `crest --help` imports nothing; a test keeps them equal.
    """

    module: str
    attribute: str
    summary: str
    no_args_is_help: bool = False
    group: bool = False  # attribute is a typer.Typer of subcommands, not a function


COMMANDS: dict[str, Entry] = {
    "bench": Entry("crest.cli.bench", "bench_command", "Load-test a URL, like wrk or ab.", no_args_is_help=True),
    "run": Entry(
        "crest.cli.run",
        "run_command",
        "Run a suite's ladder of mixes against a target and store every mix.",
        no_args_is_help=True,
    ),
    "capacity": Entry(
        "crest.cli.capacity",
        "capacity_command",
        "Find the highest load (clients, connections or an open-loop rate) that meets a rule: grow, bisect, confirm.",
        no_args_is_help=True,
    ),
    "specweb99": Entry(
        "crest.cli.specweb99",
        "specweb99_command",
        "Run SPECweb99 against a target: validation, iterations, the POST-log check, VALID or INVALID.",
        no_args_is_help=True,
    ),
    "runs": Entry(
        "crest.cli.runs",
        "runs_command",
        "List the stored runs, newest first: id, kind, experiment, suite, configuration, status, mixes and result.",
    ),
    "show": Entry(
        "crest.cli.runs",
        "show_command",
        "Show one run: what ran where, and each mix in ladder order with req/s, throughput, latency and errors.",
        no_args_is_help=True,
    ),
    "suites": Entry(
        "crest.cli.suites", "suites_command", "List the built-in suites: the published tests crest can re-run."
    ),
    "serve": Entry(
        "crest.cli.serve", "serve_command", "Serve a docroot with the built-in target until Ctrl-C or SIGTERM."
    ),
    "servers": Entry(
        "crest.cli.servers",
        "servers_command",
        "List the targets crest can start (--server NAME): installed or not, version, install command.",
    ),
    "version": Entry("crest.cli.main", "version_command", "Print the versions of crest and of its compiled engine."),
    "doe": Entry(
        "crest.cli.doe",
        "doe_command",
        "Analyse a 2^k (or fractional 2^(k-p)) factorial experiment: effects, allocation of variation, CIs.",
    ),
    "import": Entry(
        "crest.cli.importing",
        "import_command",
        "Store a published table (load, req/s, throughput, factor columns) as complete runs; print their ids.",
        no_args_is_help=True,
    ),
    "report": Entry(
        "crest.cli.report",
        "report_command",
        "Write a report of stored runs: one self-contained HTML page, or Markdown, CSV or JSON; prints its path.",
        no_args_is_help=True,
    ),
    "compare": Entry(
        "crest.cli.report",
        "compare_command",
        "Compare configurations: peaks, percent improvements and paired tests in the terminal, plus the HTML report.",
        no_args_is_help=True,
    ),
    "check": Entry(
        "crest.cli.check",
        "check_command",
        "Gate a run on a baseline: one verdict per rule; exit 1 on a regression past its noise, 3 when a noisy host left a rule undecided, else 0.",
        no_args_is_help=True,
    ),
    "ui": Entry(
        "crest.cli.ui",
        "ui_command",
        "Browse the results store in a web page: runs, reports, comparisons, experiments, capacity searches.",
    ),
    "weighted": Entry(
        "crest.cli.weighted",
        "weighted_command",
        "Weighted throughput (Zeus' unbundled SPECweb99): each content-length class's mean throughput × its"
        " share, summed.",
        no_args_is_help=True,
    ),
    "fileset": Entry(
        "crest.cli.fileset",
        "app",
        "Generate or verify a standard fileset: specweb99, specweb96, webstone, webcat-webstone,"
        " webcat-large-filemix, webcat-cgi-html, webbench, sizes, specweb99-lengths; or write a site from an"
        " access log.",
        group=True,
    ),
    "machines": Entry(
        "crest.cli.machines",
        "app",
        "A lab of simulated machines on this host: show what a SPEC builds, hold one up, or remove what killed runs"
        " left behind.",
        group=True,
    ),
    "network": Entry(
        "crest.cli.network",
        "app",
        "Client networks (--network): show what a SPEC builds, or remove what killed runs left behind.",
        group=True,
    ),
}


def version_command() -> int:
    """Print the versions of crest and of its compiled engine."""
    from crest import __version__
    from crest.load.client import engine_version

    print(f"crest {__version__} (engine {engine_version()})")
    return EXIT_OK


def load_command(name: str) -> typer.core.TyperCommand | typer.core.TyperGroup:
    """Import subcommand NAME's module and build its click command, as `app.command(...)` would have."""
    entry = COMMANDS[name]
    target = getattr(importlib.import_module(entry.module), entry.attribute)
    if entry.group:
        sub: typer.Typer = target
    else:
        sub = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None)
        sub.command(name, no_args_is_help=entry.no_args_is_help)(target)
    command = typer.main.get_command(sub)
    assert isinstance(command, (typer.core.TyperCommand, typer.core.TyperGroup))
    _pass_plain_values(command)
    _name_placeholders(command)
    return command


def _name_placeholders(command: typer.core.TyperCommand | typer.core.TyperGroup) -> None:
    """Give every value in --help a name (SUITE, N, PATH, TITLE) instead of typer's type (`<str>`, `<int range>`).

    A declared metavar wins; an argument is shown by its metavar or name alone, without the brackets and
    dots typer adds to the usage line itself (so `[SUITE]`, not `[[SUITE]]`).
    """
    for sub in getattr(command, "commands", {}).values():
        _name_placeholders(sub)
    for param in command.params:
        descriptor = getattr(param, "type_descriptor", None)
        if descriptor is None:
            continue
        if isinstance(param, typer.core.TyperArgument):
            name = (param.metavar or param.name or "value").strip("[]").removesuffix("...").removesuffix("…")
            param.metavar = name.upper() if param.metavar is None else name
            # The name says what the value is; typer would append its Python type to it.
            param.display_type_rich = lambda ctx: None  # type: ignore[method-assign]
        elif param.metavar is None and not getattr(param, "is_flag", False) and not getattr(param, "count", False):
            if descriptor.annotation is int:
                param.metavar = "N"
            elif descriptor.is_path:
                param.metavar = "PATH"
            else:
                long = max(param.opts, key=len)
                param.metavar = long.lstrip("-").replace("-", "_").upper()


def _pass_plain_values(command: typer.core.TyperCommand | typer.core.TyperGroup) -> None:
    """Let strings, string lists and flags through without typer's pydantic coercion.

    typer (0.2x) checks every parameter value with a pydantic TypeAdapter, built on first use: importing
    pydantic and building the adapters is ~0.1 s of CPU at every start of `crest bench` (whose options
    are all strings), only to return the same string. Values of any other type, or not already of their
    type, still go through typer. A typer without this machinery is left alone.
    """
    try:
        from typer._coercion import RuntimeParam, build_runtime_param
    except ImportError:
        return

    @dataclass(frozen=True)
    class Plain(RuntimeParam):
        descriptor: Any

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            if self.annotation in (str, bool) and isinstance(value, self.annotation):
                return value
            if self.annotation == list[str] and isinstance(value, (list, tuple)):
                if all(isinstance(item, str) for item in value):
                    return list(value)
            return build_runtime_param(self.descriptor)._coerce_value(value, param=param, ctx=ctx)

    # The help option is made on first use; make it now (with the names every crest command uses) to cover it too.
    help_option = command.get_help_option(typer.Context(command, help_option_names=HELP_OPTION_NAMES))
    for param in [*command.params, *([help_option] if help_option is not None else [])]:
        descriptor = getattr(param, "type_descriptor", None)
        if getattr(param, "_runtime_param", False) is not None or descriptor is None:
            continue
        info = descriptor.parameter_info
        if (
            descriptor.file_annotation is None
            and info.parser is None
            and descriptor.annotation in (str, bool, list[str])
        ):
            param._runtime_param = Plain(  # type: ignore[attr-defined]
                parameter_info=info, annotation=descriptor.annotation, descriptor=descriptor
            )


class _Commands(Mapping[str, typer.core.TyperCommand | typer.core.TyperGroup]):
    """The subcommands by name, each built on first use; listing the names imports nothing."""

    def __init__(self) -> None:
        self._built: dict[str, typer.core.TyperCommand | typer.core.TyperGroup] = {}

    def __getitem__(self, name: str) -> typer.core.TyperCommand | typer.core.TyperGroup:
        if name not in COMMANDS:
            raise KeyError(name)
        if name not in self._built:
            self._built[name] = load_command(name)
        return self._built[name]

    def __iter__(self) -> Iterator[str]:
        return iter(COMMANDS)

    def __len__(self) -> int:
        return len(COMMANDS)


class _Crest(typer.core.TyperGroup):
    def format_commands(self, ctx: Any, formatter: Any) -> None:
        # The listing shows only summaries: building each command would import every module.
        summaries = [(name, typer.core.TyperCommand(name, help=entry.summary)) for name, entry in COMMANDS.items()]
        limit = formatter.width - 6 - max(len(name) for name in COMMANDS)
        with formatter.section("Commands"):
            formatter.write_dl([(name, command.get_short_help_str(limit)) for name, command in summaries])


def command() -> typer.core.TyperGroup:
    """The `crest` click group, fresh each call so that nothing is shared between invocations."""
    group = _Crest(
        name="crest",
        commands=_Commands(),  # type: ignore[arg-type]
        help=HELP,
        no_args_is_help=True,
        rich_markup_mode=None,
        # Plain click help: readable in any terminal or log, and no Rich boxes anywhere.
        context_settings={"help_option_names": HELP_OPTION_NAMES},
    )
    _pass_plain_values(group)
    return group


def error(message: str) -> None:
    """Print one `crest: error:` line to stderr (newlines folded so it stays one line)."""
    print(f"crest: error: {' '.join(message.split())}", file=sys.stderr, flush=True)


def also(exc: BaseException) -> None:
    """Print what failed while cleaning up after `exc` (its notes), one `crest: also:` line each, after its line."""
    for note in getattr(exc, "__notes__", ()):
        print(f"crest: also: {' '.join(str(note).split())}", file=sys.stderr, flush=True)


def _terminate(signum: int, frame: FrameType | None) -> None:
    # SIGTERM ends crest the way Ctrl-C does: finished mixes kept, started targets stopped.
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    """Run the crest CLI and return its exit code (the console script's entry point)."""
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _terminate)
    if (sys.argv[1:] if argv is None else argv) == ["--version"]:
        return version_command()  # the convention every CLI follows, beside `crest version`
    try:
        rv = command().main(args=argv, prog_name="crest", standalone_mode=False)
    except _ClickException as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":
            # `crest` or `crest bench` alone: the help is the answer, not an error line.
            print(exc.format_message())  # type: ignore[attr-defined]
        else:
            error(exc.format_message())  # type: ignore[attr-defined]
        return EXIT_USAGE
    except (ConfigError, TargetError) as exc:
        error(str(exc))
        also(exc)
        return EXIT_USAGE
    except (EngineError, MachineError, PeerError) as exc:
        # A failure of crest, of the machine or of a peer, not of the input: one line, exit 1, no traceback.
        error(str(exc))
        also(exc)
        return EXIT_FAILURE
    except (typer.Abort, KeyboardInterrupt):
        rv = EXIT_INTERRUPTED
    except ImportError as exc:
        # A command's modules load when it runs: a missing engine is reported in one line.
        if "_engine" not in str(exc):
            raise
        error("the compiled engine crest._engine is missing: build it with `make` (maturin develop)")
        return EXIT_FAILURE
    except BrokenPipeError:
        # stdout went away (e.g. `crest serve ... | head -1`): point it at /dev/null so
        # the interpreter's final flush does not fail a second time.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAILURE
    code = rv if isinstance(rv, int) else EXIT_OK
    if code == EXIT_INTERRUPTED:
        print("crest: interrupted", file=sys.stderr, flush=True)
    return code
