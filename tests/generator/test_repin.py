"""A schema's bindings do not depend on the name it is pinned under: every pinned schema,
pinned byte for byte under a new version name, generates what the original generates
(but for the version's own name and module name), and ``diff`` finds no change."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import msgspec
import pytest

from support.cli_runner import mcpgen
from support.checkout import VERSIONS
from mcpgen.generator.diff import diff
from mcpgen.generator.fetch import read_schema
from mcpgen.generator.pins import Pins, module_name, save_pins
from mcpgen.generator.pipeline import Inputs, build_ir, render_version

#: The name each schema is pinned under again: later than every real one, so that any
#: rule keyed by comparing version names would treat the copy differently.
NEW_NAME = "2099-12-31"


def renamed_inputs(version: str) -> Inputs:
    inputs = Inputs.load()
    versions = dict(inputs.pins.versions)
    versions[NEW_NAME] = versions[version]
    pins = Pins(upstream=inputs.pins.upstream, versions=versions)
    return Inputs(pins, inputs.overrides, inputs.patches, inputs.schema_root)


@pytest.mark.parametrize("version", VERSIONS)
def test_a_schema_under_a_new_name_generates_the_same_bindings(version: str, fetched: Path) -> None:
    inputs = renamed_inputs(version)
    data = read_schema(version, inputs.pins)
    original = build_ir(version, inputs, data)
    copy = build_ir(NEW_NAME, inputs, data)
    assert copy.warnings == original.warnings
    assert msgspec.structs.replace(copy, version=version) == original
    expected = render_version(original, inputs)
    rendered = render_version(copy, inputs)
    assert rendered.keys() == expected.keys()
    for name, text in rendered.items():
        text = text.replace(NEW_NAME, version).replace(module_name(NEW_NAME), module_name(version))
        assert text == expected[name], f"{version}: {name} differs under a new name"
    document = json.loads(data)
    changes = diff(original, copy, documents=(document, document))
    for section in (changes.definitions, changes.methods, changes.capabilities):
        assert section == type(section)((), (), ()), (version, section)


@pytest.mark.parametrize("version", VERSIONS)
def test_mcpgen_diff_of_a_schema_and_its_copy_is_empty(
    version: str, fetched: Path, tmp_path: Path
) -> None:
    inputs = renamed_inputs(version)
    schemas = tmp_path / "schema"
    shutil.copytree(fetched / version, schemas / version)
    shutil.copytree(fetched / version, schemas / NEW_NAME)
    pins = tmp_path / "pins.json"
    save_pins(inputs.pins, pins)
    env = {"MCPGEN_PINS": str(pins), "MCPGEN_SCHEMA_DIR": str(schemas)}
    ran = mcpgen("diff", version, NEW_NAME, "--format", "json", env=env)
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout)
    for section in ("definitions", "methods", "capabilities"):
        assert report[section] == {"added": [], "removed": [], "changed": []}, section
