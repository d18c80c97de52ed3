"""The `crest` command: assembles the subcommands and turns every failure into one line and an exit code.

This is where exit codes are decided: 0 done, 1 runtime failure (EngineError,
MachineError: a full disk, a refused thread or event loop, a worker panic), 2 bad
input or unreachable target (nothing was sent), 130 interrupted.
"""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType

import typer

from crest import __version__
from crest.cli import EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from crest.errors import ConfigError, EngineError, MachineError, TargetError

# typer now vendors click; find click's base exception through a public class so
# this works with the vendored copy and with plain click alike.
_ClickException: type[Exception] = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")

app = typer.Typer(
    name="crest",
    help="crest: a web-server capacity lab. Run a suite against a target (run), load-test a URL (bench), serve a docroot (serve).",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    # Plain click help: readable in any terminal or log, and no Rich boxes anywhere.
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def version_command() -> int:
    """Print the versions of crest and of its compiled engine."""
    from crest.loadclient import engine_version

    print(f"crest {__version__} (engine {engine_version()})")
    return EXIT_OK


def _register() -> None:
    # Imported here, not at the top, so that a missing engine is reported in one line.
    from crest.cli.bench import bench_command
    from crest.cli.doe import doe_command
    from crest.cli.fileset import app as fileset_app
    from crest.cli.importing import import_command
    from crest.cli.report import compare_command, report_command
    from crest.cli.run import run_command
    from crest.cli.runs import runs_command, show_command
    from crest.cli.serve import serve_command
    from crest.cli.servers import servers_command
    from crest.cli.suites import suites_command
    from crest.cli.weighted import weighted_command

    if not app.registered_commands:
        app.command("bench", no_args_is_help=True)(bench_command)
        app.command("run", no_args_is_help=True)(run_command)
        app.command("runs")(runs_command)
        app.command("show", no_args_is_help=True)(show_command)
        app.command("suites")(suites_command)
        app.add_typer(fileset_app, name="fileset")
        app.command("serve")(serve_command)
        app.command("servers")(servers_command)
        app.command("version")(version_command)
        app.command("doe")(doe_command)
        app.command("import", no_args_is_help=True)(import_command)
        app.command("report", no_args_is_help=True)(report_command)
        app.command("compare", no_args_is_help=True)(compare_command)
        app.command("weighted", no_args_is_help=True)(weighted_command)


def error(message: str) -> None:
    """Print one `crest: error:` line to stderr (newlines folded so it stays one line)."""
    print(f"crest: error: {' '.join(message.split())}", file=sys.stderr, flush=True)


def _terminate(signum: int, frame: FrameType | None) -> None:
    # SIGTERM ends crest the way Ctrl-C does: finished mixes kept, started targets stopped.
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    """Run the crest CLI and return its exit code (the console script's entry point)."""
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _terminate)
    try:
        _register()
    except ImportError as exc:
        if "_engine" not in str(exc):
            raise
        error("the compiled engine crest._engine is missing: build it with `make` (maturin develop)")
        return EXIT_FAILURE
    command = typer.main.get_command(app)
    try:
        rv = command.main(args=argv, prog_name="crest", standalone_mode=False)
    except _ClickException as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":
            # `crest` or `crest bench` alone: the help is the answer, not an error line.
            print(exc.format_message())  # type: ignore[attr-defined]
        else:
            error(exc.format_message())  # type: ignore[attr-defined]
        return EXIT_USAGE
    except (ConfigError, TargetError) as exc:
        error(str(exc))
        return EXIT_USAGE
    except (EngineError, MachineError) as exc:
        # A failure of crest or of the machine, not of the input: one line, exit 1, no traceback.
        error(str(exc))
        return EXIT_FAILURE
    except (typer.Abort, KeyboardInterrupt):
        rv = EXIT_INTERRUPTED
    except BrokenPipeError:
        # stdout went away (e.g. `crest serve ... | head -1`): point it at /dev/null so
        # the interpreter's final flush does not fail a second time.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAILURE
    code = rv if isinstance(rv, int) else EXIT_OK
    if code == EXIT_INTERRUPTED:
        print("crest: interrupted", file=sys.stderr, flush=True)
    return code
