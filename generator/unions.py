"""Union analysis: msgspec tags where they work, a decode strategy everywhere else.

msgspec decodes a union natively when its members fall into distinct JSON kinds and its
object members are either a single type or Structs sharing a tag field with distinct
values. This pass

1. tags every Struct whose unions can use a required, distinct ``const`` as tag;
2. leaves native unions inline;
3. hoists every other union into a named ``UnionDef`` carrying a decision tree
   (by JSON kind, by discriminator value, by key presence, first valid as last resort),
   which the generated module interprets in its decode hook.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from typing import Any

import msgspec

from . import ir
from .errors import GenerateError
from .naming import ClassNames

_TAG_PREFERENCE = ("method", "type", "kind", "mode", "resultType")


class _Index:
    def __init__(self, definitions: tuple[ir.Definition, ...]) -> None:
        self.defs = {d.name: d for d in definitions}

    def resolve(self, t: ir.TypeExpr) -> ir.TypeExpr:
        """Follow aliases (not unions) to the type they stand for."""
        seen = set()
        while isinstance(t, ir.Named):
            d = self.defs[t.name]
            if not isinstance(d, ir.AliasDef) or t.name in seen:
                return t
            seen.add(t.name)
            t = d.target
        return t

    def flatten(self, members: tuple[ir.TypeExpr, ...]) -> list[ir.TypeExpr]:
        """Union members with aliases resolved and nested unions spliced in."""
        out: list[ir.TypeExpr] = []
        for m in members:
            r = self.resolve(m)
            if isinstance(r, ir.UnionType):
                nested = self.flatten(r.members)
            elif isinstance(r, ir.Named) and isinstance(self.defs[r.name], ir.UnionDef):
                nested = self.flatten(self.defs[r.name].members)  # type: ignore[union-attr]
            else:
                nested = [r]
            out += [n for n in nested if n not in out]
        return out

    def obj(self, t: ir.TypeExpr) -> ir.StructDef | ir.OpenDef | None:
        if isinstance(t, ir.Named):
            d = self.defs[t.name]
            if isinstance(d, (ir.StructDef, ir.OpenDef)):
                return d
        return None


def json_kind(t: ir.TypeExpr, index: _Index) -> str:
    t = index.resolve(t)
    if isinstance(t, ir.Scalar):
        return {
            "str": "string",
            "int": "number",
            "float": "number",
            "bool": "boolean",
        }.get(t.kind, "null")
    if isinstance(t, ir.LiteralType):
        kinds = {_value_kind(v) for v in t.values}
        return kinds.pop() if len(kinds) == 1 else "mixed"
    if isinstance(t, ir.ArrayType):
        return "array"
    if isinstance(t, (ir.MapType, ir.Named)):
        return "object"
    return "any"


def _value_kind(v: object) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    return "string"


# -- tagging ----------------------------------------------------------------------------


def _required_literal(d: ir.StructDef | ir.OpenDef, key: str) -> str | int | None:
    for f in d.fields:
        if f.wire_name == key and f.required and isinstance(f.type, ir.LiteralType):
            if len(f.type.values) == 1 and isinstance(f.type.values[0], (str, int)):
                if not isinstance(f.type.values[0], bool):
                    return f.type.values[0]
    return None


def _tag_candidate(members: list[ir.TypeExpr], index: _Index) -> str | None:
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
    index = _Index(definitions)
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


def is_native(members: tuple[ir.TypeExpr, ...], index: _Index) -> bool:
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
            for k in {_value_kind(v) for v in r.values}:
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


# -- strategies -------------------------------------------------------------------------


def _declared(d: ir.StructDef | ir.OpenDef) -> set[str]:
    keys = {f.wire_name for f in d.fields}
    if isinstance(d, ir.StructDef) and d.tag is not None:
        keys.add(d.tag.field)
    return keys


def _required(d: ir.StructDef | ir.OpenDef) -> set[str]:
    keys = {f.wire_name for f in d.fields if f.required}
    if isinstance(d, ir.StructDef) and d.tag is not None:
        keys.add(d.tag.field)
    return keys


def _literals(d: ir.StructDef | ir.OpenDef, key: str) -> tuple[tuple[Any, ...], bool] | None:
    """(values, required) of a literal-typed key, or None."""
    if isinstance(d, ir.StructDef) and d.tag is not None and d.tag.field == key:
        return (d.tag.value,), True
    for f in d.fields:
        if f.wire_name == key and isinstance(f.type, ir.LiteralType):
            return f.type.values, f.required
    return None


class Planner:
    def __init__(self, index: _Index, where: str) -> None:
        self.index = index
        self.where = where

    def plan(self, members: list[ir.TypeExpr]) -> ir.Strategy:
        if len(members) == 1:
            return ir.Pick(member=members[0])
        groups: dict[str, list[ir.TypeExpr]] = defaultdict(list)
        for m in members:
            groups[json_kind(m, self.index)].append(m)
        if "any" in groups or "mixed" in groups:
            raise GenerateError(
                f"{self.where}: cannot plan a union with untyped members", "add a patch"
            )
        if len(groups) > 1:
            return ir.ByKind(cases=tuple((k, self.plan(v)) for k, v in groups.items()))
        ((kind, group),) = groups.items()
        if kind == "object":
            return self.plan_objects(group)
        return ir.FirstValid(options=tuple(ir.Pick(member=m) for m in group))

    def _objs(self, members: list[ir.TypeExpr]) -> list[ir.StructDef | ir.OpenDef]:
        objs = [self.index.obj(m) for m in members]
        if any(o is None for o in objs):  # a map among objects: only trial decoding helps
            return []
        return [o for o in objs if o is not None]

    def plan_objects(self, members: list[ir.TypeExpr]) -> ir.Strategy:
        if len(members) == 1:
            return ir.Pick(member=members[0])
        objs = self._objs(members)
        if not objs:
            return self._first_valid(members)
        by_value = self._by_value(members, objs)
        if by_value is not None:
            return by_value
        by_key = self._by_key(members, objs)
        if by_key is not None:
            return by_key
        return self._first_valid(members)

    def _by_value(
        self, members: list[ir.TypeExpr], objs: list[ir.StructDef | ir.OpenDef]
    ) -> ir.ByValue | None:
        keys = sorted({k for o in objs for k in _declared(o) if _literals(o, k)})
        best: (
            tuple[
                tuple[int, int, int],
                str,
                dict[Any, list[ir.TypeExpr]],
                list[ir.TypeExpr],
            ]
            | None
        )
        best = None
        for rank, key in enumerate(keys):
            cases, default = self._partition(members, objs, key)
            groups = [*cases.values(), default]
            if not cases or any(len(g) >= len(members) for g in groups):
                continue  # a discriminator must split the members
            if not all(isinstance(v, (str, int)) for v in cases):
                continue
            if not any(len(lit[0]) == 1 for o in objs if (lit := _literals(o, key))):
                continue  # an enum shared by several members is not a discriminator
            n_literal = sum(1 for o in objs if _literals(o, key))
            score = (len(cases) + (1 if default else 0), n_literal, -rank)
            if best is None or score > best[0]:
                best = (score, key, cases, default)
        if best is None:
            return None
        _, key, cases, default = best
        ordered = sorted(cases.items(), key=lambda kv: str(kv[0]))
        return ir.ByValue(
            key=key,
            cases=tuple((v, self.plan_objects(ms)) for v, ms in ordered),
            default=self.plan_objects(default) if default else None,
        )

    @staticmethod
    def _partition(
        members: list[ir.TypeExpr], objs: list[ir.StructDef | ir.OpenDef], key: str
    ) -> tuple[dict[Any, list[ir.TypeExpr]], list[ir.TypeExpr]]:
        """Members by the literal value of ``key``; the rest (no literal, or optional) default."""
        cases: dict[Any, list[ir.TypeExpr]] = {}
        default: list[ir.TypeExpr] = []
        for m, o in zip(members, objs):
            lit = _literals(o, key)
            if lit is None:
                default.append(m)
                continue
            for v in lit[0]:
                cases.setdefault(v, []).append(m)
            if not lit[1]:
                default.append(m)
        return cases, default

    def _by_key(
        self, members: list[ir.TypeExpr], objs: list[ir.StructDef | ir.OpenDef]
    ) -> ir.ByKey | None:
        """Route by keys only one member declares.

        A key *required* by one member and declared by no other identifies that member for
        sure, so it is tested and the member leaves the pool; the last member left needs no
        test. When several remain, a key merely *declared* by one of them still proves that
        member, but its instances may lack the key, so those fall back to trial decoding.
        """
        remaining = list(zip(members, objs))
        cases: list[tuple[str, ir.Strategy]] = []
        declared_by = Counter(k for o in objs for k in _declared(o))

        def best(keys: set[str]) -> list[str]:
            """Keys no other member declares at all come first: they read without order."""
            return sorted(keys, key=lambda k: (declared_by[k] > 1, k))

        def others(o: ir.StructDef | ir.OpenDef) -> set[str]:
            return set().union(*(_declared(x) for _, x in remaining if x is not o))

        progress = True
        while progress and len(remaining) > 1:
            progress = False
            for m, o in list(remaining):
                unique = best(_required(o) - others(o))
                if unique and len(remaining) > 1:
                    cases.append((unique[0], ir.Pick(member=m)))
                    remaining.remove((m, o))
                    progress = True
        if len(remaining) == 1:
            default: ir.Strategy = ir.Pick(member=remaining[0][0])
        else:
            for m, o in remaining:
                unique = best(_declared(o) - others(o))
                if unique:
                    cases.append((unique[0], ir.Pick(member=m)))
            default = self._first_valid([m for m, _ in remaining])
        if not cases:
            return None
        return ir.ByKey(cases=tuple(cases), default=default)

    def _first_valid(self, members: list[ir.TypeExpr]) -> ir.FirstValid:
        def weight(m: ir.TypeExpr) -> tuple[int, int]:
            """Most required keys first; among equals, fewest declared keys first."""
            o = self.index.obj(m)
            return (-len(_required(o)), len(_declared(o))) if o else (0, 0)

        ordered = sorted(members, key=weight)
        return ir.FirstValid(options=tuple(ir.Pick(member=m) for m in ordered))


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
    index = _Index(definitions)
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
    index = _Index(tuple(rewritten))
    planned: list[ir.Definition] = []
    for d in rewritten:
        if isinstance(d, ir.UnionDef) and not is_native(d.members, index):
            planner = Planner(index, f"{module.version} {d.name}")
            d = msgspec.structs.replace(d, strategy=planner.plan(index.flatten(d.members)))
        planned.append(d)
    # a union is native only if all its nested unions are: re-check until stable
    changed = True
    while changed:
        changed = False
        index = _Index(tuple(planned))
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


def _cap(name: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in name.split("_"))
