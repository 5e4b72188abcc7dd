"""Revisions replayed round-trip losslessly: a default the bindings apply on decode
(``resultType`` absent means ``complete``) is left out again on encode exactly where the
input did not carry it, however the revision types the field (a string as pinned, a
``$ref`` to an enum definition, an inline enum, a union of constants, a union of a
``$ref`` and a string), and a union decided by trial takes a member that adds no key.

Each pinned schema (whose bindings under any other name are the same: ``test_repin.py``)
and each synthetic revision made by retyping ``resultType`` in a pinned schema with
examples is checked the same way: every upstream example, the example with every
``resultType: "complete"`` taken out, and hand-made results with and without
``resultType`` (by themselves, as every definition that accepts them, and inside a
JSON-RPC response) decode and encode back to the same JSON value, with the same keys.

Where the revision *requires* ``resultType`` (2026-07-28 as pinned), a result decoded
without it (from a peer of an earlier revision) encodes with it, since what a peer of that
revision is sent must carry it: that key, in that place, is the only one added. The
synthetic revisions retype it as optional, as upstream's intermediate revisions had it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec
import pytest

from support.checkout import REPORT, VERSIONS
from support.revisions import edited_ir, imported, inputs_with

FIELD = "resultType"
DEFAULT = "complete"
#: Results made by hand: with and without the defaulted key, with and without ``_meta``.
RESULTS: list[dict[str, Any]] = [
    {},
    {FIELD: DEFAULT},
    {"_meta": {"com.example/trace": "t-1"}},
    {"_meta": {"com.example/trace": "t-1"}, FIELD: DEFAULT},
]
#: The name the enum definition of the synthetic revisions takes (one no schema has).
ENUM = "ReplayedResultTypeEnum"


def definitions(document: dict[str, Any]) -> dict[str, Any]:
    """The schema's definitions, whatever their container is called."""
    return document["$defs"] if "$defs" in document else document["definitions"]


def container(document: dict[str, Any]) -> str:
    return "$defs" if "$defs" in document else "definitions"


def requires_field(document: dict[str, Any]) -> bool:
    """Whether some definition of the schema requires ``resultType``."""
    return any(
        FIELD in (node.get("required") or [])
        for node in definitions(document).values()
        if isinstance(node, dict)
    )


def pinned_requires_field(fetched: Path, version: str) -> bool:
    return requires_field(json.loads((fetched / version / "schema.json").read_bytes()))


def retyped(make: Callable[[str, dict[str, Any]], dict[str, Any]]) -> Callable[[Any], Any]:
    """An edit giving every ``resultType`` property the schema ``make(container, node)``,
    and making it optional."""

    def edit(document: Any) -> Any:
        for node in definitions(document).values():
            properties = node.get("properties") if isinstance(node, dict) else None
            if isinstance(properties, dict) and FIELD in properties:
                old = properties[FIELD]
                new = make(container(document), old)
                if "description" in old:
                    new["description"] = old["description"]
                properties[FIELD] = new
                if FIELD in (node.get("required") or []):
                    node["required"] = [k for k in node["required"] if k != FIELD]
        return document

    return edit


def with_enum(values: list[str]) -> Callable[[Any], Any]:
    def add(document: Any) -> Any:
        definitions(document)[ENUM] = {"type": "string", "enum": values}
        return document

    return add


def ref(where: str) -> dict[str, Any]:
    return {"$ref": f"#/{where}/{ENUM}"}


def with_marks(document: Any) -> Any:
    """A union decided by trial whose first member is a tagged Struct (tagged because it
    is told apart from another by ``kind`` elsewhere), which msgspec decodes from an
    object without its tag, and a map, which keeps every key as it is."""
    where = container(document)

    def mark(kind: str) -> dict[str, Any]:
        properties = {"kind": {"const": kind}, "size": {"type": "number"}}
        return {"type": "object", "properties": properties, "required": ["kind"]}

    definitions(document).update(
        {
            "Dot": mark("dot"),
            "Dash": mark("dash"),
            "Glyph": {"anyOf": [{"$ref": f"#/{where}/Dot"}, {"$ref": f"#/{where}/Dash"}]},
            "Mark": {
                "anyOf": [
                    {"$ref": f"#/{where}/Dot"},
                    {"type": "object", "additionalProperties": {"type": "number"}},
                ]
            },
        }
    )
    return document


def with_boolean_default(document: Any) -> Any:
    """A schema's own ``default`` that is no object of its own (``false`` is every false):
    ``isError`` of every definition declaring it."""
    for node in definitions(document).values():
        properties = node.get("properties") if isinstance(node, dict) else None
        if isinstance(properties, dict) and "isError" in properties:
            properties["isError"]["default"] = False
    return document


def synthetic_edits(values: list[str]) -> dict[str, Callable[[Any], Any]]:
    """The retypings, by name; ``values`` are the field's values the examples use."""
    enum = with_enum(values)

    def both(*edits: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def edit(document: Any) -> Any:
            for e in edits:
                document = e(document)
            return document

        return edit

    return {
        "tagged-member-on-trial": with_marks,
        "boolean-schema-default": with_boolean_default,
        "ref-to-enum": both(enum, retyped(lambda where, _: ref(where))),
        "inline-enum": retyped(lambda *_: {"type": "string", "enum": list(values)}),
        "union-of-consts": retyped(lambda *_: {"anyOf": [{"const": v} for v in values]}),
        "union-of-ref-and-string": both(
            enum, retyped(lambda where, _: {"anyOf": [ref(where), {"type": "string"}]})
        ),
    }


# -- what is checked --------------------------------------------------------------------


def examples(fetched: Path, version: str) -> list[Path]:
    return sorted((fetched / version / "examples").rglob("*.json"))


def without_default(value: Any) -> tuple[Any, int]:
    """``value`` with every ``resultType: "complete"`` taken out, and how many were."""
    if isinstance(value, list):
        items = [without_default(v) for v in value]
        return [v for v, _ in items], sum(n for _, n in items)
    if isinstance(value, dict):
        out, count = {}, 0
        for k, v in value.items():
            if k == FIELD and v == DEFAULT:
                count += 1
                continue
            out[k], n = without_default(v)
            count += n
        return out, count
    return value, 0


def same_json(t: ModuleType, data: Any, tp: Any) -> tuple[Any, Any]:
    """(what ``data`` is, what its decode encodes back to), both as parsed JSON."""
    raw = json.dumps(data).encode()
    return data, json.loads(t.encode(t.decode(raw, tp)))


def with_field(data: dict[str, Any]) -> list[dict[str, Any]]:
    """``data`` with ``resultType: "complete"`` added to the result it may be: itself (an
    open result keeps ``jsonrpc``, ``id`` and ``result`` as keys of its own), or the object
    under ``result``."""
    added = [{**data, FIELD: DEFAULT}]
    if "result" in data:
        added.append({**data, "result": {**data["result"], FIELD: DEFAULT}})
    return added


def check_revision(
    t: ModuleType, fetched: Path, source: str, *, required: bool = False
) -> dict[str, int]:
    """Every check of the module docstring on the bindings ``t`` (of ``source``'s examples,
    ``required``: whether its schema requires ``resultType``); returns how many values of
    each kind round-tripped, and how many results got the required key written."""
    counts = {"examples": 0, "examples without resultType": 0, "hand-made": 0, "written": 0}
    for path in examples(fetched, source):
        tp = t.DEFINITIONS[path.parent.name]
        original = json.loads(path.read_bytes())
        assert json.loads(t.encode(t.decode(path.read_bytes(), tp))) == original, path
        counts["examples"] += 1
        stripped, taken = without_default(original)
        if taken:
            _, got = same_json(t, stripped, tp)
            assert got == (original if required else stripped), f"{path}: without {FIELD}"
            counts["examples without resultType"] += 1
    for name, tp in t.DEFINITIONS.items():
        for result in RESULTS:
            wrapped = {"jsonrpc": "2.0", "id": 7, "result": result}
            for data in (result, wrapped):
                try:
                    expected, got = same_json(t, data, tp)
                except msgspec.ValidationError:
                    continue  # not a value of this definition
                if required and got != expected:
                    assert got in with_field(expected), f"{name}: {data}"
                    counts["written"] += 1
                else:
                    assert got == expected, f"{name}: {data}"
                counts["hand-made"] += 1
    return counts


# -- the pinned revisions -----------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_every_pinned_revision_round_trips_results_with_and_without_the_default(
    version: str, generated: dict[str, ModuleType], fetched: Path
) -> None:
    required = pinned_requires_field(fetched, version)
    t = generated[version]
    counts = check_revision(t, fetched, version, required=required)
    REPORT[f"revision replay, pinned {version}"] = ", ".join(f"{k} {n}" for k, n in counts.items())
    assert counts["examples"] == len(examples(fetched, version))
    # a result a peer of an earlier revision sent, decoded: written back with the key
    # exactly where the revision requires it, and nowhere else
    assert (counts["written"] > 0) == required
    if required:
        call = t.ROLES["CallToolResult"]
        decoded = t.decode(b'{"content":[]}', call)
        assert decoded.result_type == DEFAULT
        assert json.loads(t.encode(decoded)) == {"content": [], FIELD: DEFAULT}
    assert counts["hand-made"] > 0  # a result with and without resultType, at least
    assert (
        counts["examples without resultType"]
        or not examples(fetched, version)
        or all(FIELD not in path.read_text() for path in examples(fetched, version))
    )


# -- synthetic revisions: resultType retyped ------------------------------------------------


def sources(fetched: Path) -> list[str]:
    """Pinned versions with examples whose schema has a ``resultType`` property: one per
    distinct schema (several versions may pin the same bytes)."""
    found: dict[str, str] = {}
    for version in VERSIONS:
        data = (fetched / version / "schema.json").read_bytes()
        schema = json.loads(data)
        typed = any(
            FIELD in (node.get("properties") or {})
            for node in definitions(schema).values()
            if isinstance(node, dict)
        )
        if typed and examples(fetched, version):
            found.setdefault(hashlib.sha256(data).hexdigest(), version)
    return list(found.values())


def used_values(fetched: Path, version: str) -> list[str]:
    """Every value of ``resultType`` the examples of ``version`` hold, and the default."""
    values = {DEFAULT}

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if isinstance(value.get(FIELD), str):
                values.add(value[FIELD])
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    for path in examples(fetched, version):
        walk(json.loads(path.read_bytes()))
    return sorted(values)


EDITS = list(synthetic_edits([DEFAULT]))
RETYPED = [e for e in EDITS if e not in ("tagged-member-on-trial", "boolean-schema-default")]


@pytest.fixture(scope="module")
def synthetic(
    fetched: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, list[tuple[ModuleType, str]]]]:
    """Edit name → the bindings of each synthetic revision made with it, and its source."""
    copies: dict[str, tuple[str, str]] = {}  # new version -> (edit, source)
    for i, source in enumerate(sources(fetched)):
        for j, edit in enumerate(EDITS):
            copies[f"2101-{i + 1:02d}-{j + 1:02d}"] = (edit, source)
    assert copies, "a pinned schema with examples and a resultType field"
    inputs = inputs_with({copy: source for copy, (_, source) in copies.items()})
    modules = {}
    for copy, (edit, source) in copies.items():
        edits = synthetic_edits(used_values(fetched, source))
        modules[copy] = edited_ir(inputs, copy, source, edits[edit])
    with imported(tmp_path_factory.mktemp("replay"), "replayed", modules, inputs) as types:
        out: dict[str, list[tuple[ModuleType, str]]] = {edit: [] for edit in EDITS}
        for copy, (edit, source) in copies.items():
            out[edit].append((types[copy], source))
        yield out


def test_a_union_decided_by_trial_takes_the_member_that_adds_no_key(
    synthetic: dict[str, list[tuple[ModuleType, str]]], fetched: Path
) -> None:
    for t, source in synthetic["tagged-member-on-trial"]:
        required = pinned_requires_field(fetched, source)
        assert check_revision(t, fetched, source, required=required)["hand-made"] > 0
        untagged = b'{"size":1}'
        value = t.decode(untagged, t.Mark)
        assert not isinstance(value, t.Dot) and t.encode(value) == untagged
        tagged = b'{"kind":"dot","size":1}'
        assert isinstance(t.decode(tagged, t.Mark), t.Dot)
        assert json.loads(t.encode(t.decode(tagged, t.Mark))) == json.loads(tagged)
        assert t.encode(t.convert({"size": 2}, t.Mark)) == b'{"size":2}'
        assert t.encode(t.decode(b'{"size":1,"x":2}', t.Mark)) == b'{"size":1,"x":2}'


def test_a_default_shared_with_decoded_values_is_told_by_the_input(
    synthetic: dict[str, list[tuple[ModuleType, str]]], fetched: Path
) -> None:
    for t, source in synthetic["boolean-schema-default"]:
        call = t.ROLES["CallToolResult"]
        assert call(content=[]).is_error is False
        assert json.loads(t.encode(call(content=[])))["isError"] is False
        required = pinned_requires_field(fetched, source)
        # the revision's required resultType is written; isError only where it came
        written = {FIELD: DEFAULT} if required else {}
        for data in (b'{"content":[]}', b'{"content":[],"isError":false}'):
            for given in (data, data.replace(b"[]", b'[{"type":"text","text":"x"}]')):
                expected = {**json.loads(given), **written}
                assert t.decode(given, call).is_error is False
                assert json.loads(t.encode(t.decode(given, call))) == expected
                assert json.loads(t.encode(t.convert(json.loads(given), call))) == expected
        assert check_revision(t, fetched, source, required=required)["examples"] > 0


@pytest.mark.parametrize("edit", RETYPED)
def test_a_retyped_result_type_round_trips_with_and_without_the_default(
    edit: str, synthetic: dict[str, list[tuple[ModuleType, str]]], fetched: Path
) -> None:
    for t, source in synthetic[edit]:
        call = t.ROLES["CallToolResult"]
        assert call(content=[]).result_type == DEFAULT
        counts = check_revision(t, fetched, source)
        REPORT[f"revision replay, {source} {edit}"] = ", ".join(
            f"{k} {n}" for k, n in counts.items()
        )
        assert counts["examples"] == len(examples(fetched, source))
        assert counts["examples without resultType"] > 0 and counts["hand-made"] > 0
        assert counts["written"] == 0  # optional here: never added


@pytest.mark.parametrize("edit", RETYPED)
def test_a_constructed_result_writes_the_default_and_a_decoded_one_only_if_it_came(
    edit: str, synthetic: dict[str, list[tuple[ModuleType, str]]]
) -> None:
    for t, _ in synthetic[edit]:
        call, text = t.ROLES["CallToolResult"], t.ROLES["TextContent"]
        made = call(content=[text(text="hi")])
        assert json.loads(t.encode(made))[FIELD] == DEFAULT  # what a peer must be sent
        bare = b'{"content":[{"type":"text","text":"hi"}]}'
        decoded = t.decode(bare, call)
        assert isinstance(decoded, call) and decoded.result_type == DEFAULT
        assert t.encode(decoded) == bare
        assert t.encode(t.convert(json.loads(bare), call)) == bare
        # the builtins of a constructed result hold the default: converted, it stays
        rebuilt = t.convert(msgspec.to_builtins(made), call)
        assert json.loads(t.encode(rebuilt))[FIELD] == DEFAULT
        carried = b'{"content":[],"resultType":"complete"}'
        assert t.encode(t.decode(carried, call)) == carried
