"""Render modules with jinja2, format them with black, and write (or check) the package.

Output layout for ``--package acme.mcp --out DIR``::

    DIR/acme/mcp/__init__.py           version index (VERSIONS, ERAS, LATEST, load)
    DIR/acme/mcp/_support.py           decode support, copied verbatim (msgspec only)
    DIR/acme/mcp/v2025_11_25/__init__.py
    DIR/acme/mcp/v2025_11_25/types.py  …one subpackage per version

Files are written only when their content changes, so output is byte-identical across runs
and ``--check`` can name exactly the files that would change.
"""

from __future__ import annotations

import keyword
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import jinja2

from .errors import UsageError
from .pins import PACKAGE_DIR, Pins, module_name, version_sort_key

TEMPLATES_DIR = PACKAGE_DIR / "templates"
SUPPORT_FILE = TEMPLATES_DIR / "package" / "_support.py"


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


@dataclass(frozen=True)
class OutputFile:
    path: Path
    content: str


def format_all(sources: dict[Path, str], jobs: int) -> dict[Path, str]:
    """Format sources, in parallel processes when several large files are pending.

    Identical sources (e.g. ``draft`` while it equals the newest release) format once.
    """
    unique = sorted(set(sources.values()), key=len, reverse=True)
    if jobs > 1 and len(unique) > 1:
        with ProcessPoolExecutor(max_workers=min(jobs, len(unique))) as pool:
            formatted = dict(zip(unique, pool.map(format_python, unique)))
    else:
        formatted = {src: format_python(src) for src in unique}
    return {path: formatted[src] for path, src in sources.items()}


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


def package_index(root: Path, pins: Pins, extra: dict[str, str]) -> str:
    """The package ``__init__``: every version subpackage present under ``root``."""
    present = {}
    for version in pins.ordered():
        if (root / module_name(version) / "__init__.py").exists() or version in extra:
            present[version] = pins.versions[version].era
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
    files.append(OutputFile(root / "_support.py", SUPPORT_FILE.read_text()))
    return write_files(files, check)
