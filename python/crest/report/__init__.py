"""Reports: stored runs → one document (build.py) → HTML, Markdown, CSV or JSON; never prints.

`build_report` arranges what crest.analysis computes into a plain dict whose
shape is python/crest/schemas/report.schema.json; each renderer turns that
dict into text. The HTML page is one self-contained file that loads nothing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from crest.errors import ConfigError
from crest.report.build import SCHEMA_VERSION, build_report
from crest.store import RunDetail

FORMATS = ("html", "md", "csv", "json")
_SUFFIXES = {".html": "html", ".htm": "html", ".md": "md", ".markdown": "md", ".csv": "csv", ".json": "json"}
SUFFIX = {"html": ".html", "md": ".md", "csv": ".csv", "json": ".json"}


def report_format(fmt: str | None, path: Path | None = None) -> str:
    """The format to write: `fmt` when given, else the one the path's suffix names, else html.

    Raises:
        ConfigError: an unknown format, or a suffix that names none when no format is given.
    """
    if fmt is not None:
        name = fmt.lower().lstrip(".")
        name = {"markdown": "md", "htm": "html"}.get(name, name)
        if name not in FORMATS:
            raise ConfigError(f"unknown report format {fmt!r}: use one of {', '.join(FORMATS)}")
        return name
    if path is None or not path.suffix:
        return "html"
    try:
        return _SUFFIXES[path.suffix.lower()]
    except KeyError:
        raise ConfigError(
            f"cannot tell the report format from {path.name!r}: end the file name in .html, .md, .csv or .json,"
            " or pass --format"
        ) from None


def render(doc: dict[str, Any], fmt: str) -> str:
    """The document as text in one of FORMATS."""
    name = report_format(fmt)
    if name == "html":
        from crest.report.html import render_html

        return render_html(doc)
    if name == "md":
        from crest.report.markdown import render_markdown

        return render_markdown(doc)
    if name == "csv":
        from crest.report.csv import render_csv

        return render_csv(doc)
    return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_report(
    details: Sequence[RunDetail],
    path: Path,
    fmt: str | None = None,
    *,
    title: str | None = None,
    load_axis: str | None = None,
) -> Path:
    """Build the report of `details` and write it to `path` (parents created); returns the path.

    Raises:
        ConfigError: bad format or load axis, runs without mixes, or a path that cannot be written.
    """
    name = report_format(fmt, path)
    text = render(build_report(details, title=title, load_axis=load_axis), name)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot write the report to {path}: {exc.strerror}: pass -o with a writable file") from exc
    return path


__all__ = ["FORMATS", "SCHEMA_VERSION", "SUFFIX", "build_report", "render", "report_format", "write_report"]
