"""Headers-first reading of a stateless HTTP request: one typed decode of the whole body.

The 2026-07-28 revision puts the version, the method and the tool or resource name in the
HTTP headers (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``) so that the receiver
can route a request before reading its body. With the method known, the body decodes in a
single pass straight into the application's params type, instead of an envelope pass, a
``_meta`` probe and a params pass.

A stateless client repeats the same ``_meta`` (version, capabilities, client info) in every
request, and its typed decode (an open object with nested ones, through Python hooks) is
the dearest part of the body. The lane decodes ``_meta`` once per distinct text: later
requests with the same bytes get a copy of the decoded object, and share the peer it
describes. The copy is of the top level only, so a handler treats what is nested in a
request's ``_meta`` (and the peer's info and capabilities) as read-only.

The lane only ever accepts. Whenever the body is anything but a well-formed request that
agrees with its headers (or needs the round-trip state checked), :meth:`DirectLane.read`
returns None and the caller takes the general path (:meth:`Connection.receive_parsed`),
which words every refusal in the order the spec sets.
"""

from __future__ import annotations

import functools
import importlib
import typing
from collections.abc import Callable
from types import ModuleType
from typing import Any, Literal, NamedTuple, TypeGuard, cast

import msgspec
from msgspec import UNSET, UnsetType

from ..core import jsonrpc, modern
from ..core.connection import ANSWERED_BY_CONNECTION, Connection
from ..core.errors import McpError
from ..core.events import IncomingRequest, Inputs
from ..core.jsonrpc import RequestId
from ..core.binding import MethodSpec
from ..core.negotiation import package_of
from ..core.json_values import as_object

#: Distinct ``_meta`` texts remembered (all are forgotten when one more comes), and the
#: longest remembered: at most 64 × 2 KiB of keys, whatever the clients send.
META_CACHE_ENTRIES = 64
META_CACHE_TEXT_BYTES = 2048


class StatelessLane:
    """Reads single modern requests for ``conn`` (a stateless server connection)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        local = conn.local
        #: The version this lane reads (None: none, the server does not accept its own).
        self.version = (
            local.version
            if conn.role == "server" and local.version in conn.versions.of_era("modern")
            else None
        )
        #: Nesting refused here as on the general path (``jsonrpc.refusal``).
        self.max_depth = conn.limits.max_depth
        package = package_of(local.binding)
        self._support = importlib.import_module(package + "._support")
        #: Method → how its requests are read (methods that were answerable; an unknown
        #: one is looked up, and refused, anew).
        self._methods: dict[str, _Reader] = {}
        #: ``_meta`` text → its decoded object, checked, and the peer it describes (see
        #: the module's docstring).
        self._metas: dict[bytes, tuple[Any, modern.Peer]] = {}

    def read(self, body: bytes, http: modern.HttpHeaders) -> IncomingRequest | None:
        """The one request ``body`` holds, decoded and checked against ``http``; None when
        the general path must read it."""
        method = http.method
        version = self.version
        if version is None or http.protocol_version != version or method is None:
            return None
        known = self._methods.get(method) or self._learn(method)
        if known is None:
            return None
        # jsonrpc.refusal's cheap test, inline (its brackets counted by what their removal
        # leaves: memchr's pace); only a frame that fails it is looked at again
        openers = len(body) - len(body.replace(b"{", b""))
        if body.find(b"[") >= 0:  # (not `in`: it raises and clears a TypeError first)
            openers += len(body) - len(body.replace(b"[", b""))
        if openers > self.max_depth or not body.isascii():
            if jsonrpc.refusal(body, self.max_depth) is not None:
                return None
        local = known.spec
        try:
            request = known.decoder.decode(body)
        except Exception:  # msgspec.DecodeError (also every ValidationError), or any other
            return None
        if request.method != method or request.result is not UNSET or request.error is not UNSET:
            return None
        params = request.params
        meta_type = known.meta_type
        if meta_type is not None:  # _meta came as its text: decoded here, once per text
            raw = params.meta
            if raw is UNSET:
                return None
            text = bytes(raw)
            seen = self._metas.get(text) or self._meta(text, known)
            if seen is None:
                return None
            meta = meta_type.__new__(meta_type)
            dict[str, Any].update(meta, seen[0])
            peer = seen[1]
            fields = msgspec.structs.asdict(params)
            fields["meta"] = meta
            params = local.params(**fields)
        else:
            meta = getattr(params, "meta", UNSET)
            if not self._usable(meta):
                return None
            peer = modern.Peer(self.conn.local, meta)
        if modern.header_refusal(http, method, version, params) is not None:
            return None
        inputs = None
        if known.inputs:
            if (
                getattr(params, "request_state", UNSET) is not UNSET
                or getattr(params, "input_responses", UNSET) is not UNSET
            ):
                return None  # the state's signature is checked on the general path
            inputs = Inputs({}, None, body)
        return IncomingRequest(request.id, local, params, meta, None, peer, inputs, http)

    def _usable(self, meta: Any) -> TypeGuard[dict[str, Any]]:
        """A modern request's ``_meta`` has every key it must (``modern.meta_refusal``)
        and names this lane's version."""
        found = as_object(meta)
        return (
            found is not None
            and modern.meta_refusal(found.__contains__) is None
            and found[modern.PROTOCOL_VERSION] == self.version
        )

    def _meta(self, text: bytes, known: _Reader) -> tuple[Any, modern.Peer] | None:
        """``text`` decoded as a request's ``_meta`` and its peer (remembered), or None
        when it is not one this lane takes."""
        assert known.decode_meta is not None
        try:
            meta = known.decode_meta(text)
        except Exception:  # as for the whole body: the general path words the refusal
            return None
        if not self._usable(meta):
            return None
        seen = (meta, modern.Peer(self.conn.local, meta))
        if len(text) <= META_CACHE_TEXT_BYTES:
            if len(self._metas) >= META_CACHE_ENTRIES:
                self._metas.clear()
            self._metas[text] = seen
        return seen

    def _learn(self, method: str) -> _Reader | None:
        """How ``method`` is read, remembered; None when the general path answers it (a
        stateful connection, no params, a method not served here)."""
        conn = self.conn
        if conn.version is not None or method in ANSWERED_BY_CONNECTION:
            return None
        if conn.local.extension_of("client", method) is not None:
            return None  # the general path checks that the client declared it
        try:
            _, local = conn.route(conn.local, method)
        except McpError:
            return None
        if local.params is None:
            return None
        known = self._methods[method] = _Reader.of(local, self._support)
        return known


class _Reader(NamedTuple):
    """How the lane reads one method's requests."""

    spec: MethodSpec
    #: Decodes a whole request; its params are ``spec.params`` but for ``_meta``, kept as
    #: its text when ``meta_type`` is set (then ``decode_meta`` decodes that text, keeping
    #: the keys no definition declares, as the general path does).
    decoder: msgspec.json.Decoder[Any]
    meta_type: Any
    decode_meta: Callable[[bytes], Any] | None
    #: Its requests may carry input responses and state (``modern.INPUT_METHODS``).
    inputs: bool

    @classmethod
    def of(cls, spec: MethodSpec, support: ModuleType) -> _Reader:
        """How to read ``spec``'s requests with the generated package's ``support``."""
        inputs = spec.name in modern.INPUT_METHODS
        dec_hook, params_type = support.dec_hook, spec.params
        fields = msgspec.structs.fields(params_type)
        meta = next((f for f in fields if f.name == "meta" and f.encode_name == "_meta"), None)
        meta_type = _open_type(meta.type) if meta is not None else None
        if meta is None or meta_type is None:
            return cls(spec, _request_decoder(params_type, dec_hook), None, None, inputs)
        shape = msgspec.defstruct(
            f"{params_type.__name__}WithMetaText",
            [
                (
                    (f.name, msgspec.Raw | UnsetType, msgspec.field(name="_meta", default=UNSET))
                    if f is meta
                    else (f.name, f.type, _same_field(f))
                )
                for f in fields
            ],
            kw_only=True,
            # as the generated params type: an undeclared key sends the body to the
            # general path, which keeps it
            forbid_unknown_fields=True,
        )
        return cls(
            spec,
            _request_decoder(shape, dec_hook),
            meta_type,
            functools.partial(support.decode, tp=meta_type),
            inputs,
        )


def _same_field(info: msgspec.structs.FieldInfo) -> Any:
    """A field as ``info`` describes it (its wire name, its default)."""
    if info.default_factory is not msgspec.NODEFAULT:
        return msgspec.field(name=info.encode_name, default_factory=info.default_factory)
    return msgspec.field(name=info.encode_name, default=info.default)


def _open_type(annotation: Any) -> Any:
    """The open-object class a params ``_meta`` field holds (``T | UnsetType``), or None."""
    members = [a for a in typing.get_args(annotation) if a is not UnsetType] or [annotation]
    if len(members) == 1 and isinstance(members[0], type) and issubclass(members[0], dict):
        return cast(Any, members[0])
    return None


def _request_decoder(params_type: Any, dec_hook: Any) -> msgspec.json.Decoder[Any]:
    """A decoder of a whole JSON-RPC request whose params are ``params_type``."""
    envelope = msgspec.defstruct(
        "DirectRequest",
        [
            ("jsonrpc", Literal["2.0"]),
            ("id", RequestId),
            ("method", str),
            ("params", params_type),
            # A request carries neither; either one makes the body invalid.
            ("result", Any, UNSET),
            ("error", Any, UNSET),
        ],
        kw_only=True,
    )
    return msgspec.json.Decoder(envelope, dec_hook=dec_hook)
