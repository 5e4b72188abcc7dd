"""Decode strategies for unions msgspec cannot decode natively: a decision tree by JSON
kind, by a discriminator's value, by the presence of keys, and trial as a last resort."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from . import ir
from .errors import GenerateError
from .union_index import UnionIndex, json_kind


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
    def __init__(self, index: UnionIndex, where: str) -> None:
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
