"""``mcpgen diff`` sees what the IR comparison alone did not: constraints, ``format``,
``default`` and other structural keywords, field by field, while prose stays no change;
a union that changed is shown by the members it gained and lost."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import msgspec
import pytest

from support.cli_runner import mcpgen
from support.checkout import VERSIONS
from mcpgen.generator import ir
from mcpgen.generator.diff import Diff, FieldChange, diff, to_json, to_markdown
from mcpgen.generator.diff_fields import keyword_changes, load_document
from mcpgen.generator.patches import apply_patches
from mcpgen.generator.pins import PINS_FILE
from mcpgen.generator.pipeline import Inputs, build_ir

NEWEST = VERSIONS[-1]
SYNTHETIC = "2099-01-01"


@pytest.fixture(scope="module")
def inputs(fetched: Path) -> Inputs:
    return Inputs.load()


@pytest.fixture(scope="module")
def raw(fetched: Path) -> dict[str, Any]:
    """The newest pinned schema as fetched (unpatched)."""
    return json.loads((fetched / NEWEST / "schema.json").read_bytes())


def defs(doc: dict[str, Any]) -> dict[str, Any]:
    return doc.get("$defs") or doc["definitions"]


def three_changes(doc: dict[str, Any]) -> dict[str, Any]:
    """A revision with a ``maxItems``, a ``format`` and a ``default`` change, and changes
    to prose only (which are no change)."""
    doc = copy.deepcopy(doc)
    d = defs(doc)
    d["CallToolResult"]["properties"]["content"]["maxItems"] = 50
    assert d["Resource"]["properties"]["uri"]["format"] == "uri"
    d["Resource"]["properties"]["uri"]["format"] = "uri-reference"
    d["CallToolResult"]["properties"]["isError"]["default"] = False
    # prose: a definition's description, a property's, a title, and a description added
    # to a property that is itself called ``description``
    d["Tool"]["description"] = "Reworded."
    d["Resource"]["properties"]["uri"]["description"] = "Reworded too."
    d["Resource"]["properties"]["uri"]["title"] = "URI"
    d["BooleanSchema"]["properties"]["description"]["description"] = "What it is."
    return doc


def patched(doc: dict[str, Any], inputs: Inputs) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    apply_patches(doc, inputs.patches)
    return doc


def module_of(doc: dict[str, Any], inputs: Inputs, version: str) -> ir.Module:
    module = build_ir(NEWEST, inputs, schema_bytes=json.dumps(doc).encode())
    return msgspec.structs.replace(module, version=version)


def api_diff(raw: dict[str, Any], new: dict[str, Any], inputs: Inputs) -> Diff:
    return diff(
        module_of(raw, inputs, NEWEST),
        module_of(new, inputs, SYNTHETIC),
        documents=(load_document(NEWEST, inputs.pins, inputs.patches), patched(new, inputs)),
    )


def changes_of(d: Diff) -> dict[str, list[FieldChange]]:
    return {c.name: list(c.changes) for c in d.definitions.changed}


def changes_in_json(d: dict[str, Any]) -> dict[str, list[dict[str, str]]]:
    return {c["name"]: c["changes"] for c in d["definitions"]["changed"]}


EXPECTED_JSON = {
    "CallToolResult": [
        {"field": "content", "change": "constraint", "keyword": "maxItems", "after": "50"},
        {"field": "isError", "change": "default", "keyword": "default", "after": "false"},
    ],
    "Resource": [
        {
            "field": "uri",
            "change": "format",
            "keyword": "format",
            "before": '"uri"',
            "after": '"uri-reference"',
        }
    ],
}
EXPECTED_MARKDOWN = [
    "- `CallToolResult`:",
    "  - `content`: `maxItems` added (`50`)",
    "  - `isError`: `default` added (`false`)",
    "- `Resource`:",
    '  - `uri`: `format` `"uri"` → `"uri-reference"`',
]


def assert_only_definitions_changed(d: dict[str, Any]) -> None:
    for section in ("definitions", "methods", "capabilities"):
        for part in ("added", "removed"):
            assert d[section][part] == [], (section, part)
    assert d["methods"]["changed"] == []


def test_diff_reports_max_items_format_and_default_and_not_prose(
    raw: dict[str, Any], inputs: Inputs
) -> None:
    d = api_diff(raw, three_changes(raw), inputs)
    assert changes_of(d) == {
        "CallToolResult": [
            FieldChange("content", "constraint", "maxItems", None, "50"),
            FieldChange("isError", "default", "default", None, "false"),
        ],
        "Resource": [FieldChange("uri", "format", "format", '"uri"', '"uri-reference"')],
    }
    as_json = json.loads(to_json(d))
    assert_only_definitions_changed(as_json)
    assert changes_in_json(as_json) == EXPECTED_JSON
    markdown = to_markdown(d)
    assert "## Definitions (0 added, 0 removed, 2 changed)" in markdown
    assert markdown.split("## Definitions")[1].splitlines()[1:] == EXPECTED_MARKDOWN


def test_a_description_only_revision_is_no_change(raw: dict[str, Any], inputs: Inputs) -> None:
    doc = copy.deepcopy(raw)
    for name, node in defs(doc).items():
        node["description"] = f"{name}, reworded."
        for prop in (node.get("properties") or {}).values():
            if isinstance(prop, dict):
                prop["description"] = "Reworded."
                prop["$comment"] = "new"
    d = api_diff(raw, doc, inputs)
    assert d.definitions.changed == ()


def test_nested_paths_enums_scalars_and_structure(raw: dict[str, Any], inputs: Inputs) -> None:
    doc = copy.deepcopy(raw)
    d = defs(doc)
    values = d["CompleteResult"]["properties"]["completion"]["properties"]["values"]
    values["maxItems"] = 50  # was 100, one level into an inline object
    values["items"]["minLength"] = 1  # the items of that array
    d["Tool"]["properties"]["inputSchema"]["additionalProperties"] = False  # was {}
    d["Tool"]["properties"]["inputSchema"]["properties"]["$schema"]["format"] = "uri"
    d["Cursor"]["maxLength"] = 1024  # a scalar definition
    d["Role"]["enum"] = ["assistant", "user", "system"]  # an enum definition
    d["Annotations"]["properties"]["priority"]["maximum"] = 10
    d["Annotations"]["properties"]["priority"]["exclusiveMinimum"] = 0
    changes = changes_of(api_diff(raw, doc, inputs))
    assert changes["CompleteResult"] == [
        FieldChange("completion.values", "constraint", "maxItems", "100", "50"),
        FieldChange("completion.values[]", "constraint", "minLength", None, "1"),
    ]
    assert changes["Tool"] == [
        FieldChange("inputSchema", "structure", "additionalProperties", None, "false"),
        FieldChange("inputSchema.$schema", "format", "format", None, '"uri"'),
    ]
    assert changes["Cursor"] == [
        FieldChange("(definition)", "constraint", "maxLength", None, "1024")
    ]
    # the IR already says the enum gained a value; its keyword is not repeated
    assert changes["Role"] == [FieldChange("(definition)", "members", added=("'system'",))]
    assert changes["Annotations"] == [
        FieldChange("priority", "constraint", "exclusiveMinimum", None, "0"),
        FieldChange("priority", "constraint", "maximum", "1", "10"),
    ]


def test_an_items_type_change_is_reported_once(raw: dict[str, Any], inputs: Inputs) -> None:
    doc = copy.deepcopy(raw)
    values = defs(doc)["CompleteResult"]["properties"]["completion"]["properties"]["values"]
    values["items"] = {"type": "integer", "minimum": 0}
    changes = changes_of(api_diff(raw, doc, inputs))
    # the hoisted inline object's IR comparison says the type; the keyword says the rest
    assert [c for c in changes["CompleteResult"] if c.change != "constraint"] == []
    assert changes["CompleteResult"] == [
        FieldChange("completion.values[]", "constraint", "minimum", None, "0")
    ]
    inline = [c for n, cs in changes.items() if n != "CompleteResult" for c in cs]
    assert inline == [FieldChange("values", "retyped", None, "array of string", "array of integer")]


def test_pinned_revisions_show_the_real_constraint_change(inputs: Inputs) -> None:
    """Across every pinned revision (both dialects, inline objects turned into named
    definitions, unions reordered) the keyword comparison finds the one real change:
    ``completion.values`` got its ``maxItems`` in 2026-07-28."""
    found = []
    built = {version: build_ir(version, inputs) for version in VERSIONS}  # each once
    for old, new in zip(VERSIONS, VERSIONS[1:]):
        d = diff(built[old], built[new], inputs=inputs)
        for change in d.definitions.changed:
            found += [(new, change.name, f) for f in change.changes if f.keyword is not None]
    assert found == [
        (
            "2026-07-28",
            "CompleteResult",
            FieldChange("completion.values", "constraint", "maxItems", None, "100"),
        )
    ]


def test_mcpgen_diff_reports_them_for_a_pinned_revision(
    tmp_path: Path, fetched: Path, raw: dict[str, Any]
) -> None:
    mirror = tmp_path / "mirror" / SYNTHETIC
    mirror.mkdir(parents=True)
    (mirror / "schema.json").write_text(json.dumps(three_changes(raw)))
    pins = tmp_path / "pins.json"
    shutil.copy(PINS_FILE, pins)
    env = {"MCPGEN_PINS": str(pins), "MCPGEN_SCHEMA_DIR": str(tmp_path / "schema")}
    shutil.copytree(fetched / NEWEST, tmp_path / "schema" / NEWEST)
    added = mcpgen(
        "schema", "add", SYNTHETIC, "--commit", "abcdef1", "--from", str(mirror.parent), env=env
    )
    assert added.returncode == 0, added.stderr

    result = mcpgen("diff", NEWEST, SYNTHETIC, "--format", "json", env=env)
    assert result.returncode == 0, result.stderr
    d = json.loads(result.stdout)
    assert (d["old"], d["new"]) == (NEWEST, SYNTHETIC)
    assert_only_definitions_changed(d)
    assert changes_in_json(d) == EXPECTED_JSON

    result = mcpgen("diff", NEWEST, SYNTHETIC, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("## Definitions")[1].splitlines()[1:] == EXPECTED_MARKDOWN


def one_more_content_block(doc: dict[str, Any]) -> dict[str, Any]:
    """A revision whose ``ContentBlock`` union gains one member, a new definition."""
    doc = copy.deepcopy(doc)
    d = defs(doc)
    d["VideoContent"] = {
        "type": "object",
        "description": "A video.",
        "properties": {
            "type": {"const": "video", "type": "string"},
            "data": {"type": "string", "format": "byte"},
            "mimeType": {"type": "string"},
        },
        "required": ["type", "data", "mimeType"],
    }
    d["ContentBlock"]["anyOf"].append({"$ref": "#/$defs/VideoContent"})
    return doc


def test_a_union_that_gains_a_member_is_reported_by_that_member_alone(
    tmp_path: Path, fetched: Path, raw: dict[str, Any]
) -> None:
    """``mcpgen diff`` on a revision adding one member to a union: the union's entry names
    that member and nothing else (not its member lists before and after), in both formats."""
    mirror = tmp_path / "mirror" / SYNTHETIC
    mirror.mkdir(parents=True)
    (mirror / "schema.json").write_text(json.dumps(one_more_content_block(raw)))
    pins = tmp_path / "pins.json"
    shutil.copy(PINS_FILE, pins)
    env = {"MCPGEN_PINS": str(pins), "MCPGEN_SCHEMA_DIR": str(tmp_path / "schema")}
    shutil.copytree(fetched / NEWEST, tmp_path / "schema" / NEWEST)
    added = mcpgen(
        "schema", "add", SYNTHETIC, "--commit", "abcdef1", "--from", str(mirror.parent), env=env
    )
    assert added.returncode == 0, added.stderr

    result = mcpgen("diff", NEWEST, SYNTHETIC, "--format", "json", env=env)
    assert result.returncode == 0, result.stderr
    d = json.loads(result.stdout)
    assert d["definitions"]["added"] == ["VideoContent"]
    union = {"field": "(definition)", "change": "members", "added": ["VideoContent"]}
    assert changes_in_json(d)["ContentBlock"] == [union]

    result = mcpgen("diff", NEWEST, SYNTHETIC, env=env)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.split("## Definitions")[1].splitlines()
    at = lines.index("- `ContentBlock`:")
    entry = []
    for line in lines[at + 1 :]:
        if not line.startswith("  "):
            break
        entry.append(line)
    assert entry == ["  - `(definition)`: members added: `VideoContent`"]


def test_union_members_gained_and_lost_in_fields_items_and_values(
    raw: dict[str, Any], inputs: Inputs
) -> None:
    """A field typed by an inline union, the items of an array of one, and the values of a
    map of one report members added and removed at their path; a reordered union, and a
    type that is no union on either side, are reported as before."""
    doc = copy.deepcopy(raw)
    d = defs(doc)
    ref = d["CompleteRequestParams"]["properties"]["ref"]
    ref["anyOf"] = [ref["anyOf"][1], ref["anyOf"][0]]  # reordered: no change
    content = d["SamplingMessage"]["properties"]["content"]
    content["anyOf"] = [m for m in content["anyOf"] if "AudioContent" not in json.dumps(m)]
    content["anyOf"].append({"type": "string"})
    values = d["ElicitResult"]["properties"]["content"]["additionalProperties"]
    values["anyOf"].append({"type": "null"})
    d["Cursor"]["type"] = "integer"  # string → integer: retyped
    changes = changes_of(api_diff(raw, doc, inputs))
    assert "CompleteRequestParams" not in changes
    assert changes["SamplingMessage"] == [
        FieldChange("content", "members", added=("string",), removed=("AudioContent",))
    ]
    assert changes["ElicitResult"] == [FieldChange("content{}", "members", added=("null",))]
    assert changes["Cursor"] == [FieldChange("(definition)", "retyped", None, "string", "integer")]
    markdown = to_markdown(api_diff(raw, doc, inputs))
    assert "  - `content`: members added: `string`; members removed: `AudioContent`" in markdown


HOSTILE_PROPERTIES: list[Any] = [True, False, [1, 2], "string", None, 3, {"$ref": 7}]


def hostile(doc: dict[str, Any]) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    d = defs(doc)
    tool = d["Tool"]["properties"]
    for name, value in zip(sorted(set(tool) - {"inputSchema"}), HOSTILE_PROPERTIES):
        tool[name] = value  # a property that is not a schema object
    tool["inputSchema"]["properties"]["type"] = [None]
    d["Resource"]["properties"] = ["uri", "name"]  # properties not an object
    d["Resource"]["required"] = "uri"
    d["Annotations"]["properties"]["priority"]["items"] = [True, {"type": 5}]
    d["Annotations"]["anyOf"] = {"not": "a list"}
    d["Cursor"] = ["not", "a", "schema"]
    d["Role"] = {"$ref": "#/$defs/RoleAlias"}  # a cycle of bare references
    d["RoleAlias"] = {"$ref": "#/$defs/Role"}
    d["Icon"] = {"$ref": "#/$defs/NoSuchThing"}  # dangling
    return doc


def test_hostile_schemas_do_not_crash_diff(raw: dict[str, Any], inputs: Inputs) -> None:
    good = load_document(NEWEST, inputs.pins, inputs.patches)
    bad = hostile(good)
    for pair in ((good, bad), (bad, good), (bad, bad)):
        keyword_changes(*pair)
    for pair in (([], {}), ({"$defs": []}, {"definitions": "x"}), (None, 7), (good, None)):
        assert keyword_changes(*pair) == []
    module = build_ir(NEWEST, inputs)
    for pair in ((good, bad), (bad, good)):
        d = diff(module, module, documents=pair)
        names = {c.name for c in d.definitions.changed}
        assert {"Tool", "Resource", "Annotations", "Cursor"} <= names
        assert to_markdown(d) and to_json(d)
    # and a good pair afterwards is as it was
    d = diff(module, module, documents=(good, copy.deepcopy(good)))
    assert d.definitions.changed == ()
    assert changes_of(api_diff(raw, three_changes(raw), inputs)).keys() == {
        "CallToolResult",
        "Resource",
    }
