"""Short human summaries of a suite's ladder, timing and workload; pure functions returning str, never printing."""

from __future__ import annotations

import re

from crest.suite.models import STREAM_VERSIONS, Ladder, Suite, Workload
from crest.suite.timing import Timing


def _num(x: float) -> str:
    return format(x, "g")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def clients_text(ladder: Ladder) -> str:
    """E.g. "1, 4, 8 … 60" or "1, 2, 4, 8, 16, 32"."""
    counts = ladder.client_counts()
    if len(counts) <= 6:
        return ", ".join(map(str, counts))
    return f"{counts[0]}, {counts[1]}, {counts[2]} … {counts[-1]}"


def threads_text(ladder: Ladder) -> str:
    """E.g. "1 thread", "10 threads, 15 from 96 clients"."""
    text = _plural(ladder.threads_per_client, "thread")
    for o in ladder.overrides:
        text += f", {o.threads_per_client} from {o.from_clients} clients"
    return text


def timing_text(timing: Timing) -> str:
    """E.g. "300 s (30 s ramp-up, 30 s ramp-down, 240 s window)"."""
    parts = [
        f"{_num(timing.ramp_up_s)} s ramp-up",
        f"{_num(timing.ramp_down_s)} s ramp-down",
        f"{_num(timing.window_s)} s window",
    ]
    if timing.delay_s:
        parts.append(f"≤ {_num(timing.delay_s)} s start delay")
    if timing.think_time_s:
        parts.append(f"{_num(timing.think_time_s)} s think time")
    return f"{_num(timing.length_s)} s ({', '.join(parts)})"


def mixes_text(suite: Suite, profile: str = "full") -> str:
    """E.g. "16 mixes: 1, 4, 8 … 60 clients × 1 thread; 300 s (…); 2 repeats"."""
    text = f"{ladder_text(suite)}; {timing_text(suite.mixes(profile)[0].timing)}"
    restart = suite.ladder.restart_target
    if restart is True:
        text += "; the target restarted before every mix after the first"
    elif restart:
        text += f"; the target restarted before the mix{'es' if len(restart) > 1 else ''} at"
        text += f" {', '.join(map(str, restart))} clients"
    if suite.repeat > 1:
        text += f"; {suite.repeat} repeats"
    return text


def workload_text(workload: Workload) -> str:
    """E.g. "80% static, 20% cgi · fileset webbench · HTTP/1.0, new connection per request · 4096 B read buffer"."""
    shares = workload.shares()
    classes = []
    for c in workload.classes:
        label = f"{_num(round(100 * shares[c.name], 2))}% {c.name}"
        details: list[str] = []
        if c.name != c.kind:
            details.append(c.kind)
        if c.tls:
            details.append("TLS")
        if c.size_bytes is not None:
            details.append(f"{c.size_bytes} B")
        if details:
            label += f" ({', '.join(details)})"
        classes.append(label)
    parts = [", ".join(classes)] if classes else [script_text(workload) or replay_text(workload)]
    if workload.fileset is not None:
        parts.append(f"fileset {workload.fileset}")
    reuse = "keep-alive" if workload.keepalive else "new connection per request"
    if workload.http_version in STREAM_VERSIONS:  # always persistent: what matters is the requests sharing one
        streams = f"{workload.streams} stream{'s' if workload.streams != 1 else ''}"
        parts.append(f"HTTP/{workload.http_version}, {streams} per connection")
    else:
        parts.append(f"HTTP/{workload.http_version}, {reuse}")
    if workload.read_buffer_bytes is not None:
        parts.append(f"{workload.read_buffer_bytes} B read buffer")
    return " · ".join(parts)


def replay_text(workload: Workload) -> str:
    """E.g. "access.log replayed timed at 10x (format auto)"."""
    r = workload.replay
    if r is None:
        return ""
    how = {"timed": f"replayed timed at {_num(r.speed)}x", "mix": "its request mix",
           "sessions": f"its sessions at {_num(r.speed)}x"}[r.mode]  # fmt: skip
    return f"{r.log.rsplit('/', 1)[-1]}: {how} (format {r.format})"


def har_text(workload: Workload) -> str:
    """E.g. "page.har: its page loads, 6 connections per client, 1 s think time": "" without a HAR."""
    h = workload.har
    if h is None:
        return ""
    how = "one connection" if workload.http_version == "2" else f"{h.connections} connections"
    think = f", {_num(h.think_s)} s think time" if h.think_s else ""
    return f"{h.file.rsplit('/', 1)[-1]}: its page loads, {how} per client{think}"


def script_text(workload: Workload) -> str:
    """E.g. "a script of 3 steps (login, home, logout), 20 users": "" without a script."""
    s = workload.script
    if s is None:
        return ""
    users = f", users from {s.users.rsplit('/', 1)[-1]}" if s.users else ""
    steps = "step" if len(s.steps) == 1 else "steps"
    return f"a script of {len(s.steps)} {steps} ({', '.join(s.classes)}){users}"


# How each TLS key is named to a reader.
_KEY_WORDS = {"ecdsa-p256": "ECDSA P-256", "rsa2048": "RSA 2048", "rsa1024": "RSA 1024"}


def tls_text(workload: Workload) -> str | None:
    """E.g. "RSA 2048 key, session resumption offered; with a role map and no tls target, every TLS class
    to the dynamic target"; None when no class is sent over TLS."""
    if not any(c.tls for c in workload.classes) and not workload.over_quic:
        return None
    tls = workload.tls_settings()
    resumption = "session resumption offered" if tls.resumption else "no session resumption (full handshakes)"
    route = (
        "each TLS class to its kind's target (static files to the static one)"
        if tls.route == "kind"
        else f"every TLS class to the {tls.route} target"
    )
    return f"{_KEY_WORDS[tls.key]} key, {resumption}; with a role map and no tls target, {route}"


def source_short(source: str) -> str:
    """The report part of a source, e.g. "VeriTest 2003 (seed 000)"."""
    match = re.match(r".*?\(seed \d+\)", source)
    return match.group(0) if match else source


def ladder_text(suite: Suite) -> str:
    """E.g. "16 mixes: 1, 4, 8 … 60 clients × 1 thread"."""
    counts = suite.ladder.client_counts()
    sizes = suite.sweep_sizes()
    n = len(counts) * len(sizes or [None])
    text = (
        f"{n} mix{'' if n == 1 else 'es'}: {clients_text(suite.ladder)}"
        f" client{'' if counts == [1] else 's'} × {threads_text(suite.ladder)}"
    )
    if sizes:
        text += f" × {sizes_text(sizes)}"
    return text


def sizes_text(sizes: list[int]) -> str:
    """E.g. "22 content lengths (1 … 10,000,000 B)" or "1 content length (1,024 B)"."""
    span = f"{sizes[0]:,} B" if len(sizes) == 1 else f"{sizes[0]:,} … {sizes[-1]:,} B"
    return f"{_plural(len(sizes), 'content length')} ({span})"


def classes_text(workload: Workload) -> str:
    """E.g. "80% static, 20% cgi (webbench)": the shares and the fileset."""
    if workload.replay is not None:
        return replay_text(workload)
    if workload.script is not None:
        return script_text(workload)
    if workload.har is not None:
        return har_text(workload)
    shares = workload.shares()
    text = ", ".join(f"{_num(round(100 * shares[c.name], 2))}% {c.name}" for c in workload.classes)
    if workload.fileset is not None:
        text += f" ({workload.fileset})"
    return text
