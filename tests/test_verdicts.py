"""Typed verdicts: every kind crest can produce has a constructor with a message, and the JSON form round-trips."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from crest import verdicts
from crest.verdicts import KINDS, Verdict

EVERY_CONSTRUCTOR = [
    verdicts.client_bound(99.1, 1),
    verdicts.client_bound_points([2.0, 4.0]),
    verdicts.host_cpu_bound(98.0, 2, 42.0, 56.0),
    verdicts.engine_error('status: 3 × e.g. "503 Service Unavailable"'),
    verdicts.cut_short(),
    verdicts.page_cache_kept("Permission denied"),
    verdicts.cores_shared(2),
    verdicts.peak_only(),
    verdicts.note("an old warning"),
    verdicts.listen_overflow(12, 12),
    verdicts.noisy_host(0.08, 3.5),
    verdicts.cache_cold(5 << 20),
    verdicts.link_bound("target", "down", 0.97, 100e6),
    verdicts.link_bound("clients of subnet 2", "up", 1.01, 400e3, subnet=2, per_client=True),
    verdicts.delay_line_bound(0.97, 812.5, 4096),
    verdicts.delay_line_bound(None, 2048.0),
    verdicts.target_oom(1, 64 << 20, 67_108_864),
    verdicts.target_oom(2, 64 << 20, None),
    verdicts.memory_irrelevant(48 << 20, 256 << 20),
    verdicts.target_idle(8.0, 41.5),
    verdicts.target_idle(8.0, None),
    verdicts.error_rate(0.01, 2, 0.048, 16.0),
    verdicts.not_saturated(60.0),
    verdicts.collapse(0.07),
]
# Only these modules may build a Verdict themselves: the constructors, and the upgrade of old files
# (which keeps each old text as the message of its kind).
_MAY_CONSTRUCT = {"verdicts.py", "migrate.py"}


def test_every_kind_has_a_constructor_with_a_message() -> None:
    assert {v.kind for v in EVERY_CONSTRUCTOR} == set(KINDS)
    for v in EVERY_CONSTRUCTOR:
        assert v.message.strip() and v.message == v.message.strip(), v
        assert all(isinstance(x, (int, float, list)) for x in v.figures.values()), v  # figures are numbers


def test_figures_carry_their_units() -> None:
    assert verdicts.client_bound(99.1, 1).to_json() == {
        "kind": "client_bound",
        "message": "client-bound: the load engine used 99% of its 1 core(s) in the window, so the target may take"
        " more: give the engine more cores (a lower --cpus) or fewer connections",
        "engine_cpu_util_pct": 99.1,
        "engine_cores": 1,
    }


@pytest.mark.parametrize("v", EVERY_CONSTRUCTOR, ids=lambda v: v.kind)
def test_json_round_trip(v: Verdict) -> None:
    assert Verdict.from_json(v.to_json()) == v


def test_a_verdict_needs_a_kind_and_a_message_and_figures_cannot_shadow_them() -> None:
    with pytest.raises(ValueError, match="needs a kind and a message"):
        Verdict("note", "")
    with pytest.raises(ValueError, match="may not be message"):
        Verdict("note", "x", {"message": 1})


def test_no_other_module_words_a_verdict() -> None:
    root = Path(verdicts.__file__).parent
    building = re.compile(r"\bVerdict\(")
    offenders = [
        str(path.relative_to(root))
        for path in root.rglob("*.py")
        if path.name not in _MAY_CONSTRUCT and building.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
