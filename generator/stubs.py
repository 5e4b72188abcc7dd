"""The view the ``methods.py``, ``server.py`` and ``client.py`` templates render."""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import ir
from .overrides import Overrides
from .render import FieldView, Renderer, docstring


@dataclass
class MethodView:
    spec: ir.Method
    params: str  # annotation of the params object ("None" when the method has none)
    result: str  # annotation of the result ("None" for notifications)
    doc: str | None
    #: Keyword arguments that build the params object, when it is a plain object.
    kwargs: list[FieldView] | None


@dataclass
class StubsView:
    version: str
    era: str
    imports: list[str]
    runtime_methods: list[str]
    #: Requests the server answers / notifications it receives, in table order.
    server_requests: list[MethodView]
    server_notifications: list[MethodView]
    #: Requests the client answers (wire or input) / notifications it receives.
    client_requests: list[MethodView]
    client_notifications: list[MethodView]
    #: Everything, for the dispatch table.
    methods: list[MethodView]


def build_stubs(module: ir.Module, overrides: Overrides) -> StubsView:
    renderer = Renderer(module)
    defs = module.lookup()
    runtime = {r.method for r in overrides.runtime_methods}

    def kwarg(f: ir.Field) -> FieldView:
        annotation = _qualify(renderer.annotation(f.type), defs)
        if f.has_default:
            default: str | None = repr(f.default)
        elif not f.required:
            annotation += f" | {renderer.h['UnsetType']}"
            default = renderer.h["UNSET"]
        else:
            default = None
        return FieldView(f.py_name, annotation, default, None)

    def view(m: ir.Method) -> MethodView:
        target = defs.get(m.params_type) if m.params_type else None
        kwargs = None
        if isinstance(target, (ir.StructDef, ir.OpenDef)):
            kwargs = [kwarg(f) for f in target.fields]
        return MethodView(
            spec=m,
            params=f"t.{m.params_type}" if m.params_type else "None",
            result=f"t.{m.result_type}" if m.result_type else "None",
            doc=docstring(defs[m.message_type].description, "        "),
            kwargs=kwargs,
        )

    views = [view(m) for m in module.methods]
    user = [v for v in views if v.spec.name not in runtime]
    return StubsView(
        version=module.version,
        era=module.era,
        imports=[line for line in renderer.imports() if "_support" not in line],
        runtime_methods=sorted(runtime),
        server_requests=[
            v for v in user if v.spec.kind == "request" and v.spec.direction == "client"
        ],
        server_notifications=[
            v for v in user if v.spec.kind == "notification" and v.spec.direction == "client"
        ],
        client_requests=[
            v for v in user if v.spec.kind == "request" and v.spec.direction == "server"
        ],
        client_notifications=[
            v for v in user if v.spec.kind == "notification" and v.spec.direction == "server"
        ],
        methods=views,
    )


def _qualify(annotation: str, defs: dict[str, ir.Definition]) -> str:
    """Prefix definition names in an annotation with ``t.`` (the types module)."""
    return re.sub(
        r"\b([A-Za-z_][A-Za-z0-9_]*)\b",
        lambda m: f"t.{m.group(1)}" if m.group(1) in defs else m.group(1),
        annotation,
    )
