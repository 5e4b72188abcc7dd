"""The whole generator as functions: pinned schema → IR → rendered modules → package."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import msgspec

from . import ir
from .emit import emit_package, environment, package_path
from .fetch import read_schema
from .imports import prune_unused
from .loader import load_module
from .methods import build_methods
from .overrides import Overrides, load_overrides
from .patches import Patch, load_patches
from .pins import PACKAGE_DIR, Pins, load_pins
from .render import Renderer
from .stubs import build_stubs
from .unions import analyze

DEFAULT_PACKAGE = "mcpgen.generated"


@dataclass
class Inputs:
    """Everything the pipeline reads besides the schemas themselves."""

    pins: Pins
    overrides: Overrides
    patches: tuple[Patch, ...]
    schema_root: Path | None = None
    #: A dangling ``$ref`` is an error, not a warning and a definition left out.
    strict: bool = False

    @classmethod
    def load(cls, schema_root: Path | None = None, strict: bool = False) -> Inputs:
        return cls(load_pins(), load_overrides(), load_patches(), schema_root, strict)


def _warn(message: str) -> None:
    print(message, file=sys.stderr)


def build_ir(version: str, inputs: Inputs, schema_bytes: bytes | None = None) -> ir.Module:
    """The complete IR of one pinned version (unions analysed)."""
    pin = inputs.pins.get(version)
    if schema_bytes is None:
        schema_bytes = read_schema(version, inputs.pins, inputs.schema_root)
    loaded = load_module(
        version, pin, schema_bytes, inputs.overrides, inputs.patches, strict=inputs.strict
    )
    module = analyze(loaded)
    return msgspec.structs.replace(module, methods=build_methods(module, inputs.overrides))


def render_version(module: ir.Module, inputs: Inputs) -> dict[str, str]:
    """Unformatted source of each file of one version's subpackage."""
    env = environment()
    pin = inputs.pins.get(module.version)
    view = Renderer(module).view(pin.commit)
    stubs = build_stubs(module, inputs.overrides)
    files = {
        "__init__.py": env.get_template("version_init.py.j2").render(
            version=module.version, era=module.era, methods=module.methods
        ),
        "types.py": env.get_template("types.py.j2").render(m=view),
    }
    for name in ("methods", "server", "client"):
        files[f"{name}.py"] = prune_unused(env.get_template(f"{name}.py.j2").render(s=stubs))
    return files


def package_root(package: str, out: Path | None) -> Path:
    """The directory of ``package`` under ``out`` (default: the current directory).

    mcpgen never writes into its own installation: in a source checkout, ``mcpgen
    generate`` run from the checkout's root writes ``mcpgen/generated``, which is linked
    to the checkout's ``generated/`` (what ``make generate`` does).
    """
    return (out or Path.cwd()) / package_path(package)


def bundled_root() -> Path:
    """Where the bindings this mcpgen imports as ``mcpgen.generated`` live (read only)."""
    return PACKAGE_DIR / "generated"


def generate(
    versions: list[str],
    package: str = DEFAULT_PACKAGE,
    out: Path | None = None,
    check: bool = False,
    inputs: Inputs | None = None,
    progress: Callable[[str], None] | None = None,
    jobs: int = 2,
) -> list[Path]:
    """Generate ``versions`` into ``out``/``package``; returns the files changed (or that
    would change, with ``check``)."""
    inputs = inputs or Inputs.load()
    root = package_root(package, out)
    per_version = {}
    for version in versions:
        if progress:
            progress(f"{version}: loading schema and building bindings")
        module = build_ir(version, inputs)
        for warning in module.warnings:
            (progress or _warn)(f"warning: {warning}")
        per_version[version] = render_version(module, inputs)
    return emit_package(root, per_version, inputs.pins, check, jobs=jobs, progress=progress)
