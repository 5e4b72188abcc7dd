"""What union analysis asks of a module's definitions: follow aliases, splice nested
unions, and tell each type's JSON kind."""

from __future__ import annotations

from . import ir


class UnionIndex:
    """A module's definitions by name, for the questions unions ask of them."""

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


def json_kind(t: ir.TypeExpr, index: UnionIndex) -> str:
    t = index.resolve(t)
    if isinstance(t, ir.Scalar):
        return {
            "str": "string",
            "int": "number",
            "float": "number",
            "bool": "boolean",
        }.get(t.kind, "null")
    if isinstance(t, ir.LiteralType):
        kinds = {value_kind(v) for v in t.values}
        return kinds.pop() if len(kinds) == 1 else "mixed"
    if isinstance(t, ir.ArrayType):
        return "array"
    if isinstance(t, (ir.MapType, ir.Named)):
        return "object"
    return "any"


def value_kind(v: object) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    return "string"
