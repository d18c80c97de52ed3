"""Between mixes and per class: restarting the target, the warm-up pass, and one target per class role.

A restart between mixes starts new server processes (the pids change) and
leaves nothing behind; a warm-up pass requests every table entry once and is
never counted (the server's own access log shows the pass apart from the mix);
per-class targets send each class only to its own server (the servers' kept
access logs show which paths each one served).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from crest.errors import ConfigError
from crest.filesets import build_manifest, generate
from crest.load.runspec import RunSpec
from crest.network import netns
from crest.runner.table import build_table
from crest.runner.warmup import warmup_spec
from crest.servers.base import ServerSettings
from crest.servers.group import settings_by_server
from crest.servers.reap import alive
from crest.servers.registry import adapter
from crest.suite import RequestClass, SuiteError, load_suite, parse_suite
from crest.suite.roles import format_role_map, is_role_map, parse_role_map, role_of, roles_by_class, url_role_map
from support import run_cli

WAIT_S = 120.0


def _suite_data(**ladder: object) -> dict[str, object]:
    return {
        "name": "lab", "description": "d", "source": "s",
        "workload": {"fileset": "sizes", "classes": [
            {"name": "static", "kind": "static", "weight": 80},
            {"name": "dyn", "kind": "fastcgi", "weight": 20},
        ]},
        "ladder": {"clients": [1, 2, 4], **ladder},
        "timing": {"length_s": 2, "ramp_up_s": 0, "ramp_down_s": 0},
    }  # fmt: skip


# -- the suite's words ----------------------------------------------------------------------------


def test_restart_and_warmup_resolve_onto_mixes() -> None:
    every = parse_suite(_suite_data(restart_target=True, warmup="each")).mixes()
    assert [(m.restart_target, m.warmup) for m in every] == [(False, True), (True, True), (True, True)]
    named = parse_suite(_suite_data(restart_target=[4], warmup="first")).mixes()
    assert [(m.restart_target, m.warmup) for m in named] == [(False, True), (False, False), (True, False)]
    plain = parse_suite(_suite_data()).mixes()
    assert not any(m.restart_target or m.warmup for m in plain)


def test_a_restart_at_no_load_point_and_an_unknown_warmup_are_refused() -> None:
    with pytest.raises(
        SuiteError, match=r"restart_target.*matches no load point \(got 3; the load points are 1, 2, 4\)"
    ):
        parse_suite(_suite_data(restart_target=[3]))
    with pytest.raises(SuiteError, match="warmup"):
        parse_suite(_suite_data(warmup="always"))


# -- role maps ------------------------------------------------------------------------------------


def test_role_maps_parse_in_canonical_order_and_refuse_bad_parts() -> None:
    assert is_role_map("static=nginx,dynamic=apache-event") and not is_role_map("nginx,apache-event")
    assert not is_role_map("http://127.0.0.1:8080/?a=b")
    roles = parse_role_map("dynamic=apache-event,static=lighttpd", what="--server", example="e")
    assert list(roles) == ["static", "dynamic"] and format_role_map(roles) == "static=lighttpd,dynamic=apache-event"
    for bad, needle in [
        ("static=a,static=b", "given twice"),
        ("cache=a", "unknown role 'cache'"),
        ("static=", "ROLE=VALUE"),
    ]:
        with pytest.raises(ConfigError, match=needle):
            parse_role_map(bad, what="--server", example="e")


def test_each_class_goes_to_its_roles_target_and_tls_falls_back_to_its_kinds() -> None:
    static = RequestClass(name="s", kind="static", weight=1)
    ssl_static = RequestClass(name="t", kind="static", weight=1, tls=True)
    cgi = RequestClass(name="c", kind="cgi", weight=1)
    pinned = RequestClass(name="p", kind="static", weight=1, target_role="dynamic")
    roles = {"static": "a", "dynamic": "b"}
    assert [role_of(c, roles) for c in (static, ssl_static, cgi, pinned)] == ["static", "static", "dynamic", "dynamic"]
    assert role_of(ssl_static, {**roles, "tls": "c"}) == "tls"
    with pytest.raises(ConfigError, match=r"class 'c' goes to the dynamic target.*add dynamic=\.\.\."):
        role_of(cgi, {"static": "a"})


def test_a_tls_route_sends_every_tls_class_to_its_target_unless_the_map_has_a_tls_one() -> None:
    ssl_static = RequestClass(name="t", kind="static", weight=1, tls=True)
    ssl_cgi = RequestClass(name="u", kind="cgi", weight=1, tls=True)
    pinned = RequestClass(name="p", kind="static", weight=1, tls=True, target_role="static")
    roles = {"static": "a", "dynamic": "b"}
    assert [role_of(c, roles, "dynamic") for c in (ssl_static, ssl_cgi, pinned)] == ["dynamic", "dynamic", "static"]
    assert role_of(ssl_cgi, roles, "static") == "static"
    assert role_of(ssl_static, {**roles, "tls": "c"}, "dynamic") == "tls"
    with pytest.raises(ConfigError, match=r"class 't' goes to the dynamic target \(the suite's \[workload\.tls\] "
                                          r"route = 'dynamic'\).*add dynamic=\.\.\. or tls=\.\.\."):  # fmt: skip
        role_of(ssl_static, {"static": "a"}, "dynamic")


def test_veritests_ssl_goes_to_the_dynamic_server_alone() -> None:
    """VeriTest's TUX served the plain static files and Apache every SSL request: with a role map the
    e-commerce suite's TLS static class goes to the dynamic server's https URL, and only it gets TLS."""
    workload = load_suite("veritest-ecommerce").workload
    assert (workload.tls_settings().route, workload.tls_settings().key) == ("dynamic", "rsa2048")
    servers = {"static": "nginx", "dynamic": "apache-event"}
    by_class = roles_by_class(workload, servers)
    assert by_class == {"static": "static", "cgi": "dynamic", "ssl-static": "dynamic", "ssl-cgi": "dynamic"}
    kinds = {"dynamic": {"cgi"}}
    tls = {by_class[c.name] for c in workload.classes if c.tls}
    base = ServerSettings(docroot=Path("/tmp"), tls=True, tls_key="rsa2048")
    settings = settings_by_server(servers, base, kinds, tls)
    assert (settings["nginx"].tls, settings["apache-event"].tls) == (False, True)
    urls = {"static": ("http://127.0.0.1:1", None), "dynamic": ("http://127.0.0.2:2", "https://127.0.0.2:3")}
    table = build_table(workload, build_manifest("webbench", seed=0), "http://127.0.0.1:1", None, role_urls=urls)
    hosts = {(workload.classes[e["class"]].name, e["url"].split("/")[2]) for e in table.requests}
    assert hosts == {("static", "127.0.0.1:1"), ("cgi", "127.0.0.2:2"), ("ssl-static", "127.0.0.2:3"),
                     ("ssl-cgi", "127.0.0.2:3")}  # fmt: skip


def test_the_request_table_sends_each_class_to_its_roles_url() -> None:
    suite = parse_suite(_suite_data())
    manifest = build_manifest("sizes", seed=0)
    urls = url_role_map({"static": "http://127.0.0.1:1", "dynamic": "http://127.0.0.2:2"}, None)
    table = build_table(suite.workload, manifest, "http://127.0.0.1:1", None, role_urls=urls)
    hosts = {(e["class"], e["url"].split("/")[2]) for e in table.requests}
    assert hosts == {(0, "127.0.0.1:1"), (1, "127.0.0.2:2")}


def test_the_warmup_pass_requests_each_entry_once_without_a_window() -> None:
    spec = RunSpec(url="http://127.0.0.1:1", connections=64, threads=2, requests=tuple({"url": "u"} for _ in range(5)),
                   window_s=(1.0, 9.0), think_time_s=2.0, client_start_delay_s=1.0, rate_rps=10.0)  # fmt: skip
    warm = warmup_spec(spec)
    assert (warm.selection, warm.connections, warm.window_s, warm.think_time_s, warm.rate_rps) == (
        "once",
        5,
        None,
        0.0,
        None,
    )
    assert warm.requests == spec.requests and warm.client_start_delay_s == 0.0


# -- real servers ---------------------------------------------------------------------------------


def _needs(*names: str) -> None:
    for name in names:
        a = adapter(name)
        if not a.installed():
            pytest.skip(f"{a.title} is not installed: {a.install_hint()}")


@pytest.fixture(scope="module")
def fileset() -> Iterator[Path]:
    """The sizes fileset in a directory servers that drop to www-data can read."""
    root = Path(tempfile.mkdtemp(prefix="crest-test-"))
    root.chmod(0o755)
    generate("sizes", root / "fileset")
    yield root / "fileset"
    shutil.rmtree(root, ignore_errors=True)


def _write(tmp_path: Path, data: dict[str, object]) -> Path:
    """The suite as TOML (only the shapes _suite_data makes)."""
    w = data["workload"]
    assert isinstance(w, dict)
    lines = [f'name = "{data["name"]}"', 'description = "d"', 'source = "s"', "[workload]",
             f'fileset = "{w["fileset"]}"', 'http_version = "1.1"', "keepalive = true"]  # fmt: skip
    for c in w["classes"]:
        lines += ["[[workload.classes]]", *(f"{k} = {json.dumps(v)}" for k, v in c.items())]
    lines.append("[ladder]")
    lines += [f"{k} = {json.dumps(v)}" for k, v in data["ladder"].items()]  # type: ignore[attr-defined]
    lines += ["[timing]", "length_s = 2", "ramp_up_s = 0", "ramp_down_s = 0"]
    path = tmp_path / "suite.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _mixes(db: Path) -> list[tuple[int, int, int | None, dict[str, object]]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT idx, requests, access_log_requests, lab_json FROM mixes ORDER BY idx").fetchall()
    return [(i, r, logged, json.loads(lab) if lab else {}) for i, r, logged, lab in rows]


@pytest.mark.integration
@pytest.mark.timeout(240)
def test_restart_starts_new_processes_and_warmup_is_not_counted(tmp_path: Path, fileset: Path) -> None:
    _needs("nginx")
    data = _suite_data(clients=[1, 2], restart_target=True, warmup="each")
    data["workload"]["classes"] = data["workload"]["classes"][:1]  # type: ignore[index]
    db = tmp_path / "r.db"
    out = run_cli("run", str(_write(tmp_path, data)), "--server", "nginx", "--access-log", "--fileset", str(fileset),
                  "--db", str(db), "-q", timeout_s=WAIT_S)  # fmt: skip
    assert out.returncode == 0, out.stderr
    (_, req1, log1, lab1), (_, req2, log2, lab2) = _mixes(db)
    entries = len(build_manifest("sizes", seed=0).files)
    for lab in (lab1, lab2):
        assert lab["warmup"] == {**lab["warmup"], "entries": entries, "requests": entries, "errors": 0}
    # The server logged the pass before the mix's count began: each mix's count is its own requests.
    assert (log1, log2) == (req1, req2) and req1 > 0 and req2 > 0
    assert "restart" not in lab1
    before, after = lab2["restart"]["pids_before"], lab2["restart"]["pids_after"]
    assert before and after and not set(before) & set(after), "the restart started new processes"
    assert not any(alive(p) for p in before + after), "nothing is left after the run"  # a zombie has ended
    assert "warm-up pass of" in run_cli("show", _run_id(db), "--db", str(db)).stdout
    with sqlite3.connect(db) as conn:
        host = json.loads(conn.execute("SELECT host_json FROM runs").fetchone()[0])
    assert host["disclosure"]["docroot"]["path"] == str(fileset.resolve())  # stored with every run
    assert "loopback" in host["disclosure"]["nic"]["not_applicable"]


def _run_id(db: Path) -> str:
    with sqlite3.connect(db) as conn:
        return str(conn.execute("SELECT id FROM runs").fetchone()[0])


def _paths(log: Path) -> set[str]:
    return {m.group(1) for m in re.finditer(r'"GET (\S+) HTTP', log.read_text())}


@pytest.mark.integration
@pytest.mark.timeout(240)
@pytest.mark.parametrize("network", [None, "subnets=2"])
@pytest.mark.netns
def test_servers_side_by_side_serve_only_their_classes(tmp_path: Path, fileset: Path, network: str | None) -> None:
    """A role map on this machine, and from client subnets (both servers in the target namespace)."""
    _needs("nginx", "lighttpd")
    if network is not None and (os.geteuid() != 0 or not netns.has_net_admin()):
        pytest.skip("--network needs root with CAP_NET_ADMIN: run as root")
    db = tmp_path / "r.db"
    data = _suite_data(clients=[2])
    out = run_cli("run", str(_write(tmp_path, data)), "--server", "static=nginx,dynamic=lighttpd", "--access-log",
                  "--fileset", str(fileset), "--db", str(db), "-q", *(["--network", network] if network else []),
                  timeout_s=WAIT_S)  # fmt: skip
    assert out.returncode == 0, out.stderr
    [(_, requests, logged, lab)] = _mixes(db)
    by_role = lab["access_log_requests_by_role"]
    assert isinstance(by_role, dict) and by_role["static"] > 0 and by_role["dynamic"] > 0
    assert logged == requests == by_role["static"] + by_role["dynamic"]
    logs = db.parent / "logs" / _run_id(db)
    nginx_paths, lighttpd_paths = _paths(logs / "nginx" / "access.log"), _paths(logs / "lighttpd" / "access.log")
    assert nginx_paths and all(not p.startswith("/fcgi/") for p in nginx_paths)
    assert lighttpd_paths and all(p.startswith("/fcgi/") for p in lighttpd_paths)
    if network is not None:  # each server saw the subnets' addresses, not this machine's
        for log in (logs / "nginx" / "access.log", logs / "lighttpd" / "access.log"):
            assert all(line.startswith("198.18.") for line in log.read_text().splitlines() if line), log
    with sqlite3.connect(db) as conn:
        config = json.loads(conn.execute("SELECT config_json FROM runs").fetchone()[0])
    assert set(config["server"]["roles"]) == {"static", "dynamic"}


@pytest.mark.integration
@pytest.mark.timeout(120)
def test_role_maps_that_cannot_work_are_refused_before_anything_starts(tmp_path: Path) -> None:
    suite = str(_write(tmp_path, _suite_data(clients=[1])))
    cases = [
        (["--server", "static=nginx"], "class 'dyn' goes to the dynamic target"),
        (["--server", "static=nosuch,dynamic=nginx"], "unknown server 'nosuch'"),
        (["--server", "static=nginx,static=lighttpd"], "given twice"),
        (["--target", "static=http://127.0.0.1:1,bogus=http://127.0.0.1:2"], "unknown role 'bogus'"),
    ]
    for args, needle in cases:
        out = run_cli("run", suite, *args, "--db", str(tmp_path / "r.db"))
        assert out.returncode == 2, (args, out.stderr)
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and needle in lines[0], (args, out.stderr)
    restart = str(_write(tmp_path, _suite_data(clients=[1, 2], restart_target=True)))
    out = run_cli("run", restart, "--target", "http://127.0.0.1:1", "--db", str(tmp_path / "r.db"))
    assert out.returncode == 2 and "restarts its target between mixes" in out.stderr, out.stderr
