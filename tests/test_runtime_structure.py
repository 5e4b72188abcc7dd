"""The runtime stays in small modules with one job each, meeting through public names:
no module over the size limit, no import cycle (type-checking imports aside), and no
module reaching into another's underscore names."""

from __future__ import annotations

import ast

from conftest import ROOT

RUNTIME = ROOT / "runtime"
#: Lines a runtime module may have at most.
MAX_LINES = 450


def modules() -> dict[str, ast.Module]:
    return {f.stem: ast.parse(f.read_text()) for f in sorted(RUNTIME.glob("*.py"))}


def _for_typing_only(tree: ast.Module) -> set[int]:
    """The nodes under ``if TYPE_CHECKING:`` (imports a type checker alone follows)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(sub) for sub in ast.walk(node))
    return skipped


def imports_of(tree: ast.Module, names: set[str]) -> set[str]:
    """The runtime modules ``tree`` imports at run time, at any depth (a function's own
    imports included: they run too)."""
    skipped = _for_typing_only(tree)
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped or not isinstance(node, ast.ImportFrom) or node.level != 1:
            continue
        if node.module:
            found.add(node.module.split(".")[0])
        else:
            found.update(alias.name for alias in node.names)
    return found & names


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    found: list[list[str]] = []
    seen: set[frozenset[str]] = set()
    for start in sorted(edges):
        stack = [(start, [start])]
        while stack:
            node, path = stack.pop()
            for dep in sorted(edges.get(node, ())):
                if dep == start and frozenset(path) not in seen:
                    seen.add(frozenset(path))
                    found.append([*path, start])
                elif dep not in path:
                    stack.append((dep, [*path, dep]))
    return found


def test_no_runtime_module_is_over_the_size_limit() -> None:
    sizes = {f.name: len(f.read_text().splitlines()) for f in RUNTIME.glob("*.py")}
    assert {name: n for name, n in sizes.items() if n > MAX_LINES} == {}


def test_the_runtime_has_no_import_cycle() -> None:
    trees = modules()
    edges = {name: imports_of(tree, set(trees)) for name, tree in trees.items()}
    assert cycles(edges) == []
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]  # it finds one


def test_no_runtime_module_reaches_into_another_modules_underscore_names() -> None:
    reaches = []
    for name, tree in modules().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                private = [a.name for a in node.names if a.name.startswith("_")]
                reaches += [f"{name}: imports {node.module}.{p}" for p in private]
            if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
                if node.attr.startswith("__") and node.attr.endswith("__"):
                    continue  # protocols such as __struct_fields__
                owner = node.value
                if not (isinstance(owner, ast.Name) and owner.id in ("self", "cls")):
                    reaches.append(f"{name}:{node.lineno}: {ast.unparse(node)}")
    assert reaches == []


def test_the_checks_see_what_they_look_for() -> None:
    sample = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "from .a import x\n"
        "if TYPE_CHECKING:\n    from .b import y\n"
        "def f():\n    from .c import z\n"
    )
    assert imports_of(sample, {"a", "b", "c"}) == {"a", "c"}
