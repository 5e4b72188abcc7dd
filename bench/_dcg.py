"""datamodel-code-generator as a peer: its CLI on a pinned schema, and loading its output."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from ._util import Completed, run, tool

UNDECODABLE_WARNING = "msgspec cannot decode the union"
"""Marker of dcg's own warning that msgspec will reject a generated union."""


def schema_file(version: str) -> Path:
    from mcpgen.generator.pins import schema_dir

    return schema_dir() / version / "schema.json"


def command(version: str, output: Path) -> list[str]:
    """The CLI line the benchmarks compare against (msgspec output, defaults otherwise)."""
    return [
        tool("datamodel-codegen"),
        "--input",
        str(schema_file(version)),
        "--input-file-type",
        "jsonschema",
        "--output-model-type",
        "msgspec.Struct",
        "--output",
        str(output),
    ]


def generate(version: str, output: Path) -> Completed:
    """Run the CLI for one version, writing a single module to ``output``."""
    return run(command(version, output))


def load(path: Path, name: str) -> ModuleType:
    """Import a generated module from a file; registered in ``sys.modules`` so msgspec can
    resolve its string annotations."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
