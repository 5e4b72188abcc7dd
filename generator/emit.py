"""Render modules with jinja2, format them with black, and write (or check) the package.

Output layout for ``--package acme.mcp --out DIR``::

    DIR/acme/mcp/__init__.py           version index (VERSIONS, ERAS, LATEST, load)
    DIR/acme/mcp/_support.py           decode support, copied verbatim (msgspec only),
    DIR/acme/mcp/_decoding.py, …       with the modules it imports
    DIR/acme/mcp/v2025_11_25/__init__.py
    DIR/acme/mcp/v2025_11_25/types.py  …one subpackage per version
    DIR/acme/mcp/NOTICE                the notice the modules point to: the specification's
                                       text they embed, and its license

The NOTICE sits inside the package directory, so that whoever copies the package (the
way vendoring does) copies the notice with it.

Files are written only when their content changes, so output is byte-identical across runs
and ``--check`` can name exactly the files that would change.
"""

from __future__ import annotations

import ast
import functools
import importlib
import keyword
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import jinja2

from .errors import UsageError
from .pins import PACKAGE_DIR, Pins, module_name, version_sort_key

TEMPLATES_DIR = PACKAGE_DIR / "templates"
#: The hand-written modules copied verbatim next to the generated ones.
SUPPORT_DIR = TEMPLATES_DIR / "package"


@functools.cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES_DIR)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["py"] = repr
    return env


def package_path(package: str) -> Path:
    parts = package.split(".")
    if not all(p.isidentifier() and not keyword.iskeyword(p) for p in parts):
        raise UsageError(
            f"invalid package name {package!r}",
            "use dotted Python identifiers, e.g. acme.mcp",
        )
    return Path(*parts)


def format_python(source: str) -> str:
    """Format with black (the project's style for generated and hand-written code)."""
    import black
    from black.mode import TargetVersion

    mode = black.Mode(target_versions={TargetVersion.PY310}, line_length=88)
    return black.format_str(source, mode=mode)


def _format_batch(sources: list[str]) -> list[str]:
    return [format_python(s) for s in sources]


@dataclass(frozen=True)
class OutputFile:
    path: Path
    content: str


_DEFS = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class _Statement:
    blank_before: int  # blank lines in the source before it
    text: str
    is_def: bool
    has_def: bool


def _statements(source: str) -> list[_Statement] | None:
    """Top-level statements of a module, or None if comments sit between them."""
    lines = source.splitlines(keepends=True)
    out, previous = [], 0
    for node in ast.parse(source).body:
        decorators = getattr(node, "decorator_list", None)
        start = (decorators[0].lineno if decorators else node.lineno) - 1
        end = node.end_lineno or node.lineno
        gap = lines[previous:start]
        if any(line.strip() for line in gap):
            return None
        has_def = any(isinstance(n, _DEFS) for n in ast.walk(node))
        out.append(
            _Statement(len(gap), "".join(lines[start:end]), isinstance(node, _DEFS), has_def)
        )
        previous = end
    return out


def _join(statements: list[_Statement], formatted: dict[str, str]) -> str:
    """Reassemble formatted statements with the blank lines black puts between them: two
    around definitions (and after a block that contains one), else the source's, at most two."""
    parts = []
    for i, st in enumerate(statements):
        if i:
            blank = 2 if st.is_def or statements[i - 1].has_def else min(st.blank_before, 2)
            parts.append("\n" * blank)
        parts.append(formatted[st.text])
    return "".join(parts)


def format_all(sources: dict[Path, str], jobs: int) -> dict[Path, str]:
    """Format every module with black, one top-level statement at a time.

    Black's output for a module is the concatenation of its statements formatted alone,
    joined by its blank-line rules (a test holds this against black on whole files), so
    each distinct statement is formatted once — across files and versions, which share
    most definitions — and the work splits evenly over ``jobs`` processes.
    """
    importlib.import_module("black")  # before forking, so workers start warm

    split = {path: _statements(src) for path, src in sources.items()}
    unique: dict[str, None] = {}
    for path, statements in split.items():
        for text in [st.text for st in statements] if statements is not None else [sources[path]]:
            unique.setdefault(text, None)
    texts = sorted(unique, key=len, reverse=True)
    if jobs > 1 and len(texts) > 1:
        batches: list[list[str]] = [[] for _ in range(jobs)]
        sizes = [0] * jobs
        for text in texts:  # largest first onto the lightest batch
            i = sizes.index(min(sizes))
            batches[i].append(text)
            sizes[i] += len(text)
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(_format_batch, batches))
        formatted = {t: f for batch, out in zip(batches, results) for t, f in zip(batch, out)}
    else:
        formatted = {t: format_python(t) for t in texts}
    return {
        path: _join(statements, formatted) if statements is not None else formatted[sources[path]]
        for path, statements in split.items()
    }


def write_files(files: Iterable[OutputFile], check: bool) -> list[Path]:
    """Write changed files (or, with ``check``, only report them); returns changed paths."""
    changed = []
    for f in files:
        try:
            current = f.path.read_text()
        except OSError:
            current = None
        if current == f.content:
            continue
        changed.append(f.path)
        if not check:
            f.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = f.path.with_name(f".{f.path.name}.tmp")
            tmp.write_text(f.content)
            tmp.replace(f.path)
    return changed


def _present(root: Path, pins: Pins, extra: Iterable[str]) -> dict[str, str]:
    """version → era of every version subpackage present under ``root`` or in ``extra``
    (about to be written)."""
    wanted = set(extra)
    return {
        version: pins.versions[version].era
        for version in pins.ordered()
        if version in wanted or (root / module_name(version) / "__init__.py").exists()
    }


def package_notice(root: Path, pins: Pins, extra: Iterable[str]) -> str:
    """The package's ``NOTICE``: what of the specification its modules embed, for which
    versions, under which license; and which modules come from mcpgen itself."""
    versions = sorted(_present(root, pins, extra), key=version_sort_key)
    support = [f.name for f in sorted(SUPPORT_DIR.glob("_*.py"))]
    return (
        environment().get_template("package_NOTICE.j2").render(versions=versions, support=support)
    )


def package_index(root: Path, pins: Pins, extra: dict[str, str]) -> str:
    """The package ``__init__``: every version subpackage present under ``root``."""
    present = _present(root, pins, extra)
    versions = [
        {"version": v, "module": module_name(v), "era": present[v]}
        for v in sorted(present, key=version_sort_key)
    ]
    dated = [v for v in present if v != "draft"]
    return (
        environment()
        .get_template("package_init.py.j2")
        .render(versions=versions, latest=max(dated) if dated else None)
    )


def emit_package(
    root: Path,
    per_version: dict[str, dict[str, str]],
    pins: Pins,
    check: bool,
    jobs: int = 2,
    progress: Callable[[str], None] | None = None,
) -> list[Path]:
    """Format and write every module; ``per_version`` maps version → {filename: source}."""
    sources: dict[Path, str] = {}
    for version, modules in per_version.items():
        for filename, source in modules.items():
            sources[root / module_name(version) / filename] = source
    sources[root / "__init__.py"] = package_index(
        root, pins, {v: pins.versions[v].era for v in per_version}
    )
    if progress:
        progress(f"formatting {len(sources)} modules with black")
    formatted = format_all(sources, jobs)
    files = [OutputFile(p, formatted[p]) for p in sorted(formatted)]
    files += [OutputFile(root / f.name, f.read_text()) for f in sorted(SUPPORT_DIR.glob("_*.py"))]
    files.append(OutputFile(root / "NOTICE", package_notice(root, pins, per_version)))
    return write_files(files, check)
