"""The capacity search on targets whose capacity is known: it finds it exactly for whole loads, within
its precision for rates, confirms its answer, and steps down when a confirmation fails."""

from __future__ import annotations

import random

import pytest

from crest.analysis.capacity_search import CONFIRM, CapacitySearch
from crest.errors import ConfigError


def search(s: CapacitySearch, meets: object) -> CapacitySearch:
    for _ in range(500):  # bounded: a search that does not end fails the test
        load = s.next_load()
        if load is None:
            return s
        s.record(load, meets(load))  # type: ignore[operator]
    raise AssertionError("the search did not end within 500 probes")


@pytest.mark.parametrize("capacity", [1, 2, 7, 64, 100, 1000, 4095])
@pytest.mark.parametrize("start", [1, 10, 5000])
def test_whole_loads_find_the_capacity_exactly(capacity: int, start: int) -> None:
    s = search(CapacitySearch(start=start, precision=1e-9), lambda load: load <= capacity)
    assert s.answer == capacity
    assert s.confirmations == 3 and [p.load for p in s.probes if p.phase == CONFIRM] == [capacity] * 3
    assert len(s.probes) < 40


@pytest.mark.parametrize("capacity", [3.3, 250.0, 12_345.6])
def test_rates_are_found_within_the_precision(capacity: float) -> None:
    s = search(CapacitySearch(start=10, integer=False, precision=0.02), lambda load: load <= capacity)
    assert s.answer is not None and s.answer <= capacity <= s.answer * 1.02


def test_coarse_precision_stops_early_below_the_capacity() -> None:
    s = search(CapacitySearch(start=1, precision=0.10), lambda load: load <= 1000)
    assert s.answer is not None and s.answer <= 1000 <= s.answer * 1.10


def test_nothing_meets_the_rule() -> None:
    s = search(CapacitySearch(start=8), lambda load: False)
    assert s.answer is None and s.next_load() is None
    assert [p.load for p in s.probes] == [8, 4, 2, 1]


def test_a_rate_that_never_meets_the_rule_gives_up_after_ten_halvings() -> None:
    s = search(CapacitySearch(start=100, integer=False), lambda load: False)
    assert s.answer is None and len(s.probes) == 11 and s.probes[-1].load == pytest.approx(100 / 1024)


def test_the_ceiling_is_the_answer_when_it_passes() -> None:
    s = search(CapacitySearch(start=10, max_load=300), lambda load: True)
    assert s.answer == 300


def test_a_failed_confirmation_moves_the_answer_down() -> None:
    # Passes up to 50, but 50 only on its first probe: a flaky load must not be the answer.
    seen: dict[float, int] = {}

    def meets(load: float) -> bool:
        seen[load] = seen.get(load, 0) + 1
        return load < 50 or (load == 50 and seen[load] == 1)

    s = search(CapacitySearch(start=10, precision=1e-9), meets)
    assert s.answer == 49 and s.confirmations == 3


def test_a_noisy_target_ends_with_a_confirmed_answer() -> None:
    rng = random.Random(7)
    s = search(CapacitySearch(start=4, precision=0.05), lambda load: load <= 200 * (1 + rng.uniform(-0.03, 0.03)))
    assert s.answer is not None and 180 <= s.answer <= 206
    assert [p.passed for p in s.probes[-3:]] == [True, True, True]


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"start": 0}, "starts at a load above 0"),
        ({"start": 1, "factor": 1}, "factor above 1"),
        ({"start": 1, "precision": 0}, "precision above 0"),
        ({"start": 1, "confirm": 0}, "at least once"),
        ({"start": 64, "max_load": 40}, r"at or below its ceiling \(--start 64 > --max 40\)"),
    ],
)
def test_bad_settings(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        CapacitySearch(**kwargs)  # type: ignore[arg-type]


def test_a_probe_out_of_turn_is_refused() -> None:
    s = CapacitySearch(start=10)
    with pytest.raises(ValueError, match="asked for a probe at 10"):
        s.record(20, True)


def test_the_plan_of_a_search_bounds_its_probes_before_it_starts() -> None:
    from crest.analysis.capacity_search import CapacitySearch, probe_range, probes_needed
    from crest.analysis.rule import parse_rule
    from crest.capacity.runner import CapacityRequest
    from crest.cli.capacity import search_plan

    # Growth 1, 2, 4, 8 (8 fails), bisection 6 (fails), 5 (passes), then three confirmations at 5.
    assert probes_needed(CapacitySearch(start=1), 5) == 9
    fewest, most = probe_range(lambda: CapacitySearch(start=1, max_load=64), 64)
    assert fewest >= 1 and most == max(probes_needed(CapacitySearch(start=1, max_load=64), c) for c in range(1, 65))
    request = CapacityRequest(rule=parse_rule("p99<50ms"), start=1, max_load=64)
    assert search_plan(request, 4.0) == (
        f"crest: capacity search on clients from 1: each probe 4 s of load; at most {most} probes up to --max 64"
        f" (with 3 confirmations): up to {most * 4 // 60} min of load"
    )
