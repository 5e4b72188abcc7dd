"""Python signatures as msgspec Structs and JSON Schemas.

A function's parameters become one Struct type: ``msgspec.convert`` then validates and
converts a call's arguments in one pass, and ``msgspec.json.schema`` describes them (JSON
Schema 2020-12, with ``$defs`` for nested Structs, kept as they are). Descriptions come
from ``Annotated[..., msgspec.Meta(description=...)]`` or, failing that, the docstring.

Every mistake a signature can make is found here when the function is registered, never
on a call: a :class:`RegistrationError` whose one line names the tool (prompt, resource),
the parameter and the fix.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import types as types_module
import typing
from types import CoroutineType, SimpleNamespace
from collections.abc import Callable, Mapping
from typing import Annotated, Any, cast

import msgspec

from ..core.errors import McpgenError
from .docstrings import Doc


class RegistrationError(McpgenError, TypeError, ValueError):
    """A tool, prompt, resource or template that cannot be registered as written, raised
    when it is registered: one line naming it, the parameter and the fix. Also a
    ``TypeError`` and a ``ValueError``, as such mistakes raised before it existed."""


#: Unannotated parameters with these names were meant to receive the request context.
CONTEXT_NAMES = frozenset({"ctx", "context"})
#: What JSON carries into and out of functions, for the messages that say so.
JSON_TYPES = (
    "a JSON type (str, int, float, bool, None, list, dict, Literal, Enum, datetime, UUID, "
    "Decimal, bytes) or a msgspec.Struct, dataclass or TypedDict of those"
)


def label(kind: str, key: str, fn: Callable[..., Any]) -> str:
    """How messages name what is registered: ``tool 'add'``, with the function when its
    name differs (``tool 'add' (Calculator.plus)``)."""
    qualname = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    return f"{kind} {key!r}" if qualname == key else f"{kind} {key!r} ({qualname})"


def name_of(fn: Callable[..., Any], kind: str, name: str | None) -> str:
    """The name a tool or prompt is registered by: ``name``, else the function's own."""
    if not callable(fn):
        raise RegistrationError(
            f"{kind} {name or fn!r}: {fn!r} is not a function; decorate one, and give "
            f"the name as an option: @app.{kind}(name={fn!r})"
        )
    if name:
        return name
    own = getattr(fn, "__name__", None)
    if not isinstance(own, str) or own == "<lambda>":
        made = getattr(fn, "__qualname__", None) or f"a {type(fn).__qualname__} object"
        raise RegistrationError(
            f"a {kind} made of {made} has no name of its own; give it one: "
            f"app.add_{kind}(fn, name='...')"
        )
    return own


def options_of(registered: type) -> frozenset[str]:
    """The options a kind of registration takes: its class's keyword-only parameters."""
    parameters = inspect.signature(registered).parameters.values()
    return frozenset(p.name for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY)


def bare(tp: Any) -> Any:
    """``tp`` without its ``Annotated`` metadata."""
    while typing.get_origin(tp) is Annotated:
        tp = typing.get_args(tp)[0]
    return tp


def leaves(tp: Any) -> list[Any]:
    """The types a value of ``tp`` may be, through ``Annotated``, unions and lists (None
    left out)."""
    tp = bare(tp)
    if typing.get_origin(tp) in (list, typing.Union, types_module.UnionType):
        return [leaf for a in typing.get_args(tp) for leaf in leaves(a)]
    return [] if tp is None or tp is type(None) else [tp]


def type_hints(fn: Callable[..., Any], what: str) -> dict[str, Any]:
    """``fn``'s resolved annotations, or a message naming the one that cannot be resolved
    (a forward reference to a name its module does not define)."""
    if isinstance(fn, functools.partial):  # the hints of the function it wraps
        fn = cast("functools.partial[Any]", fn).func
    elif not inspect.isroutine(fn) and not isinstance(fn, type):  # a callable object
        fn = type(fn).__call__
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:  # NameError, or a TypeError/SyntaxError of a bad string
        found = exc
    unwrapped = inspect.unwrap(fn)
    globalns = getattr(unwrapped, "__globals__", {})
    annotations: dict[str, Any] = dict(getattr(fn, "__annotations__", None) or {})
    for key, value in annotations.items():
        try:
            probe = SimpleNamespace(__annotations__={key: value})
            typing.get_type_hints(probe, globalns=globalns, include_extras=True)
        except Exception as exc:
            where = "its result" if key == "return" else f"parameter {key!r}"
            raise RegistrationError(
                f"{what}: {where} is annotated {type_text(value)}, which cannot be resolved "
                f"({type(exc).__name__}: {exc}); define or import that name at the top "
                "of the function's module, where annotations are resolved"
            ) from None
    raise RegistrationError(f"{what}: its annotations cannot be resolved ({found})") from None


def type_text(annotation: Any) -> str:
    if isinstance(annotation, str):
        return repr(annotation)
    if isinstance(annotation, type):
        module = annotation.__module__
        qualname = annotation.__qualname__
        return qualname if module == "builtins" else f"{module}.{qualname}"
    return repr(annotation)


class Refused(str):
    """Why msgspec refuses a type as a whole (a union of two string-like types)."""


def unsupported(tp: Any, *, encoded: bool = False) -> Any:
    """The part of ``tp`` that JSON cannot carry into or out of a function (a plain
    class, a callable, a socket, a lambda given as a type), or msgspec's reason as a
    :class:`Refused`; None when all of it can (``Annotated`` metadata, Structs and
    containers looked into). ``encoded``: only sent out, so dict and list subclasses
    (the bindings' open objects) and types msgspec only cannot decode are fine."""
    try:
        info = msgspec.inspect.type_info(tp)
    except TypeError as exc:
        if not isinstance(tp, type) and typing.get_origin(tp) is None:
            return tp  # not a type at all
        return None if encoded else Refused(" ".join(str(exc).split()))
    return _custom(info, set(), encoded)


def _container(cls: object) -> bool:
    """Whether ``cls`` is a dict or list subclass (msgspec encodes them as such)."""
    return isinstance(cls, type) and issubclass(cls, (dict, list))


def carried(what: str, tp: Any, bad: Any) -> str:
    """``what`` is typed ``tp``, of which JSON cannot carry ``bad``: said in words."""
    whole, part = type_text(tp), type_text(bad)
    if isinstance(bad, Refused):
        return f"{what} is typed {whole}, which msgspec refuses ({bad})"
    if whole == part:
        return f"{what} is typed {whole}, which JSON cannot carry"
    return f"{what} is typed {whole}, and JSON cannot carry its {part}"


def _custom(info: Any, seen: set[int], encoded: bool) -> Any:
    if isinstance(info, msgspec.inspect.CustomType):
        return None if encoded and _container(info.cls) else info.cls
    if id(info) in seen:  # a recursive Struct
        return None
    seen.add(id(info))
    for value in msgspec.structs.astuple(info):
        items = cast("tuple[Any, ...]", value) if isinstance(value, tuple) else (value,)
        for item in items:
            if isinstance(item, msgspec.inspect.Field):
                item = item.type
            if isinstance(item, msgspec.inspect.Type):
                found = _custom(item, seen, encoded)
                if found is not None:
                    return found
    return None


def type_fix(bad: Any, context_type: type | None) -> str:
    """How to mend a parameter typed ``bad`` (what :func:`unsupported` found)."""
    if getattr(bad, "__name__", None) == "Context" and context_type is not None:
        return f"annotate it with this App's binding's Context, {type_text(context_type)}"
    if bad is object:
        return "type it Any to take any JSON value"
    if hasattr(bad, "model_json_schema"):
        return "pydantic models are not read: make it a msgspec.Struct or a dataclass"
    return f"type it as {JSON_TYPES} (and make other values in the function)"


#: Types a string converts to (prompt arguments, template variables: msgspec's lax mode).
_FROM_STRING = (
    msgspec.inspect.AnyType,
    msgspec.inspect.NoneType,
    msgspec.inspect.BoolType,
    msgspec.inspect.IntType,
    msgspec.inspect.FloatType,
    msgspec.inspect.StrType,
    msgspec.inspect.BytesType,
    msgspec.inspect.ByteArrayType,
    msgspec.inspect.DateTimeType,
    msgspec.inspect.DateType,
    msgspec.inspect.TimeType,
    msgspec.inspect.TimeDeltaType,
    msgspec.inspect.UUIDType,
    msgspec.inspect.DecimalType,
    msgspec.inspect.LiteralType,
    msgspec.inspect.EnumType,
)


def from_string(tp: Any, *, listed: bool = False) -> bool:
    """Whether a string (``listed``: a list of strings) converts to ``tp``: some member
    of a union does."""
    return _from_string(msgspec.inspect.type_info(tp), listed)


def _from_string(info: Any, listed: bool) -> bool:
    if isinstance(info, msgspec.inspect.Metadata):
        return _from_string(info.type, listed)
    if isinstance(info, msgspec.inspect.UnionType):
        return any(_from_string(member, listed) for member in info.types)
    if listed:
        if isinstance(info, msgspec.inspect.AnyType):
            return True
        sequences = (
            msgspec.inspect.ListType,
            msgspec.inspect.VarTupleType,
            msgspec.inspect.SetType,
            msgspec.inspect.FrozenSetType,
        )
        return isinstance(info, sequences) and _from_string(info.item_type, False)
    return isinstance(info, _FROM_STRING)


def _mutable(value: object) -> bool:
    """Whether ``value`` is a non-empty list, dict, set or bytearray, or a Struct that is
    not frozen."""
    if isinstance(value, msgspec.Struct):
        return not value.__struct_config__.frozen
    return isinstance(value, (list, dict, set, bytearray)) and len(cast(Any, value)) > 0


def default_misfit(default: Any, annotation: Any) -> str | None:
    """Why ``default`` is no value of ``annotation`` as a client would send it (its JSON
    converted back), and the fix; None when it is one. ``msgspec.UNSET`` (an argument left
    out stays out) is msgspec's to check."""
    if default is msgspec.UNSET:
        return None
    if _mutable(default):
        return (
            "is mutable, one object shared by every call; default to a tuple (typed "
            "tuple[...]) or a frozen Struct, or to None (typed `... | None`) and make it in "
            "the function"
        )
    try:
        plain = msgspec.to_builtins(default)
    except TypeError:
        return (
            f"is of type {type_text(type(default))}, which JSON cannot say (the schema lists the "
            "default); default to None (typed `... | None`) and make it in the function"
        )
    try:
        msgspec.convert(plain, annotation)
    except msgspec.ValidationError as exc:
        return (
            f"does not fit {type_text(annotation)} ({exc}); give a default of that type, or "
            "widen the type (None as a default needs `... | None`)"
        )
    return None


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


def _unannotated(what: str, name: str, context_type: type | None) -> None:
    """Refuse an unannotated parameter that was surely not meant as an argument: one
    named like the request context (``ctx``), or a method's ``self``. As in the official
    SDK and FastMCP, only the annotation makes a parameter the context."""
    if name in CONTEXT_NAMES:
        where = (
            f" ({context_type.__module__}.{context_type.__qualname__})"
            if context_type is not None
            else ""
        )
        raise RegistrationError(
            f"{what}: parameter {name!r} has no annotation, so clients would have to send "
            f"it as an argument; annotate it `{name}: Context`{where} to receive the "
            f"request context, or give it a type to keep it an argument"
        )
    if name in ("self", "cls"):
        raise RegistrationError(
            f"{what}: parameter {name!r} looks like a method's; register the bound method "
            f"of an instance (app.add_tool(obj.method)) rather than the function in the class"
        )


def _check_type(what: str, name: str, annotation: Any, context_type: type | None) -> None:
    bad = unsupported(annotation)
    if bad is not None:
        said = carried(f"parameter {name!r}", annotation, bad)
        # another binding's Context is a struct: what JSON cannot carry is inside it
        named = annotation if getattr(annotation, "__name__", None) == "Context" else bad
        raise RegistrationError(f"{what}: {said}; {type_fix(named, context_type)}")


def _schema(what: str, tp: Any) -> dict[str, Any]:
    try:
        return object_schema(tp)
    except (TypeError, ValueError) as exc:  # e.g. a Meta whose extra schema is no JSON
        detail = " ".join(str(exc).split())
        raise RegistrationError(f"{what}: no JSON Schema describes its parameters: {detail}")


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
        cls,
        fn: Callable[..., Any],
        name: str,
        doc: Doc,
        context_type: type | None,
        what: str = "",
        *,
        strings: bool = False,
    ) -> Signature:
        """``fn``'s parameters (``name``: the Struct's name, seen in error paths; ``what``:
        how registration errors name it; ``strings``: its arguments arrive as strings,
        as a prompt's do, so each parameter's type must convert from one).

        A function taking ``**arguments: T`` alone receives every argument, each checked
        as a ``T`` (``Any``: as it came), for tools whose arguments are open-ended."""
        what = what or fn.__qualname__
        if inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn):
            raise RegistrationError(
                f"{what}: the function is a generator, which makes no result; return a list "
                "of the items instead"
            )
        hints = type_hints(fn, what)
        fields: list[tuple[Any, ...]] = []
        params: list[str] = []
        context = None
        rest: Any = None
        for parameter in inspect.signature(fn).parameters.values():
            pname = parameter.name
            annotation = hints.get(pname, Any)
            if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
                raise RegistrationError(
                    f"{what}: parameter *{pname} cannot receive arguments, which come by "
                    f"name; declare each as a parameter, or take **{pname} for all of them"
                )
            if parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
                raise RegistrationError(
                    f"{what}: parameter {pname!r} is positional-only, but arguments are "
                    "passed by name; remove the '/' from the signature"
                )
            if pname not in hints:
                _unannotated(what, pname, context_type)
            if parameter.kind is inspect.Parameter.VAR_KEYWORD:
                _check_type(what, f"**{pname}", annotation, context_type)
                rest = dict[str, annotation]
                continue
            if _is_context(annotation, context_type):
                context = pname
                continue
            _check_type(what, pname, annotation, context_type)
            if strings and not from_string(annotation):
                raise RegistrationError(
                    f"{what}: parameter {pname!r} is typed {type_text(annotation)}, but its "
                    "argument arrives as a string; type it str (or int, float, bool, a "
                    "Literal, an Enum, a date or time) and parse the rest in the function"
                )
            described = doc.params.get(pname)
            if described and not _described(annotation):
                annotation = Annotated[annotation, msgspec.Meta(description=described)]
            if parameter.default is inspect.Parameter.empty:
                fields.append((pname, annotation))
            else:
                misfit = default_misfit(parameter.default, annotation)
                if misfit is not None:
                    raise RegistrationError(
                        f"{what}: the default of parameter {pname!r}, {parameter.default!r}, "
                        f"{misfit}"
                    )
                fields.append((pname, annotation, parameter.default))
            params.append(pname)
        if rest is not None:
            if params:
                raise RegistrationError(
                    f"{what}: **arguments takes every argument, so {', '.join(params)} "
                    "cannot be parameters too; read them from the dict, or drop the **"
                )
            return cls(rest, (), context, _schema(what, rest), rest=True)
        try:
            args_type = msgspec.defstruct(name, fields, kw_only=True)
        except (TypeError, ValueError) as exc:
            raise RegistrationError(f"{what}: {exc}") from None
        return cls(args_type, tuple(params), context, _schema(what, args_type))

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
