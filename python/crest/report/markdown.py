"""The report document → Markdown (CommonMark + pipe tables) for pasting into documents and issues.

Every string that came from a target, a suite or the store is escaped with
`md()`: Markdown punctuation and HTML's < > & are backslash-escaped and line
breaks folded, so a label can neither break a table nor inject markup.
"""

from __future__ import annotations

import re
from typing import Any

from crest.analysis.summary import PEAK_ONLY_SHAPE
from crest.report import fmt

_SPECIAL = re.compile(r"([\\`*_\[\]<>|&~#!])")


def md(text: Any) -> str:
    """Text safe inside Markdown prose and table cells."""
    folded = " ".join(str(text).split())
    return _SPECIAL.sub(r"\\\1", folded)


def render_markdown(doc: dict[str, Any]) -> str:
    """The whole report as Markdown."""
    configs: list[dict[str, Any]] = doc["configurations"]
    axis: str = doc["load_axis"]
    cmp = doc.get("comparison")
    out: list[str] = [f"# {md(doc['title'])}", ""]
    suites = ", ".join(md(s) for s in dict.fromkeys(r["suite"] for r in doc["runs"]))
    out += [f"_{len(configs)} configuration(s), {len(doc['runs'])} run(s), suite {suites}, load axis {axis};"
            f" generated {doc['generated_at']} by crest {md(doc['crest_version'])}_", ""]  # fmt: skip
    out += [f"**{md(doc['summary']['headline'])}**", ""]
    out += [f"- {md(line)}" for line in doc["summary"]["findings"]]
    if doc["summary"]["warnings"]:
        out += ["", "**Mind these:**", ""] + [f"- {md(line)}" for line in doc["summary"]["warnings"]]
    out += ["", "## Peaks", ""]
    sweep = doc.get("sweep")
    weighted = {w["index"]: w for w in sweep["configurations"]} if sweep else {}
    repeated = any(c["trials"] > 1 for c in configs)
    out += _table(
        ["configuration", "trials", "peak req/s", "± 95% CI", *(["run-to-run CV"] if repeated else []), "at load",
         "peak MB/s", "Mbit/s", "p99 at peak (ms)",
         "saturation", "past the peak", "max errors", *(["weighted Mbit/s", "± 95% CI"] if sweep else []),
         *(["trials' own peaks"] if repeated else [])],
        [[md(c["label"]), str(c["trials"]), fmt.rps(c["peak"]["rps"]), fmt.half_width(c["peak"]["rps_ci95"], c["peak"]["n"]),
          *([fmt.cv(c["peak"]["rps_cv"])] if repeated else []),
          fmt.DASH if _published(c) else fmt.load(c["peak"]["load"], axis), fmt.mbytes(c["peak"]["throughput_Bps"]),
          fmt.mbits(c["peak"]["throughput_Bps"]), fmt.ms(_at_peak(c, "p99")),
          fmt.saturation(c["summary"]), _past(c), fmt.error_rate(c["summary"]["max_error_rate"]),
          *(_weighted(weighted[c["index"]]) if sweep else []),
          *([md(fmt.trial_peaks(c["peak"], axis))] if repeated else [])]
         for c in _ranked(doc)],
        right=(1, 2, 3, 4, 5, 6, 7, 8, 11, 12, 13) if repeated else (1, 2, 3, 4, 5, 6, 7, 10, 11, 12),
    )  # fmt: skip
    if repeated:
        out += ["", "Peak = the highest point of the mean curve over trials (± the half-width of that load's 95% t"
                " interval; none below 3 trials, “0–HIGH” where its low end is clipped at 0); run-to-run CV = the sd"
                " of that load's req/s over trials ÷ their mean; each trial's own peak, often at another load, is"
                " shown beside it."]  # fmt: skip
    if sweep:
        out += _sweep(sweep)
    if cmp:
        out += _comparison(doc, cmp)
    if doc.get("peaks"):
        out += _peaks(doc["peaks"])
    if doc.get("throughput_ratios"):
        out += _ratios(doc["throughput_ratios"], doc["load_axis"])
    if doc.get("pooled"):
        out += _pooled(doc["pooled"], doc["paired_interval"]["label"])
    if doc.get("scaling"):
        out += ["", "## Scaling across CPUs", ""]
        out += _table(["group", "configuration", "CPUs", "peak req/s", "speedup", "efficiency"],
                      [[md(r["group"]), md(r["label"]), fmt.number(r["cpus"], 0), fmt.rps(r["peak_rps"]),
                        f"{fmt.number(r['speedup'])}×", fmt.percent(r["efficiency"])] for r in doc["scaling"]],
                      right=range(2, 6))  # fmt: skip
    for c in configs:
        out += _points(c, axis)
    if doc.get("h2"):
        out += _h2(doc["h2"], axis)
    if doc.get("pages"):
        out += _pages(doc["pages"])
    out += ["", "## Runs", ""]
    experiments = list(dict.fromkeys(r["experiment"] for r in doc["runs"] if r["experiment"]))
    if experiments:
        out += [f"Experiment{'s' if len(experiments) > 1 else ''} {md(', '.join(experiments))}", ""]
    out += _table(["run", "kind", "configuration", "trial", "suite", "profile", "setup", "status", "result", "started",
                   "mixes"],
                  [[md(r["id"]), md(r["kind"] + (" (cluster)" if r["cluster"] else "")), md(r["configuration"]),
                    str(r["trial"]), md(r["suite"]), md(r["profile"]), md(r["setup"]),
                    md(r["status"] + (f" ({r['reason']})" if r["reason"] else "")), md(r["result"] or fmt.DASH),
                    fmt.when(r["started_at"]), str(r["mixes"])] for r in doc["runs"]], right=(3, 8, 10))  # fmt: skip
    for h in doc["hosts"]:
        facts = ", ".join(f"{md(k)} {md(fmt.factor_value(v))}" for k, v in h["facts"].items())
        out += ["", f"Host: {facts}"]
    servers = [c for c in configs if c["server"]]
    if servers:
        out += ["", "Servers: " + "; ".join(
            f"{md(c['label'])}: {md(c['server'].get('name', '?'))} {md(c['server'].get('version', ''))}".rstrip()
            for c in servers) + "."]  # fmt: skip
    if doc.get("disclosure"):
        out += disclosure_md(doc["disclosure"])
    return "\n".join(out) + "\n"


def _signed_mbytes(value_Bps: Any) -> str:
    """A difference in MB/s, always signed."""
    if fmt.missing(value_Bps):
        return fmt.DASH
    return ("−" if float(value_Bps) < 0 else "+") + fmt.mbytes(abs(float(value_Bps)))


def _paired_rows(tests: list[dict[str, Any]], throughput: bool) -> list[list[str]]:
    diff = _signed_mbytes if throughput else fmt.signed_rps
    spread = fmt.mbytes if throughput else fmt.rps
    return [[md(p["a"]), md(p["b"]), str(p["n"]), diff(p["mean_diff"]), spread(p["sd"]),
             fmt.interval(p["ci95"], diff), md(p["verdict"])] for p in tests]  # fmt: skip


def _peaks(peaks: dict[str, Any]) -> list[str]:
    """The peak of each configuration with its index against the baseline, and the servers × CPUs pivot."""
    base = peaks.get("baseline")
    metric = peaks.get("metric", "rps")
    unit = "Mbit/s" if metric == "throughput_Bps" else "req/s"
    spread = (lambda v: fmt.headline(v, metric)) if metric == "throughput_Bps" else None
    out = ["", "## Peak index" + (f" (baseline {md(base)} = 1.00)" if base else ""), ""]
    out += _table(["configuration", f"peak {unit}", "± 95% CI", "at load", "index"],
                  [[md(b["label"]), fmt.headline(b["value"], metric), fmt.half_width(b["ci95"], b["n"], spread),
                    fmt.load_number(b["load"]), fmt.index(b["ratio"])] for b in peaks["bars"]],
                  right=range(1, 5))  # fmt: skip
    grouped: dict[str, Any] = peaks.get("grouped") or {"panels": []}
    for panel in grouped["panels"]:  # VeriTest's figure 2: peaks and improvement rows
        title = f"## Peak {unit} by {md(grouped['series_factor'])} and {md(' and '.join(grouped['group_factors']))}"
        out += ["", title + (f": {md(panel['label'])}" if panel["label"] else ""), ""]
        rows = [
            [md(name), *(fmt.headline(v, metric) for v in values)]
            for name, values in zip(grouped["series"], panel["values"])
            if any(v is not None for v in values)
        ]
        rows += [[md(f"{r['a']} over {r['b']}"), *(fmt.pct(p) for p in r["pct"])] for r in panel["improvements"]]
        out += _table([md(grouped["series_factor"]), *(md(" ".join(t)) for t in panel["group_titles"])], rows,
                      right=range(1, len(panel["groups"]) + 1))  # fmt: skip
    pivot = peaks.get("pivot")
    if pivot:
        out += ["", f"## Peak req/s by {md(pivot['column_factor'])}", ""]
        out += _table(["", *(md(fmt.factor_value(c)) for c in pivot["columns"])],
                      [[md(r["label"]), *(fmt.rps(v) if v is not None else fmt.DASH for v in r["rps"])]
                       for r in pivot["rows"]], right=range(1, len(pivot["columns"]) + 1))  # fmt: skip
    return out


def _ratios(section: dict[str, Any], axis: str) -> list[str]:
    """Mindcraft's throughput ratios: A over B at the peak, in where each peaks, and where B peaks."""
    out = ["", "## Throughput ratios (A over B)", ""]
    tp = "throughput_Bps"
    rows = [[md(p["a"]), md(p["b"]), fmt.headline(p["peak_a_Bps"], tp), fmt.headline(p["peak_b_Bps"], tp),
             fmt.times(p["peak_ratio"]), fmt.load_number(p["load_a"]), fmt.load_number(p["load_b"]),
             fmt.times(p["load_ratio"]),
             fmt.DASH if fmt.missing(p["at_load_pct"]) else f"{p['at_load_pct']:+.1f}% at {fmt.load_number(p['at_load'])}"]
            for p in section["pairs"]]  # fmt: skip
    return out + _table(["A", "B", "peak Mbit/s A", "peak Mbit/s B", "peak A ÷ B", f"A peaks at ({axis})",
                         f"B peaks at ({axis})", "load A ÷ B", "A over B where B peaks"], rows, right=range(2, 9))  # fmt: skip


def _pooled(pooled: dict[str, Any], interval: str) -> list[str]:
    """Paired tests pooled over every level of a factor (Kornecki's 36 pairs over two workloads)."""
    out = ["", f"## Paired-difference test pooled over {md(pooled['factor'])}", ""]
    for metric, throughput in (("rps", False), ("throughput_Bps", True)):
        tests = [t for t in pooled["tests"] if t.get("metric") == metric]
        if tests:
            out += [f"{'Throughput (MB/s)' if throughput else 'req/s'}:", ""]
            out += _table(["A", "B", "pairs", "mean A − B", "sd", interval, "verdict"],
                          _paired_rows(tests, throughput), right=range(2, 6))  # fmt: skip
            out.append("")
    return out[:-1]


def disclosure_md(section: dict[str, Any]) -> list[str]:
    """The Disclosure section: a two-column table per stored table. The full server configuration stays in the
    HTML and JSON reports: raw text from a server file has no safe place in Markdown."""
    out = ["", "## Disclosure", ""]

    def table(title: str, rows: list[dict[str, str]]) -> list[str]:
        return ["", f"**{md(title)}**", "", *_table(["fact", "value"], [[md(r["field"]), md(r.get("value") or f"({r['why']})")]
                                                            for r in rows])]  # fmt: skip

    for m in section["machines"]:
        if len(section["machines"]) > 1:
            out += ["", f"Machine of runs {md(', '.join(m['runs']))}:"]
        for t in m["tables"]:
            out += table(t["title"], t["rows"])
    for s in section["servers"]:
        out += table(f"Server: {s['configuration']}", s["rows"])
    for c in section["clients"]:
        out += table(f"Clients: {c['configuration']}", c["rows"])
    for c in section["tls"]:
        out += table(f"TLS: {c['configuration']}", c["rows"])
    return out


def _weighted(w: dict[str, Any]) -> list[str]:
    value = w["weighted_Mbps"]
    return [fmt.DASH if value is None else f"{value:,.2f}",
            fmt.half_width(w["weighted_Mbps_ci95"], w["trials"], lambda v: f"{v:,.2f}")]  # fmt: skip


def _sweep(sweep: dict[str, Any]) -> list[str]:
    """Throughput (Mbit/s) by content length, one column per configuration."""
    configs = sweep["configurations"]
    sizes = sorted({p["size_bytes"] for c in configs for p in c["points"]})
    by = {(c["index"], p["size_bytes"]): p for c in configs for p in c["points"]}
    rows = []
    for size in sizes:
        first = next(by[(c["index"], size)] for c in configs if (c["index"], size) in by)
        cells = [fmt.mbits(by[(c["index"], size)]["throughput_Bps"]) if (c["index"], size) in by else fmt.DASH
                 for c in configs]  # fmt: skip
        rows.append([f"{size:,}", md(first["class"] or "none"), *cells])
    out = ["", "## Throughput vs content length (Mbit/s)", ""]
    out += _table(["content length (B)", "SPECweb99 class", *(md(c["label"]) for c in configs)], rows,
                  right=(0, *range(2, 2 + len(configs))))  # fmt: skip
    out += ["", "Weighted throughput = Σ over SPECweb99 classes of the mean throughput of the lengths in the class ×"
            " its share (35/50/14/1 %); lengths of 1000 KiB and more carry no weight."]  # fmt: skip
    if sweep["note"]:
        out += ["", md(sweep["note"])]
    return out


def _comparison(doc: dict[str, Any], cmp: dict[str, Any]) -> list[str]:
    ranking: list[str] = cmp["ranking"]
    gains = {(g["a"], g["b"]): g["pct"] for g in cmp["improvement_pct"]}
    out = ["", "## Percent improvement at the peak (row over column)", ""]
    out += _table(["", *(md(b) for b in ranking)],
                  [[md(a), *("–" if a == b else fmt.pct(gains.get((a, b))) for b in ranking)] for a in ranking],
                  right=range(1, len(ranking) + 1))  # fmt: skip
    interval = doc["paired_interval"]["label"]
    out += ["", "## Paired-difference test (req/s)", ""]
    out += _table(["A", "B", "pairs", "mean A − B", "sd", interval, "verdict"], _paired_rows(cmp["paired"], False),
                  right=range(2, 6))  # fmt: skip
    if cmp.get("paired_throughput"):
        out += ["", "## Paired-difference test (throughput, MB/s)", ""]
        out += _table(["A", "B", "pairs", "mean A − B", "sd", interval, "verdict"],
                      _paired_rows(cmp["paired_throughput"], True), right=range(2, 6))  # fmt: skip
    configs = doc["configurations"]
    leader = ranking[0]
    others = [c for c in configs if c["label"] != leader]
    out += ["", "## Requests/s at each load", ""]
    out += _table(
        [doc["load_axis"], *(md(c["label"]) for c in configs), *(f"{md(leader)} over {md(c['label'])}" for c in others)],
        [[fmt.load_number(r["load"]), *(fmt.rps(v) for v in r["rps"]),
          *(fmt.pct(r["leader_gain_pct"][c["index"]]) for c in others)] for r in cmp["by_load"]],
        right=range(0, 1 + len(configs) + len(others)),
    )  # fmt: skip
    return out


def _points(c: dict[str, Any], axis: str) -> list[str]:
    out = ["", f"## Load points: {md(c['label'])}", ""]
    many = c["trials"] > 1
    head = [axis, *(["n"] if many else []), "req/s", *(["± 95% CI"] if many else []), "MB/s",
            "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "errors", "target CPU"]  # fmt: skip
    rows = []
    for p in c["points"]:
        lat = p["latency_us"]
        rows.append([fmt.load_number(p["load"]), *([str(p["n"])] if many else []), fmt.rps(p["rps"]),
                     *([fmt.half_width(p["rps_ci95"], p["n"])] if many else []), fmt.mbytes(p["throughput_Bps"]),
                     fmt.ms(lat.get("p50")), fmt.ms(lat.get("p90")), fmt.ms(lat.get("p99")), fmt.ms(lat.get("p999")),
                     fmt.error_rate(p["error_rate"]), fmt.cpu(p["target_cpu_pct"])])  # fmt: skip
    out += _table(head, rows, right=range(0, len(head)))
    f = c["fairness"]
    if f:
        out += ["", f"Fairness at the peak ({fmt.load(f['load'], axis)}): {len(f['clients'])} client scores,"
                f" {fmt.rps(f['min_rps'])}–{fmt.rps(f['max_rps'])} req/s per client (mean {fmt.rps(f['mean_rps'])},"
                f" slowest ÷ fastest {fmt.percent(f['min_over_max'])})."]  # fmt: skip
    return out


def _h2(rows: list[dict[str, Any]], axis: str) -> list[str]:
    def ratio(value: Any) -> str:
        return fmt.number(value) + ("" if fmt.missing(value) else "×")

    title, codec = fmt.stream_section_names(rows)
    both = "/" in codec  # a comparison of HTTP/2 with HTTP/3: each row says which it spoke
    out = ["", f"## {title}", ""]
    out += _table(["configuration", "trial", "run", "mix", *(["HTTP"] if both else []), axis, "streams in use", "most",
                   f"{codec} responses", f"{codec} requests", "GOAWAYs", "resets", "refused"],
                  [[md(r["configuration"]), str(r["trial"]), md(r["run_id"]), str(r["mix"]),
                    *([md(str(r.get("http_version", "2")))] if both else []), fmt.load_number(r["load"]),
                    fmt.number(r["streams_in_use_mean"], 1), f"{r['streams_in_use_max']:,}",
                    ratio(r["hpack_ratio_response"]), ratio(r["hpack_ratio_request"]), f"{r['goaways']:,}",
                    f"{r['resets']:,}", f"{r['refused']:,}"] for r in rows],
                  right=(1, *range(3, 13 if both else 12)))  # fmt: skip
    out += ["", f"Streams in use: the mean (and the most) open on a connection as a request went out; {codec}: header"
            " bytes as HTTP/1.1 text ÷ compressed; resets: streams the server reset (also errors); refused: sent"
            " again."]  # fmt: skip
    return out


def _pages(rows: list[dict[str, Any]]) -> list[str]:
    out = ["", "## Page loads", ""]
    out += _table(["configuration", "trial", "run", "mix", "page", "loads", "loads/s", "load p50 (ms)",
                   "load p99 (ms)", "load max (ms)", "failed"],
                  [[md(r["configuration"]), str(r["trial"]), md(r["run_id"]), str(r["mix"]), md(r["page"]),
                    f"{r['loads']:,}", fmt.number(r["loads_per_s"]), fmt.ms(r["p50_us"]),
                    fmt.ms(r["p99_us"]), fmt.ms(r["max_us"]), f"{r['failed']:,}"] for r in rows],
                  right=(1, 3, *range(5, 11)))  # fmt: skip
    out += ["", "A page load: the document's request to the last response of the page's requests (a HAR replay"
            " sends them as a browser does, the document first); failed: loads in which a request failed."]  # fmt: skip
    return out


def _table(head: list[str], rows: list[list[str]], right: Any = ()) -> list[str]:
    aligned = set(right)
    rule = ["---:" if i in aligned else "---" for i in range(len(head))]
    return ["| " + " | ".join(line) + " |" for line in (head, rule, *rows)]


def _ranked(doc: dict[str, Any]) -> list[dict[str, Any]]:
    if not doc.get("comparison"):
        return list(doc["configurations"])
    by_label = {c["label"]: c for c in doc["configurations"]}
    return [by_label[label] for label in doc["comparison"]["ranking"]]


def _at_peak(c: dict[str, Any], key: str) -> Any:
    point = next((p for p in c["points"] if p["load"] == c["peak"]["load"]), None)
    return None if point is None else point["latency_us"].get(key)


def _published(c: dict[str, Any]) -> bool:
    """A published peak without its load (a peak table): there is no load to show and no saturation."""
    return bool(c["summary"]["shape"] == PEAK_ONLY_SHAPE)


def _past(c: dict[str, Any]) -> str:
    s = c["summary"]
    ratio = s["past_peak_ratio"]
    return md(s["shape"]) + ("" if fmt.missing(ratio) else f" ({fmt.percent(ratio)})")
