"""The MCP connection state machine, sans-IO: frames in, events and frames out.

A ``Connection`` parses frames, negotiates the version (legacy ``initialize``), gates
methods by version, state and capability, decodes params with the dispatch table's types
and correlates responses with the requests it sent. It never awaits and never touches a
socket or pipe: the asyncio ``Session`` feeds it and acts on what it returns.

Beside it: ``handshake.py`` (legacy handshake), ``modern_requests.py`` (stateless requests),
``params.py`` (params and answers across versions), ``wire.py`` (what goes out, per version).
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET

from . import jsonrpc, modern
from .errors import (
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_CLIENT_CAPABILITY,
    McpError,
    NegotiationError,
)
from .events import (
    Answer,
    BatchOpened,
    Event,
    Failure,
    IncomingNotification,
    IncomingRequest,
    InputRequiredAnswer,
    Negotiated,
    Refused,
    Send,
    read_cancel,
    read_progress,
    refused_batch,
)
from .jsonrpc import RequestId
from .advertised import capabilities_for, client_meta, info_for, session_meta, stamped
from .lifecycle import Role, State, Trigger, answers_before_ready, next_state
from .limits import DEFAULT, Limits
from .log_levels import level_at_least, read_level
from .handshake import (
    initialize_request,
    initialize_result,
    read_initialize,
    read_discovered,
    read_initialize_result,
)
from .modern_requests import ModernRequests
from . import params as p
from .params import decode_params  # the hot path's, by name
from .wire import CachePolicy, Wire
from .contracts import MethodSpec
from .negotiation import VersionInfo, Versions, has_capability, refusal_to_send


class Connection:
    """One MCP connection seen from one side.

    ``local`` is the version the application's handlers are typed against: params and
    results are decoded with its types whatever version a peer speaks. ``state_key`` signs
    the ``requestState`` of modern multi-round requests (workers that serve the same
    clients share it; default: a random key), with a signer made on first use.
    """

    def __init__(
        self,
        role: Role,
        versions: Versions,
        local: VersionInfo,
        info: dict[str, Any],
        capabilities: dict[str, Any],
        instructions: str | None = None,
        state_key: bytes | None = None,
        limits: Limits = DEFAULT,
        cache: CachePolicy | None = None,
    ) -> None:
        self.role: Role = role
        self.limits = limits
        #: Makes what this side sends valid at the peer's version.
        self.wire = Wire(local, cache)
        self.versions = versions
        self.local = local
        self.info = info
        self.capabilities = capabilities
        self.instructions = instructions
        self.state_key = state_key
        self._state = State.NEW
        self.version: VersionInfo | None = None
        self.peer_info: dict[str, Any] = {}
        self.peer_capabilities: dict[str, Any] = {}
        #: Lowest level of log notifications sent (server; ``logging/setLevel``).
        self.log_level: str | None = None
        self._next_id = 0
        self._next_batch = 0
        self._pending: dict[RequestId, p.Pending] = {}
        self._offered: tuple[str, ...] = ()
        self._init_id: RequestId | None = None
        #: (version, method) → its row and the application's, for methods answered before.
        self._routes: dict[tuple[str, str], tuple[MethodSpec, MethodSpec]] = {}
        #: The modern era's requests (a server's stateless ones).
        self.modern = ModernRequests(self)

    @property
    def state(self) -> State:
        """Where the connection is in its lifecycle (``runtime.lifecycle``)."""
        return self._state

    @property
    def peer(self) -> Role:
        return "client" if self.role == "server" else "server"

    def _advance(self, trigger: Trigger) -> bool:
        """Move to where ``trigger`` leads (``runtime.lifecycle``); False: nowhere, unmoved."""
        state = next_state(self.role, self._state, trigger)
        if state is None:
            return False
        self._state = state
        return True

    def close(self) -> None:
        """The transport ended: nothing more comes in or goes out."""
        self._advance("closed")

    # -- incoming ---------------------------------------------------------------------------

    def receive(self, frame: bytes | str, http: modern.HttpHeaders | None = None) -> list[Event]:
        """Everything one incoming frame (a line, an HTTP body) asks of this side;
        ``http`` carries the MCP headers when the frame came in an HTTP request."""
        return self.receive_parsed(
            jsonrpc.parse(frame, self.limits.max_depth, self.limits.max_batch), http
        )

    def receive_parsed(
        self, parsed: jsonrpc.Parsed, http: modern.HttpHeaders | None = None
    ) -> list[Event]:
        """:meth:`receive` for a frame already split by :func:`jsonrpc.parse` (the HTTP
        transport looks at the messages first, to route their answers)."""
        messages, is_batch = parsed
        if is_batch and not (self.version is not None and self.version.batching):
            return refused_batch("batches are not supported by this protocol version")
        batch = None
        events: list[Event] = []
        if is_batch:
            self._next_batch += 1
            batch = self._next_batch
            expected = sum(jsonrpc.answered(m) for m in messages)
            if any(isinstance(m, jsonrpc.Request) and m.method == "initialize" for m in messages):
                return refused_batch("initialize must not be part of a batch")
            events.append(BatchOpened(batch, expected))
        for message in messages:
            events += self._dispatch(message, batch, http)
        return events

    def _dispatch(
        self, m: jsonrpc.Message, batch: int | None, http: modern.HttpHeaders | None
    ) -> list[Event]:
        if isinstance(m, jsonrpc.Request):
            try:
                if self.version is None and self.modern.takes(m, http):  # not in a session
                    return self.modern.read(m, batch, http)
                return self._on_request(m, batch, http)
            except McpError as exc:
                return [Send(jsonrpc.encode_mcp_error(m.id, exc), batch, m.id)]
        if isinstance(m, jsonrpc.Notification):
            return self._on_notification(m)
        if isinstance(m, jsonrpc.Response):
            return self._on_response(m)
        if isinstance(m, jsonrpc.ErrorResponse):
            error = McpError(m.code, m.message, m.data)
            if self._init_id is not None and (
                m.id == self._init_id or (m.id is None and self.state is State.INITIALIZING)
            ):
                # The server refused our initialize (or could not read it: an error with
                # no id while we wait for nothing else): the caller learns it at once.
                self._pending.pop(self._init_id, None)
                self._init_id = None
                return [Refused(error)]
            pending = self._pending.pop(m.id, None) if m.id is not None else None
            if pending is None:
                return []
            return [Failure(m.id, error)]  # type: ignore[arg-type]
        if m.notification:  # nobody waits for an answer to a notification, valid or not
            return []
        return [Send(jsonrpc.encode_error(m.id, m.code, m.message), batch)]

    # -- the legacy era ---------------------------------------------------------------------

    def _answerable(self, version: VersionInfo, method: str) -> MethodSpec:
        """The table row for an incoming ``method``: one this side answers, in ``version``,
        behind a capability it offers (-32601 otherwise)."""
        spec = version.spec(self.peer, method)
        if spec is None:
            raise McpError(METHOD_NOT_FOUND, f"Method not found: {method}")
        if spec.capability and not has_capability(self.capabilities, spec.capability):
            raise McpError(METHOD_NOT_FOUND, f"Method not found: {method} (capability not offered)")
        return spec

    def route(self, version: VersionInfo, method: str) -> tuple[MethodSpec, MethodSpec]:
        """:meth:`_answerable`'s row for ``method`` and the application's row for it (its
        types), remembered: the same few methods come again and again."""
        key = (version.version, method)
        route = self._routes.get(key)
        if route is None:
            spec = self._answerable(version, method)
            local = self.local.types_for(version, self.peer, method) or spec
            route = self._routes[key] = (spec, local)
        return route

    def _on_request(
        self, m: jsonrpc.Request, batch: int | None, http: modern.HttpHeaders | None
    ) -> list[Event]:
        if m.method == "ping":
            return [Send(jsonrpc.encode_result(m.id, {}), batch, m.id)]
        if self.role == "server" and m.method == "initialize":
            return self._initialize(m)
        version = self.version
        if version is None or (
            self._state is not State.READY and not answers_before_ready(self._state, m.method)
        ):
            raise McpError(INVALID_REQUEST, f"Invalid request: {m.method} before initialization")
        spec, local = self.route(version, m.method)
        if version.extensions:  # an extension's method: served to a peer that opted in
            version.require_opt_in(self.peer, m.method, self.peer_capabilities, self.role)
        if m.method == "logging/setLevel":
            return [Send(self._set_level(m), batch, m.id)]
        params = self.incoming(m.params, spec, local, version)
        found = getattr(params, "meta", None)  # an open object is a dict; inline: hot path
        meta: dict[str, Any] = found if isinstance(found, dict) else {}  # pyright: ignore
        return [IncomingRequest(m.id, local, params, meta, batch, None, None, http, m.params)]

    def incoming(
        self,
        raw: msgspec.Raw | None,
        spec: MethodSpec,
        local: MethodSpec,
        version: VersionInfo,
    ) -> Any:
        """Params of ``spec`` (the peer's ``version``) as the application's types."""
        if version is self.local:  # the common case, decoded directly
            return decode_params(raw, local, version)
        converts_session = (
            self.role == "server" and self.local.rules.stateless and not version.rules.stateless
        )
        session = (
            (lambda: session_meta(version, self.peer_capabilities, self.peer_info))
            if converts_session
            else None
        )
        return p.incoming_params(raw, spec, version, local, self.local, session)

    def _set_level(self, m: jsonrpc.Request) -> bytes:
        try:
            self.log_level = read_level(m.params)
        except McpError as exc:
            return jsonrpc.encode_mcp_error(m.id, exc)
        return jsonrpc.encode_result(m.id, {})

    def _initialize(self, m: jsonrpc.Request) -> list[Event]:
        if next_state(self.role, self.state, "initialize received") is None:
            raise McpError(INVALID_REQUEST, "Invalid request: initialize was already received")
        chosen, params = read_initialize(m.params, self.versions)
        self.version = version = self.versions[chosen]
        self.peer_info, self.peer_capabilities = params.clientInfo, params.capabilities
        self._advance("initialize received")
        result = initialize_result(
            chosen,
            capabilities_for(self.capabilities, self.role, version),
            info_for(self.info, version),
            self.instructions,
        )
        return [Send(jsonrpc.encode_result(m.id, result), None, m.id), Negotiated(chosen)]

    def _on_notification(self, m: jsonrpc.Notification) -> list[Event]:
        try:
            if m.method == "notifications/initialized":
                self._advance("initialized received")
                return []
            if m.method == "notifications/cancelled":
                return read_cancel(m.params)
            if m.method == "notifications/progress":
                return [read_progress(m.params)]
        except msgspec.ValidationError:
            return []  # malformed notifications are dropped (no one to answer)
        version = self.version
        if version is None:  # a stateless server's: an extension's, that declares it
            return self.modern.notification(m)
        spec = version.spec(self.peer, m.method)
        if spec is None or spec.kind != "notification":
            # A request method without an id is no notification: nobody to answer, and
            # no handler that expects one.
            return []
        if version.extensions and not version.opted_in(self.peer, m.method, self.peer_capabilities):
            return []  # an extension's, the peer did not opt in: dropped as any not served
        local = self.local.types_of(self.peer, m.method) or spec
        try:
            return [IncomingNotification(local, self.incoming(m.params, spec, local, version))]
        except McpError:
            return []

    def _on_response(self, m: jsonrpc.Response) -> list[Event]:
        pending = self._pending.pop(m.id, None)
        if pending is None:
            return []  # late answer to a cancelled or timed-out request
        if m.id == self._init_id:
            return self._on_initialize_result(m)
        if pending.result is None:
            return [Answer(m.id, None)]
        version = self.version
        if version is not None and version.rules.stateless:
            asked = p.asked_for_input(m.result)
            if asked is not None:
                return [Answer(m.id, InputRequiredAnswer(*asked))]
        try:
            return [Answer(m.id, p.decoded(m.result, pending, version, self.local))]
        except McpError as exc:
            return [Failure(m.id, exc)]

    # -- client handshake ---------------------------------------------------------------------

    def initialize(self, offered: tuple[str, ...]) -> bytes:
        """The client's ``initialize`` request, offering ``offered[-1]`` (its newest)."""
        self._offered = offered
        self._init_id = self._new_id()
        self._pending[self._init_id] = p.Pending("initialize", None, None)
        self._advance("initialize sent")
        caps = capabilities_for(self.capabilities, "client", self.versions[offered[-1]])
        return initialize_request(self._init_id, offered, caps, self.info)

    def _on_initialize_result(self, m: jsonrpc.Response) -> list[Event]:
        try:
            version, result = read_initialize_result(m.result, self._offered)
        except NegotiationError as exc:
            return [Refused(exc)]
        self.version = self.versions[version]
        self.peer_info, self.peer_capabilities = result.serverInfo, result.capabilities
        self.instructions = result.instructions or None
        self._advance("initialize answered")
        return [
            Answer(m.id, result),
            Send(jsonrpc.encode_notification("notifications/initialized"), final=False),
            Negotiated(version),
        ]

    def discovered(self, version: VersionInfo, result: dict[str, Any]) -> None:
        """A modern client learned the server's ``version`` from its ``server/discover``
        ``result`` (plain JSON): its capabilities, info and instructions."""
        self.version = version
        self.peer_capabilities, self.peer_info, self.instructions = read_discovered(result)
        self._advance("discovered")

    # -- outgoing -----------------------------------------------------------------------------

    def _new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    @property
    def next_id(self) -> int:
        """The id the next request will get."""
        return self._next_id + 1

    def request(
        self,
        method: str,
        params: Any = UNSET,
        progress_token: str | int | None = None,
        *,
        result: Any = None,
        task_result: Any = None,
        capabilities: dict[str, Any] | None = None,
    ) -> tuple[RequestId, bytes]:
        """Frame a request to the peer and remember what its result decodes to (the
        method's result type, or ``result``: a type of the application's); a peer that
        makes it a task answers ``task_result``. ``progress_token`` asks the peer for
        progress notifications; ``capabilities`` are what a modern client declares for
        this request alone (default: the connection's)."""
        version = self.version
        if version is None:
            raise McpError(INVALID_REQUEST, f"cannot send {method}: not initialized")
        spec = version.spec(self.role, method)
        if spec is None:
            code = MISSING_CLIENT_CAPABILITY if self.role == "server" else METHOD_NOT_FOUND
            raise McpError(code, f"{method} is not part of protocol {version.version}")
        if spec.capability and not has_capability(self.peer_capabilities, spec.capability):
            raise refusal_to_send(method, spec.capability, self.role)
        local = self.local.types_of(self.role, method) or spec
        restore = None
        if params is not UNSET:
            params, restore = self.wire.request(method, params, spec.params, version)
        request_id = self._new_id()
        types = (spec.result, local.result) if result in (None, local.result) else (None, result)
        self._pending[request_id] = p.Pending(method, *types, restore, task_result)
        if self.role == "client" and version.rules.stateless:
            # the per-request _meta a modern client's every request carries
            declared = self.capabilities if capabilities is None else capabilities
            meta = client_meta(version, declared, self.info, self.log_level)
            params = stamped(params, meta)
        if progress_token is not None:
            params = stamped(params, {"progressToken": progress_token})
        return request_id, jsonrpc.encode_request(request_id, method, params)

    def pending(self) -> list[RequestId]:  # sent, and not answered, forgotten or failed yet
        return list(self._pending)

    def forget(self, request_id: RequestId) -> bool:
        """Stop waiting for ``request_id`` (timed out or cancelled); True if it was pending."""
        return self._pending.pop(request_id, None) is not None

    def result(
        self,
        request_id: RequestId,
        result: Any,
        method: str | None = None,
        version: VersionInfo | None = None,
    ) -> bytes:
        """Frame the answer to ``method``, re-shaped for the peer's version (the session's,
        or ``version`` for a modern request)."""
        version = version or self.version
        if method is not None and version is not None:
            if version is not self.local or type(result) not in self.wire.as_is:
                spec = version.spec(self.peer, method)
                result = self.wire.result(result, method, version, spec.result if spec else None)
        return jsonrpc.encode_result(request_id, result)

    def error(
        self,
        request_id: RequestId | None,
        error: McpError,
        version: VersionInfo | None = None,
    ) -> bytes:
        """Frame an error, with the code the peer's era uses for it."""
        version = version or self.version
        if version is not None and error.code in version.rules.error_codes:
            error = McpError(version.rules.error_codes[error.code], error.message, error.data)
        return jsonrpc.encode_mcp_error(request_id, error)

    def notification(self, method: str, params: Any = UNSET) -> bytes:
        if self.version is not None and self.version.extensions:  # gated, maybe stamped
            params = self.modern.extension_notification(self.version, method, params)
        return jsonrpc.encode_notification(method, params)

    def log_allowed(self, level: str) -> bool:
        return self.log_level is None or level_at_least(level, self.log_level)
