"""The lane: the request a session reads most, taken from its frame to its event in one
step, sans-IO.

A transport's read loop offers each frame to :meth:`Lane.request` first. A frame that is
one plain request (:func:`jsonrpc.plain_request`) of a method the connection already
routed, in a ready legacy session, becomes the same ``IncomingRequest``
``Connection.receive`` would make of it, without the general path's steps (the batch and
era checks, the event list, the special methods). Anything else, or anything the lane is
not sure of, gets None and goes the general way, which reads it again and answers it,
refusals and errors included: the lane never answers or refuses a frame itself.

When the peer speaks the application's own version, a frame is decoded in one pass: the
envelope and the params at once, the member of a union tagged by ``method`` that has the
method's params type (:func:`typed_requests`); its event carries no raw params, which
params typed in the peer's own version make needless. A frame that union does not take (a
method outside it, an undeclared key, anything invalid) is read again in two steps, the
envelope (:func:`jsonrpc.plain_request`) then its params.
"""

from __future__ import annotations

import importlib
from typing import Any, Literal, Union

import msgspec
from msgspec import UNSET, UnsetType, ValidationError

from . import jsonrpc
from .binding import MethodSpec
from .connection import Connection
from .errors import McpError
from .events import IncomingRequest
from .lifecycle import State
from .modern import HttpHeaders
from .negotiation import VersionInfo, package_of

#: Requests the connection answers or acts on itself (``Connection._on_request``).
_SPECIAL = frozenset({"ping", "initialize", "logging/setLevel"})


class Lane:
    """The fast way in for one connection's requests (see the module docstring)."""

    __slots__ = ("conn", "version", "routes", "decode", "typed", "max_depth")

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        #: The version the routes below were found in (a session's is set once).
        self.version: VersionInfo | None = None
        #: Method → its row, the application's row, and the params type to decode with
        #: when the peer speaks the application's version (None: ``Connection.incoming``).
        self.routes: dict[str, tuple[MethodSpec, MethodSpec, Any]] = {}
        #: The ``decode`` of the application's types (the binding's).
        self.decode: Any = conn.local.binding.types.decode
        #: Nesting the general path refuses (``jsonrpc.refusal``): such frames are its.
        self.max_depth = conn.limits.max_depth
        #: Decodes a whole request in the application's version (None: not made yet).
        self.typed: msgspec.json.Decoder[Any] | None = None

    def request(self, frame: bytes, http: HttpHeaders | None = None) -> IncomingRequest | None:
        """The event of ``frame`` when it is a plain request the lane takes; else None."""
        conn = self.conn
        version = conn.version
        if version is None or conn.state is not State.READY or version.extensions:
            return None
        if version is not conn.local:
            return self._two_steps(frame, version, http)
        # plain_request's cheap test first (the second count only when there is a
        # bracket to count: memchr's pace); what fails it, the general path reads.
        # find, not `in`: bytes.__contains__ tries its argument as an int first, and
        # the TypeError it raises and clears costs 1.8k instructions every time
        openers = frame.count(b"{") + (frame.count(b"[") if frame.find(b"[") >= 0 else 0)
        if openers > self.max_depth or not frame.isascii():
            return None
        try:
            typed = (self.typed or self._typed()).decode(frame)
        except Exception:  # not a request the union takes: read in two steps
            return self._two_steps(frame, version, http)
        params = typed.params
        if params is UNSET:  # (left out: the connection says what that means)
            return self._two_steps(frame, version, http)
        # (_routed's lookup, inline: a call fewer on every request's path)
        route = self.routes.get(typed.rpc_method) if version is self.version else None
        if route is None:
            route = self._route(version, typed.rpc_method)
            if route is None:
                return None
        found = getattr(params, "meta", None)  # an open object is a dict
        meta: dict[str, Any] = found if isinstance(found, dict) else {}  # pyright: ignore
        # no raw params: typed in the peer's own version, they hold all it sent
        return IncomingRequest(typed.id, route[1], params, meta, None, None, None, http)

    def _two_steps(
        self, frame: bytes, version: VersionInfo, http: HttpHeaders | None
    ) -> IncomingRequest | None:
        """:meth:`request` by the envelope (:func:`jsonrpc.plain_request`), then the
        params: in another version than the application's, or what the union refused."""
        conn = self.conn
        m = jsonrpc.plain_request(frame, self.max_depth)
        if m is None:
            return None
        route = self._routed(version, m.method)
        if route is None:
            return None
        spec, local, params_type = route
        raw = m.params or None
        try:
            if params_type is not None and raw is not None:  # decode_params' common case
                params = self.decode(raw, params_type)
            else:
                params = conn.incoming(raw, spec, local, version)
        except (McpError, ValidationError):  # the general path answers it
            return None
        found = getattr(params, "meta", None)  # an open object is a dict
        meta: dict[str, Any] = found if isinstance(found, dict) else {}  # pyright: ignore
        return IncomingRequest(m.id, local, params, meta, None, None, None, http, raw)

    def _routed(
        self, version: VersionInfo, method: str
    ) -> tuple[MethodSpec, MethodSpec, Any] | None:
        """The route of ``method`` remembered for ``version``, else :meth:`_route`'s."""
        route = self.routes.get(method) if version is self.version else None
        return route if route is not None else self._route(version, method)

    def _typed(self) -> msgspec.json.Decoder[Any]:
        self.typed = typed = typed_requests(self.conn.local, self.conn.peer)
        return typed

    def _route(
        self, version: VersionInfo, method: str
    ) -> tuple[MethodSpec, MethodSpec, Any] | None:
        """The connection's route for ``method`` (None: the general path's, which answers
        the special methods and refuses unknown ones), remembered."""
        if method in _SPECIAL:
            return None
        if version is not self.version:
            self.version, self.routes = version, {}
        try:
            spec, local = self.conn.route(version, method)
        except McpError:
            return None
        same = version is self.conn.local and local.params is not None
        route = self.routes[method] = (spec, local, local.params if same else None)
        return route


#: (types module, sender) → the union decoder of its requests (see typed_requests).
_unions: dict[tuple[str, str], msgspec.json.Decoder[Any]] = {}


def typed_requests(version: VersionInfo, sender: str) -> msgspec.json.Decoder[Any]:
    """A decoder of one whole request ``sender`` sends in ``version``: a union, tagged by
    ``method``, of one struct per method the lane reads (not the special ones) whose params
    decode in one pass with the version's types (no default to settle after decoding, no
    tag of their own); each struct's ``rpc_method`` names its method. Made once per
    version and sender."""
    binding = version.binding
    key = (binding.types.__name__, sender)
    found = _unions.get(key)
    if found is not None:
        return found
    support = importlib.import_module(package_of(binding) + "._support")
    members: list[Any] = []
    for (who, method), spec in version.table.items():
        params = spec.params
        if who != sender or spec.kind != "request" or method in _SPECIAL or params is None:
            continue
        config = getattr(params, "__struct_config__", None)
        if config is None or config.tag_field is not None or support.settling_of(params):
            continue
        fields = [
            ("jsonrpc", Literal["2.0"]),
            ("id", Union[int, str]),
            ("params", Union[params, UnsetType], UNSET),
        ]
        members.append(
            msgspec.defstruct(
                f"Request[{method}]",
                fields,
                kw_only=True,
                forbid_unknown_fields=True,
                tag_field="method",
                tag=method,
                namespace={"rpc_method": method},
            )
        )
    union: Any = Union[tuple(members)] if members else _NoRequest
    decoder = _unions[key] = msgspec.json.Decoder(union, dec_hook=support.dec_hook)
    return decoder


class _NoRequest(msgspec.Struct, tag_field="method", tag="\x00none\x00"):
    """The union of a version with no method to read in one pass (no frame is one)."""
