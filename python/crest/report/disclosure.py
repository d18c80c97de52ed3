"""The report's Disclosure section: the seeds' disclosure tables (hardware, operating system and tuning,
server software and configuration, clients, TLS) from what each run stored.

Owns turning stored disclosures (RunMeta.host["disclosure"], the run config's server, suite and options,
a published run's import facts, the mixes' TLS facts and naps) into rows of text; computes no statistic and reads nothing but the records.
A row is {"field", "value"} or, where a fact does not apply or was not recorded, {"field", "why"}.
"""

from __future__ import annotations

from typing import Any

from crest.analysis import Configuration
from crest.store import RunDetail
from crest.store.records import missing

_GIB = 2**30


def disclosure_section(configs: list[Configuration]) -> dict[str, Any]:
    """The section: one set of machine tables per distinct machine, then per-configuration tables."""
    machines: dict[str, dict[str, Any]] = {}
    for c in configs:
        for d in c.trials:
            stored = d.meta.host.get("disclosure")
            published = _published(d)
            tables = (
                _published_tables(published)
                if published is not None
                else _machine_tables(d.meta.host, stored if isinstance(stored, dict) else None)
            )
            key = repr(tables)
            machines.setdefault(key, {"tables": tables, "runs": []})["runs"].append(d.id)
    return {
        "machines": list(machines.values()),
        "servers": [_server(c.label, c.trials[0]) for c in configs],
        "clients": [_clients(c.label, c.trials) for c in configs],
        "tls": [t for c in configs if (t := _tls(c.label, c.trials)) is not None],
    }


# Published figures (crest import) were measured by their publication's lab, not by crest: what crest
# would disclose of its own machine, server and engine does not apply to them.
_PUBLISHED = "not applicable: published figures, measured by the publication's own lab; its disclosure applies"


def _published(run: RunDetail) -> dict[str, Any] | None:
    """The stored import facts of a published run (crest.analysis.published); None for a run crest measured."""
    config = run.meta.config if isinstance(run.meta.config, dict) else {}
    published = config.get("published")
    return published if isinstance(published, dict) else None


def _published_tables(published: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"title": "Published figures", "rows": [
        _row("source", f"{published.get('source', '?')} (dataset {published.get('name', '?')}, stored by crest import)"),
        {"field": "the machine", "why": _PUBLISHED},
    ]}]  # fmt: skip


def _row(field: str, value: Any) -> dict[str, str]:
    why = missing(value)
    if why is not None:
        return {"field": field, "why": why}
    if value is None or value == "":
        return {"field": field, "why": "not recorded"}
    return {"field": field, "value": str(value)}


def _machine_tables(host: dict[str, Any], d: dict[str, Any] | None) -> list[dict[str, Any]]:
    if d is None:
        old = "not recorded: the run was made by a crest that stored no disclosure"
        return [{"title": "Hardware", "rows": [_row("CPU", host.get("cpu_model")), _row("logical CPUs", host.get("cpus")),
                                               {"field": "the rest", "why": old}]},
                {"title": "Operating system", "rows": [_row("kernel", host.get("kernel"))]}]  # fmt: skip
    hw, os_ = d.get("hardware", {}), d.get("os", {})
    virt = hw.get("virtualization") or {}
    return [
        {"title": "Hardware", "rows": [
            _row("read on", d.get("read_on")),
            _row("CPU", hw.get("cpu_model")),
            _row("sockets", hw.get("sockets")),
            _row("cores (physical)", hw.get("cores")),
            _row("logical CPUs", hw.get("logical_cpus")),
            _row("NUMA nodes", _numa(hw.get("numa_nodes"))),
            _row("memory", _gib(hw.get("memory_bytes"))),
            _row("CPU frequency governor", hw.get("cpu_governor")),
            _row("hypervisor present", _yes(virt.get("hypervisor"))),
            _row("machine", virt.get("machine")),
            _row("container", virt.get("container")),
        ]},
        {"title": "Operating system", "rows": [
            _row("distribution", os_.get("distribution")),
            _row("kernel", os_.get("kernel")),
            _row("kernel build", os_.get("kernel_build")),
            _row("boot command line", os_.get("boot_cmdline")),
        ]},
        {"title": "Tuning (sysctls, ulimits)", "rows": [
            *(_row(name, value) for name, value in (d.get("sysctl") or {}).items()),
            *(_row(f"ulimit {name} (soft, hard)", _pair(value)) for name, value in (d.get("ulimits") or {}).items()),
        ]},
        {"title": "Docroot filesystem", "rows": _fields(d.get("docroot"), {
            "path": "docroot", "mount_point": "mount point", "filesystem": "filesystem", "source": "device",
            "mount_options": "mount options", "super_options": "filesystem options", "free_bytes": "free"})},
        {"title": "Network interface", "rows": _fields(d.get("nic"), {
            "interface": "interface", "driver": "driver", "speed_mbit_s": "link speed (Mbit/s)", "mtu": "MTU",
            "offloads": "offloads"})},
    ]  # fmt: skip


def _fields(section: Any, names: dict[str, str]) -> list[dict[str, str]]:
    why = missing(section)
    if why is not None or not isinstance(section, dict):
        return [{"field": next(iter(names.values())), "why": why or "not recorded"}]
    rows = []
    for key, label in names.items():
        value = section.get(key)
        if key == "free_bytes" and isinstance(value, int):
            value = _gib(value)
        if isinstance(value, dict) and missing(value) is None:
            value = ", ".join(f"{k} {v}" for k, v in value.items())
        rows.append(_row(label, value))
    return rows


def _server(label: str, run: RunDetail) -> dict[str, Any]:
    if _published(run) is not None:
        return {"configuration": label, "rows": [{"field": "server", "why": _PUBLISHED}], "config_text": None}
    server = run.meta.config.get("server") if isinstance(run.meta.config, dict) else None
    if not isinstance(server, dict):
        return {"configuration": label, "rows": [{"field": "server", "why": "not applicable: an external target"
                                                  " crest did not start (its software is not known here)"}],
                "config_text": None}  # fmt: skip
    options = server.get("options") or {}
    rows = [
        _row("server", server.get("title") or server.get("name")),
        _row("version", server.get("version")),
        _row("workers", server.get("workers")),
        _row("pinned to CPUs", ", ".join(str(c) for c in server.get("cpus") or []) or "not pinned"),
        _row("memory limit", _gib(server["memory_bytes"]) if server.get("memory_bytes") else "none"),
        _row("options", ", ".join(f"{k}={v}" for k, v in options.items()) or "defaults"),
        _row("access log", _yes(server.get("access_log"))),
        _row("configuration SHA-256", server.get("config_sha256")),
    ]
    return {"configuration": label, "rows": rows, "config_text": server.get("config_text")}


def _clients(label: str, trials: list[RunDetail]) -> dict[str, Any]:
    run = trials[0]
    config = run.meta.config if isinstance(run.meta.config, dict) else {}
    workload = (config.get("suite") or {}).get("workload") or {}
    options = config.get("options") or {}
    cpus = config.get("cpus") or {}
    connections = sorted({m.connections for d in trials for m in d.mixes})
    clients = sorted({m.clients for d in trials for m in d.mixes})
    if _published(run) is not None:
        rows = [{"field": "load generator", "why": _PUBLISHED}, _row("clients per mix", _span(clients)),
                _row("connections per mix", _span(connections))]  # fmt: skip
        return {"configuration": label, "rows": rows}
    rows = [
        _row("load generator", f"crest engine {run.meta.host.get('engine_version', '?')}"
             f" (crest {run.meta.host.get('crest_version', '?')})"),
        _row("engine threads", options.get("engine_threads") or "one per engine core"),
        _row("engine pinned to CPUs", ", ".join(str(c) for c in cpus.get("engine") or []) or "not pinned"),
        _waiting(options, trials),
        _preflight(options, trials),
        _row("clients per mix", _span(clients)),
        _row("connections per mix", _span(connections)),
        _row("HTTP version", workload.get("http_version")),
        *([_row(f"HTTP/{workload['http_version']} streams per connection", workload.get("streams", 1))]
          if workload.get("http_version") in ("2", "3") else []),
        _row("keep-alive", _yes(workload.get("keepalive"))),
        _row("read buffer", f"{workload['read_buffer_bytes']:,} bytes" if workload.get("read_buffer_bytes")
             else "64 KiB (the engine's default)"),
    ]  # fmt: skip
    return {
        "configuration": label,
        "rows": rows
        + _replay_rows(config, workload)
        + _har_rows(config, workload)
        + _network_rows((run.meta.host.get("disclosure") or {}).get("network")),
    }


def _replay_rows(config: dict[str, Any], workload: dict[str, Any]) -> list[dict[str, str]]:
    """An access log's replay: the log, how it was read and sent, what the reader counted, and what a log
    cannot say (the clients' table's rows, after the HTTP settings)."""
    replay = workload.get("replay")
    if not isinstance(replay, dict):
        return []
    stored = config.get("replay")
    facts: dict[str, Any] = stored if isinstance(stored, dict) else {}
    speed = f", {replay.get('speed', 1):g}x" if replay.get("mode") != "mix" else ""
    rows = [
        _row("replayed log", replay.get("log")),
        _row("log format", facts.get("format") or replay.get("format")),
        _row("replay mode", f"{replay.get('mode')}{speed}"),
    ]
    counts = ("lines", "log lines"), ("requests", "logged requests"), ("skipped", "requests skipped (unreplayable)"), \
        ("distinct", "distinct requests"), ("sessions", "sessions")  # fmt: skip
    for key, field in counts:
        value = facts.get(key)
        rows.append(_row(field, f"{value:,}" if isinstance(value, int) else value))
    rows.append(_row("dynamic requests", facts.get("dynamic_requests")))
    if replay.get("hash"):
        rows.append(_row("stored", "query strings and client addresses hashed"))
    for said in facts.get("cannot_say") or []:
        rows.append(_row("not in the log", said))
    return rows


def _har_rows(config: dict[str, Any], workload: dict[str, Any]) -> list[dict[str, str]]:
    """A HAR's page loads: the recording, how a client loads it, what was counted and what a HAR replay
    does not do (the clients' table's rows, after the HTTP settings)."""
    har = workload.get("har")
    if not isinstance(har, dict):
        return []
    stored = config.get("har")
    facts: dict[str, Any] = stored if isinstance(stored, dict) else {}
    per_client = ("one connection" if workload.get("http_version") == "2"
                  else f"{har.get('connections', 6)} connections")  # fmt: skip
    rows = [
        _row("replayed HAR", har.get("file")),
        _row("recorded by", facts.get("creator") or None),
        _row("page loads", f"each client loads the pages in turn over {per_client}: the document, then the"
             f" rest as connections come free; {har.get('think_s', 0):g} s think time after each page"),
    ]  # fmt: skip
    for key, field in (("pages", "recorded pages"), ("requests", "recorded requests"), ("hosts", "recorded hosts")):
        value = facts.get(key)
        rows.append(_row(field, f"{value:,}" if isinstance(value, int) else value))
    loads = facts.get("recorded_on_load_ms")
    if isinstance(loads, dict) and loads:
        # The browser's own figure (rendering and scripts included), beside which the replay's load time reads.
        text = ", ".join(f"{name} {ms:,.1f} ms" if isinstance(ms, (int, float)) else f"{name} not recorded"
                         for name, ms in loads.items())  # fmt: skip
        rows.append(_row("recorded load time (onLoad)", text))
    for said in facts.get("does_not") or []:
        rows.append(_row("a HAR replay does not", said))
    return rows


def _waiting(options: dict[str, Any], trials: list[RunDetail]) -> dict[str, str]:
    """How the engine waited for its sockets: a napping engine costs the target fewer wake-ups (docs/bench.md)."""
    field = "engine waiting"
    if options.get("nap") is False:
        return _row(field, "always blocked on its sockets (--no-nap)")
    naps = [m.naps for d in trials for m in d.mixes if m.naps is not None]
    if not naps:
        return {"field": field, "why": "not recorded: stored by a crest that did not count naps (its engine blocked)"}
    if sum(naps) == 0:
        return _row(field, "blocked on its sockets (no load called for a nap)")
    return _row(
        field,
        f"napped under load instead of blocking: {sum(naps):,} naps in {len(naps)} mixes"
        f" (each at most 1/50 of the last 100 ms's 5th-percentile latency)",
    )


def _preflight(options: dict[str, Any], trials: list[RunDetail]) -> dict[str, str]:
    """The requests crest sent before the load (the preflight's GET per origin), which the target saw too."""
    sent = sum(int((m.lab or {}).get("preflight_requests") or 0) for d in trials for m in d.mixes)
    if sent:
        return _row("preflight requests", f"{sent} before the first mix, outside every window")
    if options.get("answer_check") is False:
        return _row("preflight requests", "none (--no-preflight)")
    return _row("preflight requests", "none")


def _network_rows(net: Any) -> list[dict[str, str]]:
    """The client network the run's clients sent through (--network), as the clients' table's last rows."""
    if not isinstance(net, dict) or "spec" not in net:
        return [_row("client network", net if missing(net) else "loopback (no --network)")]

    def rate(bps: Any) -> str:
        return "unshaped" if not bps else (f"{bps / 1e9:g} Gbit/s" if bps >= 1e9 else f"{bps / 1e6:g} Mbit/s")

    return [
        _row("client network", net.get("preset") or net.get("spec")),
        _row("subnets", f"{net.get('subnets')}: {', '.join(net.get('subnet_ranges') or [])}"),
        _row(f"each {net.get('clients_per', 'client')}'s line", rate(net.get("client_link_bps"))),
        _row("each subnet's uplink", rate(net.get("subnet_link_bps"))),
        _row("target's link", rate(net.get("target_link_bps"))),
        _row("round trip, jitter, loss", f"{net.get('rtt_ms', 0):g} ms, ± {net.get('jitter_ms', 0):g} ms,"
             f" {net.get('loss_pct', 0):g}% each way ({net.get('delay_by')})"),
        _row("target", f"{net.get('target_address')} in namespace {net.get('target_namespace')}"),
    ]  # fmt: skip


def _tls(label: str, trials: list[RunDetail]) -> dict[str, Any] | None:
    """The TLS table of a configuration whose mixes made handshakes; None when none did."""
    handshakes = resumed = 0
    pairs: dict[tuple[str, str], int] = {}
    for d in trials:
        for m in d.mixes:
            if m.tls:
                handshakes += int(m.tls.get("handshakes", 0))
                resumed += int(m.tls.get("resumed", 0))
                for n in m.tls.get("negotiated", []):
                    key = (str(n["protocol"]), str(n["cipher"]))
                    pairs[key] = pairs.get(key, 0) + int(n["handshakes"])
    if not handshakes:
        return None
    run = trials[0]
    config = run.meta.config if isinstance(run.meta.config, dict) else {}
    settings = ((config.get("suite") or {}).get("workload") or {}).get("tls") or {}
    disclosure = run.meta.host.get("disclosure")
    cert = disclosure.get("tls") if isinstance(disclosure, dict) else None
    rows = []
    for (protocol, cipher), n in sorted(pairs.items(), key=lambda kv: -kv[1]):
        rows.append(_row("negotiated", f"{protocol} {cipher} ({n / handshakes:.0%} of handshakes)"))
    if not pairs:
        rows.append({"field": "negotiated", "why": "not recorded: the run was made by an older crest"})
    if isinstance(cert, dict) and missing(cert) is None:
        rows += [_row("key type", cert.get("key_type")), _row("key size (bits)", cert.get("key_bits")),
                 _row("curve", cert.get("curve")), _row("certificate signature", cert.get("signature"))]  # fmt: skip
    else:
        rows.append({"field": "certificate", "why": missing(cert) or "not recorded"})
    rows += [
        _row("session resumption offered", _yes(settings.get("resumption", True))),
        _row("handshakes resumed", f"{resumed:,} of {handshakes:,} ({resumed / handshakes:.0%})"),
    ]
    routed = _tls_route(config, str(settings.get("route", "kind")))
    if routed is not None:
        rows.append(_row("TLS classes served by", routed))
    return {"configuration": label, "rows": rows}


def _tls_route(config: dict[str, Any], route: str) -> str | None:
    """Which target of a role map served the TLS classes (the suite's [workload.tls] route); None without one."""
    server = config.get("server")
    started = server.get("roles") if isinstance(server, dict) else None
    options = config.get("options") or {}
    given = options.get("role_targets")
    roles: dict[str, str] = {}
    if isinstance(started, dict):
        roles = {r: str(m.get("name")) for r, m in started.items() if isinstance(m, dict)}
    elif isinstance(given, dict) and given:
        roles = {r: str(u) for r, u in given.items()}
        if options.get("tls_target"):
            roles.setdefault("tls", str(options["tls_target"]))
    if not roles:
        return None
    if "tls" in roles:
        return f"the tls target ({roles['tls']})"
    if route == "kind":
        return "each class's kind's target over TLS (static files: the static target, the rest: the dynamic one)"
    return f"the {route} target ({roles.get(route, '?')}), as the suite's route = {route!r} says"


def _numa(nodes: Any) -> Any:
    if not isinstance(nodes, list):
        return nodes
    return "; ".join(f"node {n['node']}: CPUs {n['cpus']}" + (f", {_gib(n['memory_bytes'])}" if n.get("memory_bytes")
                     else "") for n in nodes)  # fmt: skip


def _gib(n: Any) -> Any:
    return f"{n / _GIB:,.1f} GiB" if isinstance(n, (int, float)) and not isinstance(n, bool) else n


def _yes(flag: Any) -> Any:
    return ("yes" if flag else "no") if isinstance(flag, bool) else flag


def _pair(value: Any) -> Any:
    return ", ".join(str(v) for v in value) if isinstance(value, list) else value


def _span(values: list[int]) -> str:
    if not values:
        return "none"
    return f"{values[0]:,}" if len(values) == 1 else f"{values[0]:,} to {values[-1]:,}"
