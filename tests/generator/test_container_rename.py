"""A schema's bindings do not depend on what its definitions container is called.

Upstream renamed the container once, when it changed dialect (``definitions`` in the
draft-07 schemas, ``$defs`` in the 2020-12 ones). The oldest and the newest pinned schema,
copied with only the container renamed (``definitions`` ↔ ``$defs``, every ``#/<container>/X``
reference rewritten to match, ``$schema`` and everything else untouched) and pinned with
``mcpgen schema add`` under a new name, need the same patches, give every override the same
things to act on, generate the same bindings but for the version's own name, round-trip
every upstream example, and ``mcpgen diff`` finds no change between original and copy.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import pytest

from support.checkout import PINS, REPORT, VERSIONS
from support.cli_runner import mcpgen
from support.revisions import imported
from mcpgen.generator import ir
from mcpgen.generator.fetch import read_schema
from mcpgen.generator.loader import definitions_of
from mcpgen.generator.override_usage import usage
from mcpgen.generator.patches import apply_patches
from mcpgen.generator.pins import PINS_FILE, load_pins
from mcpgen.generator.pipeline import Inputs, build_ir, render_version

#: The oldest and the newest pinned schema (today one of each container name).
ENDS = sorted({VERSIONS[0], VERSIONS[-1]}, key=VERSIONS.index)
#: The name each copy is pinned under: later than every real one.
NEW_NAME = "2099-12-31"
OTHER = {"$defs": "definitions", "definitions": "$defs"}


def container_renamed(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` with its definitions container renamed and every local reference into
    it rewritten (written here, apart from the generator, so as not to share its mistakes).
    The container keeps its place among the document's keys."""
    old = "$defs" if "$defs" in document else "definitions"
    new = OTHER[old]

    def rewrite(node: Any) -> Any:
        if isinstance(node, dict):
            out = {key: rewrite(value) for key, value in node.items()}
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith(f"#/{old}/"):
                out["$ref"] = f"#/{new}/" + ref[len(f"#/{old}/") :]
            return out
        if isinstance(node, list):
            return [rewrite(value) for value in node]
        return node

    return {(new if key == old else key): rewrite(value) for key, value in document.items()}


@dataclass
class Renamed:
    """One pinned schema and its container-renamed copy, pinned side by side."""

    version: str
    inputs: Inputs
    env: dict[str, str]
    #: What ``mcpgen schema add`` printed when it pinned the copy.
    added: str
    original: ir.Module
    copy: ir.Module

    def document(self, version: str) -> dict[str, Any]:
        root = Path(self.env["MCPGEN_SCHEMA_DIR"])
        return json.loads((root / version / "schema.json").read_bytes())


def pin_copy(version: str, fetched: Path, world: Path) -> Renamed:
    """``version`` and its container-renamed copy, pinned with ``mcpgen schema add`` in a
    pins file and schema directory of their own under ``world``."""
    mirror, schemas, pins_file = world / "mirror", world / "schema", world / "pins.json"
    shutil.copytree(fetched / version, schemas / version)
    shutil.copytree(fetched / version, mirror / NEW_NAME)
    document = json.loads((fetched / version / "schema.json").read_bytes())
    copied = container_renamed(document)
    (mirror / NEW_NAME / "schema.json").write_text(json.dumps(copied, indent=2))
    shutil.copy(PINS_FILE, pins_file)
    env = {"MCPGEN_PINS": str(pins_file), "MCPGEN_SCHEMA_DIR": str(schemas)}
    commit = PINS.get(version).commit
    ran = mcpgen("schema", "add", NEW_NAME, "--commit", commit, "--from", str(mirror), env=env)
    assert ran.returncode == 0, ran.stderr
    pins = load_pins(pins_file)
    assert pins.get(NEW_NAME).era == pins.get(version).era
    assert pins.get(NEW_NAME).dialect == pins.get(version).dialect  # $schema is untouched
    base = Inputs.load()
    inputs = Inputs(pins, base.overrides, base.patches, schemas)
    return Renamed(
        version,
        inputs,
        env,
        ran.stdout,
        build_ir(version, inputs),
        build_ir(NEW_NAME, inputs),
    )


@pytest.fixture(scope="module")
def renamed_by_version(
    fetched: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Renamed]:
    return {v: pin_copy(v, fetched, tmp_path_factory.mktemp(f"container-{v}")) for v in ENDS}


@pytest.fixture(params=ENDS)
def renamed(request: pytest.FixtureRequest, renamed_by_version: dict[str, Renamed]) -> Renamed:
    return renamed_by_version[request.param]


def test_the_copy_renames_only_the_container(renamed: Renamed) -> None:
    """The fixture does what the tests below rely on: the copy differs from the original
    in the container's name and the references into it, in nothing else."""
    original, copied = renamed.document(renamed.version), renamed.document(NEW_NAME)
    old, new = definitions_of(original)[0], definitions_of(copied)[0]
    assert new == OTHER[old] and old not in copied
    text = json.dumps(copied)
    assert f'"#/{old}/' not in text and text.count(f'"#/{new}/') > 50
    assert container_renamed(copied) == original  # renamed back, it is the original


def test_the_copy_needs_every_patch_the_original_needs(renamed: Renamed) -> None:
    """Patches match by where they point inside a definition, not by the container's
    name: the same patches apply, and the patched copy is the patched original with its
    container renamed (references in what a patch adds included)."""
    original, copied = renamed.document(renamed.version), renamed.document(NEW_NAME)
    fixed = apply_patches(original, renamed.inputs.patches)
    fixed_copy = apply_patches(copied, renamed.inputs.patches)
    assert fixed.applied, "each end of the pins needs some patch: the test would prove little"
    assert fixed_copy == fixed
    assert copied == container_renamed(original)
    REPORT[f"container rename, {renamed.version}: patches applied to the copy"] = ", ".join(
        fixed_copy.applied
    )
    needs = re.search(r"^patches it needs: (.*)$", renamed.added, re.MULTILINE)
    assert needs is not None, renamed.added
    assert needs.group(1).split(", ") == fixed.applied


def test_every_override_that_acts_on_the_original_acts_on_the_copy(renamed: Renamed) -> None:
    """Overrides match definitions, inline objects and methods by name: ``schema add``
    compares the copy with the original (its nearest pinned revision) and names no rule
    that acts there and finds nothing in the copy, and no patch needed there only."""
    overrides = renamed.inputs.overrides
    original = usage(overrides, definitions_of(renamed.document(renamed.version))[1])
    copied = usage(overrides, definitions_of(renamed.document(NEW_NAME))[1])
    assert copied == original
    assert len(copied.used) > 40
    nearest = re.search(r"^nearest pinned revision of the \w+ era: (\S+)", renamed.added, re.M)
    assert nearest is not None and nearest.group(1) == renamed.version, renamed.added
    lost = re.search(
        r"^overrides that act on \S+ and find nothing in it: (.*)$", renamed.added, re.M
    )
    assert lost is not None, renamed.added
    assert lost.group(1) == "none", renamed.added
    needless = re.search(r"^patches \S+ needs and it does not: (.*)$", renamed.added, re.M)
    assert needless is not None and needless.group(1) == "none", renamed.added
    REPORT[f"container rename, {renamed.version}: overrides acting on the copy"] = (
        f"{len(copied.used)} of {len(copied.used) + len(copied.unused)}, as on the original"
    )


def test_the_copy_generates_identical_bindings(renamed: Renamed) -> None:
    """What differs by right is only the version's identity (its name, its module's name),
    which ``test_repin`` shows is all a name changes. So the IR is compared with the
    version field put aside, and the modules byte for byte with the original's schema
    generated a second time under the copy's name: no normalisation of the text that could
    hide a difference."""
    original, copy = renamed.original, renamed.copy
    assert copy.warnings == original.warnings
    assert msgspec.structs.replace(copy, version=renamed.version) == original
    source = read_schema(renamed.version, renamed.inputs.pins, renamed.inputs.schema_root)
    under_copy_name = build_ir(NEW_NAME, renamed.inputs, source)
    expected = render_version(under_copy_name, renamed.inputs)
    rendered = render_version(copy, renamed.inputs)
    assert rendered.keys() == expected.keys()
    for name, text in rendered.items():
        assert text == expected[name], f"{renamed.version}: {name} differs, container renamed"
    REPORT[f"container rename, {renamed.version}: identical modules"] = (
        f"{len(rendered)}/{len(expected)}"
    )


@pytest.mark.parametrize("version", [v for v in ENDS if PINS.get(v).examples])
def test_every_upstream_example_round_trips_through_the_copy(
    version: str, renamed_by_version: dict[str, Renamed], tmp_path: Path
) -> None:
    """The copy's bindings, generated and imported, decode every upstream example of the
    original and encode it back unchanged (upstream has examples from 2026-07-28 on)."""
    renamed = renamed_by_version[version]
    root = Path(renamed.env["MCPGEN_SCHEMA_DIR"]) / NEW_NAME / "examples"
    examples = sorted(root.rglob("*.json"))
    assert len(examples) == len(PINS.get(version).examples) > 0
    with imported(tmp_path, "renamed_mcp", {NEW_NAME: renamed.copy}, renamed.inputs) as types:
        t = types[NEW_NAME]
        for path in examples:
            data = path.read_bytes()
            decoded = t.decode(data, t.DEFINITIONS[path.parent.name])
            assert json.loads(t.encode(decoded)) == json.loads(data), path
    REPORT[f"container rename, {version}: examples round-tripped by the copy"] = (
        f"{len(examples)}/{len(examples)}"
    )


def test_mcpgen_diff_of_the_original_and_the_copy_is_empty(renamed: Renamed) -> None:
    """Read from the patched schemas too, the copy differs from the original in nothing
    ``diff`` reports (definitions, methods, capabilities, each field's constraints)."""
    ran = mcpgen("diff", renamed.version, NEW_NAME, "--format", "json", env=renamed.env)
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout)
    for section in ("definitions", "methods", "capabilities"):
        assert report[section] == {"added": [], "removed": [], "changed": []}, section
    markdown = mcpgen("diff", renamed.version, NEW_NAME, env=renamed.env)
    assert markdown.returncode == 0, markdown.stderr
    REPORT[f"container rename, {renamed.version}: mcpgen diff"] = "no difference"
