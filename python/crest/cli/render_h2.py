"""`crest show`'s table of a run's HTTP/2 (or HTTP/3) mixes: streams in use, HPACK (QPACK) ratios, GOAWAYs,
resets and refused streams per mix. Formats only; the figures are crest.analysis.h2's."""

from __future__ import annotations

from crest.analysis.h2 import h2_figures, header_codec, protocol_name
from crest.cli.render import format_mean, format_ratio
from crest.cli.terminal import Column, FitTable
from crest.store import MixRecord
from crest.units import format_count


def h2_table(mixes: list[MixRecord], http_version: str | None = None) -> FitTable | None:
    """One row per HTTP/2 or HTTP/3 mix, titled by the run's `http_version`; None when no mix had streams."""
    rows = [(m.index, f) for m in mixes if (f := h2_figures(m.h2)) is not None]
    if not rows:
        return None
    title, codec = protocol_name(http_version), header_codec(http_version)
    names = ("mix", "streams mean", "streams max", f"{codec} resp", f"{codec} req", "GOAWAYs", "resets", "refused")
    table = FitTable([Column(name) for name in names], title=title)
    for index, f in rows:
        table.add_row(
            str(index), format_mean(f.streams_in_use_mean), format_count(f.streams_in_use_max),
            format_ratio(f.hpack_ratio_response), format_ratio(f.hpack_ratio_request),
            format_count(f.goaways), format_count(f.resets), format_count(f.refused),
        )  # fmt: skip
    return table
