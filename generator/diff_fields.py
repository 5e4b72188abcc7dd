"""What changed in the JSON-Schema keywords of each definition, field by field.

The IR carries what the generated code needs, not every keyword, so ``mcpgen diff`` reads
the (patched) schema documents for what the IR comparison cannot see: constraints
(``maxItems``, ``minimum``, ``pattern``, ``enum``, ...), ``format``, ``default`` and the
other structural keywords (``additionalProperties`` toggled, the type of an array's
items, ...). Prose (``description``, ``title``, ``$comment``, ``examples``) never counts.

Paths go into inline schemas: ``inputSchema.properties`` is the property ``properties``
of the inline object ``inputSchema``; ``content[]`` is the items of the array
``content``; ``arguments{}`` the values of a map; ``<anyOf 1>`` the second member of an
``anyOf`` (members of a union pair up by content, so a reordered union is no change).
Where both sides are ``$ref``s the targets are not followed (each definition is compared
on its own); where one side is a ``$ref`` and the other an inline schema (an inline object
turned into a named definition), the target is compared with the inline schema. Local
``$ref``s compare the same in both dialects (``#/definitions/X`` is ``#/$defs/X``), and
``true``, ``{}`` and absence are the same ``items``/``additionalProperties``.

What is added to or removed from ``properties`` and ``required`` is left to the IR
comparison, which reports it under the hoisted class of the inline object, and so are
type changes inside inline objects (:data:`TYPING`, see ``diff._keyword_field_changes``).

Every input is tolerated: a definition, a property or a keyword that is not what JSON
Schema says it is is compared as a plain value.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .fetch import read_schema
from .patches import Patch, apply_patches
from .pins import Pins

#: Keywords that are prose: a change to them alone is no change.
PROSE = frozenset({"description", "title", "$comment", "examples", "markdownDescription"})
CONSTRAINTS = frozenset(
    {
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "pattern",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minContains",
        "maxContains",
        "minProperties",
        "maxProperties",
        "enum",
        "const",
    }
)
FORMATS = frozenset({"format", "contentEncoding", "contentMediaType"})
#: What the IR comparison shows as a retyped field; not repeated under a retyped field.
TYPING = frozenset({"type", "$ref", "enum", "const", "anyOf", "oneOf", "allOf", "(schema)"})

#: Keywords whose value is one schema, a list of schemas, or a map of name → schema.
_ONE_SCHEMA = frozenset(
    {
        "items",
        "additionalProperties",
        "additionalItems",
        "contains",
        "not",
        "if",
        "then",
        "else",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
    }
)
_SCHEMA_LIST = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
_SCHEMA_MAP = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)
#: Deeper than any real schema; a bound against hostile (or cyclic) input.
_MAX_DEPTH = 48
_SHOWN = 120

#: A path segment: ("prop", name), ("items", ""), ("tuple", i), ("map", ""), ("anyOf", i).
Segment = tuple[str, str]


@dataclass(frozen=True)
class Change:
    """One keyword of one schema node that differs between the two documents."""

    definition: str
    path: tuple[Segment, ...]
    keyword: str
    #: "constraint" | "format" | "default" | "structure"
    category: str
    #: Compact JSON of the value, None where the keyword is absent.
    before: str | None
    after: str | None
    #: Under a ``$ref`` on one side and an inline schema on the other (the named
    #: definition's own comparison covers its types).
    via_ref: bool = False

    @property
    def top_field(self) -> str:
        """The definition's own field the change sits under ("(definition)" for none)."""
        if self.path and self.path[0][0] == "prop":
            return self.path[0][1]
        return "(definition)"

    @property
    def field(self) -> str:
        return render_path(self.path)

    @property
    def nested(self) -> bool:
        """Inside an inline object of a field (the IR compares its hoisted class)."""
        return any(kind == "prop" for kind, _ in self.path[1:])


def render_path(path: tuple[Segment, ...]) -> str:
    out = ""
    for kind, value in path:
        if kind == "prop":
            out += f".{value}" if out else value
        elif kind == "items":
            out += "[]"
        elif kind == "tuple":
            out += f"[{value}]"
        elif kind == "map":
            out += "{}"
        else:
            out += f"<{kind} {value}>"
    if not path or path[0][0] != "prop":
        out = "(definition)" + out
    return out


def category(keyword: str) -> str:
    if keyword in CONSTRAINTS:
        return "constraint"
    if keyword in FORMATS:
        return "format"
    if keyword == "default":
        return "default"
    return "structure"


#: Keywords for which ``true``, ``{}`` and absence all mean "anything".
_ANYTHING_WHEN_ABSENT = frozenset(
    {
        "items",
        "additionalProperties",
        "additionalItems",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
    }
)
_ABSENT: Any = object()


def ref_name(node: Any) -> str | None:
    """The definition a local ``$ref`` names, in either dialect (``#/definitions/X``,
    ``#/$defs/X``)."""
    ref = node.get("$ref") if isinstance(node, dict) else None
    if not isinstance(ref, str):
        return None
    for prefix in ("#/$defs/", "#/definitions/"):
        if ref.startswith(prefix) and "/" not in ref[len(prefix) :]:
            return ref[len(prefix) :].replace("~1", "/").replace("~0", "~")
    return None


def canonical(node: Any, depth: int = 0) -> Any:
    """``node`` as compared: no prose at any depth (property names are kept, even
    ``description``), local ``$ref``s in one dialect, and ``true``/``{}`` where absence
    means the same dropped."""
    if not isinstance(node, dict) or depth > _MAX_DEPTH:
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in PROSE:
            continue
        value = _canonical_value(key, value, depth)
        if value is not _ABSENT:
            out[key] = value
    return out


def _canonical_value(key: str, value: Any, depth: int) -> Any:
    if key == "$ref":
        name = ref_name({"$ref": value})
        return value if name is None else f"#/$defs/{name}"
    if key in _SCHEMA_MAP and isinstance(value, dict):
        if key == "properties" and not value:
            return _ABSENT
        return {k: canonical(v, depth + 1) for k, v in value.items()}
    if key in _ONE_SCHEMA or key in _SCHEMA_LIST:
        if isinstance(value, list):
            return [canonical(v, depth + 1) for v in value]
        value = canonical(value, depth + 1)
        if key in _ANYTHING_WHEN_ABSENT and (value is True or value == {}):
            return _ABSENT
    return value


def show(value: Any) -> str | None:
    if value is _ABSENT:
        return None
    text = json.dumps(
        value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=repr
    )
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def definitions(doc: Any) -> dict[str, Any]:
    """The definitions table of either dialect; empty when there is none."""
    if isinstance(doc, dict):
        for key in ("$defs", "definitions"):
            table = doc.get(key)
            if isinstance(table, dict):
                return table
    return {}


def _map_or_absent(value: Any) -> bool:
    return value is _ABSENT or isinstance(value, dict)


def _names(value: Any) -> set[str]:
    return set(value) if isinstance(value, dict) else set()


def _as_object(value: Any) -> dict[str, Any] | None:
    """A schema object, with ``true`` and absence as ``{}``; None for ``false`` (which
    compares as the keyword's value) and for what is no schema."""
    if isinstance(value, dict):
        return value
    return {} if value is True or value is _ABSENT else None


def _same(x: Any, y: Any, depth: int = 0) -> bool:
    """JSON equality: ``1`` is ``1.0`` but not ``true`` (Python has ``True == 1``)."""
    if depth > _MAX_DEPTH:
        return x == y
    if isinstance(x, dict) and isinstance(y, dict):
        return x.keys() == y.keys() and all(_same(x[k], y[k], depth + 1) for k in x)
    if isinstance(x, list) and isinstance(y, list):
        return len(x) == len(y) and all(_same(m, n, depth + 1) for m, n in zip(x, y))
    numbers = (int, float)
    if isinstance(x, numbers) and isinstance(y, numbers):
        return isinstance(x, bool) is isinstance(y, bool) and x == y
    return type(x) is type(y) and x == y


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=repr)


class _Walker:
    #: ``$ref``s followed in a row before giving up (a cycle of bare references).
    MAX_RESOLVE = 8

    def __init__(self, definition: str, old_defs: dict[str, Any], new_defs: dict[str, Any]):
        self.definition = definition
        self.defs = (old_defs, new_defs)
        self.out: list[Change] = []

    def add(
        self, path: tuple[Segment, ...], keyword: str, before: Any, after: Any, via_ref: bool
    ) -> None:
        self.out.append(
            Change(
                self.definition,
                path,
                keyword,
                category(keyword),
                show(before),
                show(after),
                via_ref,
            )
        )

    def _resolve(self, node: Any, side: int) -> Any:
        """An inline schema in place of a bare reference: an inline object in one version
        and a named definition in the next compare keyword by keyword."""
        target = self.defs[side].get(ref_name(node) or "")
        if not isinstance(target, dict):
            return node
        return {**target, **{k: v for k, v in node.items() if k != "$ref"}}

    def node(self, path: tuple[Segment, ...], a: Any, b: Any, via_ref: bool = False) -> None:
        for _ in range(self.MAX_RESOLVE):
            ra, rb = ref_name(a), ref_name(b)
            if (ra is None) == (rb is None):
                break
            via_ref = True
            a, b = (self._resolve(a, 0), b) if ra is not None else (a, self._resolve(b, 1))
        if not isinstance(a, dict) or not isinstance(b, dict):
            # ``true``/``false`` schemas, or anything a hostile schema puts there.
            sa, sb = canonical(a), canonical(b)
            if not _same(sa, sb):
                self.add(path, "(schema)", sa, sb, via_ref)
            return
        if len(path) > _MAX_DEPTH:
            return
        for key in sorted(a.keys() | b.keys()):
            if key in PROSE or key == "required":
                continue  # required-ness is the IR comparison's
            x, y = a.get(key, _ABSENT), b.get(key, _ABSENT)
            if key == "properties" and _map_or_absent(x) and _map_or_absent(y):
                for name in sorted(_names(x) & _names(y)):
                    self.node((*path, ("prop", name)), x[name], y[name], via_ref)
                continue  # added/removed properties: the IR comparison's
            if key in ("items", "additionalProperties"):
                ox, oy = _as_object(x), _as_object(y)
                if ox is not None and oy is not None:
                    segment = ("items" if key == "items" else "map", "")
                    self.node((*path, segment), ox, oy, via_ref)
                    continue
            if isinstance(x, list) and isinstance(y, list) and key in _SCHEMA_LIST | {"items"}:
                if self.members(path, key, x, y, via_ref):
                    continue
            sx = _canonical_value(key, x, 0) if x is not _ABSENT else x
            sy = _canonical_value(key, y, 0) if y is not _ABSENT else y
            if sx is _ABSENT and sy is _ABSENT:
                continue
            if sx is _ABSENT or sy is _ABSENT or not _same(sx, sy):
                self.add(path, key, sx, sy, via_ref)

    def members(
        self, path: tuple[Segment, ...], key: str, x: list[Any], y: list[Any], via_ref: bool
    ) -> bool:
        """Compare the members of a list of schemas pairwise; False when they do not pair."""
        if key in ("items", "prefixItems"):  # positional
            if len(x) != len(y):
                return False
            for i, (m, n) in enumerate(zip(x, y)):
                self.node((*path, ("tuple", str(i))), m, n, via_ref)
            return True
        if len(x) != len(y):
            return False
        # A union is a set: members found unchanged on both sides (in any order) pair up
        # first; the rest pair in order.
        left = [(i, m) for i, m in enumerate(x)]
        right = [(j, n) for j, n in enumerate(y)]
        for j, n in list(right):
            kn = _key(canonical(n))
            match = next((p for p in left if _key(canonical(p[1])) == kn), None)
            if match is not None:
                left.remove(match)
                right.remove((j, n))
        for (_, m), (j, n) in zip(left, right):
            self.node((*path, (key, str(j))), m, n, via_ref)
        return True


def keyword_changes(old_doc: Any, new_doc: Any, names: set[str] | None = None) -> list[Change]:
    """Keyword changes of every definition both documents have (or only of ``names``)."""
    old_defs, new_defs = definitions(old_doc), definitions(new_doc)
    out: list[Change] = []
    for name in sorted(old_defs.keys() & new_defs.keys()):
        if names is not None and name not in names:
            continue
        walker = _Walker(name, old_defs, new_defs)
        walker.node((), old_defs[name], new_defs[name])
        out += sorted(walker.out, key=lambda c: (c.field, c.keyword))
    return out


def load_document(
    version: str, pins: Pins, patches: tuple[Patch, ...], root: Path | None = None
) -> dict[str, Any]:
    """The fetched schema of ``version`` with the patches it needs applied (what the IR is
    built from)."""
    doc = json.loads(read_schema(version, pins, root))
    if isinstance(doc, dict):
        apply_patches(doc, patches)
    return doc
