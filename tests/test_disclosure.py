"""The disclosure read from this machine: every field present, each a plausible value or a reason."""

from __future__ import annotations

import shutil
import socket
import ssl
import threading
from pathlib import Path
from typing import Any

import pytest

from crest.host import disclosure
from crest.servers.site import make_certificate
from crest.store.records import missing


def _fields(section: Any) -> list[tuple[str, Any]]:
    return list(section.items()) if isinstance(section, dict) and missing(section) is None else []


def test_the_disclosure_has_every_field_on_this_machine(tmp_path: Path) -> None:
    d = disclosure.collect(tmp_path, "http://127.0.0.1:8080/", None)
    assert tuple(d) == disclosure.SECTIONS
    hw = d["hardware"]
    assert set(hw) == {"cpu_model", "sockets", "cores", "logical_cpus", "numa_nodes", "memory_bytes",
                       "cpu_governor", "virtualization"}  # fmt: skip
    assert isinstance(hw["cpu_model"], str) and hw["cpu_model"]
    assert 1 <= hw["sockets"] <= hw["cores"] <= hw["logical_cpus"]
    assert hw["memory_bytes"] > 64 * 2**20
    assert [n["node"] for n in hw["numa_nodes"]] == sorted(n["node"] for n in hw["numa_nodes"])
    governor = hw["cpu_governor"]
    assert isinstance(governor, str) or missing(governor).startswith("not applicable: no cpufreq")
    assert set(hw["virtualization"]) == {"hypervisor", "machine", "container"}
    assert isinstance(hw["virtualization"]["hypervisor"], bool)
    os_ = d["os"]
    assert Path("/proc/cmdline").read_text().strip() == os_["boot_cmdline"]
    assert os_["kernel"] and os_["distribution"]
    assert set(d["sysctl"]) == set(disclosure.SYSCTLS)
    assert int(d["sysctl"]["net.core.somaxconn"]) > 0
    low, high = (int(p) for p in d["sysctl"]["net.ipv4.ip_local_port_range"].split())
    assert 0 < low < high <= 65535
    assert all(len(d["sysctl"]["net.ipv4." + k].split()) == 3 for k in ("tcp_rmem", "tcp_wmem"))
    assert set(d["ulimits"]) == set(disclosure.ULIMITS)
    soft, hard = d["ulimits"]["nofile"]
    assert hard == "unlimited" or 0 < soft <= hard
    root = d["docroot"]
    assert root["path"] == str(tmp_path.resolve()) and tmp_path.resolve().is_relative_to(root["mount_point"])
    assert root["filesystem"] and root["mount_options"].split(",")[0] in ("rw", "ro") and root["free_bytes"] > 0
    # A loopback target: no NIC carries its traffic; no TLS class: no certificate.
    assert missing(d["nic"]).startswith("not applicable: the target is on loopback")
    assert missing(d["tls"]) == "not applicable: the workload sends no TLS requests"
    for section in d.values():  # every field a value or a reason
        for name, value in _fields(section):
            assert value not in (None, ""), name


def test_a_target_crest_did_not_provision_has_no_docroot_here() -> None:
    d = disclosure.collect(None, "http://localhost/", None)
    assert missing(d["docroot"]).startswith("not applicable: crest did not provision the target")


@pytest.mark.integration  # runs `ip route get` and ethtool
@pytest.mark.timeout(30)
def test_a_routed_target_names_its_interface_or_says_why_not() -> None:
    nic = disclosure.nic("192.0.2.1")  # TEST-NET-1: routed by the default route, if there is one
    if missing(nic) is None:
        assert set(nic) == {"interface", "driver", "speed_mbit_s", "mtu", "offloads"} and nic["interface"] != "lo"
    else:
        assert missing(nic).startswith("unavailable: ")


@pytest.mark.integration
@pytest.mark.timeout(60)
@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl: apt-get install -y openssl")
@pytest.mark.parametrize(("kind", "key_type", "bits"), [("rsa2048", "RSA", 2048), ("ecdsa-p256", "ECDSA", 256)])
def test_the_certificate_key_is_read_from_one_handshake(tmp_path: Path, kind: str, key_type: str, bits: int) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    make_certificate(cert, key, kind)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]

        def serve() -> None:
            conn, _ = listener.accept()
            try:
                with context.wrap_socket(conn, server_side=True) as tls:
                    tls.recv(1)
            except (OSError, ssl.SSLError):
                pass  # the client hangs up after the handshake

        server = threading.Thread(target=serve)
        server.start()
        found = disclosure.certificate(f"https://127.0.0.1:{port}/")
        server.join(timeout=10)
    assert found["key_type"] == key_type and found["key_bits"] == bits
    assert (found["curve"] == "P-256") if kind == "ecdsa-p256" else missing(found["curve"])


def _suite(tls: str) -> str:
    return f"""
name = "t"
description = "d"
source = "s"
[workload]
fileset = "webbench"
{tls}
[[workload.classes]]
name = "static"
kind = "static"
weight = 1
tls = true
[ladder]
clients = [1]
[timing]
length_s = 2
"""


def test_a_suite_chooses_the_tls_key_and_resumption() -> None:
    from crest.suite.loader import parse_toml

    assert parse_toml(_suite("")).workload.tls_settings().key == "ecdsa-p256"
    tls = parse_toml(_suite('[workload.tls]\nkey = "rsa2048"\nresumption = false')).workload.tls_settings()
    assert (tls.key, tls.resumption) == ("rsa2048", False)


def test_rsa1024_is_refused_with_the_reason() -> None:
    from crest.errors import ConfigError
    from crest.suite.loader import parse_toml

    with pytest.raises(ConfigError, match=r"workload\.tls\.key: rsa1024 cannot be measured: .*rustls.* use rsa2048"):
        parse_toml(_suite('[workload.tls]\nkey = "rsa1024"'))
