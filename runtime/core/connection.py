"""The MCP connection state machine, sans-IO: frames in, events and frames out.

A ``Connection`` parses frames, negotiates the version (legacy ``initialize``), gates
methods by version, state and capability, decodes params with the dispatch table's types
and correlates responses with the requests it sent. It never awaits and never touches a
socket or pipe: the asyncio ``Session`` feeds it and acts on what it returns.

A modern (2026-07-28) request outside a session is read here too, in the order the spec
sets. Beside it: ``handshake.py`` (legacy handshake), ``params.py`` (params and answers
across versions), ``outgoing.py`` (what goes out, per version).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import msgspec
from msgspec import UNSET

from . import jsonrpc, modern
from .errors import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_CLIENT_CAPABILITY,
    McpError,
    NegotiationError,
    UNSUPPORTED_PROTOCOL_VERSION,
)
from .events import (
    CANCELLED,
    Answer,
    BatchOpened,
    Event,
    Failure,
    IncomingNotification,
    IncomingRequest,
    InputRequiredAnswer,
    Inputs,
    Listen,
    Negotiated,
    Refused,
    Send,
    read_cancel,
    read_progress,
    refused_batch,
)
from .jsonrpc import RequestId
from .capabilities import ASKED_BY_PARAMS, capabilities_for, client_meta, info_for
from .capabilities import refusal_to_ask, session_meta, stamped
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
from . import params as p
from .params import decode_params  # the hot path's, by name
from .outgoing import CachePolicy, Wire
from .binding import MethodSpec
from .json_values import as_object
from .request_state import KeyRing, StateSigner
from .subscriptions import listen_refusal, streams_refusal
from .negotiation import VersionInfo, Versions, has_capability, refusal_to_send

_MODERN_400 = frozenset(
    {
        INVALID_PARAMS,
        HEADER_MISMATCH,
        MISSING_CLIENT_CAPABILITY,
        UNSUPPORTED_PROTOCOL_VERSION,
    }
)
#: Listen filter key → server capability that must be offered to honour it.
_LISTEN_FILTERS: dict[str, tuple[str, ...]] = {
    "toolsListChanged": ("tools", "listChanged"),
    "promptsListChanged": ("prompts", "listChanged"),
    "resourcesListChanged": ("resources", "listChanged"),
    "resourceSubscriptions": ("resources", "subscribe"),
    # the io.modelcontextprotocol/tasks extension's: status of the tasks named
    "taskIds": ("extensions", "io.modelcontextprotocol/tasks"),
}
#: Listen filters the client may ask for only having declared a capability (-32021).
_LISTEN_NEEDS: dict[str, tuple[str, ...]] = {
    "taskIds": ("extensions", "io.modelcontextprotocol/tasks"),
}

#: The modern requests the connection answers itself, no handler behind them: a
#: reader of stateless requests leaves them to it.
ANSWERED_BY_CONNECTION = frozenset({"server/discover", "subscriptions/listen"})


class Connection:
    """One MCP connection seen from one side.

    ``local`` is the version the application's handlers are typed against: params and
    results are decoded with its types whatever version a peer speaks. ``state_key`` (a key,
    or a :class:`~runtime.core.request_state.KeyRing` to rotate keys) signs the
    ``requestState`` of modern multi-round requests (workers that serve the same clients
    share it; default: a random key), with a signer made on first use.
    """

    def __init__(
        self,
        role: Role,
        versions: Versions,
        local: VersionInfo,
        info: dict[str, Any],
        capabilities: dict[str, Any],
        instructions: str | None = None,
        state_key: bytes | KeyRing | None = None,
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
        #: Told ``(session, request id, honoured filter)`` when a listen stream opens and
        #: ``(session, request id, None)`` when it ends (``Server.on_listen``).
        self.on_listen: Callable[[Any, RequestId, Mapping[str, Any] | None], None] | None = None
        self._next_id = 0
        #: What the ids of requests sent begin with (None: plain numbers): unique to a
        #: process serving a session other processes also serve.
        self.id_prefix: str | None = None
        self._next_batch = 0
        self._pending: dict[RequestId, p.Pending] = {}
        self._offered: tuple[str, ...] = ()
        self._init_id: RequestId | None = None
        #: (version, method) → its row and the application's, for methods answered before.
        self._routes: dict[tuple[str, str], tuple[MethodSpec, MethodSpec]] = {}
        #: A legacy session's params read as the application's (``params.Settled``).
        self._settled = p.Settled(local)
        #: The modern era's requests (a server's stateless ones).
        self._signer: Any = None

    @property
    def state(self) -> State:
        """Where the connection is in its lifecycle (``runtime.core.lifecycle``)."""
        return self._state

    @property
    def peer(self) -> Role:
        return "client" if self.role == "server" else "server"

    def _advance(self, trigger: Trigger) -> bool:
        """Move to where ``trigger`` leads (``runtime.core.lifecycle``); False: nowhere, unmoved."""
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
                if self.version is None and self._takes_stateless(m, http):  # not in a session
                    return self._read_stateless(m, batch, http)
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
        if not converts_session:
            return p.incoming_params(raw, spec, version, local, self.local)
        settled = self._settled
        caps, info = self.peer_capabilities, self.peer_info
        if raw is not None and settled.reads_alike(spec.params, local.params):
            read = settled.read(raw, local, version, caps, info)
            if read is not None:
                return read
        session = lambda: session_meta(version, caps, info)

        def typed(params_type: Any) -> Any:
            return settled.meta(params_type, version, caps, info)

        return p.incoming_params(raw, spec, version, local, self.local, session, typed)

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
            if m.method == CANCELLED:
                return read_cancel(m.params)
            if m.method == "notifications/progress":
                return [read_progress(m.params)]
        except msgspec.ValidationError:
            return []  # malformed notifications are dropped (no one to answer)
        version = self.version
        if version is None:  # a stateless server's: an extension's, that declares it
            return self._stateless_notification(m)
        spec = version.spec(self.peer, m.method)
        if spec is None or spec.kind != "notification":
            # A request method without an id is no notification: nobody to answer, and
            # no handler that expects one.
            return []
        if version.extensions and not version.opted_in(self.peer, m.method, self.peer_capabilities):
            return []  # an extension's, the peer did not opt in: dropped as any not served
        local = self.local.types_of(self.peer, m.method) or spec
        tag = modern.subscription_of(m.params) if version.rules.stateless else None
        try:
            params = self.incoming(m.params, spec, local, version)
        except McpError:
            return []
        return [IncomingNotification(local, params, tag)]

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

    def session_lost(self) -> bool:
        """The server forgot this client's legacy session: back to NEW, to ``initialize``
        again (what the handshake settled is void). False when not READY in that era."""
        if self.version is None or self.version.era != "legacy":
            return False
        if not self._advance("session lost"):
            return False
        self.version, self.peer_info, self.peer_capabilities = None, {}, {}
        self._init_id = None
        return True

    def discovered(self, version: VersionInfo, result: dict[str, Any]) -> None:
        """A modern client learned the server's ``version`` from its ``server/discover``
        ``result`` (plain JSON): its capabilities, info and instructions."""
        self.version = version
        self.peer_capabilities, self.peer_info, self.instructions = read_discovered(result)
        self._advance("discovered")

    # -- outgoing -----------------------------------------------------------------------------

    def _new_id(self) -> RequestId:
        self._next_id += 1
        prefix = self.id_prefix
        return self._next_id if prefix is None else f"{prefix}{self._next_id}"

    @property
    def next_id(self) -> RequestId:
        """The id the next request will get."""
        number = self._next_id + 1
        return number if self.id_prefix is None else f"{self.id_prefix}{number}"

    def take_up(
        self,
        version: str,
        peer_info: dict[str, Any],
        peer_capabilities: dict[str, Any],
        log_level: str | None,
        id_prefix: str,
    ) -> None:
        """Carry on, as a server, a legacy session another process of it began (one
        sharing its sessions): negotiated ``version``, the client's info and capabilities
        and log level as that process recorded them; the requests sent from here get ids
        beginning ``id_prefix`` (unique to this process: the client's answers to them,
        wherever they land, find their way back here)."""
        if not self._advance("taken up"):
            raise ValueError(f"a connection in state {self._state.value} cannot take up a session")
        self.version = self.versions[version]
        self.peer_info, self.peer_capabilities = peer_info, peer_capabilities
        self.log_level = log_level
        self.id_prefix = id_prefix

    def request(
        self,
        method: str,
        params: Any = UNSET,
        progress_token: str | int | None = None,
        *,
        result: Any = None,
        task_result: Any = None,
        capabilities: dict[str, Any] | None = None,
        extra_meta: Mapping[str, Any] | None = None,
    ) -> tuple[RequestId, bytes]:
        """Frame a request to the peer and remember what its result decodes to (the
        method's result type, or ``result``: a type of the application's); a peer that
        makes it a task answers ``task_result``. ``progress_token`` asks the peer for
        progress notifications; ``capabilities`` are what a modern client declares for
        this request alone (default: the connection's); ``extra_meta`` joins its ``_meta``
        (e.g. a trace context)."""
        version = self.version
        if version is None:
            raise McpError(INVALID_REQUEST, f"cannot send {method}: not initialized")
        spec = version.spec(self.role, method)
        if spec is None:
            code = MISSING_CLIENT_CAPABILITY if self.role == "server" else METHOD_NOT_FOUND
            raise McpError(code, f"{method} is not part of protocol {version.version}")
        if spec.capability and not has_capability(self.peer_capabilities, spec.capability):
            raise refusal_to_send(method, spec.capability, self.role)
        if self.role == "server" and params is not UNSET and method in ASKED_BY_PARAMS:
            refusal = refusal_to_ask(
                method, msgspec.to_builtins(params), self.peer_capabilities, version
            )
            if refusal is not None:
                raise refusal
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
        if extra_meta:
            params = stamped(params, dict(extra_meta))
        return request_id, jsonrpc.encode_request(request_id, method, params)

    def decode_result(self, method: str, raw: msgspec.Raw, result: Any = None) -> Any:
        """A result of ``method`` the peer sent earlier (e.g. kept in a cache), decoded as
        its answer would be now: the method's result type, or ``result``."""
        version = self.version
        spec = version.spec(self.role, method) if version is not None else None
        if version is None or spec is None:
            raise McpError(INVALID_REQUEST, f"cannot decode a result of {method}: not connected")
        local = self.local.types_of(self.role, method) or spec
        types = (spec.result, local.result) if result in (None, local.result) else (None, result)
        return p.decoded(raw, p.Pending(method, *types), version, self.local)

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
            params = self._extension_params(self.version, method, params)
        return jsonrpc.encode_notification(method, params)

    def log_allowed(self, level: str) -> bool:
        return self.log_level is None or level_at_least(level, self.log_level)

    # The modern era (2026-07-28 on): stateless requests, each carrying its version,
    # capabilities and client info in ``_meta`` (and, over HTTP, in headers), checked in
    # the order the spec sets, then routed like any request; ``server/discover`` and
    # listen acknowledgements answered here; multi-round requests carry their answers so
    # far in a signed ``requestState``.

    @property
    def signer(self) -> Any:
        """Signs and verifies ``requestState`` with the connection's ``state_key``
        (made on first use: most servers never need one)."""
        if self._signer is None:
            key = self.state_key
            ring = key if isinstance(key, KeyRing) else KeyRing(key) if key else None
            self._signer = StateSigner(ring) if ring is not None else StateSigner()
        return self._signer

    def _takes_stateless(self, m: jsonrpc.Request, http: modern.HttpHeaders | None) -> bool:
        """A server takes a request down the stateless path when it is not in a legacy
        session and the request says it is modern (``_meta`` or header version that is
        not a handshake version, or a method only modern versions have)."""
        if self.role != "server" or self.version is not None:
            return False
        if not self.versions.of_era("modern"):
            return False
        legacy = self.versions.of_era("legacy")
        if http is not None and http.protocol_version is not None:
            return http.protocol_version not in legacy
        if m.params is not None and modern.PROTOCOL_VERSION.encode() in bytes(m.params):
            return True
        if m.method == "initialize":
            return False
        return not self.versions.has("legacy", "client", m.method)

    def _read_stateless(
        self, m: jsonrpc.Request, batch: int | None, http: modern.HttpHeaders | None
    ) -> list[Event]:
        """Validate in the order the spec sets: ``_meta`` keys, headers, version, method."""
        try:
            return self._stateless_checked(m, batch, http)
        except McpError as exc:
            status = (
                404 if exc.code == METHOD_NOT_FOUND else 400 if exc.code in _MODERN_400 else None
            )
            return [Send(jsonrpc.encode_mcp_error(m.id, exc), batch, m.id, status)]

    def _stateless_checked(
        self, m: jsonrpc.Request, batch: int | None, http: modern.HttpHeaders | None
    ) -> list[Event]:
        p = modern.probe(m.params)
        if p is None:
            raise McpError(
                INVALID_PARAMS,
                "Invalid params: params must be an object with _meta",
                {"path": "$.params"},
            )
        meta = modern.check_meta(p)
        if http is not None and http.per_request:
            modern.check_headers(http, m.method, meta, p)
        requested = str(meta.protocol_version)
        supported = self.versions.of_era("modern")
        if requested not in supported:
            raise McpError(
                UNSUPPORTED_PROTOCOL_VERSION,
                f"Unsupported protocol version {requested!r}",
                {"supported": list(supported), "requested": requested},
            )
        version = self.versions[requested]
        if m.method == "server/discover":
            return [Send(jsonrpc.encode_result(m.id, self._discover(version)), batch, m.id)]
        spec, local = self.route(version, m.method)
        if version.extensions:
            version.require_opt_in("client", m.method, meta.client_capabilities or {}, "server")
        params = self.incoming(m.params, spec, local, version)
        meta_map = as_object(getattr(params, "meta", None))
        if meta_map is None:  # params typed without _meta (an extension's): what it said
            meta_map = as_object(msgspec.to_builtins(meta)) or {}
        peer = modern.Peer(version, meta_map)
        if m.method == "subscriptions/listen":
            notifications = as_object(msgspec.to_builtins(getattr(params, "notifications", {})))
            for key, needed in _LISTEN_NEEDS.items():
                if (notifications or {}).get(key) and not has_capability(peer.capabilities, needed):
                    raise McpError(
                        MISSING_CLIENT_CAPABILITY,
                        f"Missing required client capability: {'.'.join(needed)} ({key})",
                        {"requiredCapabilities": {needed[0]: {needed[1]: {}}}},
                    )
            refusal = listen_refusal(notifications or {}, self.limits)
            if refusal is not None:
                raise refusal
            return [Listen(m.id, notifications or {}, peer)]
        inputs = self._inputs(m, p) if m.method in modern.INPUT_METHODS else None
        return [
            IncomingRequest(
                m.id,
                local,
                params,
                meta_map,
                batch,
                peer,
                inputs,
                http,
            )
        ]

    def _stateless_notification(self, m: jsonrpc.Notification) -> list[Event]:
        """A notification outside any session (a stateless server's): only an extension's
        is served, when its ``_meta`` names a modern version and declares the extension;
        anything else is dropped (no one to answer)."""
        p = modern.probe(m.params) if self.role == "server" else None
        meta = p.meta if p is not None else UNSET
        if meta is UNSET or meta.protocol_version not in self.versions.of_era("modern"):
            return []
        version = self.versions[str(meta.protocol_version)]
        capabilities = meta.client_capabilities or {}
        if version.extension_of("client", m.method) is None:
            return []
        if not version.opted_in("client", m.method, capabilities):
            return []
        spec, local = version.spec("client", m.method), self.local.types_of("client", m.method)
        if spec is None or local is None or spec.kind != "notification":
            return []
        try:
            return [IncomingNotification(local, self.incoming(m.params, spec, local, version))]
        except McpError:
            return []

    def _extension_params(self, version: VersionInfo, method: str, params: Any) -> Any:
        """The params of an extension's notification this side sends: refused (McpError)
        when the peer did not declare the extension; a modern client's carry the
        ``_meta`` its requests do, so a stateless server can tell it opted in."""
        if version.extension_of(self.role, method) is None:
            return params
        version.require_opt_in(self.role, method, self.peer_capabilities, "client")
        if self.role == "client" and version.rules.stateless:
            meta = client_meta(version, self.capabilities, self.info, self.log_level)
            return stamped(params, meta)
        return params

    def _inputs(self, m: jsonrpc.Request, p: Any) -> Inputs:
        """Answers the client gave so far: those carried by a verified ``requestState``
        plus this round's ``inputResponses``."""
        inputs = Inputs({}, m.params)
        if p.requestState is not UNSET:
            from .request_state import StateError

            if not isinstance(p.requestState, str):
                raise StateError("not a string")
            inputs.answers.update(self.signer.verify(p.requestState, m.method, inputs.digest))
        if p.inputResponses is not UNSET and p.inputResponses is not None:
            answers = as_object(p.inputResponses)
            if answers is None:
                raise McpError(
                    INVALID_PARAMS,
                    "Invalid params: inputResponses must be an object",
                    {"path": "$.params.inputResponses"},
                )
            inputs.answers.update(answers)
        return inputs

    def input_required(self, request: IncomingRequest, asked: Mapping[str, Any]) -> dict[str, Any]:
        """The ``input_required`` result asking for ``asked``, with a signed state that
        carries the answers so far."""
        assert request.inputs is not None
        state = self.signer.sign(request.spec.name, request.inputs.digest, request.inputs.answers)
        return {
            "resultType": "input_required",
            "inputRequests": dict(asked),
            "requestState": state,
        }

    def _discover(self, version: VersionInfo) -> dict[str, Any]:
        hint = self.wire.cache.hint("server/discover")
        result: dict[str, Any] = {
            "resultType": "complete",
            "supportedVersions": list(self.versions.of_era("modern")),
            "capabilities": capabilities_for(self.capabilities, "server", version),
            "ttlMs": hint.ttl_ms,
            "cacheScope": hint.scope,
            "_meta": {modern.SERVER_INFO: info_for(self.info, version)},
        }
        if self.instructions is not None:
            result["instructions"] = self.instructions
        return result

    def acknowledge(
        self, listen: Listen, open_streams: Iterable[Mapping[str, Any]] = ()
    ) -> tuple[dict[str, bool | list[str]] | None, bytes]:
        """The filter this server honours for a listen request, and the acknowledgement;
        or None and the refusal, when with the filters of the connection's ``open_streams``
        it would name more than ``Limits.max_subscriptions`` things."""
        caps = self.capabilities
        honoured: dict[str, Any] = {}
        for key, capability in _LISTEN_FILTERS.items():
            if listen.requested.get(key) and has_capability(caps, capability):
                honoured[key] = listen.requested[key]
        refusal = streams_refusal(open_streams, honoured, self.limits)
        if refusal is not None:
            return None, self.error(listen.id, refusal, listen.peer.version)
        params = {
            "notifications": honoured,
            "_meta": {modern.SUBSCRIPTION_ID: listen.id},
        }
        return honoured, jsonrpc.encode_notification(
            "notifications/subscriptions/acknowledged", params
        )
