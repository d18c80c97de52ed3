"""The layout shows the layers: every import in python/crest points down DESIGN.md's arrows, and only the
fan-out starts engine runs or merges their parts. Reads the sources (ast); imports nothing of crest."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "python" / "crest"

# Top to bottom; a package may import those below it, never one above or beside it. The last layer is the
# shared vocabulary, whose modules may use one another.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("__main__",),
    ("cli",),
    ("web",),  # the live page and the results browser
    ("specweb99", "capacity"),  # harnesses around the runner
    ("experiment",),
    ("observe",),  # frames of a run as it happens, for the live page, metrics and JSON Lines
    ("runner",),
    ("placement",),
    ("cluster",),
    ("machines",),  # a lab of simulated machines: namespaces, cgroups, own directories
    ("servers",),
    ("network",),
    ("host",),
    ("load",),  # the fan-out and one engine run
    ("report",),
    ("analysis",),
    ("suite",),
    ("store",),
    ("replay",),  # access logs read by the engine's reader, and the site a log makes
    ("filesets", "dynamic", "schemas"),
    ("errors", "units", "verdicts", "secrets", "deadlines", "listen", "_engine", "__version__"),
)
RANK = {name: i for i, layer in enumerate(LAYERS) for name in layer}
VOCABULARY = LAYERS[-1]
# The engine calls that start a run or merge runs' parts: the fan-out's alone.
ENGINE_RUNS = ("start_run", "merge_parts")
FANOUT = PACKAGE / "load" / "fanout.py"


def _top(path: Path) -> str:
    return path.relative_to(PACKAGE).parts[0].removesuffix(".py")


def _imports(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, top-level crest package) of every import of crest in a module, function-local ones too."""
    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"crest.{a.name}" for a in node.names] if node.module == "crest" else [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        found += [(node.lineno, n.split(".")[1]) for n in names if n.startswith("crest.")]
    return found


def _sources() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if p.name != "__init__.py" or p.parent != PACKAGE)


def test_every_package_has_a_layer() -> None:
    packages = {_top(p) for p in _sources()} | {
        _top(p) for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"
    }
    assert packages - set(RANK) == set(), "a new package needs its place in LAYERS (and in docs/architecture.md)"


def test_no_module_imports_upward() -> None:
    upward = []
    for path in _sources():
        src = _top(path)
        for line, dst in _imports(ast.parse(path.read_text())):
            if dst == src or (src in VOCABULARY and dst in VOCABULARY):
                continue
            if dst not in RANK or RANK[dst] <= RANK[src]:
                upward.append(f"{path.relative_to(PACKAGE)}:{line} {src} -> {dst}")
    assert upward == []


def test_only_the_fanout_starts_or_merges_engine_runs() -> None:
    callers = []
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in ENGINE_RUNS:
                callers.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.attr}")
    assert callers and all(c.startswith("load/fanout.py:") for c in callers), callers


def test_the_layer_check_sees_an_upward_import() -> None:
    tree = ast.parse("def f():\n    from crest.runner.trials import SuiteRunner\nimport crest.load.fanout\n")
    assert sorted(_imports(tree)) == [(2, "runner"), (3, "load")]
    assert RANK["runner"] < RANK["placement"] < RANK["load"]  # placement may use load, never the runner
