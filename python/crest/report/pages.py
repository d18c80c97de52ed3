"""The report's page loads (a HAR replay): the document's `pages` section, one row per page of each mix
(loads, loads per second, the page load time's p50, p99 and max, failed loads) in the order of the
configurations and their trials. Arranges only; the figures are crest.analysis.pages'.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from crest.analysis import Configuration
from crest.analysis.pages import page_loads


def pages_section(configs: list[Configuration]) -> list[dict[str, Any]]:
    """Each mix's page loads with its configuration, run and trial ([] when no run loaded pages)."""
    rows = []
    for index, config in enumerate(configs):
        for trial in config.trials:
            for loads in page_loads(trial.mixes):
                rows.append({"configuration": config.label, "configuration_index": index, "run_id": trial.id,
                             "trial": trial.meta.repeat_index + 1, **asdict(loads)})  # fmt: skip
    return rows
