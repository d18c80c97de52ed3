"""The capacity search on targets whose capacity is known: it finds it exactly for whole loads, within
its precision for rates, confirms its answer, and steps down when a confirmation fails."""

from __future__ import annotations

import random
from typing import Any

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
    from crest.analysis.capacity_search import CapacitySearch, plan, probes_needed
    from crest.analysis.rule import parse_rule
    from crest.capacity.runner import CapacityRequest
    from crest.cli.capacity import search_plan

    # Growth 1, 2, 4, 8 (8 fails), bisection 6 (fails), 5 (passes), then three confirmations at 5.
    assert probes_needed(CapacitySearch(start=1), 5) == 9
    most = plan(CapacitySearch(start=1, max_load=64)).probes
    assert most == max(probes_needed(CapacitySearch(start=1, max_load=64), c) for c in range(0, 65))
    request = CapacityRequest(rule=parse_rule("p99<50ms"), start=1, max_load=64)
    assert search_plan(request, 4.0) == (
        f"crest: capacity search on clients from 1: each probe 4 s of load; at most {most} probes up to --max 64"
        f" (with 3 confirmations): at most {most * 4 // 60} min of load"
    )


def test_without_max_the_plan_states_the_ceiling_the_search_keeps() -> None:
    """The README walk: the plan promised "at most 20 probes ... up to 1024 clients ... up to 1 min of load" and
    the search ran 22 probes up to 4096 clients: without --max the search grew past the plan's ceiling."""
    from crest.analysis.rule import parse_rule
    from crest.capacity.runner import DEFAULT_SPAN, CapacityRequest
    from crest.cli.capacity import search_plan

    request = CapacityRequest(rule=parse_rule("p99<50ms"), start=1)
    search = request.search()
    assert search.max_load == DEFAULT_SPAN == 1024
    while (load := search.next_load()) is not None:  # a target that meets the rule at every load
        search.record(load, True)
    assert max(p.load for p in search.probes) == 1024 and len(search.probes) <= request.plan().probes
    said = search_plan(request, 3.0)
    assert f"at most {request.plan().probes} probes up to 1024 clients (--max; default the start × 1024)" in said


def _settings(rng: random.Random) -> dict[str, Any]:
    integer = rng.random() < 0.7
    start = float(rng.choice([1, 2, 3, 5, 8, 16, 50])) if integer else rng.uniform(1, 500)
    return {
        "start": start, "factor": rng.choice([1.5, 2.0, 3.0, 4.0]), "precision": rng.choice([0.01, 0.05, 0.1, 0.25]),
        "confirm": rng.randint(1, 4), "integer": integer,
        "max_load": start * rng.choice([1, 3, 10, 64, 200, 1024]),
    }  # fmt: skip


def test_the_search_never_exceeds_its_stated_maxima() -> None:
    """A property over a seeded sweep of settings and targets, consistent and noisy: the plan's most probes and
    highest load bound every search; a target whose capacity is a load never makes the search run out of
    probes (the budget only cuts a search a noisy target keeps refuting)."""
    from crest.analysis.capacity_search import CapacitySearch, plan

    rng = random.Random(42)
    for _ in range(400):
        settings = _settings(rng)
        stated = plan(CapacitySearch(**settings))
        assert stated.highest_load <= settings["max_load"]
        capacity = rng.uniform(0, settings["max_load"] * 1.5)
        noise = rng.choice([0.0, 0.0, 0.1, 0.3, 0.5])
        search = CapacitySearch(**settings, max_probes=stated.probes)
        while (load := search.next_load()) is not None:
            passed = load <= capacity
            search.record(load, (not passed) if rng.random() < noise else passed)
        assert len(search.probes) <= stated.probes, settings
        assert max(p.load for p in search.probes) <= stated.highest_load, settings
        if noise == 0.0:
            assert not search.exhausted, settings


def test_a_search_out_of_probes_says_so() -> None:
    from crest.analysis.capacity_search import CapacitySearch

    search = CapacitySearch(start=1, max_load=8, max_probes=5)
    outcomes = iter([True, True, True, True, False])  # 1 2 4 8 pass; the first confirmation of 8 fails
    while (load := search.next_load()) is not None:
        search.record(load, next(outcomes))
    assert search.exhausted and len(search.probes) == 5 and search.answer == 4


def test_a_search_too_fine_to_plan_is_a_one_line_error() -> None:
    from crest.analysis.capacity_search import CapacitySearch, plan

    with pytest.raises(ConfigError, match="give a coarser --precision or a narrower span from --start to --max"):
        plan(CapacitySearch(start=1, max_load=1e5, precision=0.001), limit=1000)
    with pytest.raises(ConfigError, match="without a ceiling"):
        plan(CapacitySearch(start=1))
