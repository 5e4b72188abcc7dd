"""``mcpgen new``: a ready-to-install MCP server project with its bindings vendored.

The project is assembled in a hidden sibling directory and moved into place only when
complete, so a failure (or an interruption) never leaves a half-written project.
"""

from __future__ import annotations

import keyword
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from .emit import environment, format_python
from .fsops import replace_directory
from .errors import EXIT_EXISTS, McpgenError, UsageError
from .pins import PACKAGE_DIR, module_name
from .pipeline import Inputs, build_ir, generate

TRANSPORTS = ("stdio", "http")
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*$")
_FILES = {
    "pyproject.toml": "pyproject.toml.j2",
    "README.md": "README.md.j2",
    "{package}/__init__.py": "__init__.py.j2",
    "{package}/__main__.py": "__main__.py.j2",
    "{package}/server.py": "server.py.j2",
    "tests/test_server.py": "tests/test_server.py.j2",
}


def package_name(name: str) -> str:
    """The import name of a project: ``weather-server`` → ``weather_server``."""
    if not _NAME.match(name):
        raise UsageError(
            f"invalid project name {name!r}",
            "use letters and digits, optionally joined by '-' or '_', starting with a letter "
            "(e.g. weather-server)",
        )
    package = name.lower().replace("-", "_")
    if (
        keyword.iskeyword(package)
        or package in sys.stdlib_module_names
        or package in {"mcpgen", "tests"}
    ):
        raise UsageError(
            f"project name {name!r} would shadow the module {package!r}", "choose another name"
        )
    return package


def default_versions(inputs: Inputs) -> list[str]:
    """The newest dated version of each era: a new server meets today's clients of both."""
    chosen = []
    for era in ("legacy", "modern"):
        dated = [
            v for v in inputs.pins.ordered() if v != "draft" and inputs.pins.versions[v].era == era
        ]
        if dated:
            chosen.append(dated[-1])
    return chosen


def mcpgen_requirement(http: bool) -> str:
    """How the project depends on mcpgen's runtime: this checkout when run from one."""
    extra = "[http]" if http else ""
    if (PACKAGE_DIR / "pyproject.toml").exists():
        return f"mcpgen{extra} @ {PACKAGE_DIR.as_uri()}"
    return f"mcpgen{extra}>=0.1"


def new_project(
    name: str,
    versions: Sequence[str] | None = None,
    transport: str = "stdio",
    directory: Path | None = None,
    force: bool = False,
    requirement: str | None = None,
    inputs: Inputs | None = None,
    progress: Callable[[str], None] | None = None,
) -> Path:
    """Write the project ``name`` into ``directory`` (default ``./name``)."""
    package = package_name(name)
    inputs = inputs or Inputs.load()
    chosen = list(versions) if versions else default_versions(inputs)
    for v in chosen:
        inputs.pins.get(v)
    transports = list(TRANSPORTS) if transport == "both" else [transport]
    if any(t not in TRANSPORTS for t in transports):
        raise UsageError(f"unknown transport {transport!r}", "use stdio, http or both")
    target = (directory or Path.cwd() / name).resolve()
    if target.exists() and (not target.is_dir() or any(target.iterdir())) and not force:
        raise McpgenError(
            f"{target} exists and is not empty",
            "choose another --dir, or pass --force to replace it",
            EXIT_EXISTS,
        )
    typed = max(chosen, key=lambda v: (v != "draft", v))  # handlers use the newest types
    module = build_ir(typed, inputs)
    results = {m.name: m.result_type for m in module.methods if m.direction == "client"}
    context = {
        "name": name,
        "package": package,
        "versions": chosen,
        "transports": transports,
        "typed": typed,
        "typed_module": module_name(typed),
        "mcpgen_requirement": requirement or mcpgen_requirement("http" in transports),
        "call_tool_result": results["tools/call"],
        "read_resource_result": results["resources/read"],
        "get_prompt_result": results["prompts/get"],
    }
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        env = environment()
        for relative, template in _FILES.items():
            path = staging / relative.format(package=package)
            path.parent.mkdir(parents=True, exist_ok=True)
            text = env.get_template(f"new/{template}").render(**context)
            path.write_text(format_python(text) if path.suffix == ".py" else text)
        if progress:
            progress(f"vendoring bindings for {', '.join(chosen)} into {package}/mcp")
        generate(chosen, f"{package}.mcp", staging, inputs=inputs, jobs=1)
        replace_directory(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target
