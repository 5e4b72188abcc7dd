"""Roles: the definitions the runtime and templates rely on, found by where the protocol
carries them rather than by what upstream named them.

A role such as ``ClientCapabilities`` is "whatever ``initialize`` carries in
``params.capabilities``" (or, from 2026-07-28 on, what every request's
``_meta`` carries under ``io.modelcontextprotocol/clientCapabilities``). Paths start at
a method (its ``method`` constant, which a rename of the definition does not touch) and
walk the raw schema:

- ``params`` / ``result``: the request's params object, or its result definition;
- ``[]``: an array's items;
- ``key=value``: the member of a union whose ``key`` is the constant ``value``;
- ``+key``: the member of a union that declares ``key``;
- anything else: a property.

A role resolves to an *origin*, the loader's name for a definition (``Tool``) or an inline
object (``Tool.inputSchema``); the loader maps origins to the names it emits. Role names
are the names these definitions had when mcpgen learned them; they stay the runtime's
vocabulary whatever a later revision calls the definitions.
"""

from __future__ import annotations

from typing import Any

from .overrides import ResultException, RolePath, Overrides


class _Walker:
    def __init__(self, defs: dict[str, Any], exceptions: tuple[ResultException, ...]) -> None:
        self.defs = defs
        self.exceptions = {e.method: e.result for e in exceptions}
        self.by_method = self._methods()

    def _methods(self) -> dict[str, str]:
        """Each ``method`` constant → the first definition (schema order) declaring it."""
        found: dict[str, str] = {}
        for name, node in self.defs.items():
            method = self.properties(node).get("method")
            value = constant(method) if isinstance(method, dict) else None
            if isinstance(value, str):
                found.setdefault(value, name)
        return found

    def target(self, node: Any) -> Any:
        """``node`` with ``$ref``s followed (None where one dangles or loops)."""
        seen: set[str] = set()
        while isinstance(node, dict) and isinstance(node.get("$ref"), str):
            name = node["$ref"].rsplit("/", 1)[-1]
            if name in seen:
                return None
            seen.add(name)
            node = self.defs.get(name)
        return node if isinstance(node, dict) else None

    def properties(self, node: Any, depth: int = 0) -> dict[str, Any]:
        """Declared properties of an object, ``allOf`` parts folded in."""
        node = self.target(node)
        if node is None or depth > 16:  # an allOf that includes itself
            return {}
        props: dict[str, Any] = {}
        parts = node.get("allOf")
        for part in parts if isinstance(parts, list) else []:
            props.update(self.properties(part, depth + 1))
        own = node.get("properties")
        if isinstance(own, dict):
            props.update(own)
        return props

    def step_into(self, child: Any, origin: str) -> tuple[Any, str] | None:
        """Move to ``child``: a ``$ref`` names the definition, inline keeps ``origin``."""
        if not isinstance(child, dict):
            return None
        ref = child.get("$ref")
        if isinstance(ref, str):
            name = ref.rsplit("/", 1)[-1]
            return (self.defs[name], name) if name in self.defs else None
        return child, origin

    def result_of(self, request: str, method: str) -> str | None:
        """The result definition of the request ``request`` (same rules as dispatch)."""
        base = request.removesuffix("Request")
        response = self.properties(self.defs.get(f"{base}ResultResponse")).get("result")
        if isinstance(response, dict) and isinstance(response.get("$ref"), str):
            name = response["$ref"].rsplit("/", 1)[-1]
            if name in self.defs:
                return name
        exception = self.exceptions.get(method)
        if exception in self.defs:
            return exception
        return f"{base}Result" if f"{base}Result" in self.defs else None

    def member(self, node: Any, origin: str, test: str) -> tuple[Any, str] | None:
        """The union member of ``node`` that ``test`` (``key=value`` or ``+key``) selects."""
        node = self.target(node)
        if node is None:
            return None
        alternatives = [
            alt
            for key in ("anyOf", "oneOf")
            if isinstance(node.get(key), list)
            for alt in node[key]
        ]
        for i, alt in enumerate(alternatives):
            props = self.properties(alt)
            if test.startswith("+"):
                chosen = test[1:] in props
            else:
                key, _, value = test.partition("=")
                prop = props.get(key)
                chosen = isinstance(prop, dict) and constant(prop) == value
            if chosen:
                return self.step_into(alt, f"{origin}|{i}")
        return None

    def walk(self, path: RolePath) -> str | None:
        if not path or path[0] not in self.by_method:
            return None
        method = path[0]
        request = self.by_method[method]
        here: tuple[Any, str] | None = (self.defs[request], request)
        for step in path[1:]:
            if here is None:
                return None
            node, origin = here
            if step == "result":
                result = self.result_of(request, method)
                here = (self.defs[result], result) if result else None
            elif step == "[]":
                items = (self.target(node) or {}).get("items")
                here = self.step_into(items, origin + "[]")
            elif "=" in step or step.startswith("+"):
                here = self.member(node, origin, step)
            else:
                child = self.properties(node).get(step)
                here = self.step_into(child, f"{origin}.{step}")
        return here[1] if here is not None else None


def constant(node: dict[str, Any]) -> Any:
    """The single value a property schema allows (``const`` or a one-value ``enum``)."""
    if "const" in node:
        return node["const"]
    enum = node.get("enum")
    return enum[0] if isinstance(enum, list) and len(enum) == 1 else None


def find_roles(defs: dict[str, Any], overrides: Overrides) -> dict[str, str]:
    """Each role of ``overrides`` that ``defs`` (a schema's raw definitions) has → its
    origin."""
    walker = _Walker(defs, overrides.result_exceptions)
    found: dict[str, str] = {}
    for rule in overrides.roles:
        for path in rule.paths:
            origin = walker.walk(path)
            if origin is not None:
                found[rule.role] = origin
                break
    return found


def methods_of(defs: dict[str, Any]) -> set[str]:
    """The ``method`` constants the schema's messages declare."""
    return set(_Walker(defs, ()).by_method)
