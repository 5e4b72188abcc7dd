"""Union analysis: msgspec tags where they work, a decode strategy everywhere else.

msgspec decodes a union natively when its members fall into distinct JSON kinds and its
object members are either a single type or Structs sharing a tag field with distinct
values. This pass

1. tags every Struct whose unions can use a required, distinct ``const`` as tag;
2. leaves native unions inline;
3. hoists every other union into a named ``UnionDef`` carrying a decision tree
   (by JSON kind, by discriminator value, by key presence, first valid as last resort),
   which the generated module interprets in its decode hook; so does every union that
   contains itself (a class stands for it at run time, where no alias could).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterator

import msgspec

from . import ir
from .naming import ClassNames
from .strategies import Planner
from .union_index import UnionIndex, json_kind, value_kind

_TAG_PREFERENCE = ("method", "type", "kind", "mode", "resultType")


# -- tagging ----------------------------------------------------------------------------


def _required_literal(d: ir.StructDef | ir.OpenDef, key: str) -> str | int | None:
    for f in d.fields:
        if f.wire_name == key and f.required and isinstance(f.type, ir.LiteralType):
            if len(f.type.values) == 1 and isinstance(f.type.values[0], (str, int)):
                if not isinstance(f.type.values[0], bool):
                    return f.type.values[0]
    return None


def _tag_candidate(members: list[ir.TypeExpr], index: UnionIndex) -> str | None:
    """A key that is a required distinct str/int const in every object member, if any."""
    objects = [index.obj(m) for m in members if json_kind(m, index) == "object"]
    if len(objects) < 2 or any(not isinstance(o, ir.StructDef) for o in objects):
        return None
    structs = [o for o in objects if isinstance(o, ir.StructDef)]
    keys = {f.wire_name for f in structs[0].fields}
    ordered = [k for k in _TAG_PREFERENCE if k in keys] + sorted(keys - set(_TAG_PREFERENCE))
    for key in ordered:
        values = [_required_literal(s, key) for s in structs]
        if all(v is not None for v in values) and len(set(values)) == len(values):
            return key
    return None


def _walk_types(t: ir.TypeExpr) -> Iterator[ir.TypeExpr]:
    yield t
    if isinstance(t, ir.ArrayType):
        yield from _walk_types(t.item)
    elif isinstance(t, ir.MapType):
        yield from _walk_types(t.value)
    elif isinstance(t, ir.UnionType):
        for m in t.members:
            yield from _walk_types(m)


def _all_unions(
    definitions: tuple[ir.Definition, ...],
) -> Iterator[tuple[ir.TypeExpr, ...]]:
    for d in definitions:
        if isinstance(d, ir.UnionDef):
            yield d.members
        roots: list[ir.TypeExpr] = []
        if isinstance(d, (ir.StructDef, ir.OpenDef)):
            roots = [f.type for f in d.fields]
        elif isinstance(d, ir.AliasDef):
            roots = [d.target]
        if isinstance(d, (ir.UnionDef,)):
            roots = list(d.members)
        for r in roots:
            for t in _walk_types(r):
                if isinstance(t, ir.UnionType):
                    yield t.members


def assign_tags(definitions: tuple[ir.Definition, ...]) -> tuple[ir.Definition, ...]:
    index = UnionIndex(definitions)
    votes: dict[str, Counter[str]] = defaultdict(Counter)
    for members in _all_unions(definitions):
        flat = index.flatten(members)
        key = _tag_candidate(flat, index)
        if key is None:
            continue
        for m in flat:
            o = index.obj(m)
            if o is not None:
                votes[o.name][key] += 1
    out = []
    for d in definitions:
        if isinstance(d, ir.StructDef) and d.name in votes:
            key = sorted(votes[d.name].items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
            value = _required_literal(d, key)
            assert value is not None
            d = msgspec.structs.replace(
                d,
                tag=ir.Tag(field=key, value=value),
                fields=tuple(f for f in d.fields if f.wire_name != key),
            )
        out.append(d)
    return tuple(out)


# -- native check -----------------------------------------------------------------------


def is_native(members: tuple[ir.TypeExpr, ...], index: UnionIndex) -> bool:
    """Whether msgspec can decode ``members`` as a plain ``X | Y`` annotation."""
    flat = index.flatten(members)
    if any(isinstance(index.resolve(m), ir.AnyType) for m in flat):
        return True
    kinds = Counter[str]()
    tag_fields = set()
    custom = 0
    for m in flat:
        r = index.resolve(m)
        if isinstance(r, ir.Named):
            d = index.defs[r.name]
            if isinstance(d, ir.StructDef):
                if d.tag is not None:
                    kinds["tagged"] += 1
                    tag_fields.add(d.tag.field)
                else:
                    kinds["object"] += 1
            else:  # OpenDef, or a union that needs a hook
                if (
                    isinstance(d, ir.UnionDef)
                    and d.strategy is None
                    and is_native(d.members, index)
                ):
                    continue
                custom += 1
            continue
        if isinstance(r, ir.Scalar):
            kinds[{"float": "float"}.get(r.kind, r.kind)] += 1
        elif isinstance(r, ir.LiteralType):
            for k in {value_kind(v) for v in r.values}:
                kinds[{"number": "int", "string": "str", "boolean": "bool"}.get(k, k)] += 1
        elif isinstance(r, ir.ArrayType):
            kinds["array"] += 1
        elif isinstance(r, ir.MapType):
            kinds["object"] += 1
    if custom:
        return custom == 1 and set(kinds) <= {"null"}
    if kinds["tagged"] and (kinds["object"] or len(tag_fields) > 1):
        return False
    if kinds["object"] > 1:
        return False
    return all(n <= 1 for k, n in kinds.items() if k != "tagged")


# -- the pass ---------------------------------------------------------------------------


def _map_types(t: ir.TypeExpr, fn: Callable[[ir.TypeExpr], ir.TypeExpr]) -> ir.TypeExpr:
    if isinstance(t, ir.ArrayType):
        t = msgspec.structs.replace(t, item=_map_types(t.item, fn))
    elif isinstance(t, ir.MapType):
        t = msgspec.structs.replace(t, value=_map_types(t.value, fn))
    elif isinstance(t, ir.UnionType):
        t = msgspec.structs.replace(t, members=tuple(_map_types(m, fn) for m in t.members))
    return fn(t)


def _union_name(members: tuple[ir.TypeExpr, ...], hint: str) -> str:
    if 2 <= len(members) <= 3 and all(isinstance(m, ir.Named) for m in members):
        return "Or".join(m.name for m in members if isinstance(m, ir.Named))
    return hint


def analyze(module: ir.Module) -> ir.Module:
    """Tag structs, hoist non-native inline unions and plan every non-native union."""
    definitions = assign_tags(module.definitions)
    index = UnionIndex(definitions)
    names = ClassNames({d.name for d in definitions})
    hoisted: dict[tuple[ir.TypeExpr, ...], str] = {}
    new_defs: list[ir.Definition] = []

    def hoist(hint: str) -> Callable[[ir.TypeExpr], ir.TypeExpr]:
        def fn(t: ir.TypeExpr) -> ir.TypeExpr:
            if not isinstance(t, ir.UnionType) or is_native(t.members, index):
                return t
            if t.members not in hoisted:
                name = names.claim(_union_name(t.members, hint))
                hoisted[t.members] = name
                new_defs.append(ir.UnionDef(name=name, members=t.members, origin=hint))
            return ir.Named(name=hoisted[t.members])

        return fn

    rewritten: list[ir.Definition] = []
    for d in definitions:
        if isinstance(d, (ir.StructDef, ir.OpenDef)):
            fields = tuple(
                msgspec.structs.replace(f, type=_map_types(f.type, hoist(d.name + _cap(f.py_name))))
                for f in d.fields
            )
            d = msgspec.structs.replace(d, fields=fields)
        elif isinstance(d, ir.AliasDef):
            d = msgspec.structs.replace(d, target=_map_types(d.target, hoist(d.name)))
        elif isinstance(d, ir.UnionDef):  # e.g. a batch: list[Request | Notification]
            members = tuple(_map_types(m, hoist(d.name + "Item")) for m in d.members)
            d = msgspec.structs.replace(d, members=members)
        rewritten.append(d)
    rewritten += new_defs
    index = UnionIndex(tuple(rewritten))
    planned: list[ir.Definition] = []
    recursive = recursive_unions(tuple(rewritten))
    for d in rewritten:
        if isinstance(d, ir.UnionDef) and (d.name in recursive or not is_native(d.members, index)):
            planner = Planner(index, f"{module.version} {d.name}")
            d = msgspec.structs.replace(d, strategy=planner.plan(index.flatten(d.members)))
        planned.append(d)
    # a union is native only if all its nested unions are: re-check until stable
    changed = True
    while changed:
        changed = False
        index = UnionIndex(tuple(planned))
        for i, d in enumerate(planned):
            if (
                isinstance(d, ir.UnionDef)
                and d.strategy is None
                and not is_native(d.members, index)
            ):
                planner = Planner(index, f"{module.version} {d.name}")
                planned[i] = msgspec.structs.replace(
                    d, strategy=planner.plan(index.flatten(d.members))
                )
                changed = True
    return msgspec.structs.replace(module, definitions=tuple(planned))


def _named_in(t: ir.TypeExpr) -> Iterator[str]:
    for inner in _walk_types(t):
        if isinstance(inner, ir.Named):
            yield inner.name


def recursive_unions(definitions: tuple[ir.Definition, ...]) -> set[str]:
    """Unions that contain themselves without an object in between (``X = string | X[]``).

    msgspec cannot express such an alias, and Python cannot evaluate it at import; a class
    with a decode strategy stands for each of them at run time (type checkers see the
    recursive alias)."""
    edges: dict[str, set[str]] = {}
    for d in definitions:
        if isinstance(d, ir.AliasDef):
            edges[d.name] = set(_named_in(d.target))
        elif isinstance(d, ir.UnionDef):
            edges[d.name] = {n for m in d.members for n in _named_in(m)}
    found = set()
    for start, d in ((d.name, d) for d in definitions if isinstance(d, ir.UnionDef)):
        stack, seen = list(edges[start]), set()
        while stack:
            name = stack.pop()
            if name == start:
                found.add(start)
                break
            if name not in seen and name in edges:
                seen.add(name)
                stack.extend(edges[name])
    return found


def _cap(name: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in name.split("_"))
