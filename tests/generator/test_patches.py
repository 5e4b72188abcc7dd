"""Patches apply where their tests find the defect, whatever the version is called: every
patch is still needed by some pinned schema, a fixed upstream simply no longer needs it,
and a schema pinned under a new name gets exactly the fixes of the original."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import msgspec
import pytest

from mcpgen.generator.errors import GenerateError
from mcpgen.generator.patches import Patch, apply_patches, change, load_patches, needed

PATCHES = load_patches()
IDS = [p.id for p in PATCHES]


def schema(fetched: Path, version: str) -> dict[str, object]:
    return json.loads((fetched / version / "schema.json").read_bytes())


def test_every_patch_has_a_reason_and_tests_first() -> None:
    for patch in PATCHES:
        assert len(patch.reason) > 40, patch.id
        assert patch.ops[0].op == "test" and patch.changes, patch.id


@pytest.mark.parametrize("patch", PATCHES, ids=IDS)
def test_every_patch_is_still_needed_somewhere(patch: Patch, fetched: Path, pins: object) -> None:
    """Fails once upstream fixes the defect in every pinned schema: then the patch goes."""
    from support.checkout import VERSIONS

    assert any(needed(schema(fetched, v), patch) for v in VERSIONS), patch.id


@pytest.mark.parametrize("patch", PATCHES, ids=IDS)
def test_a_fixed_upstream_no_longer_needs_the_patch(patch: Patch, fetched: Path) -> None:
    from support.checkout import VERSIONS

    version = next(v for v in VERSIONS if needed(schema(fetched, v), patch))
    fixed = schema(fetched, version)
    for op in patch.changes:
        change(fixed, op, patch)  # what a fixed upstream would publish
    before = copy.deepcopy(fixed)
    report = apply_patches(fixed, (patch,))
    assert report.applied == [] and report.not_needed == [patch.id]
    assert fixed == before  # nothing touched, no error


def test_a_schema_under_any_name_gets_the_same_fixes(fetched: Path) -> None:
    from support.checkout import VERSIONS

    for version in VERSIONS:
        original, renamed = schema(fetched, version), schema(fetched, version)
        assert apply_patches(original, PATCHES) == apply_patches(renamed, PATCHES)
        assert original == renamed


def test_patches_change_what_they_claim(fetched: Path) -> None:
    doc = schema(fetched, "2026-07-28")
    report = apply_patches(doc, PATCHES)
    assert "jsonvalue-scalars" in report.applied
    assert "jsonrpc-error-optional-id" in report.not_needed  # a 2024-2025 defect
    defs: dict[str, dict[str, object]] = doc["$defs"]  # type: ignore[assignment]
    assert defs["JSONValue"]["anyOf"][2]["type"] == [  # type: ignore[index]
        "string",
        "number",
        "boolean",
        "null",
    ]
    assert defs["ClientNotification"] == {"$ref": "#/$defs/CancelledNotification"}


@pytest.mark.parametrize(
    "ops",
    [
        [{"op": "replace", "path": "/a", "value": 1}],  # no test: it would apply anywhere
        [{"op": "test", "path": "/a", "value": 1}],  # tests only: changes nothing
        [  # a test after a change
            {"op": "test", "path": "/a", "value": 1},
            {"op": "replace", "path": "/a", "value": 2},
            {"op": "test", "path": "/a", "value": 2},
        ],
    ],
)
def test_a_malformed_patch_file_is_refused_and_the_real_one_still_loads(
    ops: list[object], tmp_path: Path
) -> None:
    bad = tmp_path / "patches.json"
    bad.write_text(json.dumps([{"id": "x", "reason": "r", "ops": ops}]))
    with pytest.raises(GenerateError, match="patch x"):
        load_patches(bad)
    garbage = tmp_path / "garbage.json"
    garbage.write_bytes(b"\xff{not json")
    with pytest.raises(GenerateError, match="invalid patches"):
        load_patches(garbage)
    assert load_patches() == PATCHES


def test_tests_that_hold_on_a_schema_lacking_the_path_are_reported(tmp_path: Path) -> None:
    file = tmp_path / "patches.json"
    ops = [
        {"op": "test", "path": "/gone", "absent": True},
        {"op": "replace", "path": "/missing/deeper", "value": 1},
    ]
    file.write_text(json.dumps([{"id": "loose", "reason": "r", "ops": ops}]))
    (patch,) = load_patches(file)
    with pytest.raises(GenerateError, match="patch loose"):
        apply_patches({"other": 1}, (patch,))


def _patch(*ops: dict[str, object]) -> Patch:
    file = json.dumps([{"id": "p", "reason": "r", "ops": list(ops)}])
    return msgspec.json.decode(file, type=tuple[Patch, ...])[0]


@pytest.mark.parametrize("written", ["$defs", "definitions"])
@pytest.mark.parametrize("container", ["$defs", "definitions"])
def test_a_patch_finds_its_definition_whatever_the_container_is_called(
    written: str, container: str
) -> None:
    """A path into the definitions container, under either name, points into the one the
    schema has; a ``$ref`` a test compares or a change writes is read and written in the
    schema's own spelling, so the patched schema refers only to what it defines."""
    other = "definitions" if written == "$defs" else "$defs"
    patch = _patch(
        {"op": "test", "path": f"/{written}/A/items", "value": {"$ref": f"#/{other}/B"}},
        {"op": "test", "path": f"/{written}/A/default", "absent": True},
        {"op": "replace", "path": f"/{written}/A/items", "value": {"$ref": f"#/{written}/C"}},
    )
    doc = {
        "$schema": "x",
        container: {"A": {"type": "array", "items": {"$ref": f"#/{container}/B"}}, "B": {}},
    }
    assert apply_patches(doc, (patch,)).applied == ["p"]
    assert doc[container]["A"]["items"] == {"$ref": f"#/{container}/C"}
    assert list(doc) == ["$schema", container]  # the container keeps its name
    assert apply_patches(doc, (patch,)).not_needed == ["p"]  # fixed: the test fails now


def test_a_container_patch_on_a_schema_without_definitions_is_not_needed() -> None:
    """A schema with no container (or a container that is no object) lacks the defect:
    nothing changes, nothing fails; a good schema is patched afterwards all the same."""
    patch = _patch(
        {"op": "test", "path": "/$defs/A/anyOf", "absent": True},
        {"op": "add", "path": "/$defs/A/anyOf", "value": [{"$ref": "#/$defs/A"}]},
    )
    for garbage in ({}, {"$defs": []}, {"definitions": "x"}, {"$defs": None, "other": {}}):
        before = copy.deepcopy(garbage)
        assert apply_patches(garbage, (patch,)).not_needed == ["p"]
        assert garbage == before
    good = {"$defs": [], "definitions": {"A": {}}}  # the container that is an object
    assert apply_patches(good, (patch,)).applied == ["p"]
    assert good["definitions"] == {"A": {"anyOf": [{"$ref": "#/definitions/A"}]}}


def test_the_patches_file_spells_the_container_one_way() -> None:
    """``schema/patches.json`` writes every path into the container as ``/$defs/...``, and
    every ``$ref`` as ``#/$defs/...``: one spelling, read as whatever a schema uses."""
    for patch in PATCHES:
        for op in patch.ops:
            assert not op.path.startswith("/definitions/"), (patch.id, op.path)
            assert "#/definitions/" not in json.dumps(op.value), (patch.id, op.path)
