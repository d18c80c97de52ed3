"""The report's client network: the document's `network` section (each configuration's link figures by
load, from crest.analysis.network) and its charts: link utilisation beside req/s, with the
link_bound line at 90%, and TCP retransmits. Arranges and draws; the figures are the analysis's.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from markupsafe import Markup

from crest.analysis import Configuration
from crest.analysis.network import network_points
from crest.report import fmt
from crest.report.svg import PALETTE, Axis, Kind, geometric, kind_chart, short_number
from crest.verdicts import LINK_BOUND_UTILISATION

MAX_CONFIGURATIONS = 3  # as the host counters: a design of many runs would bury the page (the JSON has all)
MAX_LINKS = 6  # the busiest links drawn per chart


def network_section(configs: list[Configuration], load_axis: str) -> list[dict[str, Any]]:
    """Each configuration's network figures by load ([] when no mix crossed a client network)."""
    out = []
    for index, config in enumerate(configs):
        points = network_points(config, load_axis)
        if points:
            out.append({"configuration": config.label, "configuration_index": index,
                        "points": [asdict(p) for p in points]})  # fmt: skip
    return out


def network_charts(doc: dict[str, Any]) -> list[tuple[str, Markup]]:
    """(caption, SVG) of each configuration's link utilisation and retransmit charts."""
    sections: list[dict[str, Any]] = doc.get("network") or []
    unit = "bytes" if doc["load_axis"] == "size" else doc["load_axis"]
    out: list[tuple[str, Markup]] = []
    for n, section in enumerate(sections[:MAX_CONFIGURATIONS]):
        points = section["points"]
        x = Axis(f"load ({unit})", log=geometric([p["load"] for p in points]), fmt=fmt.load_number, unit=unit)
        who = section["configuration"]
        keys = sorted({k for p in points for k in p["utilisation_pct"]},
                      key=lambda k: -max(p["utilisation_pct"].get(k, 0.0) for p in points))[:MAX_LINKS]  # fmt: skip
        kinds = [Kind(k, PALETTE[i % len(PALETTE)], [(p["load"], p["utilisation_pct"].get(k)) for p in points])
                 for i, k in enumerate(keys)]  # fmt: skip
        guide = [(p["load"], LINK_BOUND_UTILISATION * 100) for p in points]
        kinds.append(Kind(f"link_bound ({LINK_BOUND_UTILISATION * 100:.0f}%)", "#777777", guide, dash=True))  # type: ignore[arg-type]
        pct = Axis("utilisation (% of the link's rate)", fmt=short_number, unit="%", value=lambda v: f"{v:.1f}")
        out.append((
            f"{who}: link utilisation vs load (shaped links; clients' lines: the busiest client)",
            kind_chart(f"chart-net-util-{n}", f"Link utilisation vs load: {who}", x, pct, kinds,
                       note="no shaped link" if not keys else ""),
        ))  # fmt: skip
        sides = sorted({s for p in points for s in p["retrans_segs"]})
        retrans = [Kind(f"{s} retransmits", PALETTE[i], [(p["load"], p["retrans_segs"].get(s)) for p in points])
                   for i, s in enumerate(sides)]  # fmt: skip
        quiet = not any(v for k in retrans for _, v in k.points)
        out.append((
            f"{who}: TCP retransmitted segments per mix window vs load (target and clients)",
            kind_chart(f"chart-net-retrans-{n}", f"TCP retransmits vs load: {who}", x,
                       Axis("segments", fmt=short_number, value=lambda v: f"{v:,.0f}"), retrans,
                       note="no retransmits" if quiet else ""),
        ))  # fmt: skip
    return out
