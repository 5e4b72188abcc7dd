"""``schema add`` says which overrides a revision gives something to act on: every rule
finds its target in the schemas it was written for, and odd definitions break nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from support.checkout import VERSIONS
from mcpgen.generator.loader import definitions_of
from mcpgen.generator.override_usage import usage
from mcpgen.generator.overrides import load_overrides
from mcpgen.generator.patches import apply_patches, load_patches

OVERRIDES = load_overrides()


def definitions(fetched: Path, version: str) -> dict[str, Any]:
    document = json.loads((fetched / version / "schema.json").read_bytes())
    apply_patches(document, load_patches())
    return definitions_of(document)[1]


def test_every_override_acts_on_some_pinned_schema(fetched: Path) -> None:
    unused = [set(usage(OVERRIDES, definitions(fetched, v)).unused) for v in VERSIONS]
    assert set.intersection(*unused) == set()  # a rule no schema needs is dead data


def test_the_eras_use_what_they_have(fetched: Path) -> None:
    legacy = usage(OVERRIDES, definitions(fetched, "2025-11-25"))
    modern = usage(OVERRIDES, definitions(fetched, "2026-07-28"))
    assert "runtime_methods initialize" in legacy.used
    assert "runtime_methods initialize" in modern.unused
    assert "runtime_methods server/discover" in modern.used
    assert "field_defaults resultType" in modern.used
    for report in (legacy, modern):  # the roles the runtime needs are found in both eras
        assert {"roles ClientCapabilities", "roles TextContent", "roles Tool"} <= set(report.used)
    assert "open_objects {ClientCapabilities}" in modern.used


def test_a_role_upstream_moved_is_reported_with_the_rules_that_follow_it(fetched: Path) -> None:
    defs = definitions(fetched, "2026-07-28")
    del defs["DiscoverResult"]["properties"]["capabilities"]  # ServerCapabilities unreachable
    found = usage(OVERRIDES, defs)
    assert "roles ServerCapabilities" in found.unused
    assert "open_objects {ServerCapabilities}" in found.unused
    assert "roles ClientCapabilities" in found.used


@pytest.mark.parametrize(
    "defs",
    [{}, {"X": None}, {"X": [1]}, {"X": {"properties": [1]}}, {"X": {"properties": {"method": 1}}}],
)
def test_odd_definitions_are_read_without_error(defs: dict[str, Any], fetched: Path) -> None:
    found = usage(OVERRIDES, defs)
    assert found.used == []  # nothing any rule is about
    assert found.unused == usage(OVERRIDES, {}).unused
    assert usage(OVERRIDES, definitions(fetched, "2026-07-28")).used  # and it still works
