"""Human text for `crest bench` (wrk-like header and summary); pure functions from spec/report to str.

A summary line longer than the terminal wraps under its value, between two figures, never inside one.
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Any

from crest.cli.width import columns
from crest.load.runspec import RunSpec
from crest.units import format_bytes, format_count, format_latency_us, format_seconds

if TYPE_CHECKING:
    from crest.analysis.h2 import H2Figures

_LABEL_WIDTH = 12
_PERCENTILES = (("mean", "mean"), ("p50", "p50"), ("p90", "p90"), ("p99", "p99"), ("p99.9", "p999"), ("max", "max"))
_GAP = "   "  # between the figures of one line
_KEEP = "\xa0"  # textwrap never breaks at a no-break space
_ERROR_KINDS = ("connect", "tls", "timeout", "read", "write", "status", "parse", "validation", "reset")


def render_header(spec: RunSpec) -> str:
    """The lines printed before the run starts: what, where, and how the load is made."""
    if spec.duration_s is not None and spec.max_requests is not None:
        what = f"{format_seconds(spec.duration_s)} test (at most {format_count(spec.max_requests)} requests)"
    elif spec.duration_s is not None:
        what = f"{format_seconds(spec.duration_s)} test"
    else:
        what = f"{format_count(spec.max_requests or 0)} requests"
    threads = f"{spec.threads} thread{'s' if spec.threads != 1 else ''}"
    connections = f"{spec.connections} connection{'s' if spec.connections != 1 else ''}"
    return (
        f"Running {what} @ {spec.url}\n"
        f"  {threads} and {connections} · {describe_protocol(spec)} · {describe_load_model(spec)}"
    )


def describe_protocol(spec: RunSpec) -> str:
    """E.g. "HTTP/1.1 keep-alive", "HTTP/1.0 new connection per request", "HTTP/2, 10 streams per connection"."""
    if spec.http_version in ("2", "3"):  # always one long connection; what matters is how many requests share it
        return f"HTTP/{spec.http_version}, {spec.streams} stream{'s' if spec.streams != 1 else ''} per connection"
    reuse = "keep-alive" if spec.keepalive else "new connection per request"
    text = f"HTTP/{spec.http_version} {reuse}"
    if spec.pipeline > 1:
        text += f", pipeline depth {spec.pipeline}"
    return text


def describe_load_model(spec: RunSpec) -> str:
    """Closed loop (with think time) or open loop at a rate."""
    if spec.rate_rps is not None:
        return f"open loop at {spec.rate_rps:,.6g} req/s (latency from intended send time)"
    if spec.think_time_s > 0:
        return f"closed loop, think time {format_seconds(spec.think_time_s)}"
    return "closed loop"


def render_report(
    report: dict[str, Any], spec: RunSpec, width: int | None = None, *, preflight_requests: int = 0
) -> str:
    """The summary printed after the run, one labelled line per metric, wrapped to `width` columns (default:
    the terminal's); the preflight's requests, which the target saw beside the load's, last."""
    duration_s = float(report.get("duration_s", 0.0))
    lines = [
        _line("Latency", _latency(report.get("latency_us", {}), int(report.get("requests", 0)))),
        _line(
            "Requests",
            f"{format_count(int(report.get('requests', 0)))} in {duration_s:.2f}s"
            f"  →  {float(report.get('rps', 0.0)):,.1f} req/s",
        ),
        _line("Transfer", _transfer(report)),
        _line("Connections", _connections(report, duration_s)),
    ]
    if int(report.get("tls_handshakes", 0)) > 0:
        lines.append(_line("TLS", _tls(report)))
    if report.get("h2"):
        # Only an HTTP/2 or HTTP/3 report pays for loading the analysis, and only once the run is over.
        from crest.analysis.h2 import h2_figures, header_codec, protocol_name

        figures = h2_figures(report["h2"])
        if figures is not None:
            codec = header_codec(spec.http_version)
            lines.append(_line(protocol_name(spec.http_version), describe_h2(figures, codec)))
    lines.append(_line("Status", _status(report.get("status", {}))))
    lines.append(_line("Errors", _errors(report.get("errors", {}))))
    lines.extend(f"  note: {note}" for note in report.get("error_notes", []))  # prose: the terminal wraps it
    cpu_s = report.get("client_cpu_s")
    if cpu_s is not None and duration_s > 0:
        threads = int(report.get("threads", spec.threads)) or 1
        share = 100.0 * float(cpu_s) / (duration_s * threads)
        text = f"{float(cpu_s):.2f}s ({share:.0f}% of {threads} thread{'s' if threads != 1 else ''})"
        naps = int(report.get("naps", 0))
        if naps:  # under load the threads nap instead of blocking (docs/bench.md, "How crest waits")
            text += f", {format_count(naps)} nap{'' if naps == 1 else 's'}"
        lines.append(_line("Client CPU", text))
    if preflight_requests:
        count = f"{preflight_requests} request{'' if preflight_requests == 1 else 's'}"
        lines.append(_line("Preflight", f"{count} before the load, not counted above (--no-preflight: none)"))
    if report.get("cancelled"):
        lines.append(f"  Interrupted after {duration_s:.2f}s: partial result")
    return "\n".join(_fit(line, columns() if width is None else width) for line in lines)


def render_file_report(report: dict[str, Any], width: int | None = None) -> str:
    """A file bench's summary (dbench's loadfile replayed): operations and ops/s, MB/s moved, latency
    per operation, errors; the operation kinds' table is render_throughput.classes_table."""
    duration_s, ops = float(report.get("duration_s", 0.0)), int(report.get("requests", 0))
    moved = float(report.get("throughput_Bps", 0.0))
    lines = [
        _line("Latency", _latency(report.get("latency_us", {}), ops)),
        _line("Operations", f"{format_count(ops)} in {duration_s:.2f}s  →  {float(report.get('rps', 0.0)):,.1f} ops/s"),
        _line(
            "Transfer",
            f"{format_bytes(float(report.get('bytes', 0)))} read and written  →  "
            f"{format_bytes(moved)}/s ({moved * 8 / 1e6:,.1f} Mbit/s)",
        ),
        _line("Errors", _errors(report.get("errors", {}))),
    ]
    lines.extend(f"  note: {note}" for note in report.get("error_notes", []))
    if report.get("cancelled"):
        lines.append(f"  Interrupted after {duration_s:.2f}s: partial result")
    return "\n".join(_fit(line, columns() if width is None else width) for line in lines)


def _line(label: str, text: str) -> str:
    return f"  {label:<{_LABEL_WIDTH}}{text}"


def _fit(line: str, width: int) -> str:
    """A labelled line folded under its value at `width`, at the separators between figures only (the
    spaces inside one, as in "p99 1.23ms", are joined while the line is wrapped)."""
    indent = " " * (2 + _LABEL_WIDTH)
    if len(line) <= width or not line.startswith("  ") or line.startswith("  note:"):
        return line
    head, text = line[: len(indent)], line[len(indent) :]
    sep = next((sep for sep in (_GAP, " · ", ", ") if sep in text), None)
    if sep is not None:
        text = sep.join(part.replace(" ", _KEEP) for part in text.split(sep))
    folded = textwrap.fill(text, width, initial_indent=head, subsequent_indent=indent,
                           break_long_words=False, break_on_hyphens=False)  # fmt: skip
    return folded.replace(_KEEP, " ")


def _latency(latency_us: dict[str, Any], requests: int) -> str:
    if requests == 0:
        return "no successful responses"  # latency is only recorded for those
    return _GAP.join(f"{name} {format_latency_us(float(latency_us.get(key, 0)))}" for name, key in _PERCENTILES)


def _transfer(report: dict[str, Any]) -> str:
    bytes_per_s = float(report.get("throughput_Bps", 0.0))
    return (
        f"{format_bytes(float(report.get('bytes', 0)))} read  →  {format_bytes(bytes_per_s)}/s"
        f" ({bytes_per_s * 8 / 1e6:,.1f} Mbit/s)"
    )


def _connections(report: dict[str, Any], duration_s: float) -> str:
    opened = int(report.get("connections_opened", 0))
    text = f"{format_count(opened)} opened"
    if duration_s > 0:
        text += f" ({opened / duration_s:,.1f}/s"
        if opened:
            text += f", connect p50 {format_latency_us(float(report.get('connect_us', {}).get('p50', 0)))}"
        text += ")"
    return text


def _tls(report: dict[str, Any]) -> str:
    text = f"{format_count(int(report['tls_handshakes']))} handshakes"
    if "tls_resumed" in report:
        text += f" ({format_count(int(report['tls_resumed']))} resumed)"
    p50 = format_latency_us(float(report.get("tls_handshake_us", {}).get("p50", 0)))
    return f"{text}, p50 {p50}"


def describe_h2(f: H2Figures, codec: str = "HPACK") -> str:
    """E.g. "streams in use 9.3 mean (10 max) · HPACK 1.94× responses, 2.94× requests · 106 GOAWAYs · 0 resets";
    `codec` names the header compression (QPACK for HTTP/3)."""
    parts = [
        f"streams in use {format_mean(f.streams_in_use_mean)} mean ({format_count(f.streams_in_use_max)} max)",
        f"{codec} {format_ratio(f.hpack_ratio_response)} responses, {format_ratio(f.hpack_ratio_request)} requests",
        f"{format_count(f.goaways)} GOAWAY{'' if f.goaways == 1 else 's'}",
        f"{format_count(f.resets)} reset{'' if f.resets == 1 else 's'}",
    ]
    if f.refused:  # streams the server turned away, sent again on a new connection; usually none
        parts.append(f"{format_count(f.refused)} refused (sent again)")
    return " · ".join(parts)


def format_mean(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}"


def format_ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}×"


def _status(status: dict[str, Any]) -> str:
    if not status:
        return "none"
    return _GAP.join(f"{code}: {format_count(int(n))}" for code, n in sorted(status.items()))


def _errors(errors: dict[str, Any]) -> str:
    counted = [(kind, int(errors.get(kind, 0))) for kind in _ERROR_KINDS]
    counted += [(k, int(v)) for k, v in sorted(errors.items()) if k not in _ERROR_KINDS]
    nonzero = [f"{kind} {format_count(n)}" for kind, n in counted if n]
    return ", ".join(nonzero) if nonzero else "none"


def render_nodes(cluster: dict[str, Any], width: int | None = None, *, titled: bool = True) -> str:
    """A cluster mix's per-node breakdown: which clients each node ran, what it achieved, its engine's
    CPU and its clock offset from the driver (± half the best round trip); `width` as render_report's,
    the title left out unless `titled`."""
    from crest.cli.terminal import Column, FitTable, render_text, safe, terminal_width  # rich: a cluster's bench only

    table = FitTable([Column("node", "left"), Column("ip", "left"), Column("clients", wrap=True), Column("requests"),
                      Column("req/s"), Column("engine CPU", wrap=True), Column("clock offset")])  # fmt: skip
    for n in cluster.get("nodes", []):
        first, count = int(n["first_client"]), int(n["clients"])
        # How many clients the node ran, then which (WebBench's client numbers, counted from 0).
        which = f"{first}" if count == 1 else f"{first}-{first + count - 1}"
        clients = f"{count} client{'s' if count != 1 else ''} ({which})"
        cpu = f"{float(n.get('engine_cpu_util_pct') or 0):.0f}%" + (" bound" if n.get("client_bound") else "")
        offset = f"{float(n['clock_offset_s']) * 1e3:+.3f}±{float(n['clock_uncertainty_s']) * 1e3:.3f} ms"
        table.add_row(safe(node_name(n)), safe(n["ip"]), clients, format_count(int(n["requests"])),
                      f"{float(n['rps']):,.1f}", cpu, offset)  # fmt: skip
    width = terminal_width() if width is None else width
    title = "Nodes (clients dealt whole; one absolute start, corrected by each node's clock offset)"
    titles = textwrap.wrap(title, width, subsequent_indent="  ") if titled else []
    return "\n".join([*titles, render_text(table, width, indent=2)])


def node_name(node: dict[str, Any]) -> str:
    """A cluster node as the user names it: its custom resource (node1 … nodeN of --cluster local:N, or
    one given to `ray start --resources`), else its id's first 8 digits (runs stored before names were)."""
    names = node.get("names")
    return str(names[0]) if isinstance(names, list) and names else str(node["node_id"])[:8]
