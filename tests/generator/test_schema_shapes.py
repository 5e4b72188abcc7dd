"""Shapes a future revision may bring, generated with no code change: a union that
contains itself (typed, not ``Any``), recursion through objects, and an ``anyOf`` of
objects with no discriminator whose members share optional keys (decoded as the member
that declares what the input has, never one that silently drops keys)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from support.revisions import edited_ir, imported, inputs_with

COPY = "2099-09-30"


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/$defs/{name}"}


def obj(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required)}


SHAPES: dict[str, Any] = {
    # a union that contains itself: a path is a name or a list of paths
    "Path": {"anyOf": [{"type": "string"}, {"type": "array", "items": ref("Path")}]},
    # recursion through an object: a section is a heading or a nested outline
    "Outline": obj(
        {"title": {"type": "string"}, "sections": {"type": "array", "items": ref("Section")}},
        ("title",),
    ),
    "Section": {"anyOf": [{"type": "string"}, ref("Outline")]},
    # objects with no discriminator, sharing optional keys
    "Pen": obj({"color": {"type": "string"}, "width": {"type": "number"}}),
    "Brush": obj({"color": {"type": "string"}, "bristles": {"type": "integer"}}),
    "Stroke": obj(
        {
            "color": {"type": "string"},
            "width": {"type": "number"},
            "dash": {"type": "array", "items": {"type": "number"}},
        }
    ),
    "Instrument": {"anyOf": [ref("Pen"), ref("Brush"), ref("Stroke")]},
    # an object or a map: only trial tells them apart, and the object is tried first
    "Marker": obj({"color": {"type": "string"}, "width": {"type": "number"}}, ("color",)),
    "Label": {
        "anyOf": [ref("Marker"), {"type": "object", "additionalProperties": {"type": "string"}}]
    },
}


def with_shapes(document: Any) -> Any:
    document["$defs"].update(SHAPES)
    return document


@pytest.fixture(scope="module")
def t(fetched: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    inputs = inputs_with({COPY: "draft"})
    module = edited_ir(inputs, COPY, "draft", with_shapes)
    with imported(tmp_path_factory.mktemp("shapes"), "shaped", {COPY: module}, inputs) as types:
        yield types[COPY]


def round_trip(t: Any, data: bytes, tp: Any) -> Any:
    value = t.decode(data, tp)
    assert msgspec.json.decode(t.encode(value)) == msgspec.json.decode(data)
    return value


def test_a_recursive_union_is_typed_and_decodes_to_any_depth(t: Any) -> None:
    source = Path(t.__file__).read_text()
    assert 'Path: TypeAlias = "str | list[Path]"' in source  # what a type checker reads
    assert round_trip(t, b'["a", ["b", ["c", []]], "d"]', t.Path) == ["a", ["b", ["c", []]], "d"]
    assert round_trip(t, b'"leaf"', t.Path) == "leaf"
    for bad, where in ((b'["a", [1]]', "$[1][0]"), (b"{}", None), (b"[null]", "$[0]")):
        with pytest.raises(msgspec.ValidationError) as caught:
            t.decode(bad, t.Path)
        assert where is None or where in str(caught.value), caught.value
    with pytest.raises(msgspec.ValidationError, match="nested too deeply"):
        t.decode(b"[" * 100_000 + b"]" * 100_000, t.Path)
    assert t.decode(b'[["ok"]]', t.Path) == [["ok"]]  # and it still works


def test_recursion_through_an_object(t: Any) -> None:
    data = b'{"title":"A","sections":["intro",{"title":"B","sections":[{"title":"C"}]}]}'
    outline = round_trip(t, data, t.Outline)
    nested = outline.sections[1]
    assert isinstance(nested, t.Outline) and isinstance(nested.sections[0], t.Outline)
    with pytest.raises(msgspec.ValidationError, match=r"\$\.sections\[1\]"):
        t.decode(b'{"title":"A","sections":["x",{"sections":[]}]}', t.Outline)


@pytest.mark.parametrize(
    "data, member",
    [
        (b'{"color":"red","bristles":3}', "Brush"),
        (b'{"color":"red","width":2}', "Pen"),
        (b'{"color":"red","width":2,"dash":[1,2]}', "Stroke"),
        (b'{"dash":[1]}', "Stroke"),
        (b'{"bristles":3}', "Brush"),
        # a key nobody declares: the member declaring most of the rest
        (b'{"color":"red","bristles":3,"x-vendor":1}', "Brush"),
        (b'{"width":1,"dash":[1],"x-vendor":1}', "Stroke"),
    ],
)
def test_members_sharing_optional_keys_are_told_apart(t: Any, data: bytes, member: str) -> None:
    value = t.decode(data, t.Instrument)
    assert type(value).__name__ == member, value
    assert isinstance(value, getattr(t, member))
    # every key comes back: those the member declares, and those it does not
    assert msgspec.json.decode(t.encode(value)) == msgspec.json.decode(data)
    assert set(t.undeclared(value)) == {k for k in msgspec.json.decode(data) if k[:2] == "x-"}


def test_a_trial_member_that_would_drop_keys_loses_to_one_that_keeps_them(t: Any) -> None:
    tagged = t.decode(b'{"color":"red","tone":"dark"}', t.Label)
    assert tagged == {"color": "red", "tone": "dark"}  # the map: Marker would drop "tone"
    assert isinstance(t.decode(b'{"color":"red","width":2}', t.Label), t.Marker)
    assert isinstance(t.decode(b'{"color":"red"}', t.Label), t.Marker)
    with pytest.raises(msgspec.ValidationError):
        t.decode(b'{"width":"x","tone":1}', t.Label)


def test_a_member_with_wrong_values_is_not_chosen_and_errors_name_the_path(t: Any) -> None:
    # width is no number: not a Pen nor a Stroke; the schema leaves Brush open to it
    assert type(t.decode(b'{"color":"red","width":"wide"}', t.Instrument)).__name__ == "Brush"
    with pytest.raises(msgspec.ValidationError):
        t.decode(b'{"color":1}', t.Instrument)
    with pytest.raises(msgspec.ValidationError):
        t.decode(b"[]", t.Instrument)
    assert type(t.decode(b'{"width":3}', t.Instrument)).__name__ == "Pen"  # still works
