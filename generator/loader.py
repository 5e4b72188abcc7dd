"""Read one version's schema (either dialect) into the IR.

datamodel-code-generator is the JSON-Schema front end: every definition is parsed into its
``JsonSchemaObject`` (typed keywords, constraints, ``$ref``), and this module maps those
nodes onto mcpgen's own IR. Inline objects are hoisted to named classes; identical inline
objects (same shape and description, e.g. the ``_meta`` copied into every request's
params) share one class, named after the shortest place they occur.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import msgspec

# The parser module is datamodel-code-generator's documented entry point for this model.
from datamodel_code_generator.parser.jsonschema import (
    JsonSchemaObject,  # pyright: ignore[reportPrivateImportUsage]
)

from . import ir
from .errors import GenerateError
from .defaults import NO_DEFAULT, default_of
from .descriptions import clean_description
from .naming import ClassNames, attribute, open_attribute, pascal
from .inherit import inherit_properties
from .overrides import Overrides
from .patches import Patch, apply_patches
from .roles import find_roles
from .refs import container_of, prune_dangling
from .pins import Pin

_SCALARS: dict[str, ir.ScalarKind] = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "null": "null",
}
_HOIST_PREFIX = "__hoisted_"


def definitions_of(doc: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The definitions table and what the schema calls it: ``definitions`` (draft-07) or
    ``$defs`` (2020-12), whichever it has. Nothing downstream depends on the name."""
    key = container_of(doc)
    if key is not None:
        return key, doc[key]
    raise GenerateError(
        "schema has neither '$defs' nor 'definitions'", "is this an MCP schema.json?"
    )


def _subschemas(nodes: list[JsonSchemaObject | bool]) -> list[JsonSchemaObject]:
    """Subschemas of ``anyOf``/``allOf``: ``true`` is the empty schema, ``false`` drops out."""
    empty = JsonSchemaObject.model_validate({})
    return [n if isinstance(n, JsonSchemaObject) else empty for n in nodes if n is not False]


class _Builder:
    def __init__(
        self, version: str, defs: dict[str, Any], overrides: Overrides, roles: dict[str, str]
    ) -> None:
        self.version = version
        self.overrides = overrides
        self.roles = roles
        #: the type made for each inline origin a role points at
        self.role_types: dict[str, ir.TypeExpr] = {}
        #: temporary names of hoisted objects → the names they are emitted under
        self.final: dict[str, str] = {}
        self.raw = defs
        self.nodes = {name: JsonSchemaObject.model_validate(node) for name, node in defs.items()}
        self.out: dict[str, ir.Definition] = {}
        # hoisted inline objects: shape key -> temporary name, and the hints naming it
        self.hoisted_by_key: dict[bytes, str] = {}
        self.hoisted: dict[str, ir.Definition] = {}
        self.hints: dict[str, list[tuple[str, str]]] = defaultdict(list)
        self.counter = 0
        #: union name -> names of its $ref members, for ``members_of`` override rules
        self.unions = {
            name: {m["$ref"].rsplit("/", 1)[1] for m in node.get("anyOf", []) if "$ref" in m}
            for name, node in defs.items()
        }

    # -- entry ------------------------------------------------------------------------

    def build(self) -> list[ir.Definition]:
        for name, node in self.nodes.items():
            self.out[name] = self.definition(name, node)
        return self._finish_names()

    # -- definitions ------------------------------------------------------------------

    def definition(self, name: str, node: JsonSchemaObject) -> ir.Definition:
        description = clean_description(node.description, self.nodes)
        if self.overrides.is_any_json(name, self.version, self.roles):
            return ir.AliasDef(name=name, target=ir.AnyType(), description=description, origin=name)
        node = self._merged(node)
        if node.ref and not node.properties:
            return ir.AliasDef(
                name=name,
                target=self._ref(node.ref),
                description=description,
                origin=name,
            )
        if node.anyOf and not node.properties:
            members = self._union_members(_subschemas(node.anyOf), name, name)
            return ir.UnionDef(name=name, members=members, description=description, origin=name)
        if node.properties:
            return self.object_def(name, node, name, description)
        return ir.AliasDef(
            name=name,
            target=self.type_of(node, name, name),
            description=description,
            origin=name,
        )

    def object_def(
        self,
        name: str,
        node: JsonSchemaObject,
        origin: str,
        description: str | None,
        hint: str | None = None,
    ) -> ir.StructDef | ir.OpenDef:
        open_extra = self._open_extra(node, origin)
        fields = self._fields(node, hint or name, origin, is_open=open_extra is not None)
        if open_extra is not None:
            return ir.OpenDef(
                name=name,
                fields=fields,
                extra=open_extra,
                description=description,
                origin=origin,
            )
        return ir.StructDef(
            name=name,
            fields=fields,
            description=description,
            origin=origin,
            require_one_of=self._require_one_of(node),
        )

    def _fields(
        self, node: JsonSchemaObject, owner: str, origin: str, is_open: bool
    ) -> tuple[ir.Field, ...]:
        taken: set[str] = set()
        fields = []
        for wire, sub in (node.properties or {}).items():
            if not isinstance(sub, JsonSchemaObject):
                sub = JsonSchemaObject.model_validate(sub)
            ftype = self.type_of(sub, owner + pascal(wire), f"{origin}.{wire}")
            py = (open_attribute if is_open else attribute)(wire, taken)
            required = wire in (node.required or []) and not self.overrides.is_optional(
                wire, origin
            )
            override = self.overrides.default_for(wire, self.version)
            value = default_of(sub, override.value if override else NO_DEFAULT, self._resolve)
            fields.append(
                ir.Field(
                    wire_name=wire,
                    py_name=py,
                    type=ftype,
                    required=required and value is NO_DEFAULT,
                    description=clean_description(sub.description, self.nodes),
                    default=None if value is NO_DEFAULT else value,
                    has_default=value is not NO_DEFAULT,
                    written=required and value is not NO_DEFAULT,
                )
            )
        return tuple(fields)

    def _resolve(self, node: JsonSchemaObject) -> JsonSchemaObject | None:
        """``node`` with ``allOf`` folded and its ``$ref`` followed (None: dangling)."""
        node = self._merged(node)
        while node.ref:
            target = self.nodes.get(node.ref.rsplit("/", 1)[1])
            if target is None or target is node:
                return None
            node = self._merged(target)
        return node

    def _require_one_of(self, node: JsonSchemaObject) -> tuple[tuple[str, ...], ...]:
        return tuple(
            tuple(alt.required)
            for alt in _subschemas(node.anyOf)
            if alt.required and not alt.properties and not alt.type and not alt.ref
        )

    def _open_extra(self, node: JsonSchemaObject, origin: str) -> ir.TypeExpr | None:
        ap = node.additionalProperties
        if ap is False:
            return None
        if ap is True or isinstance(ap, JsonSchemaObject):
            return ir.AnyType() if ap is True else self.type_of(ap, origin, origin + "{}")
        opened = self.overrides.is_open(origin, self.version, self.unions, self.roles)
        return ir.AnyType() if opened else None

    # -- types ------------------------------------------------------------------------

    def _ref(self, ref: str) -> ir.Named:
        name = ref.rsplit("/", 1)[1]
        if name not in self.nodes:
            raise GenerateError(f"dangling $ref {ref!r} in {self.version}", "patch the schema")
        return ir.Named(name=name)

    def _merged(self, node: JsonSchemaObject) -> JsonSchemaObject:
        """Fold ``allOf`` into one object node (properties, required, additionalProperties)."""
        if not node.allOf:
            return node
        props: dict[str, Any] = {}
        required: list[str] = []
        extra: Any = None
        closed = False
        parts = [
            (self._merged(self.nodes[p.ref.rsplit("/", 1)[1]]) if p.ref else self._merged(p))
            for p in _subschemas(node.allOf)
        ]
        for part in [*parts, node.model_copy(update={"allOf": []})]:
            props.update(part.properties or {})
            required += [r for r in part.required or [] if r not in required]
            if part.additionalProperties is False:
                closed = True
            elif part.additionalProperties is not None and extra is None:
                extra = part.additionalProperties
        return node.model_copy(
            update={
                "allOf": [],
                "type": "object",
                "properties": props,
                "required": required,
                "additionalProperties": False if closed else extra,
            }
        )

    def _union_members(
        self, alts: list[JsonSchemaObject], hint: str, origin: str
    ) -> tuple[ir.TypeExpr, ...]:
        members: list[ir.TypeExpr] = []
        for i, alt in enumerate(alts):
            t = self.type_of(alt, f"{hint}{i + 1}" if not alt.ref else hint, f"{origin}|{i}")
            for m in t.members if isinstance(t, ir.UnionType) else (t,):
                if m not in members:
                    members.append(m)
        return tuple(members)

    def type_of(self, node: JsonSchemaObject, hint: str, origin: str) -> ir.TypeExpr:
        made = self._type_of(node, hint, origin)
        if origin in self.roles.values():
            self.role_types[origin] = made
        return made

    def role_type(self, origin: str) -> ir.TypeExpr | None:
        """The type emitted for ``origin`` (a role's target), once names are final."""
        if origin in self.nodes:
            return ir.Named(name=origin)
        made = self.role_types.get(origin)
        return None if made is None else _rename(made, self.final)

    def _type_of(self, node: JsonSchemaObject, hint: str, origin: str) -> ir.TypeExpr:
        if self.overrides.is_any_json(origin, self.version, self.roles):
            return ir.AnyType()
        node = self._merged(node)
        if node.ref:
            return self._ref(node.ref)
        if "const" in node.extras:
            return ir.LiteralType(values=(node.extras["const"],))
        if node.enum:
            return ir.LiteralType(values=tuple(node.enum))
        if node.anyOf and not node.properties:
            members = self._union_members(_subschemas(node.anyOf), hint, origin)
            return members[0] if len(members) == 1 else ir.UnionType(members=members)
        kinds = node.type if isinstance(node.type, list) else [node.type] if node.type else []
        if node.properties or (not kinds and node.additionalProperties is not None):
            kinds = ["object"]
        if not kinds:
            return ir.AnyType()
        members = [self._single(kind, node, hint, origin) for kind in kinds]
        return members[0] if len(members) == 1 else ir.UnionType(members=tuple(members))

    def _single(self, kind: str, node: JsonSchemaObject, hint: str, origin: str) -> ir.TypeExpr:
        if kind == "object":
            if node.properties:
                return self._hoist(hint, node, origin)
            ap = node.additionalProperties
            value = (
                self.type_of(ap, hint + "Value", origin + "{}")
                if isinstance(ap, JsonSchemaObject)
                else ir.AnyType()
            )
            return ir.MapType(value=value)
        if kind == "array":
            items = node.items
            item = (
                self.type_of(items, hint + "Item", origin + "[]")
                if isinstance(items, JsonSchemaObject)
                else ir.AnyType()
            )
            return ir.ArrayType(
                item=item,
                constraints=ir.Constraints(min_length=node.minItems, max_length=node.maxItems),
            )
        if kind not in _SCALARS:
            raise GenerateError(f"unsupported JSON type {kind!r} at {origin}", "add a patch")
        scalar = _SCALARS[kind]
        constraints = ir.Constraints(
            ge=_number(node.minimum),
            le=_number(node.maximum),
            min_length=node.minLength,
            max_length=node.maxLength,
            pattern=node.pattern,
        )
        if scalar in ("bool", "null"):
            constraints = ir.Constraints()
        return ir.Scalar(kind=scalar, constraints=constraints, format=node.format)

    def _hoist(self, hint: str, node: JsonSchemaObject, origin: str) -> ir.Named:
        description = clean_description(node.description, self.nodes)
        self.counter += 1
        placeholder = f"{_HOIST_PREFIX}{self.counter}"
        made = self.object_def(placeholder, node, origin, description, hint)
        key = msgspec.json.encode(made.__class__.__name__) + msgspec.json.encode(
            msgspec.structs.replace(made, name="", origin="")
        )
        if key in self.hoisted_by_key:
            name = self.hoisted_by_key[key]
        else:
            name = placeholder
            self.hoisted_by_key[key] = name
            self.hoisted[name] = made
        self.hints[name].append((hint, origin))
        return ir.Named(name=name)

    # -- naming of hoisted objects ----------------------------------------------------

    def _finish_names(self) -> list[ir.Definition]:
        names = ClassNames(set(self.out))
        final: dict[str, str] = {}
        referenced = _referenced(self.raw)

        def preference(hint_origin: tuple[str, str]) -> tuple[int, bool, str]:
            """Shortest name first; on a tie, the one from a base definition nothing
            references (``PaginatedRequest`` over ``ListToolsRequest``)."""
            hint, origin = hint_origin
            return (len(hint), origin.split(".")[0] in referenced, hint)

        by_hint = sorted(self.hoisted, key=lambda t: min(preference(h) for h in self.hints[t]))
        for temp in by_hint:
            hint, origin = min(self.hints[temp], key=preference)
            final[temp] = names.claim(hint)
            self.hoisted[temp] = msgspec.structs.replace(self.hoisted[temp], origin=origin)
        self.final = final
        renamed = [_rename(d, final) for d in self.out.values()]
        hoisted = [
            _rename(self.hoisted[t], final) for t in sorted(self.hoisted, key=lambda t: final[t])
        ]
        return renamed + hoisted


def _referenced(defs: dict[str, Any]) -> set[str]:
    """Names of definitions some ``$ref`` points at."""
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                found.add(ref.rsplit("/", 1)[1])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(defs)
    return found


def _number(value: Any) -> int | float | None:
    if value is None:
        return None
    return getattr(value, "value", value)


def _rename(node: Any, table: dict[str, str]) -> Any:
    """Replace temporary hoisted names throughout an IR node."""
    if isinstance(node, ir.Named):
        return ir.Named(name=table.get(node.name, node.name))
    if isinstance(node, msgspec.Struct):
        changes = {}
        for field in node.__struct_fields__:
            value = getattr(node, field)
            new = _rename(value, table)
            if new is not value:
                changes[field] = new
        if (
            isinstance(node, (ir.StructDef, ir.OpenDef, ir.AliasDef, ir.UnionDef))
            and node.name in table
        ):
            changes["name"] = table[node.name]
        return msgspec.structs.replace(node, **changes) if changes else node
    if isinstance(node, tuple):
        items = tuple(_rename(x, table) for x in node)
        return items if any(a is not b for a, b in zip(items, node)) else node
    return node


def load_module(
    version: str,
    pin: Pin,
    schema_bytes: bytes,
    overrides: Overrides,
    patches: tuple[Patch, ...],
    strict: bool = False,
) -> ir.Module:
    """Patch and parse ``schema_bytes`` into the (pre-union-analysis) IR of ``version``.
    What dangling ``$ref``s leave without meaning is left out, with a warning each (an
    error with ``strict``)."""
    try:
        doc = json.loads(schema_bytes)
    except ValueError as exc:
        raise GenerateError(f"schema {version}: malformed JSON ({exc})", "re-fetch it") from None
    apply_patches(doc, patches)
    _, defs = definitions_of(doc)
    warnings = prune_dangling(defs, version, strict)
    inherit_properties(defs, overrides.inherit_properties, version)
    roles = find_roles(defs, overrides)
    builder = _Builder(version, defs, overrides, roles)
    definitions = builder.build()
    emitted = {role: builder.role_type(origin) for role, origin in roles.items()}
    return ir.Module(
        version=version,
        era=pin.era,
        dialect=pin.dialect,
        definitions=tuple(definitions),
        schema_names=tuple(defs),
        warnings=tuple(warnings),
        roles=tuple((role, made) for role, made in emitted.items() if made is not None),
    )
