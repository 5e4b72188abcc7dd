"""A field's default: a protocol default (``resultType`` absent means ``complete``) or the
schema's own scalar ``default``, applied however upstream types the field (a plain string,
a ``$ref`` to a string or an enum, a union of constants) and not where it would be
invalid."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcpgen.generator import ir
from mcpgen.generator.pipeline import Inputs, build_ir

VERSION = "2026-07-28"


def call_tool_field(schema: dict[str, Any], wire: str) -> ir.Field:
    """The IR field ``wire`` of ``CallToolResult`` built from ``schema``."""
    module = build_ir(VERSION, Inputs.load(), json.dumps(schema).encode())
    (call,) = [d for d in module.definitions if d.name == "CallToolResult"]
    assert isinstance(call, (ir.StructDef, ir.OpenDef))
    (field,) = [f for f in call.fields if f.wire_name == wire]
    return field


def result_type_field(schema: dict[str, Any]) -> ir.Field:
    return call_tool_field(schema, "resultType")


def retyped(fetched: Path, resultType: Any, extra: dict[str, Any] | None = None) -> Any:
    schema = json.loads((fetched / VERSION / "schema.json").read_bytes())
    defs = schema["$defs"]
    for node in defs.values():
        if "resultType" in node.get("properties", {}):
            node["properties"]["resultType"] = resultType
    defs.update(extra or {})
    return schema


@pytest.mark.parametrize(
    ("field_schema", "extra"),
    [
        ({"type": "string"}, None),  # as published
        ({"$ref": "#/$defs/ResultType"}, None),  # a $ref to a string
        ({"$ref": "#/$defs/Kind"}, {"Kind": {"type": "string", "enum": ["complete", "x"]}}),
        ({"anyOf": [{"const": "complete"}, {"const": "input_required"}]}, None),
        ({"$ref": "#/$defs/A"}, {"A": {"$ref": "#/$defs/B"}, "B": {"const": "complete"}}),
    ],
    ids=["string", "ref-string", "ref-enum", "union-of-consts", "ref-chain"],
)
def test_the_default_applies_however_the_field_is_typed(
    fetched: Path, field_schema: Any, extra: dict[str, Any] | None
) -> None:
    field = result_type_field(retyped(fetched, field_schema, extra))
    assert field.has_default and field.default == "complete" and not field.required


@pytest.mark.parametrize(
    ("field_schema", "extra"),
    [
        ({"type": "integer"}, None),
        ({"$ref": "#/$defs/Kind"}, {"Kind": {"enum": ["done", "pending"]}}),
        ({"$ref": "#/$defs/Loop"}, {"Loop": {"$ref": "#/$defs/Loop"}}),  # a cycle
    ],
    ids=["integer", "enum-without-it", "ref-cycle"],
)
def test_no_default_where_the_value_would_be_invalid(
    fetched: Path, field_schema: Any, extra: dict[str, Any] | None
) -> None:
    field = result_type_field(retyped(fetched, field_schema, extra))
    assert not field.has_default


@pytest.mark.parametrize(
    ("default", "applies"),
    [(False, True), (True, True), ("no", False), (0, False), ({"a": 1}, False)],
    ids=["false", "true", "a-string", "zero-is-no-boolean", "an-object"],
)
def test_the_schemas_own_default_applies_where_valid(
    fetched: Path, default: Any, applies: bool
) -> None:
    schema = json.loads((fetched / VERSION / "schema.json").read_bytes())
    schema["$defs"]["CallToolResult"]["properties"]["isError"]["default"] = default
    field = call_tool_field(schema, "isError")
    assert field.has_default is applies
    assert field.default == (default if applies else None)
    if applies:
        assert not field.required


def test_a_protocol_default_wins_over_the_schemas(fetched: Path) -> None:
    schema = json.loads((fetched / VERSION / "schema.json").read_bytes())
    schema["$defs"]["CallToolResult"]["properties"]["resultType"]["default"] = "other"
    assert call_tool_field(schema, "resultType").default == "complete"
