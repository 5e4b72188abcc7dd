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
    #: What the typed client returns: the result without the members that only ask for
    #: input (the runtime answers those rounds itself and returns the final result).
    answer: str
    doc: str | None
    #: Keyword arguments that build the params object, when it is a plain object.
    kwargs: list[FieldView] | None
    #: A request its sender may ask to run as a task (a ``task`` param, 2025-11-25): the
    #: answer then may be the task made of it.
    task: TaskParam | None = None


@dataclass
class TaskParam:
    #: The keyword, its type (set), the type of its absence, and the task answer's type.
    name: str
    annotation: str
    unset: str
    answer: str


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
    #: Annotations of the Context's typed properties, by role (``t.<name>`` where the
    #: schema has the role, a plain type where it does not).
    roles: dict[str, str]
    #: The version has URL-mode elicitation (the Context gets ``elicit_url``).
    url_elicitation: bool = False


#: The roles the server Context types its properties with, and what stands in for each
#: where a schema has no such definition.
CONTEXT_ROLES = {
    "Implementation": "Mapping[str, Any]",
    "ClientCapabilities": "Mapping[str, Any]",
    "LoggingLevel": "str",
}


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
        result = f"t.{m.result_type}" if m.result_type else "None"
        task = None
        if isinstance(target, (ir.StructDef, ir.OpenDef)) and TASK_ANSWER in defs:
            for f in target.fields:
                if f.wire_name == TASK_FIELD and not f.required:
                    annotation = _qualify(renderer.annotation(f.type), defs)
                    task = TaskParam(f.py_name, annotation, renderer.h["UnsetType"], TASK_ANSWER)
        return MethodView(
            spec=m,
            params=f"t.{m.params_type}" if m.params_type else "None",
            result=result,
            answer=_final(m.result_type, defs) or result,
            doc=docstring(defs[m.message_type].description, "        "),
            kwargs=kwargs,
            task=task,
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
        roles={
            role: f"t.{module.role(role)}" if module.role(role) else fallback
            for role, fallback in CONTEXT_ROLES.items()
        },
        url_elicitation=URL_ELICITATION in defs,
    )


#: The definition whose presence gives the Context ``elicit_url``.
URL_ELICITATION = "ElicitRequestURLParams"

#: The param by which a request asks to run as a task, and what answers it then.
TASK_FIELD, TASK_ANSWER = "task", "CreateTaskResult"


#: The field and value by which a result says it only asks for input (a round the client
#: runtime answers and retries).
ROUND_FIELD, ROUND_VALUE = "resultType", "input_required"


def _asks_for_input(member: ir.TypeExpr, defs: dict[str, ir.Definition]) -> bool:
    target = defs.get(member.name) if isinstance(member, ir.Named) else None
    if not isinstance(target, (ir.StructDef, ir.OpenDef)):
        return False
    return any(
        f.wire_name == ROUND_FIELD
        and isinstance(f.type, ir.LiteralType)
        and f.type.values == (ROUND_VALUE,)
        for f in target.fields
    )


def _final(result_type: str | None, defs: dict[str, ir.Definition]) -> str | None:
    """The annotation of a result union's members that do not ask for input, or None
    when the result is not such a union."""
    union = defs.get(result_type) if result_type else None
    if not isinstance(union, ir.UnionDef):
        return None
    kept = [m for m in union.members if not _asks_for_input(m, defs)]
    if len(kept) == len(union.members) or not all(isinstance(m, ir.Named) for m in kept):
        return None
    return " | ".join(f"t.{m.name}" for m in kept if isinstance(m, ir.Named))


def _qualify(annotation: str, defs: dict[str, ir.Definition]) -> str:
    """Prefix definition names in an annotation with ``t.`` (the types module)."""
    return re.sub(
        r"\b([A-Za-z_][A-Za-z0-9_]*)\b",
        lambda m: f"t.{m.group(1)}" if m.group(1) in defs else m.group(1),
        annotation,
    )
