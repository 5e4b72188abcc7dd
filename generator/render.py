"""Turn the IR of one version into the view the ``types.py`` template renders.

Everything Python-specific (annotations, defaults, docstrings, the order of definitions,
strategy tables) is decided here, so the template is a plain layout.
"""

from __future__ import annotations

import re
import textwrap

from dataclasses import dataclass, field
from typing import Any

from . import ir
from .errors import GenerateError
from .unions import recursive_unions

_RUNTIME_SCALARS = {"str": "str", "int": "int", "bool": "bool", "null": "type(None)"}

#: Names the generated module imports, by source module. A schema definition with the same
#: name wins; the helper is then imported under a leading underscore.
HELPERS: dict[str, tuple[str, ...]] = {
    "typing": ("TYPE_CHECKING", "Annotated", "Any", "Literal", "TypeAlias"),
    "msgspec": ("UNSET", "Meta", "UnsetType"),
    ".._support": (
        "OpenObject",
        "Struct",
        "UnionType",
        "convert",
        "decode",
        "default_value",
        "encode",
        "key",
        "register_union",
        "reshape",
        "undeclared",
        "with_undeclared",
    ),
}
#: The module's own API; a schema definition may not take these names.
RESERVED = frozenset(
    {
        "DEFINITIONS",
        "ROLES",
        "PROTOCOL_VERSION",
        "decode",
        "encode",
        "convert",
        "reshape",
        "undeclared",
        "with_undeclared",
        "msgspec",
    }
)


@dataclass
class FieldView:
    name: str
    annotation: str
    default: str | None
    doc: str | None


@dataclass
class ClassView:
    kind: str  # "struct" | "open"
    name: str
    doc: str | None
    fields: list[FieldView]
    config: str = ""
    tag_property: str | None = None
    tag_value: str | None = None
    extra: str | None = None
    one_of: list[tuple[str, list[tuple[str, str]]]] = field(default_factory=list)


@dataclass
class AliasView:
    kind: str  # "alias" | "union"
    name: str
    expr: str
    doc: str | None
    deps: set[str] = field(default_factory=set)


@dataclass
class RegistrationView:
    name: str
    members: list[str]
    strategy: str


@dataclass
class ModuleView:
    version: str
    era: str
    commit: str
    classes: list[ClassView]
    aliases: list[AliasView]
    registrations: list[RegistrationView]
    exports: list[str]
    schema_names: list[str]
    imports: list[str]
    h: dict[str, str]
    #: (role, emitted definition name), sorted by role
    roles: list[tuple[str, str]]


#: Generated code is formatted to this width (black's, in pyproject.toml); black leaves
#: docstrings alone, so they are wrapped here.
LINE_LENGTH = 100
_LIST_ITEM = re.compile(r"([-*+]|\d+[.)]) ")


def docstring(text: str | None, indent: str = "") -> str | None:
    """A triple-quoted literal for ``text`` that is always valid Python, its lines wrapped
    to ``LINE_LENGTH`` where it is placed (``indent``)."""
    if not text:
        return None
    body = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"').rstrip()
    if body.endswith('"'):
        body += " "
    width = LINE_LENGTH - len(indent)
    # room for the quotes on either end: black moves closing quotes onto the last line
    lines = wrap_lines(body.splitlines(), width - 3, first=width - 6)
    if len(lines) == 1 and len(lines[0]) + 6 <= width:
        return f'"""{lines[0]}"""'
    rest = "".join(f"\n{indent}{line}" if line.strip() else "\n" for line in lines[1:])
    return f'"""{lines[0]}{rest}\n{indent}"""'


def wrap_lines(lines: list[str], width: int, first: int) -> list[str]:
    """``lines`` with each one longer than ``width`` (``first`` for the first) broken at
    spaces; a list item's continuation hangs under its text; fenced code stays as it is,
    and so does a word longer than the width (a URL)."""
    out: list[str] = []
    fenced = False
    for line in lines:
        if line.lstrip().startswith("```"):
            fenced = not fenced
        limit = first if not out else width
        if fenced or len(line) <= limit:
            out.append(line)
            continue
        text = line.lstrip()
        lead = line[: len(line) - len(text)]
        item = _LIST_ITEM.match(text)
        hang = lead + " " * (item.end() if item else 0)
        out += _broken(text, lead, hang, limit, width) or [line]
    return out


def _broken(text: str, lead: str, hang: str, first: int, width: int) -> list[str]:
    """``text`` broken into lines: the first at most ``first`` long, the others ``width``."""
    options: dict[str, Any] = {"break_long_words": False, "break_on_hyphens": False}
    pieces = textwrap.wrap(text, first, initial_indent=lead, subsequent_indent=hang, **options)
    if len(pieces) <= 1 or first == width:
        return pieces
    rest = " ".join(piece.strip() for piece in pieces[1:])
    return [
        pieces[0],
        *textwrap.wrap(rest, width, initial_indent=hang, subsequent_indent=hang, **options),
    ]


class Renderer:
    def __init__(self, module: ir.Module) -> None:
        self.module = module
        self.defs = module.lookup()
        self.recursive = recursive_unions(module.definitions)
        clash = RESERVED & set(self.defs)
        if clash:
            raise GenerateError(
                f"{module.version}: definition name(s) {sorted(clash)} clash with the module API",
                "add a rename to the generator",
            )
        #: helper name -> the name it has in the generated module
        self.h = {n: (f"_{n}" if n in self.defs else n) for ns in HELPERS.values() for n in ns}

    def imports(self) -> list[str]:
        lines = []
        unused = set() if self._has_defaults() else {"default_value"}
        for source, names in HELPERS.items():
            parts = [
                n if self.h[n] == n else f"{n} as {self.h[n]}" for n in names if n not in unused
            ]
            lines.append(f"from {source} import {', '.join(parts)}")
        return lines

    def _has_defaults(self) -> bool:
        return any(
            f.has_default
            for d in self.module.definitions
            if isinstance(d, (ir.StructDef, ir.OpenDef))
            for f in d.fields
        )

    # -- annotations --------------------------------------------------------------------

    def annotation(self, t: ir.TypeExpr) -> str:
        h = self.h
        if isinstance(t, ir.AnyType):
            return h["Any"]
        if isinstance(t, ir.Named):
            return t.name
        if isinstance(t, ir.Scalar):
            return self._scalar(t)
        if isinstance(t, ir.LiteralType):
            return self._literal(t.values)
        if isinstance(t, ir.ArrayType):
            inner = f"list[{self.annotation(t.item)}]"
            meta = self._meta(
                min_length=t.constraints.min_length, max_length=t.constraints.max_length
            )
            return f"{h['Annotated']}[{inner}, {meta}]" if meta else inner
        if isinstance(t, ir.MapType):
            return f"dict[str, {self.annotation(t.value)}]"
        if isinstance(t, ir.UnionType):
            parts: list[str] = []
            for m in t.members:
                text = self.annotation(m)
                if text not in parts:
                    parts.append(text)
            return " | ".join(parts)
        raise GenerateError(f"cannot render {t!r}")

    def _scalar(self, t: ir.Scalar) -> str:
        c, a = t.constraints, self.h["Annotated"]
        if t.kind == "null":
            return "None"
        meta = self._meta(
            ge=c.ge,
            le=c.le,
            min_length=c.min_length,
            max_length=c.max_length,
            pattern=c.pattern,
        )
        if t.kind == "float":  # JSON number: keep integers integers, so re-encoding is exact
            return f"{a}[int, {meta}] | {a}[float, {meta}]" if meta else "int | float"
        base = _RUNTIME_SCALARS[t.kind]
        return f"{a}[{base}, {meta}]" if meta else base

    def _meta(self, **constraints: Any) -> str:
        parts = [f"{k}={v!r}" for k, v in constraints.items() if v is not None]
        return f"{self.h['Meta']}({', '.join(parts)})" if parts else ""

    def _literal(self, values: tuple[ir.JSONScalar, ...]) -> str:
        non_null = [v for v in values if v is not None]
        text = f"{self.h['Literal']}[{', '.join(repr(v) for v in non_null)}]" if non_null else ""
        if None in values:
            return f"{text} | None" if text else "None"
        return text

    # -- runtime values -----------------------------------------------------------------

    def runtime_class(self, t: ir.TypeExpr, seen: frozenset[str] = frozenset()) -> list[str]:
        """Classes whose instances a decoded ``t`` can be (for union registration)."""
        if isinstance(t, ir.Named):
            d = self.defs[t.name]
            if t.name in seen:  # a recursive union: its classes are listed already
                return []
            if isinstance(d, ir.AliasDef):
                return self.runtime_class(d.target, seen | {t.name})
            if isinstance(d, ir.UnionDef):
                return [c for m in d.members for c in self.runtime_class(m, seen | {t.name})]
            return [t.name]
        if isinstance(t, ir.Scalar):
            return ["int", "float"] if t.kind == "float" else [_RUNTIME_SCALARS[t.kind]]
        if isinstance(t, ir.LiteralType):
            return sorted({type(v).__name__ if v is not None else "type(None)" for v in t.values})
        if isinstance(t, ir.ArrayType):
            return ["list"]
        if isinstance(t, ir.MapType):
            return ["dict"]
        if isinstance(t, ir.UnionType):
            return [c for m in t.members for c in self.runtime_class(m, seen)]
        return ["object"]

    def strategy(self, s: ir.Strategy) -> str:
        if isinstance(s, ir.Pick):
            return f'("pick", {self.annotation(s.member)})'
        if isinstance(s, ir.ByKind):
            cases = ", ".join(f"{k!r}: {self.strategy(v)}" for k, v in s.cases)
            return f'("kind", {{{cases}}})'
        if isinstance(s, ir.ByValue):
            cases = ", ".join(f"{k!r}: {self.strategy(v)}" for k, v in s.cases)
            default = self.strategy(s.default) if s.default else "None"
            return f'("value", {s.key!r}, {{{cases}}}, {default})'
        if isinstance(s, ir.ByKey):
            cases = "".join(f"({k!r}, {self.strategy(v)}), " for k, v in s.cases)
            default = self.strategy(s.default) if s.default else "None"
            return f'("key", ({cases}), {default})'
        options = "".join(f"{self.strategy(o)}, " for o in s.options)
        return f'("first", ({options}))'

    # -- definitions --------------------------------------------------------------------

    def field_view(self, f: ir.Field, open_object: bool) -> FieldView:
        annotation = self.annotation(f.type)
        wire = None if (f.wire_name == f.py_name and not open_object) else f.wire_name
        if f.has_default:  # an object of its own: a decode that applied it can tell
            written = ", written=True" if f.written else ""
            default_value = f"{self.h['default_value']}({f.default!r}{written})"
        elif not f.required:
            annotation = f"{annotation} | {self.h['UnsetType']}"
            default_value = self.h["UNSET"]
        else:
            default_value = None
        if open_object:
            args = [repr(f.wire_name)] + ([f"default={default_value}"] if default_value else [])
            default = f"{self.h['key']}({', '.join(args)})"
        elif wire is not None:
            args = ([f"default={default_value}"] if default_value else []) + [f"name={wire!r}"]
            default = f"msgspec.field({', '.join(args)})"
        else:
            default = default_value
        return FieldView(f.py_name, annotation, default, docstring(f.description, "    "))

    def class_view(self, d: ir.StructDef | ir.OpenDef) -> ClassView:
        is_open = isinstance(d, ir.OpenDef)
        view = ClassView(
            kind="open" if is_open else "struct",
            name=d.name,
            doc=docstring(d.description, "    "),
            fields=[self.field_view(f, is_open) for f in d.fields],
        )
        if isinstance(d, ir.OpenDef):
            if not isinstance(d.extra, ir.AnyType):
                view.extra = self.annotation(d.extra)
            return view
        if d.tag is not None:
            view.config = f", tag_field={d.tag.field!r}, tag={d.tag.value!r}"
            from .naming import snake

            view.tag_property = snake(d.tag.field)
            view.tag_value = repr(d.tag.value)
        by_wire = {f.wire_name: f.py_name for f in d.fields}
        for group in d.require_one_of:
            view.one_of.append((" and ".join(group), [(w, by_wire[w]) for w in group]))
        return view

    def alias_views(self) -> list[AliasView]:
        views = []
        for d in self.module.definitions:
            if isinstance(d, ir.AliasDef):
                expr = self.annotation(d.target)
                views.append(
                    AliasView("alias", d.name, expr, docstring(d.description), _deps(d.target))
                )
            elif isinstance(d, ir.UnionDef):
                expr = " | ".join(dict.fromkeys(self.annotation(m) for m in d.members))
                deps = set().union(*(_deps(m) for m in d.members))
                kind = "alias" if d.strategy is None else "union"
                if kind == "union":  # a class at run time: it names nothing at import
                    deps = set()
                if d.name in self.recursive:  # a type checker reads it as a forward reference
                    expr = f'"{expr}"'
                text = d.description
                if text is None and kind == "union":
                    text = f"Union decoded by a strategy: {expr}."
                views.append(AliasView(kind, d.name, expr, docstring(text, "        "), deps))
        return _topological(views, self.defs)

    def view(self, commit: str) -> ModuleView:
        classes = [
            self.class_view(d)
            for d in self.module.definitions
            if isinstance(d, (ir.StructDef, ir.OpenDef))
        ]
        registrations = [
            RegistrationView(
                d.name,
                list(dict.fromkeys(c for m in d.members for c in self.runtime_class(m))),
                self.strategy(d.strategy),
            )
            for d in self.module.definitions
            if isinstance(d, ir.UnionDef) and d.strategy is not None
        ]
        names = sorted(d.name for d in self.module.definitions)
        return ModuleView(
            version=self.module.version,
            era=self.module.era,
            commit=commit,
            classes=classes,
            aliases=self.alias_views(),
            registrations=registrations,
            exports=names,
            schema_names=list(self.module.schema_names),
            imports=self.imports(),
            h=self.h,
            roles=sorted((role, self.annotation(made)) for role, made in self.module.roles),
        )


def _deps(t: ir.TypeExpr) -> set[str]:
    if isinstance(t, ir.Named):
        return {t.name}
    if isinstance(t, ir.ArrayType):
        return _deps(t.item)
    if isinstance(t, ir.MapType):
        return _deps(t.value)
    if isinstance(t, ir.UnionType):
        return set().union(*(_deps(m) for m in t.members))
    return set()


def _topological(views: list[AliasView], defs: dict[str, ir.Definition]) -> list[AliasView]:
    """Aliases evaluate at import time, so each must follow the aliases it names."""
    by_name = {v.name: v for v in views}
    done: set[str] = set()
    out: list[AliasView] = []

    def visit(v: AliasView, stack: tuple[str, ...]) -> None:
        if v.name in done:
            return
        if v.name in stack:
            raise GenerateError(
                f"alias cycle: {' -> '.join(stack + (v.name,))}",
                "add an any_json override",
            )
        for dep in sorted(v.deps):
            if dep in by_name:
                visit(by_name[dep], stack + (v.name,))
        done.add(v.name)
        out.append(v)

    for v in views:
        visit(v, ())
    return out
