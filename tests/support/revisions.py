"""Synthetic spec revisions for tests: draft's schema, edited, in a mirror of its own,
with a pins file and schema directory of its own (the checkout's stay untouched); or
edited schemas pinned under new names, generated as a package of their own and imported."""

from __future__ import annotations

import contextlib
import importlib
import json
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from support.checkout import MIRROR
from mcpgen.generator import ir
from mcpgen.generator.emit import emit_package
from mcpgen.generator.fetch import read_schema
from mcpgen.generator.pins import PINS_FILE, Pins, module_name
from mcpgen.generator.pipeline import Inputs, build_ir, render_version


def synthetic_revision(
    tmp_path: Path, version: str, fetched: Path, edit: Callable[[dict[str, Any]], None]
) -> tuple[Path, dict[str, str]]:
    """``edit`` applied to a copy of draft's schema under ``version``: the mirror to pin it
    from (``schema add VERSION --from MIRROR``), and the environment the CLI needs for it
    (``MCPGEN_PINS``, ``MCPGEN_SCHEMA_DIR``, draft already fetched there)."""
    mirror = tmp_path / "mirror"
    shutil.copytree(MIRROR / "draft", mirror / version, ignore=shutil.ignore_patterns("examples"))
    schema_file = mirror / version / "schema.json"
    schema = json.loads(schema_file.read_text())
    edit(schema)
    schema_file.write_text(json.dumps(schema))
    pins = tmp_path / "pins.json"
    shutil.copy(PINS_FILE, pins)
    if not (tmp_path / "schema" / "draft").exists():
        shutil.copytree(fetched / "draft", tmp_path / "schema" / "draft")
    return mirror, {"MCPGEN_PINS": str(pins), "MCPGEN_SCHEMA_DIR": str(tmp_path / "schema")}


def inputs_with(copies: dict[str, str]) -> Inputs:
    """The checkout's inputs, with each new version of ``copies`` pinned like its source."""
    inputs = Inputs.load()
    versions = dict(inputs.pins.versions)
    versions.update({copy: versions[source] for copy, source in copies.items()})
    pins = Pins(upstream=inputs.pins.upstream, versions=versions)
    return Inputs(pins, inputs.overrides, inputs.patches, inputs.schema_root)


def edited_ir(inputs: Inputs, version: str, source: str, edit: Callable[[Any], Any]) -> ir.Module:
    """The IR of ``source``'s schema, edited by ``edit`` (which returns the new document),
    under the name ``version``."""
    document = edit(json.loads(read_schema(source, inputs.pins)))
    return build_ir(version, inputs, json.dumps(document).encode())


@contextlib.contextmanager
def imported(
    out: Path, package: str, modules: dict[str, ir.Module], inputs: Inputs
) -> Iterator[dict[str, ModuleType]]:
    """``modules`` generated as the package ``package`` under ``out``; each version's
    ``types`` imported (and forgotten again afterwards)."""
    rendered = {version: render_version(module, inputs) for version, module in modules.items()}
    emit_package(out / package, rendered, inputs.pins, False)
    sys.path.insert(0, str(out))
    try:
        yield {
            version: importlib.import_module(f"{package}.{module_name(version)}.types")
            for version in modules
        }
    finally:
        sys.path.remove(str(out))
        for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
            del sys.modules[name]
