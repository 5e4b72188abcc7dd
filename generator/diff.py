"""What changed between two protocol versions, computed from their IR.

Definitions are compared by name: the schema's own and the inline objects hoisted to
named classes, whose names derive from where they sit (``CreateMessageRequestParams``),
so an inline params object in one version and a named definition in the next compare
field by field. What the IR does not carry (constraints, ``format``, ``default``, other
structural keywords) is compared on the patched schema documents (:mod:`.diff_fields`).
Methods are compared per direction; capabilities field by field.

A union that changes (a union definition, a field typed ``A | B``, the items or values of
an array or map of one, an enum) is reported by the members it gained and lost, not as
its whole member list before and after; members only reordered are no change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from . import ir
from .diff_fields import TYPING, Change, keyword_changes, load_document
from .methods import capability_paths

if TYPE_CHECKING:
    from .pipeline import Inputs


class FieldChange(msgspec.Struct, frozen=True, omit_defaults=True):
    #: A wire name, "(definition)", or a path into inline schemas (``inputSchema.type``).
    field: str
    #: "added" | "removed" | "retyped" | "members" | "now required" | "now optional", or,
    #: for a keyword: "constraint" | "format" | "default" | "structure"
    change: str
    #: The JSON-Schema keyword of a keyword change (``maxItems``, ``format``, ...).
    keyword: str | None = None
    #: A type, or the keyword's value as compact JSON (absent where the keyword is).
    before: str | None = None
    after: str | None = None
    #: A "members" change: the union members (or enum values) gained and lost, in order.
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()


#: What a field's type is described by: its text, whether it is required, and the type.
FieldInfo = tuple[str, bool, ir.TypeExpr | None]


class DefinitionChange(msgspec.Struct, frozen=True):
    name: str
    kind: str  # "struct", "open", "alias", "union"
    changes: tuple[FieldChange, ...]


class Section(msgspec.Struct, frozen=True):
    added: tuple[Any, ...]
    removed: tuple[Any, ...]
    changed: tuple[Any, ...]


class Diff(msgspec.Struct, frozen=True):
    old: str
    new: str
    definitions: Section
    methods: Section
    capabilities: Section


def _kind(d: ir.Definition) -> str:
    return {ir.StructDef: "struct", ir.OpenDef: "open", ir.AliasDef: "alias", ir.UnionDef: "union"}[
        type(d)
    ]


class _Describer:
    """Readable type expressions and the fields of each definition of one module."""

    def __init__(self, module: ir.Module) -> None:
        self.defs = module.lookup()

    def type(self, t: ir.TypeExpr) -> str:
        if isinstance(t, ir.AnyType):
            return "any"
        if isinstance(t, ir.Scalar):
            names = {"float": "number", "int": "integer", "str": "string", "bool": "boolean"}
            return names.get(t.kind, t.kind)
        if isinstance(t, ir.LiteralType):
            return " | ".join(repr(v) for v in t.values)
        if isinstance(t, ir.ArrayType):
            return f"array of {self.type(t.item)}"
        if isinstance(t, ir.MapType):
            return f"map of {self.type(t.value)}"
        if isinstance(t, ir.UnionType):
            return " | ".join(self.type(m) for m in t.members)
        return t.name

    def fields(self, d: ir.Definition) -> dict[str, FieldInfo]:
        """wire name → (type, required, type expression) of an object definition (tag
        included)."""
        out: dict[str, FieldInfo] = {}
        if isinstance(d, ir.StructDef) and d.tag is not None:
            out[d.tag.field] = (repr(d.tag.value), True, None)
        if isinstance(d, (ir.StructDef, ir.OpenDef)):
            for f in d.fields:
                out[f.wire_name] = (self.type(f.type), f.required, f.type)
        return out

    def members(self, t: ir.TypeExpr | None) -> tuple[str, list[str]] | None:
        """Where the union in ``t`` sits (``""``, ``"[]"`` for an array's items, ``"{}"`` for
        a map's values, nested) and its members; None when ``t`` holds no union."""
        where = ""
        while isinstance(t, (ir.ArrayType, ir.MapType)):
            where += "[]" if isinstance(t, ir.ArrayType) else "{}"
            t = t.item if isinstance(t, ir.ArrayType) else t.value
        if isinstance(t, ir.UnionType):
            return where, [self.type(m) for m in t.members]
        if isinstance(t, ir.LiteralType):
            return where, [repr(v) for v in t.values]
        if t is None:
            return None
        return where, [self.type(t)]  # one member: a union only if the other side is one

    def definition_members(self, d: ir.Definition) -> tuple[str, list[str]] | None:
        if isinstance(d, ir.UnionDef):
            return "", [self.type(m) for m in d.members]
        if isinstance(d, ir.AliasDef):
            return self.members(d.target)
        return None

    def shape(self, d: ir.Definition) -> str:
        if isinstance(d, ir.AliasDef):
            return self.type(d.target)
        if isinstance(d, ir.UnionDef):
            return " | ".join(sorted(self.type(m) for m in d.members))
        return ""


def _retyped(
    field: str,
    before: str,
    after: str,
    old: tuple[str, list[str]] | None,
    new: tuple[str, list[str]] | None,
) -> FieldChange | None:
    """A type change: the members gained and lost where both sides are unions at the same
    place (or one a union and the other one of its members), else the types before and
    after; None for a union whose members were only reordered."""
    if old is not None and new is not None and old[0] == new[0]:
        (where, m0), (_, m1) = old, new
        if (len(m0) > 1 or len(m1) > 1) and set(m0) & set(m1):
            added = tuple(m for m in dict.fromkeys(m1) if m not in m0)
            removed = tuple(m for m in dict.fromkeys(m0) if m not in m1)
            if not added and not removed:
                return None
            return FieldChange(field + where, "members", added=added, removed=removed)
    return FieldChange(field, "retyped", before=before, after=after)


def _field_changes(
    a: _Describer, b: _Describer, old: dict[str, FieldInfo], new: dict[str, FieldInfo]
) -> list[FieldChange]:
    changes = []
    for name in sorted(new.keys() - old.keys()):
        changes.append(FieldChange(name, "added", after=new[name][0]))
    for name in sorted(old.keys() - new.keys()):
        changes.append(FieldChange(name, "removed", before=old[name][0]))
    for name in sorted(old.keys() & new.keys()):
        (t0, r0, e0), (t1, r1, e1) = old[name], new[name]
        if t0 != t1:
            change = _retyped(name, t0, t1, a.members(e0), b.members(e1))
            if change is not None:
                changes.append(change)
        if r0 != r1:
            changes.append(FieldChange(name, "now required" if r1 else "now optional"))
    return changes


def _capability_paths(module: ir.Module) -> set[str]:
    """Every field path under either side's capabilities, e.g. ``server.tools.listChanged``."""
    return {
        ".".join((side, *path))
        for side in ("client", "server")
        for path in capability_paths(module, side)
    }


def _documents(old: ir.Module, new: ir.Module, inputs: Inputs | None) -> tuple[Any, Any]:
    if inputs is None:
        from .patches import load_patches
        from .pins import load_pins

        pins, patches, root = load_pins(), load_patches(), None
    else:
        pins, patches, root = inputs.pins, inputs.patches, inputs.schema_root
    return (
        load_document(old.version, pins, patches, root),
        load_document(new.version, pins, patches, root),
    )


def _keyword_field_changes(
    keywords: list[Change], ir_changes: list[FieldChange]
) -> list[FieldChange]:
    """Keyword changes of one definition, less what its IR changes already say (a retyped
    field's new ``type`` or ``enum``)."""
    retyped = {
        f.field.split("[")[0].split("{")[0] or "(definition)"
        for f in ir_changes
        if f.change in ("retyped", "members")
    }
    out = []
    for k in keywords:
        if k.keyword in TYPING and (k.nested or k.via_ref):
            continue  # the hoisted class of the inline object says it
        if k.top_field in retyped and (
            k.keyword in TYPING
            or (k.category == "structure" and k.keyword != "additionalProperties")
        ):
            continue
        out.append(FieldChange(k.field, k.category, k.keyword, k.before, k.after))
    return out


def diff(
    old: ir.Module,
    new: ir.Module,
    documents: tuple[Any, Any] | None = None,
    inputs: Inputs | None = None,
) -> Diff:
    """What changed from ``old`` to ``new``. ``documents`` are the two patched schema
    documents the modules were built from; by default they are read as ``inputs`` (or the
    pins, patches and schema directory) say."""
    a, b = _Describer(old), _Describer(new)
    old_defs, new_defs = a.defs, b.defs
    common = old_defs.keys() & new_defs.keys()
    if documents is None:
        documents = _documents(old, new, inputs)
    keywords: dict[str, list[Change]] = {}
    for k in keyword_changes(*documents, names=set(common)):
        keywords.setdefault(k.definition, []).append(k)
    changed = []
    for name in sorted(common):
        d0, d1 = old_defs[name], new_defs[name]
        changes = _field_changes(a, b, a.fields(d0), b.fields(d1))
        if _kind(d0) != _kind(d1):
            changes.insert(
                0, FieldChange("(definition)", "retyped", before=_kind(d0), after=_kind(d1))
            )
        elif a.shape(d0) != b.shape(d1):
            change = _retyped(
                "(definition)",
                a.shape(d0),
                b.shape(d1),
                a.definition_members(d0),
                b.definition_members(d1),
            )
            if change is not None:
                changes.append(change)
        changes += _keyword_field_changes(keywords.get(name, []), changes)
        if changes:
            changed.append(DefinitionChange(name, _kind(d1), tuple(changes)))
    definitions = Section(
        added=tuple(sorted(new_defs.keys() - old_defs.keys())),
        removed=tuple(sorted(old_defs.keys() - new_defs.keys())),
        changed=tuple(changed),
    )

    def methods(module: ir.Module) -> dict[str, ir.Method]:
        return {f"{m.direction}:{m.channel}:{m.name}": m for m in module.methods}

    m0, m1 = methods(old), methods(new)

    def row(key: str) -> dict[str, str]:
        direction, channel, name = key.split(":", 2)
        sender = "client → server" if direction == "client" else "server → client"
        kind = (m1.get(key) or m0[key]).kind
        return {"method": name, "direction": sender, "kind": kind, "channel": channel}

    changed_methods = []
    for key in sorted(m0.keys() & m1.keys()):
        x, y = m0[key], m1[key]
        notes = []
        if x.result_type != y.result_type:
            notes.append(f"result {x.result_type} → {y.result_type}")
        if x.capability != y.capability:
            notes.append(
                f"gate {'.'.join(x.capability or ()) or 'none'} → {'.'.join(y.capability or ()) or 'none'}"
            )
        if x.params_required != y.params_required:
            notes.append("params now required" if y.params_required else "params now optional")
        if notes:
            changed_methods.append({**row(key), "changes": notes})
    method_section = Section(
        added=tuple(row(k) for k in sorted(m1.keys() - m0.keys())),
        removed=tuple(row(k) for k in sorted(m0.keys() - m1.keys())),
        changed=tuple(changed_methods),
    )
    c0, c1 = _capability_paths(old), _capability_paths(new)
    capabilities = Section(added=tuple(sorted(c1 - c0)), removed=tuple(sorted(c0 - c1)), changed=())
    return Diff(old.version, new.version, definitions, method_section, capabilities)


def to_json(d: Diff) -> bytes:
    return msgspec.json.format(msgspec.json.encode(d), indent=2)


def to_markdown(d: Diff) -> str:
    out = [f"# MCP {d.old} → {d.new}", ""]
    s = d.methods
    out.append(
        f"## Methods ({len(s.added)} added, {len(s.removed)} removed, {len(s.changed)} changed)"
    )
    for title, rows in (("Added", s.added), ("Removed", s.removed)):
        for r in rows:
            where = "" if r["channel"] == "wire" else " (input request)"
            out.append(f"- {title}: `{r['method']}` — {r['kind']}, {r['direction']}{where}")
    for r in s.changed:
        out.append(f"- Changed: `{r['method']}` ({r['direction']}): {'; '.join(r['changes'])}")
    out.append("")
    c = d.capabilities
    out.append(f"## Capabilities ({len(c.added)} added, {len(c.removed)} removed)")
    out += [f"- Added: `{p}`" for p in c.added] + [f"- Removed: `{p}`" for p in c.removed]
    out.append("")
    s = d.definitions
    out.append(
        f"## Definitions ({len(s.added)} added, {len(s.removed)} removed, {len(s.changed)} changed)"
    )
    if s.added:
        out.append("- Added: " + ", ".join(f"`{n}`" for n in s.added))
    if s.removed:
        out.append("- Removed: " + ", ".join(f"`{n}`" for n in s.removed))
    for change in s.changed:
        out.append(f"- `{change.name}`:")
        for f in change.changes:
            out.append(f"  - `{f.field}`: {_detail(f)}")
    return "\n".join(out) + "\n"


def _detail(f: FieldChange) -> str:
    if f.keyword is not None:
        if f.before is None:
            return f"`{f.keyword}` added (`{f.after}`)"
        if f.after is None:
            return f"`{f.keyword}` removed (was `{f.before}`)"
        return f"`{f.keyword}` `{f.before}` → `{f.after}`"
    if f.change == "members":
        said = [f"members added: {', '.join(f'`{m}`' for m in f.added)}"] if f.added else []
        said += [f"members removed: {', '.join(f'`{m}`' for m in f.removed)}"] if f.removed else []
        return "; ".join(said)
    return {
        "added": f"added ({f.after})",
        "removed": f"removed (was {f.before})",
        "retyped": f"{f.before} → {f.after}",
    }.get(f.change, f.change)
