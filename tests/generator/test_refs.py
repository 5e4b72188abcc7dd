"""Dangling ``$ref``s: each is a warning naming where it is, only what needs the missing
definition is left out (a union loses the member), and ``--strict`` makes it an error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from support.cli_runner import mcpgen
from mcpgen.generator.errors import GenerateError
from mcpgen.generator.refs import prune_dangling, references
from support.revisions import synthetic_revision


def defs_with_holes() -> dict[str, Any]:
    return {
        "Ok": {"type": "object", "properties": {"a": {"type": "string"}}},
        "Union": {"anyOf": [{"$ref": "#/$defs/Ok"}, {"$ref": "#/$defs/Gone"}]},
        "Holder": {
            "type": "object",
            "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/Gone"}}},
        },
        "NeedsHolder": {"type": "object", "properties": {"h": {"$ref": "#/$defs/Holder"}}},
        "Deep": {"$ref": "#/$defs/Ok/properties/a"},  # not a definition: not judged here
    }


def test_a_union_loses_the_member_and_dependants_go_one_by_one() -> None:
    defs = defs_with_holes()
    warnings = prune_dangling(defs, "2099-01-01")
    assert set(defs) == {"Ok", "Union", "Deep"}
    assert defs["Union"] == {"anyOf": [{"$ref": "#/$defs/Ok"}]}
    assert warnings == [
        "2099-01-01: Union/anyOf/1: $ref '#/$defs/Gone' names no definition; "
        "Union leaves that member out",
        "2099-01-01: Holder/properties/items/items: $ref '#/$defs/Gone' names no definition; "
        "Holder is left out",
        "2099-01-01: NeedsHolder/properties/h: $ref '#/$defs/Holder' names no definition; "
        "NeedsHolder is left out",
    ]


def test_strict_refuses_at_the_first_one_and_changes_nothing_it_has_not_seen() -> None:
    defs = defs_with_holes()
    with pytest.raises(GenerateError, match=r"Union/anyOf/1: \$ref '#/\$defs/Gone'"):
        prune_dangling(defs, "2099-01-01", strict=True)
    assert prune_dangling({"Ok": defs["Ok"]}, "2099-01-01", strict=True) == []


@pytest.mark.parametrize(
    "garbage", [None, 1, "text", [1, {"$ref": 5}], {"$ref": None}, {"a": [{"$ref": []}]}]
)
def test_garbage_nodes_are_walked_without_error(garbage: Any) -> None:
    defs = {"Odd": garbage, "Ok": {"type": "string"}}
    assert prune_dangling(defs, "v") == []
    assert list(references({"x": [{"$ref": "#/$defs/Ok"}]})) == [("/x/0", "#/$defs/Ok")]


def test_a_revision_with_dangling_refs_generates_and_strict_stops_it(
    tmp_path: Path, fetched: Path
) -> None:
    """Through the CLI: a copy of draft whose Tool refers to a missing icon definition and
    whose content union names a missing member is pinned, generated with warnings, and
    refused under --strict."""

    def with_holes(schema: dict[str, Any]) -> None:
        defs = schema["$defs"]
        defs["Tool"]["properties"]["badge"] = {"$ref": "#/$defs/NoSuchBadge"}
        defs["ContentBlock"]["anyOf"].append({"$ref": "#/$defs/NoSuchContent"})

    mirror, env = synthetic_revision(tmp_path, "2099-02-02", fetched, with_holes)
    added = mcpgen(
        "schema", "add", "2099-02-02", "--commit", "abcdef1", "--from", str(mirror), env=env
    )
    assert added.returncode == 0, added.stderr

    out = tmp_path / "out"
    args = ("generate", "--version", "2099-02-02", "--package", "acme.mcp", "--out", str(out))
    made = mcpgen(*args, env=env)
    assert made.returncode == 0, made.stderr
    assert "Tool/properties/badge: $ref '#/$defs/NoSuchBadge'" in made.stderr
    assert "ContentBlock/anyOf/" in made.stderr and "NoSuchContent" in made.stderr
    types = (out / "acme" / "mcp" / "v2099_02_02" / "types.py").read_text()
    assert "class Tool(" not in types and "NoSuchContent" not in types

    refused = mcpgen(*args, "--strict", env=env)
    assert refused.returncode == 4
    (line,) = [x for x in refused.stderr.splitlines() if not x.startswith("  ")]
    assert line.startswith("error: schema 2099-02-02: ") and "(hint: " in line
    assert (
        mcpgen(
            "generate",
            "--version",
            "2099-02-02",
            "--check",
            "--package",
            "acme.mcp",
            "--out",
            str(out),
            env=env,
        ).returncode
        == 0
    )  # the good path still works
