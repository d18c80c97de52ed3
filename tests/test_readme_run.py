"""README.md's `crest bench` examples run as written against the `crest serve` the README starts (only the port,
which the README fixes at 8080, is a free one here, and each load lasts 1 s instead of 10-30 s): each one
succeeds, every request answered. tests/test_docs_examples.py checks every example's syntax without running it;
this runs the ones a newcomer types first (a 404 on `/` of a fileset docroot got past the syntax check)."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from crest.filesets.cache import cached_fileset
from support import run_cli

pytestmark = pytest.mark.integration

README = Path(__file__).resolve().parent.parent / "README.md"
README_PORT = 8080


def _bench_examples() -> list[str]:
    """Each `crest bench` line of README.md against the README's `crest serve`, up to a pipe or a comment."""
    lines = []
    for line in README.read_text().splitlines():
        if line.startswith("crest bench ") and f"127.0.0.1:{README_PORT}" in line:
            lines.append(re.split(r"\s+(?:\||#)", line, maxsplit=1)[0].strip())
    return lines


EXAMPLES = _bench_examples()


def test_the_readme_has_bench_examples_against_its_serve() -> None:
    assert EXAMPLES, "README.md lost its crest bench examples: this test then checks nothing"


@pytest.fixture(scope="module")
def serving() -> Iterator[tuple[int, str]]:
    """`crest serve --docroot ./www` of the webbench fileset, as the README starts it (on a free port): its port
    and the first line it wrote to stderr."""
    server = subprocess.Popen(
        [sys.executable, "-m", "crest", "serve", "--docroot", str(cached_fileset("webbench")), "--threads", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert server.stdout is not None and server.stderr is not None
        main_url = server.stdout.readline().strip()
        yield int(re.search(r":(\d+)/", main_url).group(1)), server.stderr.readline().strip()  # type: ignore[union-attr]
    finally:
        server.send_signal(signal.SIGINT)
        server.communicate(timeout=10)


@pytest.fixture(scope="module")
def served(serving: tuple[int, str]) -> int:
    return serving[0]


def test_serve_names_a_page_that_answers_when_slash_does_not(serving: tuple[int, str]) -> None:
    """A fileset docroot has no index page, so the main URL's / answers 404: serve says so and names a page."""
    port, note = serving
    assert note.startswith("crest: note: ") and "has no index.html, so / answers 404; a page it serves:" in note, note
    page = note.rsplit(" ", 1)[1]
    assert page.startswith(f"http://127.0.0.1:{port}/") and page != f"http://127.0.0.1:{port}/", note
    with urllib.request.urlopen(page, timeout=10) as answer:
        assert answer.status == 200 and answer.read()


@pytest.mark.parametrize("example", EXAMPLES)
def test_a_readme_bench_example_runs_as_written(served: int, example: str) -> None:
    args = example.split()[1:]
    args = [a.replace(f"127.0.0.1:{README_PORT}", f"127.0.0.1:{served}") for a in args]
    at = args.index("-d")
    args[at + 1] = "1s"
    args = [a for a in args if a not in ("--jsonl", "-")] if "--jsonl" in args else args
    done = run_cli(*args, "--json", "-q")
    assert done.returncode == 0, (example, done.stderr)
    report = json.loads(done.stdout)
    assert report["requests"] > 0 and sum(report["errors"].values()) == 0, (example, report["errors"])
