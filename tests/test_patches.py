"""Each upstream-defect patch still finds its defect, and says so once upstream fixes it."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from mcpgen.generator.patches import (
    DefectGone,
    Patch,
    apply_operation,
    apply_patches,
    load_patches,
)

PATCHES = load_patches()
CASES = [(p, v) for p in PATCHES for v in p.versions]


def test_every_patch_has_a_reason_and_a_test() -> None:
    for patch in PATCHES:
        assert len(patch.reason) > 40, patch.id
        assert patch.ops[0].op == "test", f"{patch.id}: first op must assert the defect"


@pytest.mark.parametrize(("patch", "version"), CASES, ids=[f"{p.id}@{v}" for p, v in CASES])
def test_upstream_still_has_the_defect(patch: Patch, version: str, fetched: Path) -> None:
    """Fails once upstream fixes the defect: then the patch must go."""
    doc = json.loads((fetched / version / "schema.json").read_bytes())
    for op in patch.ops:
        apply_operation(doc, op, patch)


@pytest.mark.parametrize(("patch", "version"), CASES, ids=[f"{p.id}@{v}" for p, v in CASES])
def test_a_fixed_upstream_makes_the_patch_fail_loudly(
    patch: Patch, version: str, fetched: Path
) -> None:
    doc = json.loads((fetched / version / "schema.json").read_bytes())
    fixed = copy.deepcopy(doc)
    for op in patch.ops[1:]:
        apply_operation(fixed, op, patch)  # what a fixed upstream would publish
    with pytest.raises(DefectGone, match=f"patch {patch.id}"):
        apply_patches(fixed, version, (patch,))


def test_patches_change_what_they_claim(fetched: Path) -> None:
    doc = json.loads((fetched / "2026-07-28" / "schema.json").read_bytes())
    applied = apply_patches(doc, "2026-07-28", PATCHES)
    assert "jsonvalue-scalars" in applied
    assert doc["$defs"]["JSONValue"]["anyOf"][2]["type"] == [
        "string",
        "number",
        "boolean",
        "null",
    ]
    assert doc["$defs"]["ClientNotification"] == {"$ref": "#/$defs/CancelledNotification"}
