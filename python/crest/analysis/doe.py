"""2^k and fractional 2^(k−p) factorial designs: the design table, and effects by the sign-table method.

Owns designs (which level of each factor every experiment uses), the
generators of fractional designs and their aliases, and the analysis of
measured responses: effects q_i, allocation of variation and, with
replications, confidence intervals of the effects (Jain, The Art of Computer
Systems Performance Analysis, ch. 17–19; Lilja, Measuring Computer
Performance, ch. 9). It never runs experiments and never reads files.

Method, for k base factors (2^k combinations) each measured r times:
  sign_T(i)  = Π over the factors of term T of x_f(i), with x = −1 at the low level, +1 at the high
  q_0        = (1/2^k) Σ_i ȳ_i                    (the "mean" effect)
  q_T        = (1/2^k) Σ_i sign_T(i) ȳ_i
  SS_T       = 2^k r q_T²;   SSE = Σ_i Σ_j (y_ij − ȳ_i)²;   SST = Σ_T SS_T + SSE = Σ (y − ȳ)²
  variation  = SS_T ÷ SST (and SSE ÷ SST as "error" when r > 1)
  CI of q_T  = q_T ± t[1 − α/2; 2^k (r − 1)] · s_e ÷ √(2^k r),   s_e = √(SSE ÷ (2^k (r − 1)))
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from crest.analysis.csvdata import Value, typed
from crest.analysis.stats import CONFIDENCE, t_quantile
from crest.errors import ConfigError

MEAN = "mean"  # the name of q_0 in DoeResult.effects
ERROR = "error"  # the name of the unexplained share in DoeResult.variation_pct
INTERACTION = ":"  # joins factor names into an interaction term: "memory:cache"


@dataclass
class Generator:
    """One generator of a fractional design: factor `name`'s column is the product of the `of` columns."""

    name: str
    of: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.name}={INTERACTION.join(self.of)}"


@dataclass
class DoeResult:
    """Effects and allocation of variation of one response.

    effects: "mean" (q_0) then every term (main effects, then interactions);
    variation_pct: each term's share of SST in percent, plus "error" when
    replicated; ci95: per effect (including "mean"), None without replications.
    levels: each factor's (low, high), the low level being −1. aliases: for a
    fractional design, the terms each reported term is confounded with.
    """

    effects: dict[str, float]
    variation_pct: dict[str, float]
    ci95: dict[str, tuple[float, float]] | None
    replications: int
    sst: float
    sse: float
    response: str = ""
    factors: list[str] = field(default_factory=list)
    levels: dict[str, tuple[Value, Value]] = field(default_factory=dict)
    aliases: dict[str, list[str]] = field(default_factory=dict)


# -- designs ------------------------------------------------------------------------------------


def design(
    factors: Mapping[str, Sequence[Any]],
    generators: Sequence[str] = (),
    replications: int = 1,
) -> list[dict[str, Any]]:
    """The experiments of a 2^k (or, with generators, 2^(k−p)) design in standard order, replicated.

    factors: name → (low, high), in the order that letters in generators refer
    to (A is the first factor). generators: e.g. ["D=ABC"] or ["cache=memory:cpus"].
    Standard order: the first base factor alternates fastest; the whole
    design is listed `replications` times.
    """
    names = list(factors)
    if not names:
        raise ConfigError("a design needs at least one factor: give name = [low, high] for each")
    levels: dict[str, tuple[Any, Any]] = {}
    for name in names:
        values = tuple(factors[name])
        if len(values) != 2 or values[0] == values[1]:
            raise ConfigError(
                f"factor {name!r} has levels {list(values)!r}: give exactly two different levels, low and high"
            )
        levels[name] = (values[0], values[1])
    if isinstance(replications, bool) or not isinstance(replications, int) or replications < 1:
        raise ConfigError(f"invalid replications {replications!r}: give a whole number of at least 1")
    gens = parse_generators(generators, names)
    base = _base(names, gens)
    rows = []
    for signs in _combinations(len(base)):
        sign_of = dict(zip(base, signs))
        for gen in gens:
            sign_of[gen.name] = math.prod(sign_of[f] for f in gen.of)
        rows.append({name: levels[name][0 if sign_of[name] < 0 else 1] for name in names})
    return [dict(row) for _ in range(replications) for row in rows]


def parse_generators(texts: Sequence[str], factor_names: Sequence[str]) -> list[Generator]:
    """Parse and check generators over these factors (in order: A is the first, B the second, …)."""
    names = list(factor_names)
    gens = [_parse_generator(text, names) for text in texts]
    generated = [g.name for g in gens]
    for gen, text in zip(gens, texts):
        if generated.count(gen.name) > 1:
            raise ConfigError(
                f"invalid generator {text!r}: {gen.name} is generated twice; give each factor one generator"
            )
        bad = [f for f in gen.of if f in generated]
        if bad:
            raise ConfigError(
                f"invalid generator {text!r}: {bad[0]} is itself generated; build generators from the base factors only"
            )
    if len(gens) >= len(names):
        raise ConfigError(f"{len(gens)} generators for {len(names)} factors leave no base factor: use fewer generators")
    short = [w for w in _defining_words(names, gens) if len(w) <= 2]
    if short:
        pair = sorted(short[0], key=names.index)
        raise ConfigError(
            f"generators {', '.join(map(str, gens))} confound the main effects of {pair[0]} and {pair[1]}:"
            " choose generators whose products all involve at least three factors"
        )
    return gens


def defining_relation(factor_names: Sequence[str], generators: Sequence[str]) -> list[str]:
    """The words of I (e.g. ["A:B:C:D"] for D=ABC): every product of generator words, shortest first."""
    names = list(factor_names)
    words = _defining_words(names, parse_generators(generators, names))
    return [_name(w, names) for w in sorted(words, key=lambda w: _order_key(w, names))]


def alias_structure(factor_names: Sequence[str], generators: Sequence[str]) -> dict[str, list[str]]:
    """Every estimable term (named as analyze names it) → the terms confounded with it."""
    names = list(factor_names)
    gens = parse_generators(generators, names)
    base = _base(names, gens)
    words = _defining_words(names, gens)
    return {
        _name(shown, names): [_name(a, names) for a in others]
        for shown, others in (
            _alias_class(frozenset(base[j] for j in term), words, names) for term in _terms(len(base))
        )
    }


# -- analysis -----------------------------------------------------------------------------------


def analyze(
    rows: Sequence[Mapping[str, Any]],
    response: str,
    factor_columns: Sequence[str] | None = None,
    generators: Sequence[str] = (),
) -> DoeResult:
    """Effects and allocation of variation of `response` over a two-level factorial table.

    rows: one experiment each (CSV rows as text, or values); every column but
    the response is a factor unless factor_columns says which. Each factor
    has exactly two levels, the one that sorts first (numerically when both
    are numbers) being the low level (−1). Every combination of the base
    factors must appear equally often (r replications). generators name the
    generated columns of a fractional design (e.g. ["D=ABC"]); their effects
    are reported under the shortest alias.
    """
    if not rows:
        raise ConfigError("no rows to analyse: give one row per experiment")
    columns = list(rows[0])
    if response not in columns:
        raise ConfigError(f"no response column {response!r}: the columns are {', '.join(columns)}; name one of them")
    factors = _factor_columns(columns, response, factor_columns)
    for number, row in enumerate(rows, start=1):
        missing = [c for c in (*factors, response) if c not in row]
        if missing:
            raise ConfigError(f"data row {number} has no {missing[0]!r} value: give every row the same columns")
    gens = parse_generators(generators, factors)
    levels = {f: _levels(f, [typed(row[f]) for row in rows]) for f in factors}
    base = _base(factors, gens)
    groups: dict[tuple[int, ...], list[float]] = {}
    for number, row in enumerate(rows, start=1):
        sign = {f: -1 if typed(row[f]) == levels[f][0] else 1 for f in factors}
        for gen in gens:
            expected = math.prod(sign[f] for f in gen.of)
            if sign[gen.name] != expected:
                raise ConfigError(
                    f"data row {number}: {gen.name}={typed(row[gen.name])} does not follow the generator {gen}"
                    f" (it gives {levels[gen.name][0 if expected < 0 else 1]}): fix the row or the generator"
                )
        groups.setdefault(tuple(sign[f] for f in base), []).append(_response(row[response], response, number))
    replications = _check_balanced(groups, base, levels)
    return _effects(groups, base, factors, gens, replications, levels, response)


def _effects(
    groups: dict[tuple[int, ...], list[float]],
    base: list[str],
    factors: list[str],
    gens: list[Generator],
    r: int,
    levels: dict[str, tuple[Value, Value]],
    response: str,
) -> DoeResult:
    combos = _combinations(len(base))
    n = len(combos)
    means = [math.fsum(groups[c]) / r for c in combos]
    sse = math.fsum((y - m) ** 2 for c, m in zip(combos, means) for y in groups[c])
    words = _defining_words(factors, gens)
    named: list[tuple[frozenset[str], list[frozenset[str]], float]] = []
    for term in _terms(len(base)):
        q = math.fsum(math.prod(c[j] for j in term) * m for c, m in zip(combos, means)) / n
        shown, others = _alias_class(frozenset(base[j] for j in term), words, factors)
        named.append((shown, others, q))
    named.sort(key=lambda t: _order_key(t[0], factors))
    effects = {MEAN: math.fsum(means) / n} | {_name(s, factors): q for s, _, q in named}
    squares = {_name(s, factors): n * r * q * q for s, _, q in named}
    sst = math.fsum(squares.values()) + sse
    variation = {term: (100.0 * ss / sst if sst > 0 else 0.0) for term, ss in squares.items()}
    ci: dict[str, tuple[float, float]] | None = None
    if r > 1:
        variation[ERROR] = 100.0 * sse / sst if sst > 0 else 0.0
        df = n * (r - 1)
        half = t_quantile(1.0 - (1.0 - CONFIDENCE) / 2.0, df) * math.sqrt(sse / df) / math.sqrt(n * r)
        ci = {term: (q - half, q + half) for term, q in effects.items()}
    aliases = {_name(s, factors): [_name(a, factors) for a in others] for s, others, _ in named} if gens else {}
    return DoeResult(
        effects=effects, variation_pct=variation, ci95=ci, replications=r, sst=sst, sse=sse,
        response=response, factors=list(factors), levels=levels, aliases=aliases,
    )  # fmt: skip


def _factor_columns(columns: list[str], response: str, given: Sequence[str] | None) -> list[str]:
    if given is None:
        factors = [c for c in columns if c != response]
    else:
        factors = list(given)
        for name in factors:
            if name not in columns or name == response:
                raise ConfigError(
                    f"no factor column {name!r}: the factors are among {', '.join(c for c in columns if c != response)}"
                )
        if len(set(factors)) != len(factors):
            raise ConfigError(f"factor columns {', '.join(factors)} name a column twice: give each once")
    if not factors:
        raise ConfigError(f"no factor columns beside the response {response!r}: give one column per factor")
    return factors


def _levels(factor: str, values: list[Value]) -> tuple[Value, Value]:
    distinct = list(dict.fromkeys(values))
    if len(distinct) != 2:
        shown = ", ".join(str(v) for v in distinct[:6]) + (", …" if len(distinct) > 6 else "")
        raise ConfigError(
            f"factor {factor!r} has {len(distinct)} level{'s' if len(distinct) != 1 else ''} ({shown}):"
            " a two-level design needs exactly two; drop the column or keep two of its levels"
        )
    if all(isinstance(v, (int, float)) for v in distinct):
        low, high = sorted(distinct, key=float)
    else:
        low, high = sorted(distinct, key=str)
    return (low, high)


def _response(raw: Any, response: str, number: int) -> float:
    value = typed(raw)
    if isinstance(value, str) or not math.isfinite(value):
        raise ConfigError(f"data row {number}: response {response!r} is {raw!r}, not a number: fill in the measurement")
    return float(value)


def _check_balanced(
    groups: dict[tuple[int, ...], list[float]], base: list[str], levels: dict[str, tuple[Value, Value]]
) -> int:
    def spell(combo: tuple[int, ...]) -> str:
        return " ".join(f"{f}={levels[f][0 if s < 0 else 1]}" for f, s in zip(base, combo))

    combos = _combinations(len(base))
    for combo in combos:
        if combo not in groups:
            raise ConfigError(
                f"the data lacks the combination {spell(combo)}: a 2^k analysis needs every combination of the"
                " factors' two levels (a full factorial; for a fractional design give its generators)"
            )
    counts = {c: len(groups[c]) for c in combos}
    fewest, most = min(counts, key=counts.__getitem__), max(counts, key=counts.__getitem__)
    if counts[fewest] != counts[most]:
        raise ConfigError(
            f"unbalanced design: {spell(fewest)} appears {counts[fewest]} times but {spell(most)} {counts[most]}:"
            " repeat every combination equally often"
        )
    return counts[combos[0]]


def _parse_generator(text: str, names: list[str]) -> Generator:
    def fail(problem: str) -> ConfigError:
        return ConfigError(
            f"invalid generator {text!r}: {problem}; write e.g. D=ABC (A is the first factor, B the second, …)"
            f" or {names[-1] if names else 'name'}=f1:f2:f3 with factor names"
        )

    lhs, sep, rhs = text.replace(" ", "").partition("=")
    if not sep or not lhs or not rhs:
        raise fail("expected FACTOR=PRODUCT")
    name = _resolve(lhs, names)
    if name is None:
        raise fail(f"{lhs} is not a factor")
    if INTERACTION in rhs:
        parts: list[str | None] = [p if p in names else None for p in rhs.split(INTERACTION)]
    elif rhs in names:
        parts = [rhs]
    elif rhs.isalpha() and rhs.isupper():
        parts = [_resolve(letter, names) for letter in rhs]
    else:
        parts = [None]
    if None in parts:
        raise fail(f"{rhs} does not name factors")
    of = tuple(p for p in parts if p is not None)
    if len(of) < 2 or len(set(of)) != len(of):
        raise fail("the product needs at least two different factors")
    if name in of:
        raise fail(f"{name} cannot generate itself")
    return Generator(name, tuple(sorted(of, key=names.index)))


def _resolve(token: str, names: list[str]) -> str | None:
    # A factor's own name wins; otherwise a capital letter is a position (A = first).
    if token in names:
        return token
    if len(token) == 1 and "A" <= token <= "Z" and ord(token) - ord("A") < len(names):
        return names[ord(token) - ord("A")]
    return None


def _base(names: list[str], gens: list[Generator]) -> list[str]:
    generated = {g.name for g in gens}
    return [n for n in names if n not in generated]


def _combinations(k: int) -> list[tuple[int, ...]]:
    """All sign vectors in standard order: the first factor alternates fastest."""
    return [tuple(1 if (i >> j) & 1 else -1 for j in range(k)) for i in range(2**k)]


def _terms(k: int) -> list[tuple[int, ...]]:
    """Main effects, then two-factor interactions, …: (0,), (1,), …, (0, 1), …"""
    return [t for size in range(1, k + 1) for t in itertools.combinations(range(k), size)]


def _defining_words(names: list[str], gens: list[Generator]) -> list[frozenset[str]]:
    """The defining relation's words besides I: all products (symmetric differences) of generator words."""
    words = [frozenset((g.name, *g.of)) for g in gens]
    group: list[frozenset[str]] = []
    for size in range(1, len(words) + 1):
        for chosen in itertools.combinations(words, size):
            product: frozenset[str] = frozenset()
            for word in chosen:
                product = product ^ word
            group.append(product)
    return group


def _alias_class(
    term: frozenset[str], words: list[frozenset[str]], names: list[str]
) -> tuple[frozenset[str], list[frozenset[str]]]:
    # Name a class by its lowest-order member, preferring the computed (base) term on a tie.
    members = [term, *(term ^ w for w in words)]
    shown = min(members, key=lambda m: (len(m), m != term, _order_key(m, names)))
    others = sorted((m for m in members if m != shown), key=lambda m: _order_key(m, names))
    return shown, others


def _order_key(term: frozenset[str], names: list[str]) -> tuple[int, list[int]]:
    return (len(term), sorted(names.index(f) for f in term))


def _name(term: frozenset[str], names: list[str]) -> str:
    return INTERACTION.join(sorted(term, key=names.index))
