"""Client networks for real (root, CAP_NET_ADMIN): a shaped line caps a bulk transfer, the round trip
is added to a short connection, loss shows as retransmits, the target sees each subnet's addresses,
every client of every subnet progresses, and nothing crest made outlives a run, Ctrl-C or a kill."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from importlib.resources import files
from ipaddress import IPv4Address
from pathlib import Path

import jsonschema
import pytest

from crest.filesets import generate
from crest.network import addresses, netns
from crest.servers.registry import adapter
from support import default_sigint, load_running, run_cli, wait_until

pytestmark = [
    pytest.mark.skipif(
        os.geteuid() != 0 or not netns.has_net_admin() or shutil.which("tc") is None or shutil.which("ip") is None,
        reason="needs root with CAP_NET_ADMIN and iproute2: run as root; apt-get install -y iproute2",
    ),
    pytest.mark.netns,  # each test counts every crest namespace and delay line on the machine, before and after
]

WAIT_S = 200.0
BULK_BYTES = 4 << 20


def _ours() -> set[str]:
    """crest's namespaces on this machine now."""
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.startswith("crest-")}


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    """The built-in target on all addresses of this namespace (a URL target stays here), with a bulk file."""
    root = Path(tempfile.mkdtemp(prefix="crest-test-net-"))
    (root / "bulk.bin").write_bytes(os.urandom(BULK_BYTES))
    (root / "small.txt").write_bytes(b"x" * 100)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "crest", "serve", "--host", "0.0.0.0", "--port", str(port),
                             "--docroot", str(root)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert time.monotonic() < deadline and proc.poll() is None, "crest serve did not start"
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        shutil.rmtree(root, ignore_errors=True)


def _bench(*args: str) -> dict[str, object]:
    out = run_cli("bench", "--json", *args, timeout_s=WAIT_S)
    assert out.returncode == 0, out.stderr
    report: dict[str, object] = json.loads(out.stdout)
    return report


def _link(report: dict[str, object], name: str, direction: str) -> dict[str, object]:
    network = report["network"]
    assert isinstance(network, dict)
    return next(x for x in network["links"] if x["link"] == name and x["direction"] == direction)


@pytest.mark.integration
@pytest.mark.timeout(120)
def test_a_10mbit_client_line_caps_a_bulk_transfer(served: str) -> None:
    before = _ours()
    report = _bench("--network", "client-link=10mbit", "-c", "1", "-d", "6s", f"{served}/bulk.bin")
    jsonschema.validate(report, json.loads(files("crest").joinpath("schemas/bench.schema.json").read_text()))
    line = _link(report, "clients of subnet 1", "down")
    assert line["rate_bps"] == 10e6
    assert 0.95 <= float(line["utilisation"]) <= 1.05  # type: ignore[arg-type]
    goodput_bps = float(report["throughput_Bps"]) * 8  # type: ignore[arg-type]
    # What a 10 Mbit/s line leaves for payload (1448 of each 1514-byte frame) up to the line itself.
    assert 10e6 * 0.95 * 1448 / 1514 <= goodput_bps <= 10e6 * 1.05
    assert _ours() == before, "nothing is left after the run"


@pytest.mark.integration
@pytest.mark.timeout(120)
def test_every_client_of_every_subnet_progresses(served: str) -> None:
    report = _bench("--network", "subnets=3", "-c", "9", "-t", "3", "-d", "2s", f"{served}/small.txt")
    shares = report["subnets"]["shares"]  # type: ignore[index]
    assert [s["clients"] for s in shares] == [3, 3, 3] and all(s["requests"] > 0 for s in shares)
    clients = report["clients"]
    assert isinstance(clients, list) and len(clients) == 9 and all(c["requests"] > 0 for c in clients)


@pytest.mark.integration
@pytest.mark.timeout(120)
def test_round_trip_is_added_to_a_short_connection(served: str) -> None:
    url = f"{served}/small.txt"
    near = _bench("--http", "1.0", "-c", "1", "-d", "2s", url)
    far = _bench("--network", "rtt=50ms", "--http", "1.0", "-c", "1", "-d", "3s", url)

    def exchange_us(r: dict[str, object]) -> float:  # a 1-request connection: its connect, then its request
        return float(r["connect_us"]["p50"]) + float(r["latency_us"]["p50"])  # type: ignore[index]

    added_ms = (exchange_us(far) - exchange_us(near)) / 1e3
    assert added_ms >= 100, added_ms  # SYN/SYN-ACK, then request/response: two round trips
    assert added_ms < 100 + 60, added_ms  # and not much more: nothing else waits
    assert far["network"]["delay_line"]["packets"] > 0  # type: ignore[index]


@pytest.mark.integration
@pytest.mark.timeout(120)
def test_loss_shows_as_retransmits(served: str) -> None:
    report = _bench("--network", "loss=3%", "-c", "2", "-d", "3s", f"{served}/bulk.bin")
    network = report["network"]
    assert isinstance(network, dict)
    assert network["delay_line"]["dropped"] > 0
    assert network["tcp"]["target"]["retrans_segs"] > 0  # the server's TCP resent what the line lost


def _suite(tmp_path: Path) -> Path:
    path = tmp_path / "suite.toml"
    path.write_text("\n".join([
        'name = "net"', 'description = "d"', 'source = "s"', "[workload]", 'fileset = "sizes"',
        'http_version = "1.1"', "keepalive = true", "[[workload.classes]]", 'name = "static"', 'kind = "static"',
        "weight = 1", "[ladder]", "clients = [4]", "[timing]", "length_s = 5", "ramp_up_s = 1", "ramp_down_s = 0",
    ]) + "\n")  # fmt: skip
    return path


@pytest.mark.integration
@pytest.mark.timeout(240)
def test_a_started_server_sees_each_subnets_addresses_and_its_link_bound(tmp_path: Path) -> None:
    nginx = adapter("nginx")
    if not nginx.installed():
        pytest.skip(f"{nginx.title} is not installed: {nginx.install_hint()}")
    files = Path(tempfile.mkdtemp(prefix="crest-test-"))
    try:
        files.chmod(0o755)
        generate("sizes", files / "fs")
        db = tmp_path / "n.db"
        before = _ours()
        frames = tmp_path / "frames.jsonl"
        out = run_cli("run", str(_suite(tmp_path)), "--server", "nginx", "--access-log", "--fileset", str(files / "fs"),
                      "--network", "subnets=2,target-link=20mbit", "--db", str(db), "-q", "--jsonl", str(frames),
                      timeout_s=WAIT_S)  # fmt: skip
        assert out.returncode == 0, out.stderr
        assert _ours() == before, "nothing is left after the run"
    finally:
        shutil.rmtree(files, ignore_errors=True)
    with sqlite3.connect(db) as conn:
        run_id, host = conn.execute("SELECT id, host_json FROM runs").fetchone()
        network_json, verdicts_json = conn.execute("SELECT network_json, verdicts_json FROM mixes").fetchone()
    logs = list((db.parent / "logs" / run_id).rglob("access*.log"))
    seen = {m.group(1) for log in logs for m in re.finditer(r"^(\S+) ", log.read_text(), re.M)}
    assert seen and all(IPv4Address(ip) in addresses.RANGE for ip in seen)
    subnets_seen = {k for k in (1, 2) for ip in seen if _in_block(ip, k)}
    assert subnets_seen == {1, 2}, seen
    figures = json.loads(network_json)
    down = next(x for x in figures["links"] if x["link"] == "target" and x["direction"] == "down")
    assert down["rate_bps"] == 20e6 and down["utilisation"] >= 0.9
    # A watcher (--jsonl) saw the target's link fill second by second.
    live = [link for line in frames.read_text().splitlines() for link in json.loads(line).get("links", [])]
    assert any(x["link"] == "target" and x["direction"] == "down" and x["utilisation"] >= 0.9 for x in live), live
    assert any(
        v["kind"] == "link_bound" and v["subnet"] == 0 and v["downstream"] == 1 for v in json.loads(verdicts_json)
    )
    shown = run_cli("show", run_id, "--db", str(db)).stdout
    assert "client network:" in shown and "target down 20.00" in " ".join(shown.split())
    page = run_cli("report", run_id, "--db", str(db)).stdout.strip().splitlines()[-1]
    html = Path(page).read_text()
    assert 'id="chart-net-util-0"' in html and "subnet-link" not in html and "198.18.16.0/20" in html
    disclosed = json.loads(host)["disclosure"]["network"]
    assert disclosed["target_link_bps"] == 20e6 and disclosed["target_namespace"].startswith("crest-")


def _in_block(ip: str, k: int) -> bool:
    return IPv4Address(ip) in addresses.block(k)


def _start_bench(url: str, frames: Path, *spec: str) -> subprocess.Popen[bytes]:
    # Nothing is read from it: its output goes nowhere, so no pipe is left open for the collector. Its live
    # frames (--jsonl) say when its load runs.
    return subprocess.Popen([sys.executable, "-m", "crest", "bench", "-q", "-c", "2", "-d", "60s", "--jsonl",
                             str(frames), *spec, url],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            preexec_fn=default_sigint)  # fmt: skip


def _wait_for_load(before: set[str], proc: subprocess.Popen[bytes], frames: Path) -> set[str]:
    """The namespaces the bench made, once its load is running through them (a live sample with requests
    answered: the router, the subnets and the relay are all up)."""
    wait_until(lambda: proc.poll() is not None or load_running(frames), 30, "the bench's load over its network")
    assert proc.poll() is None, f"the bench ended: {proc.returncode}"
    made = _ours() - before
    assert len(made) >= 3, made  # router and subnets
    return made


@pytest.mark.integration
@pytest.mark.timeout(180)
def test_nothing_is_left_after_ctrl_c_or_after_a_kill_and_the_next_run(served: str, tmp_path: Path) -> None:
    url = f"{served}/small.txt"
    before = _ours()
    proc = _start_bench(url, tmp_path / "first.jsonl", "--network", "subnets=2,rtt=2ms")
    _wait_for_load(before, proc, tmp_path / "first.jsonl")
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 130
    assert _ours() == before, "Ctrl-C removes the network"

    proc = _start_bench(url, tmp_path / "second.jsonl", "--network", "subnets=2,rtt=2ms")
    made = _wait_for_load(before, proc, tmp_path / "second.jsonl")
    proc.kill()
    proc.wait(timeout=30)
    assert made <= _ours(), "a killed run cannot clean up"
    _bench("--network", "subnets=1", "-c", "1", "-d", "1s", url)  # the next run removes the dead run's leftovers
    assert _ours() == before
    assert not _running("crest-delayline"), "the killed run's delay line died with it"


def _running(name: str) -> list[int]:
    """Processes whose command line names `name`, zombies left out: an orphan is reparented to PID 1, and
    a PID 1 that does not reap (a CI container's) keeps it listed, though it holds nothing."""
    pids = subprocess.run(["pgrep", "-f", name], capture_output=True, text=True).stdout.split()
    alive = []
    for pid in map(int, pids):
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
                if f.read().rsplit(")", 1)[1].split()[0] != "Z":
                    alive.append(pid)
        except OSError:
            pass
    return alive


@pytest.mark.integration
@pytest.mark.timeout(60)
def test_without_cap_net_admin_one_line_and_nothing_made(served: str) -> None:
    if shutil.which("capsh") is None:
        pytest.skip("capsh is not installed: apt-get install -y libcap2-bin")
    before = _ours()
    cmd = f"{sys.executable} -m crest bench --network subnets=2 -d 1s {served}/small.txt"
    out = subprocess.run(["capsh", "--drop=cap_net_admin", "--", "-c", cmd], capture_output=True, text=True,
                         timeout=60, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})  # fmt: skip
    assert out.returncode == 2, out.stderr
    assert out.stderr.count("\n") == 1 and "CAP_NET_ADMIN" in out.stderr and "Traceback" not in out.stderr
    assert _ours() == before


@pytest.mark.integration
@pytest.mark.timeout(120)
def test_smb_clients_reach_samba_over_the_subnets_and_their_delay(tmp_path: Path) -> None:
    """A file ladder over a client network: Samba in the target namespace, one client per subnet bound to its
    line's address, every operation through the 10 ms round trip, both subnets' links carrying the traffic."""
    from test_fileops import LOADFILE, SUITE

    samba = adapter("samba")
    if not samba.installed():
        pytest.skip(f"{samba.title} is not installed: {samba.install_hint()}")
    loadfile = tmp_path / "tiny.txt"
    loadfile.write_text(LOADFILE)
    suite = tmp_path / "tiny.toml"
    suite.write_text(SUITE.format(loadfile=loadfile).replace("clients = [1, 3]", "clients = [2]"))
    db = tmp_path / "n.db"
    before = _ours()
    out = run_cli("run", str(suite), "--server", "samba", "--network", "subnets=2,rtt=10ms", "--db", str(db), "-q",
                  timeout_s=WAIT_S)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert _ours() == before, "nothing is left after the run"
    with sqlite3.connect(db) as conn:
        errors_json, latency_json, network_json = conn.execute(
            "SELECT errors_json, latency_us_json, network_json FROM mixes"
        ).fetchone()
    assert not any(json.loads(errors_json).values()), errors_json
    assert json.loads(latency_json)["p50"] >= 10_000  # each operation is a round trip through the delay line
    down = {x["link"]: x["bytes"] for x in json.loads(network_json)["links"] if x["direction"] == "down"}
    assert down["subnet 1"] > 0 and down["subnet 2"] > 0, down


@pytest.mark.integration
@pytest.mark.timeout(120)
def test_http3_crosses_the_delay_line(tmp_path: Path) -> None:
    """QUIC is UDP: its datagrams go through the subnets' links and the delay line like TCP's segments."""
    (tmp_path / "small.txt").write_bytes(b"x" * 100)
    with socket.socket() as a, socket.socket() as b:
        a.bind(("127.0.0.1", 0))
        b.bind(("127.0.0.1", 0))
        port, tls_port = a.getsockname()[1], b.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "crest", "serve", "--host", "0.0.0.0", "--port", str(port),
                             "--tls-port", str(tls_port), "--http3", "--docroot", str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)  # fmt: skip
    try:
        assert proc.stdout is not None
        urls = [proc.stdout.readline().strip() for _ in range(2)]
        assert urls[1].startswith("https://"), urls
        report = _bench("--http", "3", "--insecure", "--network", "subnets=1,rtt=10ms", "-c", "2", "-d", "2s",
                        f"https://127.0.0.1:{tls_port}/small.txt")  # fmt: skip
    finally:
        proc.terminate()
        proc.communicate(timeout=10)
    assert report["requests"] and not any(report["errors"].values())  # type: ignore[union-attr]
    assert report["latency_us"]["p50"] >= 10_000  # type: ignore[index]
    assert _link(report, "subnet 1", "down")["bytes"]


@pytest.mark.integration
@pytest.mark.timeout(120)
def test_a_server_on_loopback_only_is_reached_through_the_forward(tmp_path: Path) -> None:
    """The usual local server listens on 127.0.0.1: the network forwards its target address to it
    (nftables DNAT on the target link, route_localnet), for crest bench and crest run alike, and the
    forward goes with the network."""
    if shutil.which("nft") is None:
        pytest.skip("nftables is not installed: apt-get install -y nftables")
    generate("sizes", tmp_path / "fs")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "crest", "serve", "--port", str(port), "--docroot",
                             str(tmp_path / "fs")], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)  # fmt: skip
    before = _ours()
    try:
        assert proc.stdout is not None and proc.stdout.readline().startswith("http://127.0.0.1:")
        report = _bench("--network", "subnets=2", "-c", "2", "-d", "1s", f"http://127.0.0.1:{port}/sizes/1000.html")
        db = tmp_path / "n.db"
        out = run_cli("run", str(_suite(tmp_path)), "--target", f"http://127.0.0.1:{port}", "--fileset",
                      str(tmp_path / "fs"), "--network", "subnets=2", "--db", str(db), "-q", timeout_s=WAIT_S)  # fmt: skip
    finally:
        proc.terminate()
        proc.communicate(timeout=10)
    assert report["requests"] and not any(report["errors"].values())  # type: ignore[union-attr]
    assert out.returncode == 0, out.stderr
    with sqlite3.connect(db) as conn:
        assert all(r > 0 for (r,) in conn.execute("SELECT requests FROM mixes"))
    assert _ours() == before
    tables = subprocess.run(["nft", "list", "tables"], capture_output=True, text=True, check=True).stdout
    assert "crest-" not in tables, "the forward goes with its network"


@pytest.mark.integration
@pytest.mark.timeout(120)
def test_a_capacity_search_probes_from_the_subnets(served: str, tmp_path: Path) -> None:
    """crest capacity takes --network like crest run: every probe is a mix sent from the subnets."""
    db = tmp_path / "c.db"
    out = run_cli("capacity", f"{served}/small.txt", "--rule", "errors<1%", "--max", "2", "--confirm", "1",
                  "--length", "2s", "--network", "subnets=2", "--db", str(db), "-q", timeout_s=WAIT_S)  # fmt: skip
    assert out.returncode == 0, out.stderr
    with sqlite3.connect(db) as conn:
        probes = conn.execute("SELECT connections, requests, network_json FROM mixes ORDER BY idx").fetchall()
    assert [p[0] for p in probes] == [1, 2, 2] and all(p[1] > 0 for p in probes)
    assert all(any(x["link"] == "subnet 1" for x in json.loads(p[2])["links"]) for p in probes)
