"""`crest fileset generate|verify|from-log`: write a standard fileset into a directory, check one byte for
byte, or write the site of an access log (crest.replay.site).

Parsing and printing only; crest.filesets does the work and raises
ConfigError subclasses (exit 2) for bad input. verify exits 1 when files are
damaged, because that is a finding about the tree, not bad input.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from crest.cli import EXIT_FAILURE, EXIT_OK
from crest.errors import ConfigError
from crest.filesets import NAMES
from crest.filesets.catalog import check_name, copies_for
from crest.filesets.model import MANIFEST_NAME
from crest.filesets.tree import check_files, generate_tree, load_manifest
from crest.replay.site import SITE_MANIFEST, check_site, load_site, write_site
from crest.replay.summary import ON_THE_COMMAND_LINE, reader_options
from crest.units import format_bytes, format_count, parse_count, parse_size

# verify prints at most this many problem lines, then a count of the rest.
MAX_PROBLEMS_SHOWN = 20

app = typer.Typer(
    name="fileset",
    help="Generate or verify a standard fileset: " + ", ".join(NAMES) + "; or write a site from an access log.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.command("generate", no_args_is_help=True)
def generate_command(
    name: Annotated[str, typer.Argument(metavar="NAME", help="Fileset: " + ", ".join(NAMES) + ".", show_default=False)],
    directory: Annotated[
        Path, typer.Argument(metavar="DIR", help="Directory to write (created if missing).", show_default=False)
    ],
    connections: Annotated[
        str | None,
        typer.Option(
            "--connections",
            metavar="N",
            help="specweb99 only: simultaneous connections to size the tree for (25 + 40·N/61 directories) [default: 1].",
            show_default=False,
        ),
    ] = None,
    copies: Annotated[
        str | None,
        typer.Option(
            "--copies",
            metavar="N",
            help="Table filesets: repeat the table N times (N files of each size, shares split evenly).",
            show_default=False,
        ),
    ] = None,
    size: Annotated[
        str | None,
        typer.Option(
            "--size",
            metavar="BYTES",
            help="Table filesets: as many copies as make at least this working set (512M, 2G).",
            show_default=False,
        ),
    ] = None,
    seed: Annotated[
        int, typer.Option("--seed", metavar="S", help="Recorded in the manifest; no current fileset is random.", min=0)
    ] = 0,
    full_check: Annotated[
        bool,
        typer.Option(
            "--full-check",
            help="Compare existing files byte for byte (slower) and rewrite any that differ; default checks size and header line.",
        ),
    ] = False,
) -> int:
    """Write fileset NAME and its manifest into DIR; files already correct are left untouched."""
    check_name(name)  # before parsing --connections, so a wrong name is the error reported
    conns = parse_count(connections, what="--connections") if connections is not None else None
    if copies is not None and size is not None:
        raise ConfigError("give --copies or --size, not both")
    count = parse_count(copies, what="--copies") if copies is not None else None
    if size is not None:
        count = copies_for(name, parse_size(size, what="--size"))
    result = generate_tree(name, directory, connections=conns, seed=seed, full_check=full_check, copies=count)
    manifest = result.manifest
    total = manifest.total_bytes()
    removed = f", removed {format_count(result.removed)}" if result.removed else ""
    print(
        f"{manifest.fileset}: {format_count(len(manifest.files))} files, {format_bytes(total)} "
        f"({format_count(total)} bytes) in {directory} (wrote {format_count(result.written)}, "
        f"kept {format_count(result.kept)}{removed}); manifest {result.manifest_path}",
        flush=True,
    )
    return EXIT_OK


@app.command("verify", no_args_is_help=True)
def verify_command(
    directory: Annotated[
        Path, typer.Argument(metavar="DIR", help="Directory holding a generated fileset.", show_default=False)
    ],
) -> int:
    """Check every file DIR's manifest lists, byte for byte; exit 1 if any is missing or changed."""
    if (directory / SITE_MANIFEST).is_file() and not (directory / MANIFEST_NAME).is_file():
        return _verify_site(directory)
    manifest = load_manifest(directory)
    problems = check_files(directory, manifest)
    count = len(manifest.files)
    if not problems:
        print(f"ok: {format_count(count)} files intact", flush=True)
        return EXIT_OK
    for line in problems[:MAX_PROBLEMS_SHOWN]:
        print(line)
    if len(problems) > MAX_PROBLEMS_SHOWN:
        print(f"… and {format_count(len(problems) - MAX_PROBLEMS_SHOWN)} more")
    print(
        f"damaged: {format_count(len(problems))} of {format_count(count)} files; "
        f"repair with `{repair_command(manifest.fileset, manifest.params, directory)}`",
        flush=True,
    )
    return EXIT_FAILURE


def repair_command(fileset: str, params: dict[str, object], directory: Path) -> str:
    """The generate command line that rewrites exactly this tree's damaged files."""
    words = ["crest fileset generate --full-check", fileset, str(directory)]
    if fileset == "specweb99" and params.get("connections") is not None:
        words.append(f"--connections {params['connections']}")
    if params.get("copies") is not None:
        words.append(f"--copies {params['copies']}")
    if params.get("seed"):
        words.append(f"--seed {params['seed']}")
    return " ".join(words)


def _verify_site(directory: Path) -> int:
    site = load_site(directory)
    problems = check_site(directory, site)
    if not problems:
        print(f"ok: {format_count(len(site.files))} files of the site of {site.log} intact", flush=True)
        return EXIT_OK
    for line in problems[:MAX_PROBLEMS_SHOWN]:
        print(line)
    if len(problems) > MAX_PROBLEMS_SHOWN:
        print(f"… and {format_count(len(problems) - MAX_PROBLEMS_SHOWN)} more")
    print(f"damaged: {format_count(len(problems))} of {format_count(len(site.files))} files; repair with"
          f" `crest fileset from-log {site.log} {directory}`", flush=True)  # fmt: skip
    return EXIT_FAILURE


@app.command("from-log", no_args_is_help=True)
def from_log_command(
    log: Annotated[
        Path, typer.Argument(metavar="LOG", help="An access log (nginx, Apache, Caddy, H2O).", show_default=False)
    ],
    directory: Annotated[
        Path,
        typer.Argument(
            metavar="DIR", help="Directory to write (created if missing; empty or an earlier site).", show_default=False
        ),
    ],
    format: Annotated[
        str,
        typer.Option(
            "--format", metavar="FORMAT", help="auto, combined, common, crest, caddy, h2o or a format string."
        ),
    ] = "auto",
    max_bad_lines: Annotated[
        int,
        typer.Option(
            "--max-bad-lines", metavar="N", min=0, help="Lines that do not parse to skip before refusing the log."
        ),
    ] = 0,
) -> int:
    """Write a docroot from LOG: each logged 200 response's path with its logged size (deterministic content),
    and a manifest listing the files, the dynamic requests (crest's dynamic page answers them at replay) and
    what was left out. Logged 4xx are not written, so they stay 4xx."""
    written = write_site(
        log, directory, reader_options(format=format, max_bad_lines=max_bad_lines), ON_THE_COMMAND_LINE
    )
    site = written.site
    removed = f", removed {format_count(written.removed)} of the earlier site" if written.removed else ""
    print(
        f"{log}: {format_count(len(site.files))} files, {format_bytes(site.total_bytes())}"
        f" ({format_count(site.total_bytes())} bytes) in {directory}; {format_count(len(site.dynamic))} dynamic"
        f" (crest's dynamic page at replay), {format_count(site.not_found)} logged 4xx not written,"
        f" {format_count(len(site.skipped))} skipped{removed}; manifest {written.manifest_path}",
        flush=True,
    )
    return EXIT_OK
