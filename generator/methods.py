"""Build a version's dispatch table from its direction unions.

Requests and notifications come from ``ClientRequest``, ``ServerRequest``,
``ClientNotification`` and ``ServerNotification`` (whichever the version defines; 2026 has
no ``ServerRequest``), plus 2026's ``InputRequest`` members, which travel embedded in
results rather than as JSON-RPC requests. A request's result type is, in order: the
``result`` of a ``<Base>ResultResponse`` definition (2026 spells these out), the
``<Base>Result`` definition, or an exception listed in the overrides.
"""

from __future__ import annotations

import re

from . import ir
from .errors import GenerateError
from .naming import snake
from .overrides import Overrides

DIRECTION_UNIONS: tuple[tuple[str, ir.Kind, ir.Side, ir.Channel], ...] = (
    ("ClientRequest", "request", "client", "wire"),
    ("ServerRequest", "request", "server", "wire"),
    ("ClientNotification", "notification", "client", "wire"),
    ("ServerNotification", "notification", "server", "wire"),
    ("InputRequest", "request", "server", "input"),
)


def _members(name: str, defs: dict[str, ir.Definition]) -> list[str]:
    d = defs.get(name)
    if d is None:
        return []
    if isinstance(d, ir.AliasDef) and isinstance(d.target, ir.Named):
        return [d.target.name]
    if isinstance(d, ir.UnionDef):
        return [m.name for m in d.members if isinstance(m, ir.Named)]
    return []


def _method_of(d: ir.Definition) -> str | None:
    if isinstance(d, ir.StructDef) and d.tag is not None and d.tag.field == "method":
        return str(d.tag.value)
    if isinstance(d, (ir.StructDef, ir.OpenDef)):
        for f in d.fields:
            if f.wire_name == "method" and isinstance(f.type, ir.LiteralType):
                return str(f.type.values[0])
    return None


def _params(d: ir.StructDef | ir.OpenDef) -> tuple[str | None, bool]:
    for f in d.fields:
        if f.wire_name == "params":
            if not isinstance(f.type, ir.Named):
                raise GenerateError(f"{d.name}.params is not a named type", "check the loader")
            return f.type.name, f.required
    return None, False


def handler_name(message_type: str) -> str:
    """``CallToolRequest`` → ``call_tool``; ``ResourceUpdatedNotification`` → ``on_resource_updated``."""
    if message_type.endswith("Request"):
        return snake(message_type[: -len("Request")])
    return "on_" + snake(re.sub(r"Notification$", "", message_type))


def result_type(
    message_type: str, method: str, defs: dict[str, ir.Definition], overrides: Overrides
) -> str | None:
    base = message_type[: -len("Request")]
    response = defs.get(f"{base}ResultResponse")
    if isinstance(response, ir.StructDef):
        for f in response.fields:
            if f.wire_name == "result" and isinstance(f.type, ir.Named):
                return f.type.name
    for exc in overrides.result_exceptions:
        if exc.method == method and exc.result in defs:
            return exc.result
    if f"{base}Result" in defs:
        return f"{base}Result"
    return None


def capability_paths(module: ir.Module, side: ir.Side) -> set[tuple[str, ...]]:
    """Every field path of the capabilities one side declares, e.g. ``("tools",
    "listChanged")``; the capabilities object is found by its role, not by its name."""
    paths: set[tuple[str, ...]] = set()
    defs = module.lookup()

    def walk(name: str | None, prefix: tuple[str, ...]) -> None:
        d = defs.get(name or "")
        if not isinstance(d, (ir.StructDef, ir.OpenDef)) or len(prefix) > 4:
            return
        for f in d.fields:
            paths.add(path := (*prefix, f.wire_name))
            if isinstance(f.type, ir.Named):
                walk(f.type.name, path)

    walk(module.role("ClientCapabilities" if side == "client" else "ServerCapabilities"), ())
    return paths


def build_methods(module: ir.Module, overrides: Overrides) -> tuple[ir.Method, ...]:
    defs = module.lookup()
    declared = {side: capability_paths(module, side) for side in ("client", "server")}
    methods: list[ir.Method] = []
    for union, kind, sender, channel in DIRECTION_UNIONS:
        for member in _members(union, defs):
            d = defs[member]
            if not isinstance(d, (ir.StructDef, ir.OpenDef)):
                raise GenerateError(f"{module.version}: {union} member {member} is not an object")
            method = _method_of(d)
            if method is None:
                raise GenerateError(f"{module.version}: {member} has no const method")
            params, params_required = _params(d)
            result = result_type(member, method, defs, overrides) if kind == "request" else None
            receiver: ir.Side = "server" if sender == "client" else "client"
            gate = next(
                (
                    c.path
                    for c in overrides.capabilities
                    if c.method == method and c.side == (receiver if kind == "request" else sender)
                ),
                None,
            )
            if gate is not None and gate not in declared[receiver if kind == "request" else sender]:
                gate = None
            methods.append(
                ir.Method(
                    name=method,
                    kind=kind,
                    direction=sender,
                    message_type=member,
                    params_type=params,
                    params_required=params_required,
                    result_type=result,
                    capability=gate,
                    channel=channel,
                    handler=handler_name(member),
                )
            )
    return tuple(methods)
