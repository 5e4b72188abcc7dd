"""Decode support shared by the generated protocol modules of this package.

Written by hand, copied verbatim next to the generated modules (with ``_decoding.py``,
``_defaults.py``, ``_open.py``, ``_reshape.py``, ``_undeclared.py`` and ``_unions.py``); it
depends on msgspec only.

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

from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any, Literal, NamedTuple, Protocol, TypeVar, overload

import msgspec

from . import _undeclared
from ._decoding import MISSING, TOO_DEEP, dec_hook, rethrow
from ._defaults import default_value, settling_of, settlings
from ._open import OpenObject, key
from ._reshape import plan, plans
from ._undeclared import is_undeclared_key_error, keep, undeclared, with_undeclared
from ._unions import UnionType, register_union

__all__ = [
    "Binding",
    "MethodSpec",
    "OpenObject",
    "ProgressCallback",
    "RequestContext",
    "Requester",
    "Struct",
    "UnionType",
    "configure",
    "convert",
    "dec_hook",
    "decode",
    "default_value",
    "encode",
    "key",
    "register_union",
    "reshape",
    "undeclared",
    "with_undeclared",
]

T = TypeVar("T")


class Struct(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Base of every generated object: msgspec refuses keys it does not declare, so that
    :func:`decode` can tell, at no cost when there are none, and keep them
    (``_undeclared.py``): decode with :func:`decode` or :func:`convert`, not msgspec's own
    functions, which refuse such keys."""


def configure(*, max_undeclared_keys: int | None = None) -> None:
    """Set the limits of decoding: ``max_undeclared_keys`` (default 256) is how many keys
    no definition declares one :func:`decode` keeps before it refuses the value."""
    if max_undeclared_keys is not None:
        if max_undeclared_keys < 0:
            raise ValueError(f"max_undeclared_keys must be >= 0, got {max_undeclared_keys}")
        _undeclared.MAX_UNDECLARED_KEYS = max_undeclared_keys


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

    A field with a default reads it when its key is absent, and the value encodes back
    without that key (``_defaults.py``).

    Raises ``msgspec.ValidationError`` naming the JSON path of the first problem (or
    saying the value nests deeper than the interpreter can follow), or
    ``msgspec.DecodeError`` for malformed JSON.
    """
    try:
        settling = settlings[tp]
    except (KeyError, TypeError):
        settling = settling_of(tp)
    if settling is not None and settling[0]:  # a default shared with JSON values: parse first
        try:
            parsed = msgspec.json.decode(data)
        except RecursionError:
            raise msgspec.ValidationError(TOO_DEEP) from None
        return convert(parsed, tp)
    try:
        value = decoder(tp).decode(data)
    except msgspec.ValidationError as exc:
        if not is_undeclared_key_error(exc):
            raise rethrow(exc) from None
    except RecursionError:
        raise msgspec.ValidationError(TOO_DEEP) from None
    else:
        return value if settling is None else settling[1](value, MISSING)
    raw = msgspec.json.decode(data)
    value = _keeping(raw, tp)
    return value if settling is None else settling[1](value, raw)


@overload
def convert(obj: Any, tp: type[T]) -> T: ...
@overload
def convert(obj: Any, tp: Any) -> Any: ...
def convert(obj: Any, tp: Any) -> Any:
    """Like :func:`decode`, from already-parsed builtins (``dict``, ``list``, …)."""
    value = _converted(obj, tp, keep_undeclared=True)
    settling = settling_of(tp)
    return value if settling is None else settling[1](value, obj)


def reshape(obj: Any, tp: Any, source: Any = None) -> Any:
    """Like :func:`convert`, but keys ``tp`` does not declare are dropped, not kept: a
    value of one protocol version made a value of another, which lacks some fields.

    ``source`` is the type ``obj`` is a value of (``obj`` being its builtins, as
    ``msgspec.to_builtins`` gives them). With it, what that type has and ``tp`` lacks is
    dropped before converting, by a plan worked out once per pair of types
    (``_reshape.py``), and the conversion succeeds at its first try. Without it, the keys
    to drop are found by a conversion that fails, then a walk of the whole value (the
    slow path, several times slower), which counts them against ``max_undeclared_keys``.
    The result is the same either way; keys the plan cannot foresee (ones no definition
    declares, kept on the value when it was decoded) still take the slow path."""
    if source is not None:
        try:
            step = plans[source, tp]
        except (KeyError, TypeError):
            step = plan(source, tp)  # the first time (or never, for an unhashable type)
        if step is not None:
            try:
                obj = step(obj)
            except RecursionError:
                pass  # too deep to walk: the conversion says so, in its words
    return _converted(obj, tp, keep_undeclared=False)


def _converted(obj: Any, tp: Any, keep_undeclared: bool) -> Any:
    try:
        return msgspec.convert(obj, _decode_type(tp), dec_hook=dec_hook)
    except msgspec.ValidationError as exc:
        if not is_undeclared_key_error(exc):
            raise rethrow(exc) from None
    except RecursionError:
        raise msgspec.ValidationError(TOO_DEEP) from None
    return _keeping(obj, tp, put_back=keep_undeclared)


def _keeping(raw: Any, tp: Any, put_back: bool = True) -> Any:
    """The slow path: ``raw`` has keys some object does not declare, kept (or dropped)."""
    try:
        return keep(raw, _decode_type(tp), put_back)
    except RecursionError:
        raise msgspec.ValidationError(TOO_DEEP) from None


def encode(obj: Any) -> bytes:
    """Encode any generated value (or builtins) as JSON; absent (``UNSET``) fields are omitted."""
    return _encoder.encode(obj)


def to_builtins(obj: Any) -> Any:
    """Any generated value as plain ``dict``/``list``/scalars, wire names as keys."""
    return msgspec.to_builtins(obj)


# -- what the generated dispatch tables and stubs share with a runtime --------------------


class MethodSpec(NamedTuple):
    """One row of a version's dispatch table (``methods.py``)."""

    name: str
    kind: Literal["request", "notification"]
    #: The sender: "client" (client → server) or "server" (server → client).
    direction: Literal["client", "server"]
    #: "wire" for JSON-RPC messages; "input" for 2026 input requests embedded in results.
    channel: Literal["wire", "input"]
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
    era: Literal["legacy", "modern"]
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
    async def elicitation_complete(self, elicitation_id: str) -> bool: ...


#: Receives ``(progress, total, message)`` for a request that asked for progress.
ProgressCallback = Callable[[float, "float | None", "str | None"], Any]


class Requester(Protocol):
    """A runtime's client session, as the generated typed ``Client`` uses it."""

    @property
    def protocol_version(self) -> str: ...
    async def request(
        self,
        method: str,
        params: Any,
        result: Any,
        progress: ProgressCallback | None = None,
        *,
        timeout: float | None = None,
    ) -> Any: ...
    async def notify(self, method: str, params: Any) -> None: ...
