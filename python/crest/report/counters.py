"""The report's host counters: the document's `host_counters` section and its charts, drawn beside the
target's CPU (CPU time by kind, TCP events, TIME_WAIT, interrupts and softirqs by kind, paging).

Owns arranging crest.analysis.hostcounters' points into the document and drawing them with
crest.report.svg's kind chart. The figures are the analysis's; nothing here prints or escapes.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from markupsafe import Markup

from crest.analysis import Configuration
from crest.analysis.hostcounters import host_points
from crest.report import fmt
from crest.report.svg import PALETTE, Axis, Kind, geometric, kind_chart, short_number

# Configurations drawn: each has five charts, so a design of many runs would bury the rest of the page
# (every configuration's figures stay in the document).
MAX_CONFIGURATIONS = 3
# Kinds of interrupts and of softirqs drawn: the busiest over every load.
TOP_KINDS = 5
# CPU time kinds, stacked from the bottom, with their colours; idle on top in grey, so the stack is 100%.
_CPU_COLOURS = {
    "user": "#0072B2", "nice": "#56B4E9", "system": "#E69F00", "irq": "#CC79A7", "softirq": "#D55E00",
    "steal": "#000000", "iowait": "#F0E442", "idle": "#dfe3e7",
}  # fmt: skip
_TCP_LABELS = {
    "retrans_segs": "retransmitted segments", "estab_resets": "connections reset", "out_rsts": "resets sent",
    "attempt_fails": "failed connects", "listen_overflows": "listen overflows", "listen_drops": "listen drops",
}  # fmt: skip
_PAGING_LABELS = {
    "pgpgin": "paged in (KiB)", "pgpgout": "paged out (KiB)", "pgmajfault": "major faults",
    "pswpin": "swapped in (pages)", "pswpout": "swapped out (pages)",
}  # fmt: skip


def host_counters(configs: list[Configuration], load_axis: str) -> list[dict[str, Any]]:
    """Each configuration's host figures by load ([] when no mix stored any: runs before host counters)."""
    out = []
    for index, config in enumerate(configs):
        points = host_points(config, load_axis)
        if points:
            out.append({"configuration": config.label, "configuration_index": index,
                        "points": [asdict(p) for p in points]})  # fmt: skip
    return out


def counter_charts(doc: dict[str, Any]) -> list[tuple[str, Markup]]:
    """(caption, SVG) of every host-counter chart, in page order: five per configuration, at most
    MAX_CONFIGURATIONS configurations."""
    sections: list[dict[str, Any]] = doc.get("host_counters") or []
    axis_name = doc["load_axis"]
    unit = "bytes" if axis_name == "size" else axis_name
    out: list[tuple[str, Markup]] = []
    for n, section in enumerate(sections[:MAX_CONFIGURATIONS]):
        points = section["points"]
        x = Axis(f"load ({unit})", log=geometric([p["load"] for p in points]), fmt=fmt.load_number, unit=unit)
        who = section["configuration"]
        more = len(sections) - MAX_CONFIGURATIONS
        if n == MAX_CONFIGURATIONS - 1 and more > 0:
            who += f" (and {more} more configuration(s) in the JSON)"
        out.extend(_charts(n, who, points, x))
    return out


def _charts(n: int, who: str, points: list[dict[str, Any]], x: Axis) -> list[tuple[str, Markup]]:
    cpus = max(p["cpus"] for p in points)
    pct = Axis(f"host CPU (% of {cpus} CPUs)", fmt=short_number, unit="%", value=lambda v: f"{v:.1f}")
    rate = Axis("events/s", fmt=short_number, unit="/s", value=lambda v: f"{v:,.1f}")
    cpu = [Kind(k, colour, [(p["load"], p["cpu_pct"].get(k)) for p in points]) for k, colour in _CPU_COLOURS.items()]
    cpu = [k for k in cpu if k.label == "idle" or any(v for _, v in k.points)]
    steal = max(p["steal_cores"] for p in points)
    tcp_kinds = _nonzero(points, "tcp_per_s", _TCP_LABELS)
    quiet = [label for key, label in _TCP_LABELS.items() if label not in {k.label for k in tcp_kinds}]
    paging = _nonzero(points, "paging_per_s", _PAGING_LABELS)
    irq = _busiest(points, "interrupts_per_s", "irq ") + _busiest(points, "softirqs_per_s", "softirq ", dash=True)
    tw = [Kind("TIME_WAIT sockets", PALETTE[0], [(p["load"], p["time_wait_max"]) for p in points])]
    return [
        (f"{who}: host CPU by kind vs load (stacked; steal at most {steal * 100:.1f}% of a core)",
         kind_chart(f"chart-host-cpu-{n}", f"Host CPU by kind vs load: {who}", x, pct, cpu, stacked=True)),
        (f"{who}: TCP events vs load (per second)" + (f" · none: {', '.join(quiet)}" if quiet else ""),
         kind_chart(f"chart-host-tcp-{n}", f"TCP events vs load: {who}", x, rate, tcp_kinds,
                    note="no TCP retransmits, resets or drops" if not tcp_kinds else "")
         ),
        (f"{who}: TIME_WAIT sockets vs load (the most at once in each window)",
         kind_chart(f"chart-host-timewait-{n}", f"TIME_WAIT sockets vs load: {who}", x,
                    Axis("sockets in TIME_WAIT", fmt=short_number, value=lambda v: f"{v:,.0f}"), tw)),
        (f"{who}: interrupts and softirqs by kind vs load (per second, log scale)",
         kind_chart(f"chart-host-irq-{n}", f"Interrupts and softirqs vs load: {who}", x,
                    Axis("per second", log=True, fmt=short_number, unit="/s", value=lambda v: f"{v:,.0f}"), irq)),
        (f"{who}: paging vs load (per second)",
         kind_chart(f"chart-host-paging-{n}", f"Paging vs load: {who}", x, rate, paging,
                    note="no paging" if not paging else "")),
    ]  # fmt: skip


def _nonzero(points: list[dict[str, Any]], key: str, labels: dict[str, str]) -> list[Kind]:
    """The counters of `key` that moved at some load, one colour each."""
    kinds = []
    for i, (name, label) in enumerate(labels.items()):
        values = [(p["load"], p[key].get(name)) for p in points]
        if any(v for _, v in values):
            kinds.append(Kind(label, PALETTE[i % len(PALETTE)], values))
    return kinds


def _busiest(points: list[dict[str, Any]], key: str, prefix: str, dash: bool = False) -> list[Kind]:
    """The TOP_KINDS busiest kinds of `key` over every load ("other" is a sum of many, not a kind: left out);
    `dash`: drawn dashed (softirqs reuse the interrupts' colours)."""
    totals: dict[str, float] = {}
    for p in points:
        for kind, rate in p[key].items():
            if kind != "other":
                totals[kind] = totals.get(kind, 0.0) + rate
    top = sorted(totals, key=lambda k: -totals[k])[:TOP_KINDS]
    return [
        Kind(prefix + kind, PALETTE[i % len(PALETTE)], [(p["load"], p[key].get(kind)) for p in points], dash)
        for i, kind in enumerate(top)
    ]
