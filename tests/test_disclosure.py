"""The disclosure read on this machine: every field of every section is there, each a fact or a reason why not."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from crest.disclosure import FIELDS, SYSCTLS, disclosure

# It runs systemd-detect-virt, ip and ethtool where they are installed (quick, but subprocesses).
pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


def _is_fact_or_reason(value: Any) -> bool:
    if isinstance(value, dict) and "not_applicable" in value:
        return bool(str(value["not_applicable"]).strip())
    return value not in (None, "", [], {})


def test_every_field_is_a_fact_or_says_why_not(tmp_path: Path) -> None:
    found = disclosure(tmp_path, "127.0.0.1")
    assert set(found) == set(FIELDS)
    for section, names in FIELDS.items():
        assert set(found[section]) >= set(names), section
        for name in names:
            assert _is_fact_or_reason(found[section][name]), (section, name, found[section][name])
    hw, system, docroot = found["hardware"], found["os"], found["docroot"]
    assert hw["logical_cpus"] == os.cpu_count() and hw["cores"] >= 1 and hw["sockets"] >= 1 and hw["numa_nodes"] >= 1
    assert hw["memory_bytes"] > 0 and isinstance(hw["virtualization"]["hypervisor"], bool)
    assert set(system["sysctls"]) == set(SYSCTLS)
    assert all(_is_fact_or_reason(v) for v in system["sysctls"].values())
    assert system["sysctls"]["net.core.somaxconn"] == Path("/proc/sys/net/core/somaxconn").read_text().strip()
    assert (
        system["ulimits"]["nofile"]["soft"] == __import__("resource").getrlimit(__import__("resource").RLIMIT_NOFILE)[0]
    )
    assert system["kernel"] == os.uname().release and system["boot_cmdline"]
    assert docroot["path"] == str(tmp_path.resolve())
    assert (
        str(tmp_path.resolve()).startswith(docroot["mount_point"])
        and docroot["filesystem"]
        and docroot["free_bytes"] > 0
    )


def test_loopback_has_no_nic_and_a_benchmark_address_routes_through_one() -> None:
    loop = disclosure(None, "127.0.0.1")
    assert loop["network"]["interface"] == "lo"
    assert "loopback" in loop["network"]["speed_mbps"]["not_applicable"]
    assert all("not_applicable" in v for v in loop["docroot"].values())
    # A route lookup only (ip route get): no packet leaves. 198.18.0.0/15 is RFC 2544's benchmarking range.
    routed = disclosure(None, "198.18.0.1")["network"]
    assert all(_is_fact_or_reason(routed[name]) for name in FIELDS["network"])
