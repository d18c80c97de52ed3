"""Suite files fuzzed: the built-in suites' TOML mutated as text, and their parsed tables with values
replaced, keys dropped and keys added; the loader must return a suite or raise ConfigError (one
message, never another exception), and a suite it returns must give its mixes for every profile.

Seeded, so a failure repeats; CREST_FUZZ_CASES (default 300) sets the cases of each kind, and
`make fuzz` runs many more. The counterpart of the engine's fuzz targets (crates/engine/tests/fuzz_*.rs).
"""

from __future__ import annotations

import copy
import datetime
import importlib.resources
import os
import random
from collections.abc import Callable
from typing import Any

import pytest

from crest.errors import ConfigError
from crest.suite import PROFILES, Suite, builtin_names, parse_suite, parse_toml
from crest.suite.loader import tomllib

CASES = int(os.environ.get("CREST_FUZZ_CASES", "300"))
# Some 5,000 cases a second: the default run takes a fraction of one.
TIMEOUT_S = max(60, CASES // 500)

SEEDS = [
    importlib.resources.files("crest.suite").joinpath("builtin", f"{name}.toml").read_text(encoding="utf-8")
    for name in builtin_names()
]

# What text mutations insert: TOML syntax, numbers at and past the edges, keys the models know.
TOKENS = [
    "=", "[", "]", "[[", "]]", '"', "'", '"""', "\n", "#", ",", ".", "{", "}", " ", "\\", "\\u0000", "\x00", "é",
    '"""a\nb"""', "0", "-1", "1", "60", "0.0", "-0.5", "1e999", "inf", "-inf", "nan", "true", "false", "1_000", "0x10",
    "9223372036854775808", "100000000000000000000", "1979-05-27T07:32:00Z", "[]", "{}", "[1, 2]", '"fileset"',
    "\n[ladder]\n", "\n[[workload.classes]]\n", "\n[timing]\n", "\n[workload]\n", "clients = [1, 1000000000000]\n",
    "stop = ", "start = ", "step = ", "weight = ", "kind = ", "sizes = ", "length_s = ", "threads_per_client = ",
]  # fmt: skip

# What table mutations put in place of a value: every TOML type, and numbers at and past the edges.
VALUES: list[Any] = [
    0, -1, 1, 2, 60, 2**31, 2**63, 10**30, 0.5, -0.0, 1e300, float("inf"), float("-inf"), float("nan"),
    "", "x", "a\nb", "\t\x1b[31m", "fileset", "1.0", "static", True, False, [], [1, 2], [4, 1], [10**30], ["a"], {}, {"a": 1},
    datetime.datetime(1979, 5, 27, 7, 32), datetime.date(2026, 1, 1),
]  # fmt: skip


def mutate_text(rng: random.Random, text: str) -> str:
    for _ in range(rng.randint(1, 6)):
        at = rng.randrange(len(text) + 1)
        op = rng.randrange(5)
        if op == 0:
            text = text[:at] + rng.choice(TOKENS) + text[at:]
        elif op == 1:
            text = text[:at] + text[at + rng.randint(1, 40) :]
        elif op == 2:
            span = text[at : at + rng.randint(1, 200)]
            where = rng.randrange(len(text) + 1)
            text = text[:where] + span + text[where:]
        elif op == 3 and text:
            text = text[:at] + chr(rng.randrange(32, 0x3000)) + text[at + 1 :]
        else:
            # A number where there was one: the commonest edit of a suite file.
            digits = [i for i, c in enumerate(text) if c.isdigit()]
            if digits:
                i = rng.choice(digits)
                text = text[:i] + rng.choice(["0", "-1", "9" * rng.randint(1, 25), "1e999", "nan"]) + text[i + 1 :]
    return text


def _containers(node: Any) -> list[Any]:
    """Every table and array in a parsed document, the document first."""
    found = [node]
    children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else []
    for child in children:
        if isinstance(child, dict | list):
            found.extend(_containers(child))
    return found


def mutate_table(rng: random.Random, data: dict[str, Any]) -> dict[str, Any]:
    data = copy.deepcopy(data)
    for _ in range(rng.randint(1, 4)):
        node = rng.choice(_containers(data))
        if isinstance(node, dict):
            op = rng.randrange(4)
            if op == 3 or not node:
                node[rng.choice(["x", "start", "stop", "clients", "weight", "kind", "sizes", "length_s"])] = rng.choice(
                    VALUES
                )
            elif op == 2:
                del node[rng.choice(list(node))]
            else:
                node[rng.choice(list(node))] = copy.deepcopy(rng.choice(VALUES))
        elif node:
            op = rng.randrange(3)
            i = rng.randrange(len(node))
            if op == 0:
                node[i] = copy.deepcopy(rng.choice(VALUES))
            elif op == 1:
                del node[i]
            else:
                node.append(copy.deepcopy(node[i]))
    return data


def accepted_or_refused(load: Callable[..., Suite], *args: Any) -> str:
    """Loads a suite with `load(*args)`; ConfigError is the only way to refuse one. Returns what happened."""
    try:
        suite = load(*args)
    except ConfigError as exc:
        assert str(exc).strip(), "a refusal without a message"
        assert "\n" not in str(exc), f"a refusal of more than one line: {exc}"
        return "refused"
    for profile in PROFILES:
        try:
            mixes = suite.mixes(profile)
        except ConfigError as exc:
            assert str(exc).strip(), "a refusal without a message"
            continue
        assert mixes, f"{suite.name}: no mixes for profile {profile}"
    return "accepted"


@pytest.mark.timeout(TIMEOUT_S)
def test_mutated_suite_text_is_a_suite_or_a_config_error() -> None:
    rng = random.Random(28)
    outcomes = {"accepted": 0, "refused": 0}
    for _ in range(CASES):
        text = mutate_text(rng, rng.choice(SEEDS))
        outcomes[accepted_or_refused(parse_toml, text, "fuzz.toml")] += 1
    # Both ways were taken: the mutations neither always break the syntax nor never do.
    assert all(outcomes.values()), outcomes


@pytest.mark.timeout(TIMEOUT_S)
def test_mutated_suite_tables_are_a_suite_or_a_config_error() -> None:
    assert tomllib is not None
    parsed = [tomllib.loads(text) for text in SEEDS]
    rng = random.Random(2028)
    outcomes = {"accepted": 0, "refused": 0}
    for _ in range(CASES):
        data = mutate_table(rng, rng.choice(parsed))
        outcomes[accepted_or_refused(parse_suite, data, "fuzz")] += 1
    assert all(outcomes.values()), outcomes


# What the fuzzing found, kept as explicit cases.


def test_a_ladder_of_billions_of_load_points_is_refused_without_listing_them() -> None:
    # Found by the table fuzzing: stop = 2**31 listed every load point first (MemoryError), and past
    # sys.maxsize counting them with len(range(...)) overflowed.
    text = SEEDS[0].replace("stop = 60", f"stop = {2**31}")
    with pytest.raises(ConfigError, match=r"ladder: defines 536870913 load points, more than crest runs \(10000\)"):
        parse_toml(text, "big.toml")
    with pytest.raises(ConfigError, match=r"load points, more than crest runs"):
        parse_toml(SEEDS[0].replace("stop = 60", f"stop = {10**40}"), "huge.toml")


def test_a_value_with_a_newline_is_shown_on_one_line() -> None:
    # Found by the table fuzzing: a string value was shown as typed, so a newline in it split the error.
    text = SEEDS[0].replace("repeat = 2", 'repeat = """a\nb"""')
    with pytest.raises(ConfigError) as caught:
        parse_toml(text, "nl.toml")
    assert str(caught.value) == r"nl.toml: repeat: must be an integer (got 'a\nb')"
