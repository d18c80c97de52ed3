"""Every `crest` command registers every subcommand at start-up; the heavy libraries of analysis and
reports (scipy, numpy, jinja2) must load only when a command uses them, or `crest bench` would pay
their seconds of CPU and tens of MB in its own measurements."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("scipy", "numpy", "jinja2")


def test_registering_the_commands_loads_no_heavy_library() -> None:
    code = (
        "import sys, crest.cli.main as m; m._register(); "
        f"print(','.join(name for name in {HEAVY!r} if name in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "", f"imported at start-up: {out.stdout.strip()}"
