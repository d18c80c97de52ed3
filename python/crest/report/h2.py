"""The report's HTTP/2 figures: the document's `h2` section, one row per HTTP/2 mix (streams in use,
HPACK ratios, GOAWAYs, resets, refused streams) in the order of `mixes`. Arranges only; the figures are
crest.analysis.h2's.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from crest.analysis import Configuration
from crest.analysis.h2 import h2_figures


def h2_section(configs: list[Configuration], load_axis: str) -> list[dict[str, Any]]:
    """Each HTTP/2 mix's figures with its configuration, run, trial and load ([] when no mix spoke HTTP/2)."""
    rows = []
    for index, config in enumerate(configs):
        for trial, points in zip(config.trials, config.trial_points(load_axis)):
            mixes = {m.index: m for m in trial.mixes}
            for point in points:
                mix = mixes.get(point.index)
                figures = h2_figures(mix.h2 if mix is not None else None)
                if figures is not None:
                    rows.append({
                        "configuration": config.label, "configuration_index": index, "run_id": trial.id,
                        "trial": trial.meta.repeat_index + 1, "mix": point.index, "load": point.load,
                        **asdict(figures),
                    })  # fmt: skip
    return rows
