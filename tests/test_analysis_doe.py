"""crest.analysis.doe: designs, generators and aliases, and the sign-table analysis against textbook examples."""

from __future__ import annotations

import math
from typing import Any

import pytest

from crest.analysis import alias_structure, analyze, defining_relation, design
from crest.analysis.stats import t_quantile
from crest.errors import ConfigError

# Jain, The Art of Computer Systems Performance Analysis, example 17.1: MIPS of a
# workstation by memory size (4 or 16 MB) and cache size (1 or 2 KB).
JAIN_2X2 = [
    {"memory": 4, "cache": 1, "mips": 15},
    {"memory": 16, "cache": 1, "mips": 45},
    {"memory": 4, "cache": 2, "mips": 25},
    {"memory": 16, "cache": 2, "mips": 75},
]


def test_jain_2x2() -> None:
    result = analyze(JAIN_2X2, "mips")
    assert result.effects == {"mean": 40.0, "memory": 20.0, "cache": 10.0, "memory:cache": 5.0}
    assert result.variation_pct == pytest.approx({"memory": 76.19, "cache": 19.05, "memory:cache": 4.76}, abs=0.005)
    assert (result.sst, result.sse, result.replications, result.ci95) == (2100.0, 0.0, 1, None)
    assert result.levels == {"memory": (4, 16), "cache": (1, 2)}
    assert result.aliases == {}


def test_rows_may_come_in_any_order_and_as_text() -> None:
    rows = [{k: str(v) for k, v in row.items()} for row in reversed(JAIN_2X2)]
    assert analyze(rows, "mips").effects == analyze(JAIN_2X2, "mips").effects


def test_jain_2x2x2() -> None:
    # A 2^3 design (factors A, B, C) whose effects are whole numbers: q = 40, 10, 5, 20, 5, 2, 3, 1.
    y = [14, 22, 10, 34, 46, 58, 50, 86]
    rows = [dict(row, y=v) for row, v in zip(design({"A": (-1, 1), "B": (-1, 1), "C": (-1, 1)}), y)]
    result = analyze(rows, "y")
    assert result.effects == {"mean": 40, "A": 10, "B": 5, "C": 20, "A:B": 5, "A:C": 2, "B:C": 3, "A:B:C": 1}
    # SST = 2^3 (10² + 5² + 20² + 5² + 2² + 3² + 1²) = 4512
    assert result.sst == 4512
    assert result.variation_pct["C"] == pytest.approx(100 * 8 * 400 / 4512)
    assert sum(result.variation_pct.values()) == pytest.approx(100.0)


def replicated() -> list[dict[str, Any]]:
    # Jain, example 18.1: the 2^2 memory-cache study measured three times.
    ys = {(4, 1): (15, 18, 12), (16, 1): (45, 48, 51), (4, 2): (25, 28, 19), (16, 2): (75, 75, 81)}
    return [{"memory": m, "cache": c, "mips": y} for (m, c), values in ys.items() for y in values]


def test_replications_give_error_variation_and_confidence_intervals() -> None:
    result = analyze(replicated(), "mips")
    assert result.replications == 3
    assert result.effects == {"mean": 41.0, "memory": 21.5, "cache": 9.5, "memory:cache": 5.0}
    assert (result.sse, result.sst) == (102.0, 7032.0)
    assert result.variation_pct == pytest.approx(
        {"memory": 78.88, "cache": 15.40, "memory:cache": 4.27, "error": 1.45}, abs=0.005
    )
    # s_e = √(102 / (4·2)) = 3.57, s_q = s_e / √12 = 1.03; Jain's 90% interval of q0 is 41 ± 1.92.
    s_q = math.sqrt(102 / 8) / math.sqrt(12)
    assert t_quantile(0.95, 8) * s_q == pytest.approx(1.92, abs=0.005)
    half = t_quantile(0.975, 8) * s_q  # the 95% interval crest reports
    assert result.ci95 is not None
    for term, q in result.effects.items():
        assert result.ci95[term] == pytest.approx((q - half, q + half))
    assert result.ci95["memory"] == pytest.approx((19.12, 23.88), abs=0.005)


def test_level_order_numbers_numerically_text_alphabetically() -> None:
    rows = [{"threads": t, "mode": m, "rps": r} for (t, m), r in
            {("10", "sync"): 1, ("9", "sync"): 2, ("10", "async"): 3, ("9", "async"): 4}.items()]  # fmt: skip
    result = analyze(rows, "rps")
    assert result.levels == {"threads": (9, 10), "mode": ("async", "sync")}
    assert result.effects["threads"] == pytest.approx(((1 + 3) - (2 + 4)) / 4)


def test_factor_columns_choose_the_factors() -> None:
    rows = [dict(row, note=f"run {i}") for i, row in enumerate(JAIN_2X2)]
    with pytest.raises(ConfigError, match="factor 'note' has 4 levels"):
        analyze(rows, "mips")
    assert analyze(rows, "mips", factor_columns=["cache", "memory"]).effects == {
        "mean": 40.0, "cache": 10.0, "memory": 20.0, "cache:memory": 5.0,
    }  # fmt: skip


# -- designs and generators ----------------------------------------------------------------------


def test_full_design_in_standard_order_replicated() -> None:
    rows = design({"memory": ("4M", "16M"), "cache": (1, 2)}, replications=2)
    assert rows[:4] == [
        {"memory": "4M", "cache": 1}, {"memory": "16M", "cache": 1}, {"memory": "4M", "cache": 2}, {"memory": "16M", "cache": 2},
    ]  # fmt: skip
    assert rows[4:] == rows[:4]


def test_fractional_design_follows_its_generator() -> None:
    rows = design({"A": (0, 1), "B": (0, 1), "C": (0, 1), "D": ("lo", "hi")}, ["D=ABC"])
    assert len(rows) == 8
    for row in rows:
        product = math.prod(1 if row[f] == 1 else -1 for f in "ABC")
        assert row["D"] == ("hi" if product > 0 else "lo")
    # The same generator by factor names: cache is high exactly when an odd number of the others are.
    named = design({"buf": (0, 1), "load": (0, 1), "mem": (0, 1), "cache": (0, 1)}, ["cache=buf:load:mem"])
    assert [r["cache"] for r in named] == [(r["buf"] + r["load"] + r["mem"]) % 2 for r in named]


def test_aliases_of_a_half_fraction() -> None:
    # D = ABC: I = ABCD, so every main effect is confounded with a 3-factor interaction
    # and the two-factor interactions pairwise.
    assert defining_relation("ABCD", ["D=ABC"]) == ["A:B:C:D"]
    assert alias_structure("ABCD", ["D=ABC"]) == {
        "A": ["B:C:D"], "B": ["A:C:D"], "C": ["A:B:D"], "D": ["A:B:C"],
        "A:B": ["C:D"], "A:C": ["B:D"], "B:C": ["A:D"],
    }  # fmt: skip


def test_jain_2_7_minus_4_defining_relation() -> None:
    # Jain, example 19.1: D = AB, E = AC, F = BC, G = ABC.
    words = defining_relation("ABCDEFG", ["D=AB", "E=AC", "F=BC", "G=ABC"])
    assert len(words) == 15
    assert words[:7] == ["A:B:D", "A:C:E", "A:F:G", "B:C:F", "B:E:G", "C:D:G", "D:E:F"]
    assert words[-1] == "A:B:C:D:E:F:G"


def test_analyze_a_half_fraction_with_its_generator() -> None:
    rows = design({"A": (1, 2), "B": (1, 2), "C": (1, 2), "D": (1, 2)}, ["D=ABC"])
    sign = {1: -1, 2: 1}
    data = [dict(r, y=10 + 3 * sign[r["A"]] + 2 * sign[r["D"]] + sign[r["A"]] * sign[r["B"]]) for r in rows]
    result = analyze(data, "y", generators=["D=ABC"])
    assert list(result.effects) == ["mean", "A", "B", "C", "D", "A:B", "A:C", "B:C"]
    assert result.effects == pytest.approx({"mean": 10, "A": 3, "B": 0, "C": 0, "D": 2, "A:B": 1, "A:C": 0, "B:C": 0})
    assert result.aliases["D"] == ["A:B:C"] and result.aliases["A:B"] == ["C:D"]
    with pytest.raises(ConfigError, match=r"the data lacks the combination A=2 B=1 C=1 D=1: a 2\^k analysis needs"):
        analyze(data, "y")


def test_rows_that_break_the_generator() -> None:
    data = [{"A": a, "B": b, "C": c, "D": d, "y": 1} for a in (0, 1) for b in (0, 1) for c in (0, 1) for d in (0, 1)
            if (d == 1) == ((a + b + c) % 2 == 1)]  # fmt: skip
    data[0] = dict(data[0], D=1 - data[0]["D"])
    with pytest.raises(ConfigError, match="data row 1: D=1 does not follow the generator D=A:B:C"):
        analyze(data, "y", generators=["D=ABC"])


@pytest.mark.parametrize(
    ("generators", "message"),
    [
        (["E=ABC"], "invalid generator 'E=ABC': E is not a factor"),
        (["D=AXC"], "invalid generator 'D=AXC': AXC does not name factors"),
        (["D=A"], "the product needs at least two different factors"),
        (["D=AAB"], "the product needs at least two different factors"),
        (["D=ABD"], "D cannot generate itself"),
        (["DABC"], "expected FACTOR=PRODUCT"),
        (["D=ABC", "D=AB"], "D is generated twice"),
        (["D=ABC", "C=AB"], "C is itself generated"),
        (["C=AB", "D=AB"], "confound the main effects of C and D"),
    ],
)
def test_bad_generators(generators: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        design({"A": (0, 1), "B": (0, 1), "C": (0, 1), "D": (0, 1)}, generators)


def test_bad_designs() -> None:
    with pytest.raises(ConfigError, match="a design needs at least one factor"):
        design({})
    with pytest.raises(ConfigError, match="factor 'A' has levels \\[1, 1\\]: give exactly two different levels"):
        design({"A": (1, 1)})
    with pytest.raises(ConfigError, match="factor 'A' has levels \\[1, 2, 3\\]"):
        design({"A": (1, 2, 3)})
    with pytest.raises(ConfigError, match="invalid replications 0"):
        design({"A": (1, 2)}, replications=0)


# -- bad data ------------------------------------------------------------------------------------


def test_three_levels() -> None:
    rows = [*JAIN_2X2, {"memory": 64, "cache": 1, "mips": 90}]
    with pytest.raises(
        ConfigError, match=r"factor 'memory' has 3 levels \(4, 16, 64\): a two-level design needs exactly two"
    ):
        analyze(rows, "mips")


def test_one_level() -> None:
    with pytest.raises(ConfigError, match=r"factor 'cache' has 1 level \(1\)"):
        analyze([{"memory": 4, "cache": 1, "mips": 1}, {"memory": 16, "cache": 1, "mips": 2}], "mips")


def test_missing_response_column() -> None:
    with pytest.raises(
        ConfigError, match="no response column 'rps': the columns are memory, cache, mips; name one of them"
    ):
        analyze(JAIN_2X2, "rps")


def test_missing_combination() -> None:
    with pytest.raises(ConfigError, match="the data lacks the combination memory=16 cache=2"):
        analyze(JAIN_2X2[:3] + [JAIN_2X2[0]], "mips")


def test_unbalanced() -> None:
    with pytest.raises(
        ConfigError, match="unbalanced design: memory=16 cache=1 appears 1 times but memory=4 cache=1 2"
    ):
        analyze([*JAIN_2X2, JAIN_2X2[0]], "mips")


def test_response_not_a_number() -> None:
    rows = [dict(JAIN_2X2[0], mips="n/a"), *JAIN_2X2[1:]]
    with pytest.raises(ConfigError, match="data row 1: response 'mips' is 'n/a', not a number"):
        analyze(rows, "mips")


def test_no_rows_and_no_factors() -> None:
    with pytest.raises(ConfigError, match="no rows to analyse"):
        analyze([], "y")
    with pytest.raises(ConfigError, match="no factor columns beside the response 'y'"):
        analyze([{"y": 1}], "y")
    with pytest.raises(ConfigError, match="no factor column 'disk'"):
        analyze(JAIN_2X2, "mips", factor_columns=["disk"])


def test_constant_response() -> None:
    result = analyze([dict(r, mips=5) for r in JAIN_2X2], "mips")
    assert result.sst == 0.0 and set(result.variation_pct.values()) == {0.0}
