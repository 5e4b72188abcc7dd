"""The runtime's shape: layered packages whose imports run one way, down the order below,
with no import cycle of any kind (top-level, function-local and type-checking imports
all count), no module reaching into another's underscore names, and sizes that follow
the job."""

from __future__ import annotations

import ast
from pathlib import Path

from support.checkout import ROOT

RUNTIME = ROOT / "runtime"

#: The runtime's layers, lowest first: a module may import from its own layer and those
#: before it, never from one after it. A subpackage belongs to its parent's layer.
LAYERS = ("core", "aio", "tasks", "server", "http", "cluster", "client", "app", "gateway", "")
#: The modules at the top of the runtime (its faces); "" above is their layer.
TOP_MODULES_AT_MOST = 6
#: Packages whose modules may import nothing but msgspec and the standard library.
SANS_IO = ("core",)
#: Lines past which a module is looked at again; the ones that stay bigger, and why.
SOFT_SIZE = 800
BIGGER: dict[str, str] = {}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(RUNTIME).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, tuple[Path, ast.Module]]:
    found: dict[str, tuple[Path, ast.Module]] = {}
    for path in sorted(RUNTIME.rglob("*.py")):
        if "__pycache__" not in path.parts:
            found[module_name(path)] = (path, ast.parse(path.read_text()))
    return found


def _package_of(name: str, path: Path) -> list[str]:
    parts = name.split(".") if name else []
    return parts if path.name == "__init__.py" else parts[:-1]


def imports_of(name: str, path: Path, tree: ast.Module, known: set[str]) -> set[str]:
    """Every runtime module ``tree`` imports, of any kind and at any depth (inside a
    function or under ``if TYPE_CHECKING:`` too): a name imported from a package counts
    as that package's submodule when there is one, else as the package."""
    found: set[str] = set()
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = _package_of(name, path)
                base = base[: len(base) - (node.level - 1)]
            elif module.startswith("mcpgen.runtime"):
                base, module = [], module.removeprefix("mcpgen.runtime").lstrip(".")
            else:
                continue
            origin = ".".join(base + (module.split(".") if module else []))
            for alias in node.names:
                sub = f"{origin}.{alias.name}".lstrip(".")
                targets.append(sub if sub in known else origin)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("mcpgen.runtime."):
                    targets.append(alias.name.removeprefix("mcpgen.runtime."))
        found.update(t for t in targets if t in known and t != name)
    return found


def graph() -> dict[str, set[str]]:
    found = modules()
    known = set(found)
    return {name: imports_of(name, path, tree, known) for name, (path, tree) in found.items()}


def layer(name: str) -> int:
    head = name.split(".")[0] if "." in name or name in LAYERS else ""
    return LAYERS.index(head)


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts of ``edges`` that hold more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for dep in sorted(edges.get(node, ())):
            if dep not in index:
                visit(dep)
                low[node] = min(low[node], low[dep])
            elif dep in on_stack:
                low[node] = min(low[node], index[dep])
        if low[node] == index[node]:
            part: list[str] = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                part.append(top)
                if top == node:
                    break
            if len(part) > 1 or node in edges.get(node, ()):
                found.append(sorted(part))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_the_runtime_has_no_import_cycle_of_any_kind() -> None:
    assert cycles(graph()) == []


def test_imports_run_down_the_layers_only() -> None:
    upward = [
        f"{name} -> {dep}"
        for name, deps in graph().items()
        for dep in sorted(deps)
        if name and layer(dep) > layer(name)
    ]
    assert upward == []


def test_the_sans_io_core_imports_msgspec_and_the_standard_library_alone() -> None:
    import sys

    allowed = set(sys.stdlib_module_names) | {"msgspec"}
    outside: list[str] = []
    for name, (_, tree) in modules().items():
        if name.split(".")[0] not in SANS_IO:
            continue
        for node in ast.walk(tree):
            roots: list[str] = []
            if isinstance(node, ast.Import):
                roots = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                roots = [node.module.split(".")[0]]
            outside += [f"{name}: {root}" for root in roots if root not in allowed]
    assert outside == []


def test_every_runtime_module_belongs_to_a_layer_and_few_stay_on_top() -> None:
    names = set(modules())
    assert all(layer(name) >= 0 for name in names)
    top = sorted(name for name in names if "." not in name and name not in LAYERS)
    assert len(top) + 1 <= TOP_MODULES_AT_MOST, top  # + the runtime's own __init__
    packages = {name.split(".")[0] for name in names if "." in name}
    assert packages == set(LAYERS) - {""}


def test_each_package_says_what_it_owns() -> None:
    for path in RUNTIME.rglob("__init__.py"):
        doc = ast.get_docstring(ast.parse(path.read_text()))
        assert doc and len(doc) > 80, path


def test_module_sizes_follow_their_job() -> None:
    sizes = {name: len(path.read_text().splitlines()) for name, (path, _) in modules().items()}
    assert {name: n for name, n in sizes.items() if n > SOFT_SIZE and name not in BIGGER} == {}
    assert set(BIGGER) <= set(sizes)  # an exception names a module that exists


def test_no_runtime_module_reaches_into_another_modules_underscore_names() -> None:
    reaches = []
    for name, (_, tree) in modules().items():
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


def test_the_checks_see_what_they_look_for(tmp_path: Path) -> None:
    sample = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "from .a import x\n"
        "from .. import b\n"
        "if TYPE_CHECKING:\n    from ..c.d import y\n"
        "def f():\n    from mcpgen.runtime.c import e\n"
    )
    known = {"p.a", "b", "c.d", "c.e", "p.q"}
    assert imports_of("p.q", RUNTIME / "p" / "q.py", sample, known) == {"p.a", "b", "c.d", "c.e"}
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert layer("core.jsonrpc") < layer("http.auth.jwt") < layer("testing")


#: Where the package map is written for readers.
PACKAGE_MAP = ROOT / "docs" / "contributing.md"


def test_the_package_map_names_every_runtime_module_and_no_other() -> None:
    import re

    rows = re.findall(r"^\| (`[\w/]+/`|\(top\)) \| ([^|]+) \|", PACKAGE_MAP.read_text(), re.M)
    mapped = {
        (package.strip("`/") if package != "(top)" else "", module)
        for package, modules in rows
        for module in re.findall(r"`(\w+)`", modules)
    }
    actual = {
        (str(path.parent.relative_to(RUNTIME)).replace(".", ""), path.stem)
        for path in RUNTIME.rglob("*.py")
        if "__pycache__" not in path.parts and (path.stem != "__init__" or path.parent == RUNTIME)
    }
    assert mapped == actual
    order = [package.strip("`/") for package, _ in rows if package != "(top)"]
    assert [p for p in order if "/" not in p] == list(LAYERS[:-1])  # the table goes down the layers
