"""The lane: the request a session reads most, taken from its frame to its event in one
step, sans-IO.

A transport's read loop offers each frame to :meth:`Lane.request` first. A frame that is
one plain request (:func:`jsonrpc.plain_request`) of a method the connection already
routed, in a ready legacy session, becomes the same ``IncomingRequest``
``Connection.receive`` would make of it, without the general path's steps (the batch and
era checks, the event list, the special methods). Anything else, or anything the lane is
not sure of, gets None and goes the general way, which reads it again and answers it,
refusals and errors included: the lane never answers or refuses a frame itself.
"""

from __future__ import annotations

from typing import Any

from msgspec import ValidationError

from . import jsonrpc
from .binding import MethodSpec
from .connection import Connection
from .errors import McpError
from .events import IncomingRequest
from .lifecycle import State
from .modern import HttpHeaders
from .negotiation import VersionInfo

#: Requests the connection answers or acts on itself (``Connection._on_request``).
_SPECIAL = frozenset({"ping", "initialize", "logging/setLevel"})


class Lane:
    """The fast way in for one connection's requests (see the module docstring)."""

    __slots__ = ("conn", "version", "routes", "decode")

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        #: The version the routes below were found in (a session's is set once).
        self.version: VersionInfo | None = None
        #: Method → its row, the application's row, and the params type to decode with
        #: when the peer speaks the application's version (None: ``Connection.incoming``).
        self.routes: dict[str, tuple[MethodSpec, MethodSpec, Any]] = {}
        #: The ``decode`` of the application's types (the binding's).
        self.decode: Any = conn.local.binding.types.decode

    def request(self, frame: bytes, http: HttpHeaders | None = None) -> IncomingRequest | None:
        """The event of ``frame`` when it is a plain request the lane takes; else None."""
        conn = self.conn
        version = conn.version
        if version is None or conn.state is not State.READY or version.extensions:
            return None
        m = jsonrpc.plain_request(frame, conn.limits.max_depth)
        if m is None:
            return None
        route = self.routes.get(m.method) if version is self.version else None
        if route is None:
            route = self._route(version, m.method)
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
