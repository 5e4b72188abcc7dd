"""Headers-first reading of a stateless HTTP request: one typed decode of the whole body.

The 2026-07-28 revision puts the version, the method and the tool or resource name in the
HTTP headers (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``) so that the receiver
can route a request before reading its body. With the method known, the body decodes in a
single pass straight into the application's params type, instead of an envelope pass, a
``_meta`` probe and a params pass.

The lane only ever accepts. Whenever the body is anything but a well-formed request that
agrees with its headers (or needs the round-trip state checked), :meth:`DirectLane.read`
returns None and the caller takes the general path (:meth:`Connection.receive_parsed`),
which words every refusal in the order the spec sets.
"""

from __future__ import annotations

import importlib
from typing import Any, Literal

import msgspec
from msgspec import UNSET

from . import jsonrpc, modern
from .connection import Connection
from .errors import McpError
from .events import IncomingRequest, Inputs
from .jsonrpc import RequestId
from .negotiation import MethodSpec, package_of

#: Methods the general path answers itself (no params handler behind them).
_GENERAL = frozenset({"server/discover", "subscriptions/listen"})


class DirectLane:
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
        self._dec_hook = importlib.import_module(package + "._support").dec_hook
        #: Method → its row in the application's table and the decoder of a whole request
        #: (methods that were answerable; an unknown one is looked up, and refused, anew).
        self._methods: dict[str, tuple[MethodSpec, msgspec.json.Decoder[Any]]] = {}

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
        if jsonrpc.refusal(body, self.max_depth) is not None:
            return None
        local, decoder = known
        try:
            request = decoder.decode(body)
        except Exception:  # msgspec.DecodeError (also every ValidationError), or any other
            return None
        params = request.params
        meta = getattr(params, "meta", UNSET)
        if (
            request.method != method
            or request.result is not UNSET
            or request.error is not UNSET
            or not isinstance(meta, dict)
            or meta.get(modern.PROTOCOL_VERSION) != version
            or modern.CLIENT_CAPABILITIES not in meta
            or not _names_agree(method, params, http)
        ):
            return None
        inputs = None
        if method in modern.INPUT_METHODS:
            if (
                getattr(params, "request_state", UNSET) is not UNSET
                or getattr(params, "input_responses", UNSET) is not UNSET
            ):
                return None  # the state's signature is checked on the general path
            inputs = Inputs({}, None, body)
        peer = modern.Peer(self.conn.local, meta)
        return IncomingRequest(request.id, local, params, meta, None, peer, inputs, http.params)

    def _learn(self, method: str) -> tuple[MethodSpec, msgspec.json.Decoder[Any]] | None:
        """The row and decoder of ``method``, remembered; None when the general path
        answers it (a stateful connection, no params, a method not served here)."""
        conn = self.conn
        if conn.version is not None or method in _GENERAL:
            return None
        try:
            _, local = conn._route(conn.local, method)  # noqa: SLF001 - same package
        except McpError:
            return None
        if local.params is None:
            return None
        known = self._methods[method] = (local, _request_decoder(local.params, self._dec_hook))
        return known


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


def _names_agree(method: str, params: Any, http: modern.HttpHeaders) -> bool:
    """``Mcp-Name`` equals the params field it mirrors (methods without one: trivially)."""
    field = modern.NAME_FIELDS.get(method)
    if field is None:
        return True
    if http.name is None:
        return False
    try:
        return modern.decode_header_value(http.name.strip()) == getattr(params, field)
    except McpError:
        return False
