"""Decode support shared by the generated protocol modules of this package.

Written by hand, copied verbatim next to the generated modules; it depends on msgspec only.

msgspec decodes most MCP types natively. Two shapes need help, and both are routed through
one decode hook:

* :class:`OpenObject` — a JSON object with declared keys that also keeps every other key
  (``_meta``, capabilities, a tool's ``inputSchema``). It is a ``dict`` subclass with typed
  attributes, so encoding is native and decode → encode is lossless.
* :class:`UnionType` — a union msgspec cannot tell apart by itself (no shared tag). Each
  generated subclass carries a decision tree (``__strategy__``) that picks the member by
  JSON kind, by a discriminator value, by key presence, or by trial.

Errors raised inside the hook are re-raised by :func:`decode` and :func:`convert` as one
``msgspec.ValidationError`` whose message names the full JSON path.
"""

from __future__ import annotations

import abc
import re
import sys
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, Protocol, TypeVar, overload

import msgspec
import msgspec.inspect  # msgspec loads it anyway

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
elif sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # Python 3.10: the decorator only informs type checkers, so a no-op will do

    def dataclass_transform(**_: Any) -> Any:
        return lambda cls: cls


__all__ = [
    "Binding",
    "MethodSpec",
    "OpenObject",
    "ProgressCallback",
    "RequestContext",
    "Requester",
    "UnionType",
    "convert",
    "dec_hook",
    "decode",
    "encode",
    "key",
    "register_union",
]

T = TypeVar("T")
_MISSING: Any = object()
_TOO_DEEP = "value nested too deeply to decode"
_PATH = re.compile(r" - at `\$([^`]*)`")


class _Key:
    """A declared key of an :class:`OpenObject`, exposed as a typed attribute."""

    __slots__ = ("wire", "default", "name")

    def __init__(self, wire: str, default: Any) -> None:
        self.wire = wire
        self.default = default
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: OpenObject | None, owner: type | None = None) -> Any:
        if obj is None:
            return self
        return obj.get(self.wire, msgspec.UNSET)

    def __set__(self, obj: OpenObject, value: Any) -> None:
        if value is msgspec.UNSET:
            obj.pop(self.wire, None)
        else:
            obj[self.wire] = value


class _Plan(NamedTuple):
    """How an open object decodes."""

    #: A Struct of the declared keys, which validates them.
    shape: type[msgspec.Struct]
    #: Whether any declared key is required (an empty object needs validating).
    required: bool
    #: (wire, attribute) of declared keys whose values decode to other objects.
    rebuilt: tuple[tuple[str, str], ...]
    wires: frozenset[str]
    #: (wire, default) of keys an absent one gets.
    defaults: tuple[tuple[str, Any], ...]
    #: The type of undeclared values (``None``: any JSON value).
    extra: Any


def key(wire: str, *, default: Any = _MISSING) -> Any:
    """Declare the attribute of an open object that reads and writes the key ``wire``."""
    return _Key(wire, default)


@dataclass_transform(kw_only_default=True, field_specifiers=(key,))
class OpenObject(dict[str, Any]):
    """A JSON object with typed attributes for its declared keys that keeps all other keys.

    Construct with keyword arguments for declared keys; any other key is set like a dict
    item (``obj["com.example/trace"] = ...``). Equality, encoding and iteration are those
    of the underlying dict of wire names.
    """

    __keys__: ClassVar[dict[str, _Key]] = {}
    #: Type of undeclared values, as a string annotation (``None``: any JSON value).
    __extra__: ClassVar[str | None] = None
    __plan: ClassVar[_Plan | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.__keys__ = {n: v for n, v in vars(cls).items() if isinstance(v, _Key)}
        cls.__plan = None

    def __init__(self, **fields: Any) -> None:
        super().__init__()
        keys = type(self).__keys__
        for name, spec in keys.items():
            value = fields.pop(name, spec.default)
            if value is _MISSING:
                raise TypeError(f"{type(self).__name__}() missing required argument: {name!r}")
            if value is not msgspec.UNSET:
                self[spec.wire] = value
        if fields:
            raise TypeError(f"{type(self).__name__}() got unexpected arguments: {sorted(fields)}")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict.__repr__(self)})"

    @classmethod
    def _plan(cls) -> _Plan:
        """How this class decodes, worked out on first use."""
        plan = cls.__plan
        if plan is not None:
            return plan
        hints = {}
        for klass in reversed(cls.__mro__):
            hints.update(getattr(klass, "__annotations__", {}))
        fields = []
        for name, spec in cls.__keys__.items():
            if spec.default is _MISSING:
                fields.append((name, hints[name], msgspec.field(name=spec.wire)))
            else:
                fields.append(
                    (name, hints[name], msgspec.field(default=spec.default, name=spec.wire))
                )
        shape = msgspec.defstruct(
            f"{cls.__name__}Keys", fields, kw_only=True, module=cls.__module__
        )
        extra = None
        if cls.__extra__ is not None:
            namespace = vars(sys.modules[cls.__module__])
            extra = eval(cls.__extra__, namespace)  # noqa: S307 - generated text
        info = msgspec.inspect.type_info(shape)
        assert isinstance(info, msgspec.inspect.StructType)
        plan = _Plan(
            shape,
            any(f.required for f in info.fields),
            tuple((f.encode_name, f.name) for f in info.fields if not _kept(f.type)),
            frozenset(spec.wire for spec in cls.__keys__.values()),
            tuple(
                (spec.wire, spec.default)
                for spec in cls.__keys__.values()
                if spec.default is not _MISSING and spec.default is not msgspec.UNSET
            ),
            extra,
        )
        cls.__plan = plan
        return plan

    @classmethod
    def _decode(cls, obj: Any) -> OpenObject:
        if type(obj) is not dict:
            raise ValueError(f"Expected `object`, got `{_kind(obj)}`")
        shape, required, rebuilt, wires, defaults, extra = cls.__plan or cls._plan()
        inst = cls.__new__(cls)
        if not obj and not defaults and not required:
            return inst  # an empty object (capabilities often are): nothing to check
        dict.update(inst, obj)  # every key, in the order it came
        if obj or required:
            try:
                declared = msgspec.convert(obj, shape, dec_hook=dec_hook)
            except msgspec.ValidationError as exc:
                raise ValueError(str(exc)) from None
            for wire, name in rebuilt:  # declared values that decode to another object
                if wire in obj:
                    dict.__setitem__(inst, wire, getattr(declared, name))
        if extra is not None:
            for k, v in obj.items():
                if k not in wires:
                    dict.__setitem__(
                        inst, k, _nested(msgspec.convert, v, extra, dec_hook=dec_hook, at=k)
                    )
        for wire, default in defaults:
            if wire not in obj:
                dict.__setitem__(inst, wire, default)
        return inst


def _kept(info: Any) -> bool:
    """Whether a value of this type decodes to the very object JSON gave (a string, an
    integer, …), so an open object keeps the decoded JSON value as it is."""
    mi = msgspec.inspect
    if isinstance(info, mi.UnionType):
        return all(_kept(member) for member in info.types)
    return isinstance(
        info, (mi.StrType, mi.IntType, mi.BoolType, mi.NoneType, mi.LiteralType, mi.AnyType)
    )


class UnionType(abc.ABC):
    """Stands, at run time, for a union msgspec cannot decode natively.

    Type checkers see the real union (the generated module defines the alias under
    ``TYPE_CHECKING``); msgspec sees this class, calls :func:`dec_hook`, and gets back an
    instance of one member (members are registered as virtual subclasses).
    """

    #: Decision tree: ``("pick", type)``, ``("kind", {kind: node})``,
    #: ``("value", key, {value: node}, default)``, ``("key", ((key, node), ...), default)``,
    #: ``("first", (node, ...))``.
    __strategy__: ClassVar[tuple[Any, ...]] = ()

    @classmethod
    def _decode(cls, obj: Any) -> Any:
        return _run(cls.__strategy__, obj)


def register_union(marker: Any, members: tuple[type, ...], strategy: tuple[Any, ...]) -> None:
    """Attach ``strategy`` to a union marker and register its members' classes."""
    marker.__strategy__ = strategy
    for member in members:
        marker.register(member)


def _kind(obj: Any) -> str:
    """The JSON kind of a decoded value, named as JSON Schema names it (and as the
    generator names the branches of a ``kind`` decision)."""
    if obj is None:
        return "null"
    if isinstance(obj, bool):
        return "boolean"
    if isinstance(obj, (int, float)):
        return "number"
    if isinstance(obj, str):
        return "string"
    if isinstance(obj, list):
        return "array"
    return "object"


def _nested(fn: Any, obj: Any, tp: Any, *, dec_hook: Any, at: str | None = None) -> Any:
    """Run a nested conversion; turn its error into one msgspec nests under the outer path."""
    try:
        return fn(obj, tp, dec_hook=dec_hook)
    except msgspec.ValidationError as exc:
        message = str(exc)
        if at is not None:
            message = f"{message} - at `$.{at}`" if " - at `$" not in message else message
        raise ValueError(message) from None


def _run(node: tuple[Any, ...], obj: Any) -> Any:
    while True:
        op = node[0]
        if op == "pick":
            return _nested(msgspec.convert, obj, node[1], dec_hook=dec_hook)
        if op == "kind":
            kind = _kind(obj)
            nxt = node[1].get(kind)
            if nxt is None:
                expected = " | ".join(node[1])
                raise ValueError(f"Expected `{expected}`, got `{kind}`")
            node = nxt
            continue
        if op in ("value", "key") and type(obj) is not dict:
            raise ValueError(f"Expected `object`, got `{_kind(obj)}`")
        if op == "value":
            _, name, cases, default = node
            value = obj.get(name, _MISSING)
            nxt = cases.get(value) if value is not _MISSING and _hashable(value) else None
            if nxt is None:
                nxt = default
            if nxt is None:
                if value is _MISSING:
                    raise ValueError(f"Object missing required field `{name}`")
                raise ValueError(f"Invalid value {value!r} - at `$.{name}`")
            node = nxt
        elif op == "key":
            _, cases, default = node
            for name, nxt in cases:
                if name in obj:
                    node = nxt
                    break
            else:
                node = default
        else:  # "first": by trial
            return _trial(node[1], obj)


def _trial(options: tuple[Any, ...], obj: Any) -> Any:
    """The first member that validates ``obj`` and declares every key it has (msgspec
    ignores undeclared keys, so a member of optional keys alone would accept anything).
    Failing that, the member that validates and declares most of its keys (a newer peer
    may send keys nobody declares yet); else the error that got deepest."""
    error: ValueError | None = None
    fallback, fallback_keys = _MISSING, -1
    for option in options:
        try:
            value = _run(option, obj)
        except ValueError as exc:
            if error is None or _depth(str(exc)) > _depth(str(error)):
                error = exc
            continue
        declared = _declared_keys(type(value))
        if declared is None or type(obj) is not dict:
            return value
        known = sum(1 for k in obj if k in declared)
        if known == len(obj):
            return value
        if known > fallback_keys:
            fallback, fallback_keys = value, known
    if fallback is not _MISSING:
        return fallback
    assert error is not None
    raise error


def _declared_keys(cls: type) -> frozenset[str] | None:
    """The wire keys a Struct class declares (None: it keeps every key, or is no Struct)."""
    keys = _declared.get(cls, _MISSING)
    if keys is _MISSING:
        keys = None
        if issubclass(cls, msgspec.Struct):
            tag = cls.__struct_config__.tag_field
            keys = frozenset((*cls.__struct_encode_fields__, *((tag,) if tag else ())))
        _declared[cls] = keys
    return keys


#: The declared keys of each Struct class a trial has met.
_declared: dict[type, frozenset[str] | None] = {}


def _hashable(value: Any) -> bool:
    return isinstance(value, (str, int, float, bool))


def _depth(message: str) -> int:
    return sum(len(p) for p in _PATH.findall(message))


def dec_hook(tp: Any, obj: Any) -> Any:
    """msgspec decode hook for every generated module of this package."""
    decode = _hooks.get(tp)
    if decode is None:
        if not (isinstance(tp, type) and issubclass(tp, (OpenObject, UnionType))):
            raise NotImplementedError(f"no decoder for {tp!r}")
        decode = _hooks[tp] = tp._decode
    return decode(obj)


#: The decode function of each type the hook has met.
_hooks: dict[Any, Callable[[Any], Any]] = {}


def _merge_paths(message: str) -> str:
    """``msg - at `$.a` - at `$.b[0]``` (inner first) → ``msg - at `$.b[0].a```."""
    parts = _PATH.findall(message)
    if len(parts) < 2:
        return message
    head = _PATH.sub("", message)
    return f"{head} - at `${''.join(reversed(parts))}`"


def _rethrow(exc: msgspec.ValidationError) -> msgspec.ValidationError:
    return msgspec.ValidationError(_merge_paths(str(exc)))


_decoders: dict[Any, msgspec.json.Decoder[Any]] = {}
_sentinels: dict[str, type[msgspec.Struct]] = {}
_encoder = msgspec.json.Encoder()


def _decode_type(tp: Any) -> Any:
    """The type to decode: a tagged Struct standalone must still carry its tag."""
    config = getattr(tp, "__struct_config__", None)
    if config is None or config.tag_field is None:
        return tp
    field = config.tag_field
    sentinel = _sentinels.get(field)
    if sentinel is None:
        sentinel = msgspec.defstruct("_NoTag", [], tag_field=field, tag="\x00no tag\x00")
        _sentinels[field] = sentinel
    return tp | sentinel


def decoder(tp: Any) -> msgspec.json.Decoder[Any]:
    """A cached JSON decoder for ``tp`` with the hook installed."""
    dec = _decoders.get(tp)
    if dec is None:
        dec = msgspec.json.Decoder(_decode_type(tp), dec_hook=dec_hook)
        _decoders[tp] = dec
    return dec


@overload
def decode(data: bytes | bytearray | memoryview | str, tp: type[T]) -> T: ...
@overload
def decode(data: bytes | bytearray | memoryview | str, tp: Any) -> Any: ...
def decode(data: bytes | bytearray | memoryview | str, tp: Any) -> Any:
    """Decode JSON into ``tp`` (any generated definition), validating it.

    Raises ``msgspec.ValidationError`` naming the JSON path of the first problem (or
    saying the value nests deeper than the interpreter can follow), or
    ``msgspec.DecodeError`` for malformed JSON.
    """
    try:
        return decoder(tp).decode(data)
    except msgspec.ValidationError as exc:
        raise _rethrow(exc) from None
    except RecursionError:
        raise msgspec.ValidationError(_TOO_DEEP) from None


@overload
def convert(obj: Any, tp: type[T]) -> T: ...
@overload
def convert(obj: Any, tp: Any) -> Any: ...
def convert(obj: Any, tp: Any) -> Any:
    """Like :func:`decode`, from already-parsed builtins (``dict``, ``list``, …)."""
    try:
        return msgspec.convert(obj, _decode_type(tp), dec_hook=dec_hook)
    except msgspec.ValidationError as exc:
        raise _rethrow(exc) from None
    except RecursionError:
        raise msgspec.ValidationError(_TOO_DEEP) from None


def encode(obj: Any) -> bytes:
    """Encode any generated value (or builtins) as JSON; absent (``UNSET``) fields are omitted."""
    return _encoder.encode(obj)


def to_builtins(obj: Any) -> Any:
    """Any generated value as plain ``dict``/``list``/scalars, wire names as keys."""
    return msgspec.to_builtins(obj)


def is_open(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, OpenObject)


def fields_of(obj: OpenObject) -> Mapping[str, Any]:
    """The declared keys of an open object present on it, by attribute name."""
    return {n: obj[s.wire] for n, s in type(obj).__keys__.items() if s.wire in obj}


# -- what the generated dispatch tables and stubs share with a runtime --------------------


class MethodSpec(NamedTuple):
    """One row of a version's dispatch table (``methods.py``)."""

    name: str
    kind: str  # "request" | "notification"
    #: The sender: "client" (client → server) or "server" (server → client).
    direction: str
    #: "wire" for JSON-RPC messages; "input" for 2026 input requests embedded in results.
    channel: str
    #: Python name of the handler or client method (``call_tool``, ``on_progress``).
    handler: str
    message: Any
    params: Any
    params_required: bool
    result: Any
    #: Capability path the receiver (for notifications: the sender) must have declared.
    capability: tuple[str, ...] | None


class Binding(NamedTuple):
    """Everything a runtime needs to speak one protocol version."""

    version: str
    era: str
    types: ModuleType
    methods: tuple[MethodSpec, ...]
    #: Methods the runtime answers itself (negotiation, ping, log level, …).
    runtime_methods: frozenset[str]


class RequestContext(Protocol):
    """The per-request object a runtime passes to the generated ``Context`` wrappers."""

    @property
    def request_id(self) -> str | int: ...
    @property
    def protocol_version(self) -> str: ...
    @property
    def meta(self) -> Mapping[str, Any]: ...
    @property
    def client_info(self) -> Mapping[str, Any]: ...
    @property
    def client_capabilities(self) -> Mapping[str, Any]: ...
    @property
    def cancelled(self) -> bool: ...
    async def progress(self, progress: float, total: float | None, message: str | None) -> None: ...
    async def log(self, level: str, data: Any, logger: str | None) -> None: ...
    async def request(
        self, method: str, params: Any, result: Any, key: str | None = None
    ) -> Any: ...
    async def notify(self, method: str, params: Any) -> None: ...
    def require(self, *capability: str) -> None: ...


#: Receives ``(progress, total, message)`` for a request that asked for progress.
ProgressCallback = Callable[[float, "float | None", "str | None"], Any]


class Requester(Protocol):
    """A runtime's client session, as the generated typed ``Client`` uses it."""

    @property
    def protocol_version(self) -> str: ...
    async def request(
        self, method: str, params: Any, result: Any, progress: ProgressCallback | None = None
    ) -> Any: ...
    async def notify(self, method: str, params: Any) -> None: ...
