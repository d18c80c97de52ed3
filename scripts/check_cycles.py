#!/usr/bin/env python3
"""Fails when a module graph has a cycle: the layering gate of `make lint`.

`--rust DIR` reads a crate's `src/` (the `mod` tree from its files, and every
`crate::`, `super::` and `self::` path, in `use` trees or inline) and checks
each folder's graph of its direct children: the crate root's top-level modules
and folders, then each folder's files and subfolders. A folder and one of its
own children may refer to each other (a parent/child `super::` pair); any
other cycle is reported.

`--python DIR` reads a package (e.g. python/crest) with `ast` and checks the
graph between its top-level modules and subpackages, counting every import of
the package's own modules, function-local ones included.

Prints one line per cycle and exits 1 if there is any, else prints one
summary line and exits 0. Standard library only, so the gate needs no venv.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections.abc import Iterable
from pathlib import Path

Graph = dict[str, set[str]]

# --- Rust -------------------------------------------------------------------------------------------------

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
# Strings and char literals, so a path in a message or a '{' in a literal is not read as code.
_STRING = re.compile(r'b?r(#*)".*?"\1|b?"(?:\\.|[^"\\])*"|' r"b?'(?:\\.|[^'\\])'", re.S)
_TOKEN = re.compile(
    r"\buse\s+(?P<use>[^;]*);"
    r"|\bmod\s+(?P<inline>\w+)\s*\{"
    r"|\bmod\s+(?P<decl>\w+)\s*;"
    r"|(?P<path>\b(?:crate|super|self)(?:\s*::\s*\w+)+)"
    r"|(?P<open>\{)|(?P<close>\})"
)


def _strip(source: str) -> str:
    source = _COMMENT.sub(" ", source)
    return _STRING.sub('""', source)


def _use_paths(tree: str) -> list[list[str]]:
    """Expands a use tree (`a::{b, c::{self, D}}`) into its paths."""
    tree = re.sub(r"\s+as\s+\w+", "", tree)
    tree = re.sub(r"\s+", "", tree)

    def expand(text: str) -> list[list[str]]:
        out: list[list[str]] = []
        depth, start = 0, 0
        parts: list[str] = []
        for i, ch in enumerate(text):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == "," and depth == 0:
                parts.append(text[start:i])
                start = i + 1
        parts.append(text[start:])
        for part in filter(None, parts):
            brace = part.find("{")
            if brace < 0:
                out.append([s for s in part.split("::") if s])
                continue
            prefix = [s for s in part[:brace].split("::") if s]
            inner = part[brace + 1 : part.rfind("}")]
            for sub in expand(inner):
                out.append(prefix + [s for s in sub if s != "self"])
        return out

    return expand(tree)


class RustCrate:
    """The module tree of a crate's src/ and the module each path names."""

    def __init__(self, src: Path) -> None:
        self.src = src
        self.files: dict[tuple[str, ...], Path] = {}
        self._collect(src / "lib.rs" if (src / "lib.rs").exists() else src / "main.rs", ())

    def _collect(self, file: Path, path: tuple[str, ...]) -> None:
        self.files[path] = file
        text = _strip(file.read_text())
        here = file.parent if file.name in ("lib.rs", "main.rs", "mod.rs") else file.with_suffix("")
        for m in re.finditer(r"\bmod\s+(\w+)\s*;", text):
            name = m.group(1)
            for child in (here / f"{name}.rs", here / name / "mod.rs"):
                if child.exists():
                    self._collect(child, (*path, name))
                    break

    def module_of(self, segments: Iterable[str]) -> tuple[str, ...]:
        """The longest prefix of an absolute path that is a file module."""
        best: tuple[str, ...] = ()
        cur: tuple[str, ...] = ()
        for s in segments:
            cur = (*cur, s)
            if cur in self.files:
                best = cur
            else:
                break
        return best

    def references(self, module: tuple[str, ...]) -> set[tuple[str, ...]]:
        """The file modules `module`'s file names, as absolute module paths."""
        text = _strip(self.files[module].read_text())
        children = {p[-1] for p in self.files if len(p) == len(module) + 1 and p[:-1] == module}
        found: set[tuple[str, ...]] = set()
        scope: list[tuple[str, int]] = []  # inline modules: (name, brace depth at which they close)
        depth = 0
        for m in _TOKEN.finditer(text):
            here = (*module, *(name for name, _ in scope))
            if m.group("open"):
                depth += 1
            elif m.group("close"):
                depth -= 1
                if scope and scope[-1][1] == depth:
                    scope.pop()
            elif m.group("inline"):
                depth += 1
                scope.append((m.group("inline"), depth - 1))
            elif m.group("use") is not None:
                for path in _use_paths(m.group("use")):
                    # A use path may start at a child module of the file (Rust 2018 uniform paths).
                    if path and path[0] in children and not scope:
                        path = ["self", *path]
                    resolved = self._resolve(here, path)
                    if resolved is not None:
                        found.add(self.module_of(resolved))
            elif m.group("path"):
                path = [s.strip() for s in m.group("path").split("::")]
                resolved = self._resolve(here, path)
                if resolved is not None:
                    found.add(self.module_of(resolved))
        found.discard(module)
        return found

    @staticmethod
    def _resolve(here: tuple[str, ...], path: list[str]) -> tuple[str, ...] | None:
        if not path:
            return None
        if path[0] == "crate":
            return tuple(path[1:])
        if path[0] not in ("self", "super"):
            return None  # another crate, std, or a name in scope
        cur = list(here)
        i = 0
        while i < len(path) and path[i] in ("self", "super"):
            if path[i] == "super":
                if not cur:
                    return None
                cur.pop()
            i += 1
        return (*cur, *path[i:])


def rust_graphs(src: Path) -> dict[str, Graph]:
    """One graph per folder (its module path joined by '/', '' for the crate root) of its direct
    children; the folder itself is the node '.' (its lib.rs or mod.rs)."""
    crate = RustCrate(src)
    graphs: dict[str, Graph] = {}
    for module in crate.files:
        for target in crate.references(module):
            common = 0
            while common < min(len(module), len(target)) and module[common] == target[common]:
                common += 1
            folder = "/".join(module[:common])
            source = module[common] if common < len(module) else "."
            dest = target[common] if common < len(target) else "."
            if source == dest:
                continue
            graph = graphs.setdefault(folder, {})
            graph.setdefault(source, set()).add(dest)
            graph.setdefault(dest, set())
    return graphs


# --- Python -----------------------------------------------------------------------------------------------


def python_graph(package: Path) -> Graph:
    """The import graph between `package`'s top-level modules and subpackages
    (its own __init__.py is the node named after the package)."""
    name = package.name
    units = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    units |= {p.name for p in package.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    graph: Graph = {}

    def unit_of(file: Path) -> str:
        rel = file.relative_to(package).parts
        return name if rel == ("__init__.py",) else rel[0].removesuffix(".py")

    def target(dotted: list[str], imported: str | None) -> str | None:
        # dotted is the absolute module path below the package, e.g. ["store", "sqlite"].
        if dotted:
            return dotted[0] if dotted[0] in units else None
        if imported is not None and imported in units:
            return imported  # from crest import store
        return name

    for file in sorted(package.rglob("*.py")):
        source = unit_of(file)
        graph.setdefault(source, set())
        rel = list(file.relative_to(package).with_suffix("").parts)
        pkg_parts = rel[:-1]  # the package the file is in, below `package`
        try:
            tree = ast.parse(file.read_text(), str(file))
        except SyntaxError as e:
            raise SystemExit(f"check_cycles: cannot parse {file}: {e}") from e
        for node in ast.walk(tree):
            found: list[str | None] = []
            if isinstance(node, ast.Import):
                for alias in node.names:
                    parts = alias.name.split(".")
                    if parts[0] == name:
                        found.append(target(parts[1:], None))
            elif isinstance(node, ast.ImportFrom):
                if node.level == 0:
                    parts = (node.module or "").split(".")
                    if parts[0] != name:
                        continue
                    below = parts[1:]
                else:
                    base = pkg_parts[: len(pkg_parts) - (node.level - 1)] if node.level > 1 else pkg_parts
                    if node.level - 1 > len(pkg_parts):
                        continue
                    below = base + (node.module.split(".") if node.module else [])
                if below:
                    found.append(target(below, None))
                else:
                    found.extend(target([], alias.name) for alias in node.names)
            for dest in found:
                if dest is not None and dest != source:
                    graph[source].add(dest)
                    graph.setdefault(dest, set())
    return graph


# --- Cycles -----------------------------------------------------------------------------------------------


def strongly_connected(graph: Graph) -> list[list[str]]:
    """Tarjan's components of more than one node, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def a_cycle(graph: Graph, component: list[str]) -> list[str]:
    """A shortest cycle through the component's first node, for the message."""
    members = set(component)
    start = component[0]
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & members):
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [*reversed(path), start]
                if w not in previous:
                    previous[w] = v
                    nxt.append(w)
        frontier = nxt
    return [start, start]


def report(label: str, graph: Graph, allow_parent_child: bool) -> list[str]:
    """One line per cycle. With `allow_parent_child`, the folder's own module ('.') and its children
    may refer to each other (`super::`, `pub use child::X`): only a cycle among the children counts."""
    if allow_parent_child:
        graph = {v: {w for w in ws if w != "."} for v, ws in graph.items() if v != "."}
    lines = []
    for component in strongly_connected(graph):
        cycle = " -> ".join(a_cycle(graph, component))
        lines.append(f"{label}: cycle through {len(component)} modules ({', '.join(component)}): {cycle}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rust", type=Path, action="append", default=[], help="a crate's src/ folder")
    parser.add_argument("--python", type=Path, action="append", default=[], help="a Python package folder")
    args = parser.parse_args(argv)
    if not args.rust and not args.python:
        parser.error("give --rust DIR and/or --python DIR")
    problems: list[str] = []
    checked = []
    for src in args.rust:
        for folder, graph in sorted(rust_graphs(src).items()):
            where = f"{src}/{folder}" if folder else str(src)
            # The crate root's lib.rs only declares and re-exports: a path through a re-export
            # (`crate::Item`) hides the real dependency, so there it counts as a cycle.
            problems += report(where, graph, allow_parent_child=bool(folder))
        checked.append(str(src))
    for package in args.python:
        problems += report(str(package), python_graph(package), allow_parent_child=False)
        checked.append(str(package))
    for line in problems:
        print(line)
    if problems:
        return 1
    print(f"check_cycles: no module cycles in {', '.join(checked)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
