"""One mix of a suite as one engine run: pure functions from a mix and a bound target to a RunSpec.

Owns the settings every mix has, web or file (threads, the window cut at the ramps, the seed), and
what each kind adds (the request table, SPECweb99's generator; the loadfile). Does no I/O: the target's
URLs, table and password come bound (crest.runner.binding).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from crest.load.runspec import RunSpec
from crest.replay import LogSummary
from crest.replay.har import Har
from crest.runner.binding import Bound
from crest.runner.request import RunRequest, fileset_connections, smb_password
from crest.suite import Mix
from crest.suite.replay import Replay
from crest.suite.specweb99 import Specweb99

# Salts of a mix's seed: every trial and every mix of a run draws its own requests.
RUN_SEED_STRIDE = 1_000_003
TRIAL_SEED_STRIDE = 1009


def mix_base(request: RunRequest, mix: Mix, repeat_index: int, engine_cores: int, drain_s: float) -> RunSpec:
    """What every engine run of a mix has, web or file: its connections and clients, the threads (one per
    engine core, at most one per connection), the timing, the window (length minus the ramps, plus what
    a drain lets finish) and the seed; each kind then adds its own (the URL first of all)."""
    t = mix.timing
    return RunSpec(
        url="",
        connections=mix.connections,
        threads=min(request.engine_threads or engine_cores, mix.connections),
        nap=request.nap,
        duration_s=t.length_s,
        think_time_s=t.think_time_s,
        timeout_s=request.timeout_s,
        connections_per_client=mix.threads_per_client,
        window_s=(t.ramp_up_s, t.length_s - t.ramp_down_s + drain_s),
        client_start_delay_s=t.delay_s,
        seed=request.seed * RUN_SEED_STRIDE + repeat_index * TRIAL_SEED_STRIDE + mix.index,
    )


def mix_spec(request: RunRequest, bound: Bound, mix: Mix, repeat_index: int, engine_cores: int, mixes: int) -> RunSpec:
    """The engine run of one mix against the bound target (`mixes`: how many the suite has)."""
    if request.suite.workload.is_file:
        return _file_spec(request, bound, mix, repeat_index, engine_cores, mixes)
    workload = request.suite.workload
    table = bound.table_for(mix)
    if bound.script is not None:
        return _script_spec(request, bound, mix, repeat_index, engine_cores)
    if bound.pages is not None:
        return _har_spec(request, bound, mix, repeat_index, engine_cores)
    replay = workload.replay
    if replay is not None and replay.sends_the_log:
        return replace(
            mix_base(request, mix, repeat_index, engine_cores, 0.0),
            url=bound.url or "",
            http_version=workload.http_version,
            keepalive=workload.keepalive,
            streams=workload.streams,
            insecure=bound.insecure,
            read_buffer_bytes=workload.read_buffer_bytes,
            classes=table.classes,
            replay=replay_config(replay, bound.dynamic_url),
        )
    # A window that runs to the end of the mix lets in-flight exchanges finish and count,
    # so its counts equal the target's own (bounded by the request timeout).
    drain_s = request.timeout_s if mix.timing.ramp_down_s == 0 else 0.0
    spec = workload.specweb99
    specweb = specweb99_config(spec, bound.url or "", fileset_connections(request.suite) or 1, mix)
    return replace(
        mix_base(request, mix, repeat_index, engine_cores, drain_s),
        url=table.requests[0]["url"] if table.requests else (bound.url or ""),
        http_version=workload.http_version,
        keepalive=workload.keepalive,
        streams=workload.streams,
        insecure=bound.insecure,
        tls_resumption=workload.tls_settings().resumption,
        read_buffer_bytes=workload.read_buffer_bytes,
        requests=table.requests,
        classes=() if spec else table.classes,  # SPECweb99's classes are the engine's own 20
        drain_s=drain_s,
        selection=workload.selection,
        rate_rps=mix.rate_rps,
        line_speed_bps=spec.line_speed_bps if spec else None,
        keepalive_requests=(spec.keepalive_requests[0], spec.keepalive_requests[1]) if spec else None,
        keepalive_request_share=spec.keepalive_request_share if spec else 1.0,
        specweb99=specweb,
    )


def replay_config(replay: Replay, dynamic_url: str | None) -> dict[str, Any]:
    """The engine's RunConfig.replay of a timed or sessions replay: the log (an absolute path, as the suite
    loader made it), how to read it and send it; each logged status is expected again."""
    return {"log": replay.log, "options": replay.reader_options(), "mode": replay.mode, "speed": replay.speed,
            "dynamic_url": dynamic_url, "expect_logged_status": True}  # fmt: skip


# What an access log does not hold, so a replay cannot send or check it (the run's disclosure says so).
REPLAY_CANNOT_SAY = (
    "request bodies: a logged POST or PUT is sent with an empty body",
    "request headers: none but Host is replayed (no cookies, user agents, conditional or range requests)",
    "response content: sizes are the logged ones; a site from the log holds crest's filler, not the pages",
)


def replay_facts(log: LogSummary, site: bool) -> dict[str, Any]:
    """What a replay run stores of its log: the reader's counts (no path or query of an entry) and what
    the log cannot say; `site`: dynamic requests went to crest's dynamic page with their logged size."""
    dynamic = ("to crest's dynamic page with their logged size" if site
               else "to their logged paths, as the target answers them")  # fmt: skip
    return {**log.facts(), "dynamic_requests": dynamic, "cannot_say": list(REPLAY_CANNOT_SAY)}


# What a HAR replay does not do (the run's disclosure says so).
HAR_DOES_NOT = (
    "render or run JavaScript: the recorded requests are sent as recorded, none is discovered anew",
    "send the browser's headers, cookies or cache: every page load fetches every recorded request",
    "send request bodies over HTTP/2 (over HTTP/1.1 a recorded POST goes with its recorded body), nor a"
    " request's headers (Content-Type included)",
    "keep recorded hosts apart: every host's requests share the client's connections",
)


def har_facts(har: Har) -> dict[str, Any]:
    """What a HAR run stores of its recording: the counts (no URL) and what a HAR replay does not do."""
    return {**har.facts(), "does_not": list(HAR_DOES_NOT)}


def _har_spec(request: RunRequest, bound: Bound, mix: Mix, repeat_index: int, engine_cores: int) -> RunSpec:
    """A HAR's mix: each client a browser (its connections over HTTP/1.1, one connection with as many
    streams over HTTP/2) loading the recorded pages in turn; a client's connections stay in one engine
    thread, so there are at most as many threads as clients."""
    workload = request.suite.workload
    assert workload.har is not None
    h2 = workload.http_version == "2"
    per_client = 1 if h2 else workload.har.connections
    base = mix_base(request, mix, repeat_index, engine_cores, 0.0)
    drain_s = request.timeout_s if mix.timing.ramp_down_s == 0 else 0.0
    return replace(
        mix_base(request, mix, repeat_index, engine_cores, drain_s),
        url=bound.url or "",
        http_version=workload.http_version,
        keepalive=True,
        streams=workload.streams if h2 else 1,  # over HTTP/2 the HAR's connections (suite.har's default)
        insecure=bound.insecure,
        read_buffer_bytes=workload.read_buffer_bytes,
        connections=mix.clients * per_client,
        connections_per_client=per_client,
        threads=min(base.threads, mix.clients),
        requests=bound.table.requests,
        classes=bound.table.classes,
        drain_s=drain_s,
        rate_rps=mix.rate_rps,  # the engine refuses pages at a rate: a browser loads as fast as it is answered
        pages=bound.pages,
    )


def _script_spec(request: RunRequest, bound: Bound, mix: Mix, repeat_index: int, engine_cores: int) -> RunSpec:
    """A script's mix: each connection a virtual user playing the steps (the engine's own requests)."""
    workload = request.suite.workload
    drain_s = request.timeout_s if mix.timing.ramp_down_s == 0 else 0.0
    return replace(
        mix_base(request, mix, repeat_index, engine_cores, drain_s),
        url=bound.url or "",
        http_version=workload.http_version,
        keepalive=workload.keepalive,
        insecure=bound.insecure,
        read_buffer_bytes=workload.read_buffer_bytes,
        classes=bound.table.classes,
        drain_s=drain_s,
        rate_rps=mix.rate_rps,
        script=bound.script,
    )


def _file_spec(
    request: RunRequest, bound: Bound, mix: Mix, repeat_index: int, engine_cores: int, mixes: int
) -> RunSpec:
    """A file-operation mix: each connection a dbench client replaying the loadfile against the target."""
    settings = request.suite.workload.loadfile_settings()
    url = bound.url or ""
    # NetBench's Save Workspace: trees stay between mixes and go after the last one.
    cleanup = not settings.save_workspace or mix.index >= mixes
    loadfile = {
        "path": request.loadfile or settings.resolved_path(),
        "cleanup": cleanup,
        "resolve_names": settings.resolve_names,
        "password": (bound.password or smb_password(request.password_file)) if url.startswith("smb:") else None,
    }
    return replace(mix_base(request, mix, repeat_index, engine_cores, 0.0), url=url, loadfile=loadfile)


def specweb99_config(spec: Specweb99 | None, base_url: str, fileset_conns: int, mix: Mix) -> dict[str, Any] | None:
    """The engine's SPECweb99 generator for a target: its three URLs, the fileset's directories and the
    users Reset wrote (one per connection the fileset was made for, at least one per connection)."""
    if spec is None:
        return None
    from crest.filesets.specweb import specweb99_directories
    from crest.runner.table import specweb99_urls

    dynamic, cgi = specweb99_urls(base_url, spec.dynamic)
    return {
        "base_url": base_url.rstrip("/"), "dynamic_url": dynamic, "cgi_url": cgi,
        "dirs": specweb99_directories(fileset_conns), "users": max(fileset_conns, mix.connections),
        "request_mix": list(spec.request_mix), "class_mix": list(spec.class_mix),
    }  # fmt: skip
