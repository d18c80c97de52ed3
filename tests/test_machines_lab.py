"""A lab of simulated machines for real (root, CAP_NET_ADMIN, cgroups): each machine answers at its own
address across segments and from the driver, sees its own /tmp and not the driver's, runs in its cgroup
with its CPU share and memory limit, reads its clock offset, drops off its network when its link is cut,
and dies whole with the lab; a killed lab is removed by `crest machines clean`. One lab per test."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from crest.machines import Lab, parse
from crest.machines import lab as lab_module
from crest.machines.lab import STATE_DIR
from crest.network import netns
from crest.servers.reap import alive
from support import wait_until

pytestmark = [
    pytest.mark.skipif(
        os.geteuid() != 0 or not netns.has_net_admin() or shutil.which("ip") is None or shutil.which("tc") is None,
        reason="needs root with CAP_NET_ADMIN and iproute2: run as root; apt-get install -y iproute2",
    ),
    pytest.mark.netns,  # makes namespaces; counts crest's before and after
    pytest.mark.integration,
]

PORT = 8000
WAIT_S = 30.0


def _ours() -> set[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.startswith("crestm-")}


def _python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


@pytest.fixture
def lab() -> Iterator[Lab]:
    """Three machines on two segments, half a core and 256 MiB each, clocks 50 ms apart each way, each
    node serving its own /tmp over HTTP on PORT. One per test (a second of set-up): a lab holds the lab's
    addresses on the host while it lives, and the netns lock that keeps the other modules' labs away is
    held per test."""
    before = _ours()
    built = Lab(parse("3,segments=2,cpus=0.5,memory=256M,skew=50ms"))
    servers: list[subprocess.Popen[bytes]] = []
    try:
        built.create()
        for m in built.machines[1:]:
            servers.append(m.popen([sys.executable, "-m", "http.server", "--bind", m.address, "--directory", "/tmp",
                                    str(PORT)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))  # fmt: skip
        for m in built.machines[1:]:
            wait_until(lambda m=m: _answers(f"http://{m.address}:{PORT}/"), WAIT_S, f"{m.name}'s HTTP server")
        yield built
    finally:
        built.close()
        codes = [server.wait(timeout=10) for server in servers]  # reaped whatever happened
    assert codes == [-signal.SIGKILL] * 3, codes  # they died with the lab
    assert _ours() == before, "the lab left namespaces behind"


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


def test_each_machine_answers_at_its_own_address_across_segments_and_from_the_driver(lab: Lab) -> None:
    node1, node2, node3 = (lab.machine(f"node{i}") for i in (1, 2, 3))
    assert (node1.address, node2.address, node3.address) == ("198.19.241.1", "198.19.242.1", "198.19.241.2")
    assert _answers(f"http://{node2.address}:{PORT}/")  # from the driver, through the control segment
    # node1 to node2 crosses the switch's router between segments; node3 to node1 stays on segment 1. The
    # server on node2 sees node1's own address as the source.
    code = (
        "import socket, sys; s = socket.create_connection((sys.argv[1], int(sys.argv[2])), 5);"
        " print(s.getsockname()[0])"
    )
    for client, server in ((node1, node2), (node3, node1), (lab.machine("control"), node3)):
        done = client.run([*_python(code), server.address, str(PORT)])
        assert done.stdout.strip() == client.address, (client.name, server.name, done.stdout)


def test_a_machine_has_its_own_tmp_and_not_the_drivers(lab: Lab, tmp_path: Path) -> None:
    node1 = lab.machine("node1")
    driver_file = Path("/tmp") / f"crest-test-driver-{os.getpid()}"
    driver_file.write_text("driver")
    try:
        code = "import os, sys; print(os.path.exists(sys.argv[1])); open('/tmp/made-here', 'w').write('node1')"
        assert node1.run([*_python(code), str(driver_file)]).stdout.strip() == "False"
    finally:
        driver_file.unlink()
    assert (node1.tmp / "made-here").read_text() == "node1" and not Path("/tmp/made-here").exists()
    # The other machines see their own /tmp, so node1's file is not served by node2.
    assert _answers(f"http://{node1.address}:{PORT}/made-here")
    assert not _answers(f"http://{lab.machine('node2').address}:{PORT}/made-here")


def test_software_under_tmp_stays_visible_on_a_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """A checkout or venv under /tmp (a clean clone's) is the software every machine runs: bound into the
    machine's own /tmp, while the rest of the driver's /tmp stays out of sight."""
    software = Path(tempfile.mkdtemp(prefix="crest-test-software-"))
    (software / "marker").write_text("installed")
    monkeypatch.setattr(lab_module, "software_under_tmp", lambda: [software])
    try:
        with Lab(parse("1")) as small:
            node1 = small.machine("node1")
            assert node1.run(["cat", str(software / "marker")]).stdout == "installed"
            assert node1.run(["ls", "/tmp"]).stdout.split() == [software.name]
    finally:
        shutil.rmtree(software)


def test_a_machine_runs_in_its_cgroup_with_its_cpu_share_and_memory(lab: Lab) -> None:
    node1 = lab.machine("node1")
    groups = node1.run(["cat", "/proc/self/cgroup"]).stdout
    assert node1.cgroup.track.name in groups, groups
    limits = node1.cgroup.limits
    assert limits is not None and limits.quota_text() == "50000 100000"
    memory = limits.dirs["memory"]
    limit_file = memory / ("memory.max" if limits.version == 2 else "memory.limit_in_bytes")
    assert int(limit_file.read_text()) == 256 << 20
    assert node1.cgroup.pids(), "the node's HTTP server is in its cgroup"


def test_a_machines_clock_reads_its_offset(lab: Lab) -> None:
    code = "import time; from crest.cluster import clock; print(clock.wall() - time.time(), clock.injected_offset_s())"
    for name, offset in (("node1", -0.05), ("node2", 0.0), ("node3", 0.05), ("control", 0.0)):
        measured, injected = map(float, lab.machine(name).run(_python(code)).stdout.split())
        assert injected == offset and abs(measured - offset) < 0.01, (name, measured)


def test_a_machine_whose_link_is_cut_drops_off_the_network_and_comes_back(lab: Lab) -> None:
    node3 = lab.machine("node3")
    url = f"http://{node3.address}:{PORT}/"
    node3.link_down()
    try:
        assert not _answers(url)
    finally:
        node3.link_up()
    wait_until(lambda: _answers(url), WAIT_S, "node3 back on its segment")


def test_a_machines_processes_die_with_the_lab_and_nothing_is_left(lab: Lab) -> None:
    node1 = lab.machine("node1")
    sleeper = node1.popen(["sleep", "300"])
    forked = node1.run(["sh", "-c", "sleep 300 >/dev/null 2>&1 & echo $!"]).stdout.strip()
    state, root, namespaces = lab.state_file, lab.root, set(lab.namespaces)
    assert namespaces <= _ours() and state.exists() and root.is_dir() and alive(int(forked))
    lab.close()
    assert sleeper.wait(timeout=10) == -signal.SIGKILL
    assert not alive(int(forked)), "a process its shell forked outlived the machine"
    assert not namespaces & _ours() and not state.exists() and not root.exists()


def test_a_killed_labs_leftovers_are_removed_by_clean() -> None:
    before = _ours()
    up = subprocess.Popen([sys.executable, "-m", "crest", "machines", "up", "2"], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert up.stdout is not None
        deadline = time.monotonic() + WAIT_S
        line = ""
        while "is up" not in line and time.monotonic() < deadline:
            line = up.stdout.readline()
            assert line or up.poll() is None, up.stderr.read() if up.stderr else ""
        assert "is up" in line, line
        lab_id = line.split()[1]
        left = _ours() - before
        assert left and all(lab_id in name for name in left)
    finally:
        up.kill()
        up.communicate(timeout=10)
    assert (STATE_DIR / f"{lab_id}.json").exists()  # SIGKILL left it all
    cleaned = subprocess.run([sys.executable, "-m", "crest", "machines", "clean"], capture_output=True, text=True,
                             timeout=60, check=False)  # fmt: skip
    assert cleaned.returncode == 0, cleaned.stderr
    assert all(f"removed {name}" in cleaned.stdout for name in left), cleaned.stdout
    assert _ours() == before and not (STATE_DIR / f"{lab_id}.json").exists()
