"""``schema add`` says which overrides a revision gives something to act on: every rule
finds its target in the schemas it was written for, odd definitions break nothing, and a
new revision is reported by what differs from the nearest pinned revision of its era."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from support.checkout import MIRROR, PINS, VERSIONS
from support.cli_runner import mcpgen
from support.revisions import synthetic_revision
from mcpgen.generator.loader import definitions_of
from mcpgen.generator.override_usage import Profile, Usage, nearest, usage
from mcpgen.generator.overrides import load_overrides
from mcpgen.generator.patches import apply_patches, load_patches
from mcpgen.generator.pins import PINS_FILE

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


def pinning_env(tmp_path: Path, fetched: Path, versions: list[str]) -> dict[str, str]:
    """A pins file and a schema directory of a test's own, ``versions`` fetched there."""
    pins = tmp_path / "pins.json"
    shutil.copy(PINS_FILE, pins)
    for version in versions:
        shutil.copytree(fetched / version, tmp_path / "schema" / version)
    return {"MCPGEN_PINS": str(pins), "MCPGEN_SCHEMA_DIR": str(tmp_path / "schema")}


def said(stdout: str, start: str) -> str:
    """What the line of ``schema add`` beginning with ``start`` says after the colon."""
    (line,) = [line for line in stdout.splitlines() if line.startswith(start)]
    return line.split(": ", 1)[1]


def test_schema_add_of_a_copy_of_a_pinned_revision_has_nothing_to_report(
    tmp_path: Path, fetched: Path
) -> None:
    """A pinned revision pinned again, under a new name or re-pinned under its own, is
    compared with the nearest pinned revision of its era: itself. No rule and no patch
    differs, whatever rules the other era's revisions need."""
    env = pinning_env(tmp_path, fetched, VERSIONS)
    mirror = tmp_path / "mirror"
    shutil.copytree(MIRROR / "2025-06-18", mirror / "2099-01-01")
    added = mcpgen(
        "schema", "add", "2099-01-01", "--commit", "abcdef1", "--from", str(mirror), env=env
    )
    assert added.returncode == 0, added.stderr
    assert said(added.stdout, "nearest pinned revision") == "2025-06-18"
    assert said(added.stdout, "patches 2025-06-18 needs and it does not") == "none"
    assert said(added.stdout, "overrides that act on 2025-06-18") == "none"
    assert (
        said(added.stdout, "patches it needs") == "elicit-result-number, jsonrpc-error-optional-id"
    )

    commit = PINS.versions["2025-11-25"].commit
    again = ("schema", "add", "2025-11-25", "--commit", commit, "--from", str(MIRROR), "--force")
    added = mcpgen(*again, env=env)
    assert added.returncode == 0, added.stderr
    before = "2025-11-25 as pinned before"
    assert said(added.stdout, "nearest pinned revision of the legacy era") == before
    assert said(added.stdout, f"overrides that act on {before}") == "none"
    assert said(added.stdout, f"patches {before} needs and it does not") == "none"


def without_server_capabilities(schema: dict[str, Any]) -> None:
    """Upstream moves what ``ServerCapabilities`` is found by (``server/discover``'s
    result no longer carries ``capabilities``), so the rules about it lose their target."""
    del schema["$defs"]["DiscoverResult"]["properties"]["capabilities"]
    schema["$defs"]["DiscoverResult"]["required"].remove("capabilities")


def test_schema_add_names_the_rules_a_revision_takes_the_target_from(
    tmp_path: Path, fetched: Path
) -> None:
    """A revision where a rule that acted on its nearest pinned revision finds nothing is
    reported by that rule alone (not with every rule of the other era); with no revision
    of its era fetched to compare with, every idle rule is listed, as before."""
    mirror, env = synthetic_revision(tmp_path, "2099-01-01", fetched, without_server_capabilities)
    add = ("schema", "add", "2099-01-01", "--commit", "abcdef1", "--from", str(mirror))
    alone = {**env, "MCPGEN_SCHEMA_DIR": str(tmp_path / "alone")}
    added = mcpgen(*add, env=alone)
    assert added.returncode == 0, added.stderr
    assert said(added.stdout, "nearest pinned revision") == "none fetched to compare with"
    idle = said(added.stdout, "overrides with nothing to act on in it").split(", ")
    assert "runtime_methods initialize" in idle and "roles ServerCapabilities" in idle
    assert said(added.stdout, "patches it does not need") != "none"

    added = mcpgen(*add, "--force", env=env)  # draft is fetched in env
    assert added.returncode == 0, added.stderr
    assert said(added.stdout, "nearest pinned revision of the modern era") == "draft"
    lost = said(added.stdout, "overrides that act on draft and find nothing in it")
    assert lost == "roles ServerCapabilities, open_objects {ServerCapabilities}"
    assert said(added.stdout, "patches draft needs and it does not") == "none"


def test_the_nearest_revision_is_the_closest_match_of_the_same_era() -> None:
    """Of the pinned revisions of its era, the one whose patches and rules a revision
    matches most closely; among equals the first given (the closest in version order);
    none of another era."""

    def made(label: str, era: str, used: list[str], patches: list[str]) -> Profile:
        return Profile(label, era, patches, [], Usage(used, []))

    new = made("new", "modern", ["a", "b"], ["p"])
    near = [
        made("legacy", "legacy", ["a", "b"], ["p"]),
        made("older", "modern", ["a"], ["p"]),
        made("same", "modern", ["a", "b"], ["p"]),
        made("same-later", "modern", ["a", "b"], ["p"]),
    ]
    assert nearest(new, near) == near[2]
    assert nearest(new, near[:2]) == near[1]
    assert nearest(new, near[:1]) is None
