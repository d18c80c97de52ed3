"""The machine crest runs on: the facts a run's numbers depend on, and its page cache.

Owns reading host facts (CPU model, kernel, versions) and dropping the OS
page cache; never starts servers, never stores or prints anything (the
runner stores the facts with each run and a refusal as a verdict).
"""

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import Any

import crest
from crest.load.client import engine_version
from crest.verdicts import Verdict, page_cache_kept


def host_facts() -> dict[str, Any]:
    """What the run's numbers depend on besides the target: stored with every run."""
    cpu_model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "hostname": platform.node(),
        "kernel": platform.release(),
        "cpu_model": cpu_model,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "crest_version": crest.__version__,
        "engine_version": engine_version(),
    }


def drop_page_cache() -> list[Verdict]:
    """Empties the OS page cache so files come from disk; returns a verdict when not permitted."""
    os.sync()
    try:
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
    except OSError as exc:
        return [page_cache_kept(str(exc.strerror))]
    return []
