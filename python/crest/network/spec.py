"""`--network SPEC`: the grammar, the seeds' named beds, and the validated NetworkSpec. Pure: parses
and describes, never touches the machine.

SPEC is comma-separated: a preset name and/or KEY=VALUE settings, later ones overriding earlier ones
(`veritest-4x100,rtt=20ms`). Rates are bits per second (`100mbit`, `1gbit`, `400kbit`), as line
speeds are quoted; times are durations (`50ms`); loss is a percentage (`0.5%`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from crest.errors import ConfigError
from crest.units import parse_duration

MAX_SUBNETS = 30  # 198.18.0.0/15 holds 30 client blocks of /20 beside the target's and the links' (addresses.py)

# The seeds' test beds (docs/networks.md quotes each report's words).
PRESETS: dict[str, dict[str, str]] = {
    # VeriTest: 120 clients on 100 Mbit/s switch ports in 4 (or 8) subnets, each subnet on a gigabit
    # uplink to one of the server's gigabit NICs.
    "veritest-4x100": {"subnets": "4", "client-link": "100mbit", "subnet-link": "1gbit"},
    "veritest-8x100": {"subnets": "8", "client-link": "100mbit", "subnet-link": "1gbit"},
    # Zeus: one client and the server, each on 100 Mbit/s Ethernet: the server's link caps the result.
    "zeus-100mbit": {"subnets": "1", "target-link": "100mbit"},
    # WebCAT (Compaq): clients and server on one shared 10 (or 100) Mbit/s segment; `subnets=2` splits it
    # into the two segments of the report's last configuration.
    "webcat-10mbit": {"subnets": "1", "subnet-link": "10mbit"},
    "webcat-100mbit": {"subnets": "1", "subnet-link": "100mbit"},
    # SPECweb99: each conforming connection is a user on a 400 kbit/s line.
    "specweb99-user": {"subnets": "1", "client-link": "400kbit", "link-per": "connection"},
}

KEYS = ("subnets", "client-link", "subnet-link", "target-link", "rtt", "jitter", "loss", "link-per")
_HELP = "e.g. --network subnets=4,client-link=100mbit,target-link=1gbit or a preset (" + ", ".join(PRESETS) + ")"

_RATE_UNITS = {"bit": 1.0, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "kbps": 1e3, "mbps": 1e6, "gbps": 1e9, "bps": 1.0}


@dataclass(frozen=True)
class NetworkSpec:
    """A client network: `subnets` client subnets, each client's own link (`client_link_bps`, one per
    client or per connection), each subnet's shared link to the router (`subnet_link_bps`), the target's
    link (`target_link_bps`), and the round trip, jitter and loss between the clients and the target."""

    subnets: int = 1
    client_link_bps: float | None = None
    subnet_link_bps: float | None = None
    target_link_bps: float | None = None
    rtt_s: float = 0.0
    jitter_s: float = 0.0
    loss: float = 0.0  # a share in [0, 1): each direction drops this share of its packets
    link_per: str = "client"  # "client": a client's connections share its link; "connection": one each
    preset: str | None = None

    @property
    def delayed(self) -> bool:
        """Whether packets are held or dropped on the way (rtt, jitter or loss), beside any shaping."""
        return self.rtt_s > 0 or self.jitter_s > 0 or self.loss > 0

    def canonical(self) -> str:
        """The spec as settings in a fixed order: what runs are grouped and labelled by."""
        parts = [f"subnets={self.subnets}"]
        for key, bps in (("client-link", self.client_link_bps), ("subnet-link", self.subnet_link_bps),
                         ("target-link", self.target_link_bps)):  # fmt: skip
            if bps is not None:
                parts.append(f"{key}={format_rate(bps)}")
        if self.rtt_s:
            parts.append(f"rtt={self.rtt_s * 1e3:g}ms")
        if self.jitter_s:
            parts.append(f"jitter={self.jitter_s * 1e3:g}ms")
        if self.loss:
            parts.append(f"loss={self.loss * 100:g}%")
        if self.link_per != "client":
            parts.append(f"link-per={self.link_per}")
        return ",".join(parts)

    def label(self) -> str:
        """How a report names it: the preset when that is all it is, else the settings."""
        if self.preset is not None and parse_network(self.preset) == self:
            return self.preset
        return self.canonical()

    def describe(self) -> dict[str, Any]:
        """The settings as stored with a run (bits/s, milliseconds, percent)."""
        return {
            "spec": self.canonical(),
            "preset": self.preset,
            "subnets": self.subnets,
            "clients_per": self.link_per,
            "client_link_bps": self.client_link_bps,
            "subnet_link_bps": self.subnet_link_bps,
            "target_link_bps": self.target_link_bps,
            "rtt_ms": self.rtt_s * 1e3,
            "jitter_ms": self.jitter_s * 1e3,
            "loss_pct": self.loss * 100,
        }


# A level of the network factor (crest run's repeated --network, a design's network) that means no client
# network: the clients reach the target over loopback, so a run compares with and without one.
NO_NETWORK = "none"


def network_level(text: str | None) -> str | None:
    """A --network value or network level as a run takes it: None for `none`."""
    return None if text is None or text.strip() == NO_NETWORK else text


def parse_network(text: str) -> NetworkSpec:
    """The NetworkSpec of `--network TEXT`.

    Raises:
        ConfigError: an unknown preset or key, a bad value, or settings that do not fit together.
    """
    settings: dict[str, str] = {}
    preset = None
    items = [p.strip() for p in text.split(",")]
    if not text.strip() or any(not p for p in items):
        raise ConfigError(f"invalid --network {text!r}: an empty setting; {_HELP}")
    for item in items:
        if "=" not in item:
            if item not in PRESETS:
                raise ConfigError(
                    f"unknown network preset {item!r} in --network {text!r}: use one of {', '.join(PRESETS)}"
                )
            preset = item
            settings.update(PRESETS[item])
            continue
        key, _, value = (s.strip() for s in item.partition("="))
        if key not in KEYS:
            raise ConfigError(f"unknown --network setting {key!r}: use {', '.join(KEYS)}")
        settings[key] = value
    return _build(settings, preset, text)


def _build(s: dict[str, str], preset: str | None, text: str) -> NetworkSpec:
    subnets = _count(s.get("subnets", "1"))
    link_per = s.get("link-per", "client")
    if link_per not in ("client", "connection"):
        raise ConfigError(f"invalid link-per={link_per!r} in --network: use link-per=client or link-per=connection")
    rtt = _time(s, "rtt")
    jitter = _time(s, "jitter")
    if jitter > 0 and jitter > rtt / 2:
        raise ConfigError(
            f"jitter={jitter * 1e3:g}ms is more than half of rtt={rtt * 1e3:g}ms in --network (a packet cannot"
            " arrive before it was sent): lower the jitter or raise the rtt"
        )
    spec = NetworkSpec(
        subnets=subnets,
        client_link_bps=_rate(s, "client-link"),
        subnet_link_bps=_rate(s, "subnet-link"),
        target_link_bps=_rate(s, "target-link"),
        rtt_s=rtt,
        jitter_s=jitter,
        loss=_loss(s.get("loss")),
        link_per=link_per,
        preset=preset,
    )
    if spec.link_per == "connection" and spec.client_link_bps is None:
        raise ConfigError(f"link-per=connection in --network {text!r} needs a client-link=RATE to give each connection")
    return spec


def _count(value: str) -> int:
    if not re.fullmatch(r"[0-9]+", value) or not 1 <= int(value) <= MAX_SUBNETS:
        raise ConfigError(f"invalid subnets={value!r} in --network: give a whole number from 1 to {MAX_SUBNETS}")
    return int(value)


def parse_bit_rate(text: str, *, what: str) -> float:
    """Bits per second from "100mbit", "1gbit", "400kbit", "10Mbps" or a bare number of bits/s.

    Raises:
        ConfigError: not a positive rate in bits, or a rate in bytes.
    """
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z/]*)\s*", text)
    unit = m.group(2).lower().removesuffix("/s") if m else ""
    if unit in ("mb", "kb", "gb", "b", "mbyte", "kbyte", "gbyte") or "byte" in unit:
        raise ConfigError(f"invalid {what}={text!r} in --network: give the line speed in bits, e.g. 100mbit or 400kbit")
    if m is None or (unit and unit not in _RATE_UNITS) or float(m.group(1)) <= 0:
        raise ConfigError(f"invalid {what}={text!r} in --network: give a line speed such as 10mbit, 1gbit or 400kbit")
    bps = float(m.group(1)) * _RATE_UNITS.get(unit, 1.0)
    if bps < 8_000:
        raise ConfigError(
            f"{what}={text!r} in --network is below 8 kbit/s, too slow to carry a packet in time: raise it"
        )
    return bps


def format_rate(bps: float) -> str:
    """A rate as tc and people write it: 100mbit, 1gbit, 400kbit, 1.5mbit."""
    for unit, scale in (("gbit", 1e9), ("mbit", 1e6), ("kbit", 1e3)):
        if bps >= scale:
            return f"{bps / scale:g}{unit}"
    return f"{bps:g}bit"


def _rate(s: dict[str, str], key: str) -> float | None:
    return parse_bit_rate(s[key], what=key) if key in s else None


def _time(s: dict[str, str], key: str) -> float:
    if key not in s:
        return 0.0
    seconds = parse_duration(s[key], what=f"{key} in --network", allow_zero=True)
    if seconds > 10:
        raise ConfigError(f"{key}={s[key]} in --network is over 10 s: give a round trip such as 80ms")
    return seconds


def _loss(value: str | None) -> float:
    if value is None:
        return 0.0
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*%\s*", value)
    if m is None or float(m.group(1)) >= 100:
        raise ConfigError(f"invalid loss={value!r} in --network: give a percentage below 100, e.g. loss=0.5%")
    return float(m.group(1)) / 100
