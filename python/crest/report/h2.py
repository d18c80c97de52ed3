"""The report's HTTP/2 and HTTP/3 figures: the document's `h2` section, one row per mix that spoke either
(streams in use, HPACK or QPACK ratios, GOAWAYs, resets, refused streams) in the order of `mixes`, each
with its run's HTTP version. Arranges only; the figures are crest.analysis.h2's.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from crest.analysis import Configuration
from crest.analysis.h2 import h2_figures, run_http_version


def h2_section(configs: list[Configuration], load_axis: str) -> list[dict[str, Any]]:
    """Each HTTP/2 or HTTP/3 mix's figures with its configuration, run, trial, load and HTTP version
    ([] when no mix spoke either)."""
    rows = []
    for index, config in enumerate(configs):
        for trial, points in zip(config.trials, config.trial_points(load_axis)):
            mixes = {m.index: m for m in trial.mixes}
            # Counters come only from HTTP/2 or HTTP/3 runs; a run that does not say which predates HTTP/3.
            http_version = "3" if run_http_version(trial.meta.config) == "3" else "2"
            for point in points:
                mix = mixes.get(point.index)
                figures = h2_figures(mix.h2 if mix is not None else None)
                if figures is not None:
                    rows.append({
                        "configuration": config.label, "configuration_index": index, "run_id": trial.id,
                        "trial": trial.meta.repeat_index + 1, "mix": point.index, "load": point.load,
                        "http_version": http_version, **asdict(figures),
                    })  # fmt: skip
    return rows
