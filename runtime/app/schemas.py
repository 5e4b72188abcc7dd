"""Python signatures as msgspec Structs and JSON Schemas.

A function's parameters become one Struct type: ``msgspec.convert`` then validates and
converts a call's arguments in one pass, and ``msgspec.json.schema`` describes them (JSON
Schema 2020-12, with ``$defs`` for nested Structs, kept as they are). Descriptions come
from ``Annotated[..., msgspec.Meta(description=...)]`` or, failing that, the docstring.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import typing
from types import CoroutineType
from collections.abc import Callable, Mapping
from typing import Annotated, Any

import msgspec

from .docstrings import Doc


def object_schema(tp: Any) -> dict[str, Any]:
    """The JSON Schema of ``tp`` with its own definition at the root (a tool's schemas
    must be objects, not references), nested definitions under ``$defs``."""
    (root,), components = msgspec.json.schema_components([tp], ref_template="#/$defs/{name}")
    ref = root.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[1]
        root = dict(components[name])
        # A recursive type refers to itself: its definition stays for those references.
        if msgspec.json.encode(ref) not in msgspec.json.encode(components):
            del components[name]
    root.pop("title", None)
    for schema in (root, *components.values()):
        if schema.get("required") == []:  # noise, and invalid before draft 6
            del schema["required"]
    if components:
        root["$defs"] = components
    return root


def header(name: str) -> msgspec.Meta:
    """Mirror a tool parameter into the ``Mcp-Param-<name>`` HTTP header (2026-07-28's
    ``x-mcp-header``): ``region: Annotated[str, header("Region")]``."""
    return msgspec.Meta(extra_json_schema={"x-mcp-header": name})


def _described(tp: Any) -> bool:
    """Whether an annotation already carries a description."""
    if typing.get_origin(tp) is not Annotated:
        return False
    return any(isinstance(m, msgspec.Meta) and m.description for m in tp.__metadata__)


def _is_context(tp: Any, context_type: type | None) -> bool:
    if context_type is None:
        return False
    if typing.get_origin(tp) is Annotated:
        tp = typing.get_args(tp)[0]
    candidates = [a for a in typing.get_args(tp) if a is not type(None)] or [tp]
    return all(isinstance(c, type) and issubclass(c, context_type) for c in candidates)


class Signature:
    """A function's parameters as a Struct (``args_type``) and its JSON Schema; the
    parameter typed as the request context (if any) is filled in, not read."""

    __slots__ = ("args_type", "params", "context", "schema", "rest")

    def __init__(
        self,
        args_type: Any,
        params: tuple[str, ...],
        context: str | None,
        schema: dict[str, Any],
        rest: bool = False,
    ) -> None:
        self.args_type = args_type
        self.params = params
        self.context = context
        self.schema = schema
        #: Whether the function takes ``**arguments`` (every argument, as a dict).
        self.rest = rest

    @classmethod
    def of(
        cls, fn: Callable[..., Any], name: str, doc: Doc, context_type: type | None
    ) -> Signature:
        """``fn``'s parameters (``name``: the Struct's name, seen in error paths).

        A function taking ``**arguments: T`` alone receives every argument, each checked
        as a ``T`` (``Any``: as it came), for tools whose arguments are open-ended."""
        hints = typing.get_type_hints(fn, include_extras=True)
        fields: list[tuple[Any, ...]] = []
        params: list[str] = []
        context = None
        rest: Any = None
        for parameter in inspect.signature(fn).parameters.values():
            annotation = hints.get(parameter.name, Any)
            if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
                raise TypeError(f"{fn.__qualname__}: *{parameter.name} cannot take arguments")
            if parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
                raise TypeError(
                    f"{fn.__qualname__}: {parameter.name} is positional-only; "
                    "arguments are passed by name"
                )
            if parameter.kind is inspect.Parameter.VAR_KEYWORD:
                rest = dict[str, annotation]
                continue
            if _is_context(annotation, context_type):
                context = parameter.name
                continue
            described = doc.params.get(parameter.name)
            if described and not _described(annotation):
                annotation = Annotated[annotation, msgspec.Meta(description=described)]
            if parameter.default is inspect.Parameter.empty:
                fields.append((parameter.name, annotation))
            else:
                fields.append((parameter.name, annotation, parameter.default))
            params.append(parameter.name)
        if rest is not None:
            if params:
                raise TypeError(
                    f"{fn.__qualname__}: **arguments takes every argument; {params} cannot too"
                )
            return cls(rest, (), context, object_schema(rest), rest=True)
        args_type = msgspec.defstruct(name, fields, kw_only=True)
        return cls(args_type, tuple(params), context, object_schema(args_type))

    def arguments(
        self, given: Mapping[str, Any] | None, ctx: Any, strict: bool = True
    ) -> dict[str, Any]:
        """Keyword arguments for the function from a call's ``arguments`` (validated and
        converted; raises ``msgspec.ValidationError`` naming the JSON path). Not
        ``strict``, strings convert to the types that parameters declare."""
        if given is None or given is msgspec.UNSET:  # no arguments sent
            given = {}
        try:
            args = msgspec.convert(given, self.args_type, strict=strict)
        except msgspec.ValidationError:
            if self.rest:
                raise self._named(given, strict) from None
            raise
        # The Struct's fields are the parameters, by name: asdict is their keyword arguments.
        kwargs = dict(args) if self.rest else msgspec.structs.asdict(args)
        if self.context is not None:
            kwargs[self.context] = ctx
        return kwargs

    def _named(self, given: Mapping[str, Any], strict: bool) -> msgspec.ValidationError:
        """The error of the first bad ``**arguments`` value, its path naming the key (one
        conversion of the dict reports ``$[...]``)."""
        value_type = typing.get_args(self.args_type)[1]
        for key, value in given.items():
            try:
                msgspec.convert(value, value_type, strict=strict)
            except msgspec.ValidationError as exc:
                message, at, path = str(exc).partition(" - at `$")
                where = f"$.{key}{path[:-1]}" if at else f"$.{key}"
                return msgspec.ValidationError(f"{message} - at `{where}`")
        return msgspec.ValidationError("Expected `object` with string keys")


async def call(fn: Callable[..., Any], kwargs: Mapping[str, Any], blocking: bool) -> Any:
    """What ``fn(**kwargs)`` gives, awaited if it is awaitable (an async function, also
    under a sync decorator). A sync function runs on the event loop, which is fastest,
    unless it is ``blocking``: then in a worker thread, so that its waiting (files,
    sockets, a database) holds up no other request."""
    if blocking and not inspect.iscoroutinefunction(fn):
        value = await asyncio.to_thread(functools.partial(fn, **kwargs))
    else:
        value = fn(**kwargs)
    if awaitable(value):
        value = await value
    return value


def awaitable(value: Any) -> bool:
    """``inspect.isawaitable``, without asking an ABC (slow) of the plain values that sync
    functions return most."""
    kind: type[Any] = value.__class__
    return kind is CoroutineType or (kind not in _PLAIN and inspect.isawaitable(value))


#: Types whose values are never awaitable (what sync tools return most).
_PLAIN = frozenset({str, int, float, bool, bytes, dict, list, tuple, type(None)})
