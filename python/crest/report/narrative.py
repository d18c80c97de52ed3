"""The summary at the top of a report, in plain words: who peaked where, by how much, how sure, what to mind.

Reads the report document built so far (configurations, comparison, scaling,
runs) and returns sentences; it computes no statistic of its own.
"""

from __future__ import annotations

from typing import Any

from crest.analysis import MIN_TRIALS_FOR_INTERVAL, t_quantile, too_few_for_interval
from crest.analysis.peak import TRIALS_APART_PCT
from crest.analysis.summary import PEAK_ONLY_SHAPE
from crest.report import fmt
from crest.verdicts import DECIDING, LIMIT_FIXES, LIMIT_NAMES, NOT_SATURATED, decided_by, rank_of

# A coefficient of variation of the peak's req/s across trials above this makes
# differences of that size noise; 10% is where repeated web benchmarks stop agreeing.
NOISY_CV = 0.10
# Below this many trials, t for a 95% interval is large (12.7 with 2, 4.3 with 3): say so.
FEW_TRIALS = 4


def findings(doc: dict[str, Any]) -> dict[str, Any]:
    """{"headline": str, "findings": [str], "warnings": [str]} for the document."""
    configs: list[dict[str, Any]] = doc["configurations"]
    axis: str = doc["load_axis"]
    comparison = doc.get("comparison")
    lines: list[str] = []
    if comparison is None:
        headline = _limited(configs) + _single(configs[0], axis)
        lines += _at_peak(configs[0], axis)
    else:
        headline = _limited(configs) + _leader(configs, comparison, axis)
        label = doc["paired_interval"]["label"]
        mine = [p for p in comparison["paired"] if p["a"] == comparison["ranking"][0]]
        lines += [_paired(p, label) for p in mine if p["ci95"] is not None or p["verdict"] == "not comparable"]
        single = [p for p in mine if p["ci95"] is None and p["verdict"] != "not comparable"]
        if all(_published(c) for c in configs):
            single = []  # published peaks: the headline already says there is no test
        if len(single) == 1:
            lines.append(_paired(single[0], label))
        elif single:  # one line, not one per configuration: a published peak table has dozens
            lines.append(f"{comparison['ranking'][0]} shares one load point with each of {len(single)} other"
                         " configurations: one pair is too few for a paired test.")  # fmt: skip
        lines += _shapes(_ranked(configs, comparison), axis)
        if all(c["trials"] == 1 for c in configs) and not all(_published(c) for c in configs):
            lines.append("Each configuration ran once: the paired test pairs load points of one trial each;"
                         " repeat the runs (--repeat 3) to put confidence intervals on the peaks too.")  # fmt: skip
    curves = doc.get("throughput") or []
    if curves and len(curves) == len(doc.get("runs") or []):
        # File servers (and NetBench tables) are judged by throughput: it leads; operations/s follow.
        lines.insert(0, f"In operations: {headline}")
        headline = "; ".join(f"{c['label']}: throughput {c['statement']}" for c in curves[:3]) + "."
    results = _results(doc)
    if results is not None:
        # Every run is a SPECweb99 test or a capacity search: its result is the headline, and a curve over
        # its iterations or probes (paced connections, a search's jumps) says nothing a reader should heed.
        return {"headline": results, "findings": _cpu_quota(configs), "warnings": _result_warnings(doc)}
    lines += _trial_peaks(configs, axis)
    lines += _scaling(doc.get("scaling"))
    lines += _cpu_quota(configs)
    return {"headline": headline, "findings": lines, "warnings": _warnings(doc)}


def _results(doc: dict[str, Any]) -> str | None:
    """The headline of a document whose every run is a SPECweb99 test or a capacity search; else None."""
    tests = doc.get("specweb99") or []
    searches = doc.get("capacity") or []
    if (not tests and not searches) or len(tests) + len(searches) != len(doc.get("runs") or []):
        return None
    said = [f"{t['label']}: SPECweb99 {t['conforming']} conforming connections · {t['verdict']}" for t in tests]
    # The label often ends in a URL and the statement may open with what decided it: a dash keeps them apart.
    said += [f"Capacity search of {c['label']} — {c['statement']}" for c in searches]
    return "; ".join(said) + "."


def _result_warnings(doc: dict[str, Any]) -> list[str]:
    """What decided a SPECweb99 test or a search first (the kit's failures, a DECIDING verdict of any of its
    points), then the runs that did not complete; the curve's own verdicts do not apply to them."""
    warnings = [f"{t['label']}: INVALID: {failure}" for t in doc.get("specweb99") or [] for failure in t["failures"]]
    judged = sorted(((rank_of(v["kind"]), c["label"], v["message"]) for c in doc["configurations"]
                     for v in c["summary"]["verdicts"] if v["kind"] in DECIDING), key=lambda t: t[0])  # fmt: skip
    warnings += [f"{label}: {message}" for _, label, message in judged]
    return warnings + [w for w in _warnings(doc) if w.startswith("run ")]


def _limited(configs: list[dict[str, Any]]) -> str:
    """What decided the peaks when the targets did not, before anything else the headline says (the
    analysis's `limit` of each curve, in crest.verdicts' one order); "" when every target set its own."""
    limits = {c["label"]: c["summary"].get("limit") for c in configs}
    deciding = {label: v for label, v in limits.items() if v and v["kind"] in DECIDING}
    if len(configs) > 1 and len(deciding) == len(configs) and len({v["kind"] for v in deciding.values()}) == 1:
        kind = next(iter(deciding.values()))["kind"]
        every = "both" if len(deciding) == 2 else "all"
        return (f"{_join(list(deciding))} were {every} {LIMIT_NAMES.get(kind, kind)} at their peaks, so the difference"
                f" between them is not the servers': {LIMIT_FIXES.get(kind, 'see the warnings')}. ")  # fmt: skip
    by_kind: dict[str, list[str]] = {}
    for label, v in deciding.items():
        by_kind.setdefault(v["kind"], []).append(label)
    leads = []
    for kind, labels in sorted(by_kind.items(), key=lambda kv: rank_of(kv[0])):
        one = len(labels) == 1
        figures = {k: x for k, x in deciding[labels[0]].items() if k not in ("kind", "message")}
        said = decided_by(kind, "at the peak" if one else "at their peaks", "the peak" if one else "their peaks",
                          figures) or deciding[labels[0]]["message"]  # fmt: skip
        leads.append(f"{_join(labels)}: {said}")
    if leads:
        tail = " The comparison is therefore not of the servers alone." if len(configs) > 1 else ""
        return "; ".join(leads) + "." + tail + " "
    if len(configs) == 1 and limits[configs[0]["label"]] and limits[configs[0]["label"]]["kind"] == NOT_SATURATED:
        return "Not saturated: "
    return ""


def _single(config: dict[str, Any], axis: str) -> str:
    peak = config["peak"]
    # Both figures of the one mix, then what the trials say of the req/s (one parenthesis, not two in a row).
    text = (f"{config['label']} peaked at {fmt.rps(peak['rps'])} req/s and {fmt.mbytes(peak['load_throughput_Bps'])}"
            f" MB/s at {fmt.load(peak['load'], axis)}{_ci(peak)}")  # fmt: skip
    return f"{text}; {_shape(config, axis)}."


def _leader(configs: list[dict[str, Any]], comparison: dict[str, Any], axis: str) -> str:
    ranked = _ranked(configs, comparison)
    best, rest = ranked[0], ranked[1:]
    gains = {(g["a"], g["b"]): g["pct"] for g in comparison["improvement_pct"]}
    tests = {(p["a"], p["b"]): p for p in comparison["paired"]}
    parts = []
    for other in rest[:3]:
        pct = gains.get((best["label"], other["label"]))
        test = tests.get((best["label"], other["label"]))
        hedge = ""
        if test and test["verdict"] == "not significant":
            # One pair is no test at all (published peaks, single trials): say that, not "not significant".
            hedge = "; one pair: no test" if test.get("n", 0) < 2 else "; not a significant difference"
            hedge = "; published peaks: no test" if _published(other) and _published(best) else hedge
        parts.append(f"{_gain(pct)} {other['label']} ({fmt.rps(other['peak']['rps'])} req/s"
                     f"{_at(other, axis)}{hedge})")  # fmt: skip
    if len(rest) > 3:
        parts.append(f"more than the other {len(rest) - 3}")
    peak = best["peak"]
    which = "highest published peak" if _published(best) else "highest peak"
    return (f"{best['label']} had the {which}: {fmt.rps(peak['rps'])} req/s{_ci(peak)}"
            f"{_at(best, axis)}, " + _join(parts) + ".")  # fmt: skip


def _published(config: dict[str, Any]) -> bool:
    return bool(config["summary"]["shape"] == PEAK_ONLY_SHAPE)


def _at(config: dict[str, Any], axis: str) -> str:
    """ " at LOAD" of a configuration's peak; nothing for a published peak, whose report gave no load."""
    return "" if _published(config) else f" at {fmt.load(config['peak']['load'], axis)}"


def _at_peak(config: dict[str, Any], axis: str) -> list[str]:
    """A single configuration's peak in more detail: latency, errors, CPU, fairness."""
    point = next((p for p in config["points"] if p["load"] == config["peak"]["load"]), None)
    lines: list[str] = []
    if point is not None:
        lat = point["latency_us"]
        text = (f"At the peak, latency was {fmt.ms(lat.get('p50'))} ms at p50 and {fmt.ms(lat.get('p99'))} ms at p99;"
                f" errors {fmt.error_rate(point['error_rate'])}")  # fmt: skip
        if not fmt.missing(point["target_cpu_pct"]):
            text += f"; the target used {fmt.cpu(point['target_cpu_pct'])} of its CPUs"
        lines.append(text + ".")
    f = config["fairness"]
    if f and len(f["clients"]) > 1:
        lines.append(f"Per-client req/s at the peak ranged from {fmt.rps(f['min_rps'])} to {fmt.rps(f['max_rps'])}"
                     f" (slowest ÷ fastest {fmt.percent(f['min_over_max'])}).")  # fmt: skip
    return lines


def _trial_peaks(configs: list[dict[str, Any]], axis: str) -> list[str]:
    """Where repeated trials peaked on their own, beside the mean curve's peak the headline gives; where
    they peaked at different loads, the note on why the mean curve's peak is lower (mean_peak_notes)."""
    spreads = [f"{c['label']} {fmt.trial_peaks(c['peak'], axis)}" for c in configs
               if len(c["peak"]["trial_peaks"]) > 1 and not c["peak"]["trials_peak_apart"]]  # fmt: skip
    lines = mean_peak_notes(configs, axis)
    if spreads:
        lines.insert(0, "Each trial's own peak req/s (the peaks above are the tops of the mean curves over trials): "
                     + "; ".join(spreads) + ".")  # fmt: skip
    return lines


def mean_peak_notes(configs: list[dict[str, Any]], axis: str) -> list[str]:
    """One line per configuration whose trials peaked at different loads (Peak.trials_peak_apart): its mean
    curve's peak is lower than the trials' own, and a reader comparing them must be told why."""
    lines = []
    for c in configs:
        peak = c["peak"]
        if not peak["trials_peak_apart"]:
            continue
        pairs = list(zip(peak["trial_peaks"], peak["trial_peak_loads"], strict=False))
        own = (", ".join(f"trial {i} {fmt.rps(r)} req/s at {fmt.load(load, axis)}" for i, (r, load) in
                         enumerate(pairs, start=1))
               if len(pairs) <= 4 else f"{len(pairs)} trials, {fmt.trial_peaks(peak, axis)}")  # fmt: skip
        lower = ("below every trial's own peak" if peak["rps"] < peak["trial_peaks_min"]
                 else "below the average of the trials' own peaks")  # fmt: skip
        lines.append(f"{c['label']}: the mean curve peaks at {fmt.rps(peak['rps'])} req/s at"
                     f" {fmt.load(peak['load'], axis)}, {lower} ({own}), because the trials peaked at"
                     " different loads: at every load some trial was below its own peak, and the mean"
                     " averages it in.")  # fmt: skip
    return lines


def _shapes(configs: list[dict[str, Any]], axis: str) -> list[str]:
    """One sentence on what the configurations did past their peaks, grouped by behaviour."""
    # A content-length sweep has no load past a peak: its sizes are compared by weighted throughput.
    configs = [c for c in configs if c["summary"]["shape"] != "content-length sweep"]
    if not configs:
        return []
    if all(_published(c) for c in configs):  # a peak table: no curve anywhere, one sentence says so
        return ["Each figure is a published peak without the load it was measured at: there is no curve to judge."]
    groups: dict[str, list[str]] = {}
    for c in configs:
        s = c["summary"]
        ratio = "" if fmt.missing(s["past_peak_ratio"]) else f" ({fmt.percent(s['past_peak_ratio'])})"
        groups.setdefault(s["shape"], []).append(
            c["label"] + ("" if s["shape"] in ("rising", "single point") else ratio)
        )
    verbs = {
        "plateau": "held a plateau", "graceful degradation": "degraded gracefully", "collapse": "collapsed",
        "rising": "were still rising at the highest load (not saturated)", "single point": "have one load point only",
    }  # fmt: skip
    clauses = []
    for shape, labels in groups.items():
        verb = verbs.get(shape, shape)
        if shape == "rising" and len(labels) == 1:
            verb = "was still rising at the highest load (not saturated)"
        if shape == "single point" and len(labels) == 1:
            verb = "has one load point only"
        clauses.append(f"{_join(labels)} {verb}")
    return ["Past the peak (lowest req/s after it, as a share of the peak): " + "; ".join(clauses) + "."]


def _gain(pct: Any) -> str:
    if fmt.missing(pct):
        return "compared with"
    if abs(float(pct)) < 0.5:
        return "level with"
    return f"{fmt.percent(float(pct) / 100)} {'above' if pct > 0 else 'below'}"


def _paired(p: dict[str, Any], label: str) -> str:
    if p["verdict"] == "not comparable":
        return f"{p['a']} vs {p['b']}: no load point in common, so no paired test."
    head = f"{p['a']} − {p['b']}: {fmt.signed_rps(p['mean_diff'])} req/s on average over {p['n']} matched load points"
    if p["ci95"] is None:
        return f"{head}; one pair is too few for a test."
    ci = fmt.interval(p["ci95"])
    if p["significant"]:
        return f"{head} ({label} {ci}): significant."
    return f"{head} ({label} {ci}): not significant — these runs cannot tell them apart."


def _shape(config: dict[str, Any], axis: str) -> str:
    s = config["summary"]
    ratio = fmt.percent(s["past_peak_ratio"])
    last = max((p["load"] for p in config["points"]), default=None)
    return {
        "rising": f"still rising at the highest load measured ({fmt.load(last, axis)}): not saturated",
        "plateau": f"past the peak it held a plateau (never below {ratio} of peak)",
        "graceful degradation": f"past the peak it degraded gracefully (to {ratio} of peak)",
        "collapse": f"past the peak it collapsed (to {ratio} of peak)",
        "single point": "one load point only: no curve to judge",
        PEAK_ONLY_SHAPE: "a published peak (the report gives no load): no curve to judge",
    }.get(s["shape"], str(s["verdict"]))


def _scaling(rows: list[dict[str, Any]] | None) -> list[str]:
    if not rows:
        return []
    lines: list[str] = []
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(r["group"], []).append(r)
    for group, members in groups.items():
        if len(members) < 2:
            continue
        top = members[-1]
        lines.append(f"Scaling ({group}): {fmt.number(top['cpus'], 0)} CPUs gave {fmt.number(top['speedup'])}×"
                     f" the req/s of {fmt.number(top['base_cpus'], 0)}"
                     f" ({fmt.percent(top['efficiency'])} efficiency).")  # fmt: skip
    return lines


def _cpu_quota(configs: list[dict[str, Any]]) -> list[str]:
    """A fractional --cpus ran the target under a CFS quota, whose stalls show in the latency tail: say so."""
    quotas = {c["label"]: (c.get("server") or {}).get("cpu_quota") for c in configs}
    periods = sorted({q["period_us"] for q in quotas.values() if q})
    if not periods:
        return []
    names = ", ".join(label for label, q in quotas.items() if q)
    period = " or ".join(f"{p / 1000:g} ms" for p in periods)
    return [f"{names} ran under a CPU quota (a fractional --cpus): a target that has used its share of a"
            f" {period} period waits for the next one, which adds up to that period to a request's latency"
            " (measured with the built-in target at saturation: max 9.6 ms at --cpus 0.5 with 10 ms periods,"
            " 5.4 ms at --cpus 1), so read its p99 and max with that in mind."]  # fmt: skip


def _warnings(doc: dict[str, Any]) -> list[str]:
    # Every configuration's verdicts in the one order (what decided a result first, whichever configuration),
    # then the figures' own caveats.
    judged = sorted(((rank_of(v["kind"]), c["label"], v["message"]) for c in doc["configurations"]
                     for v in c["summary"]["verdicts"]), key=lambda t: t[0])  # fmt: skip
    warnings: list[str] = [f"{label}: {message}" for _, label, message in judged]
    warnings += [f"{c['label']}: {trials_apart_line(c['trials_apart'])}." for c in doc["configurations"]
                 if c.get("trials_apart")]  # fmt: skip
    for c in doc["configurations"]:
        at_peak = next((p for p in c["points"] if p["load"] == c["peak"]["load"]), None)
        if c.get("trials_apart"):
            continue  # which trials disagree, and why, is said above
        if at_peak and not fmt.missing(at_peak["rps_cv"]) and at_peak["rps_cv"] > NOISY_CV:
            warnings.append(f"{c['label']}: its {c['trials']} trials disagree by {fmt.percent(at_peak['rps_cv'])}"
                            " (coefficient of variation) at the peak: differences smaller than that are noise.")  # fmt: skip
    withheld = sorted({c["trials"] for c in doc["configurations"] if too_few_for_interval(c["trials"])})
    if withheld:
        n, t = withheld[0], t_quantile(0.975, withheld[0] - 1)
        # Two values 10% apart have s/√n = 5% of their mean: the interval is ± t × 5%.
        warnings.append(f"With {n} trials a 95% confidence interval says little (t = {t:.1f} for {n - 1} degree"
                        f"{'s' if n > 2 else ''} of freedom: {n} trials 10% apart would give ± {t * 0.05:.0%}),"
                        f" so none is shown; --repeat {MIN_TRIALS_FOR_INTERVAL} or more gives one.")  # fmt: skip
    few = sorted({c["trials"] for c in doc["configurations"] if MIN_TRIALS_FOR_INTERVAL <= c["trials"] < FEW_TRIALS})
    if few:
        n = few[0]
        warnings.append(f"With {n} trials a 95% confidence interval is wide (t = {t_quantile(0.975, n - 1):.1f} for"
                        f" {n - 1} degree{'s' if n > 2 else ''} of freedom), so the shaded bands and the peaks'"
                        f" intervals are broad; 5 trials bring t down to {t_quantile(0.975, 4):.1f}.")  # fmt: skip
    for run in doc["runs"]:
        if run["status"] != "complete":
            why = f" ({run['reason']})" if run["reason"] else ""
            warnings.append(f"run {run['id']} ({run['configuration']}) is {run['status']}{why}:"
                            f" its curve ends after {run['mixes']} mixes.")  # fmt: skip
    if doc.get("skipped_runs"):
        warnings.append("left out, no mix stored: " + ", ".join(doc["skipped_runs"]) + ".")
    return warnings


def _ranked(configs: list[dict[str, Any]], comparison: dict[str, Any]) -> list[dict[str, Any]]:
    by_label = {c["label"]: c for c in configs}
    return [by_label[label] for label in comparison["ranking"]]


def _ci(peak: dict[str, Any]) -> str:
    n = peak["n"]
    # The run-to-run spread beside the interval: how far one more trial is likely to land, not only the mean.
    spread = f"; run-to-run CV {fmt.cv(peak['rps_cv'])}" if not fmt.missing(peak.get("rps_cv")) else ""
    if too_few_for_interval(n):
        return f" (mean of {n} trials, too few for an interval: --repeat {MIN_TRIALS_FOR_INTERVAL} or more{spread})"
    interval = fmt.mean_interval(peak["rps_ci95"], n) if n > 1 else ""
    return f" (mean of {n} trials, {interval}{spread})" if interval else ""


def trials_apart_line(apart: dict[str, Any]) -> str:
    """What a configuration's trials that disagree (the report's `trials_apart`) tell a reader, in a sentence:
    which trials, how far apart, and whether the host's noise verdicts explain it."""
    low, high = f"trial {apart['low_trial']}", f"trial {apart['high_trial']}"
    said = (f"its trials disagree: {low} peaked at {fmt.rps(apart['low_rps'])} req/s and {high} at"
            f" {fmt.rps(apart['high_rps'])} req/s, {apart['apart_pct']:.0f}% apart")  # fmt: skip
    if apart["apart_pct"] > TRIALS_APART_PCT:
        said += f" (more than the {TRIALS_APART_PCT:.0f}% run-to-run noise crest allows one configuration)"
    if apart["outliers"]:
        which = ", ".join(f"trial {t}" for t in apart["outliers"])
        said += f"; {which} lay outside the 95% prediction interval of the other trials' peaks"
    if apart["explained"]:
        noisy = ", ".join(f"trial {t}" for t in apart["noisy_trials"])
        return f"{said}; {noisy} ran on a noisy host (noisy_host verdicts), which explains it: repeat on a quieter host"
    return (f"{said}, and no noisy-host verdict explains it: something changed between the trials (other load on"
            " the host, the page cache, the CPU's clock); repeat them and compare")  # fmt: skip


def _join(parts: list[str]) -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]
