"""Streamable HTTP server transport: a plain ASGI app for the MCP endpoint.

One endpoint serves both eras. A POST that carries ``Mcp-Session-Id`` belongs to a legacy
session (created by ``initialize``); any other POST is a stateless modern request, handled
by a short-lived session of its own. Each request's answer goes back as JSON, or as an SSE
stream as soon as the handler sends anything before its result (progress, logs, a request
to the client). Legacy SSE streams keep their events so a client can resume them with
``GET`` and ``Last-Event-ID``.

This module routes: path, ``Host``/``Origin``, method, then which kind of POST. How answers
are written is ``answers.py``; the legacy sessions' POST, GET and DELETE are
``legacy.py``; the 2024-11-05 HTTP+SSE transport, served beside it, is ``sse_endpoint.py``.

Safe by default: ``Host`` and ``Origin`` must name this machine (DNS-rebinding defence,
``runtime.http.hosts``), and every bound in ``runtime.core.limits`` holds (body size and time,
nesting, sessions, streams); every rejection is a 4xx (503 when every session is busy)
with a JSON-RPC error body.
"""

from __future__ import annotations

import functools
import logging
import os
import time
from types import CoroutineType
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import msgspec

from .served import HttpServed
from .shared_sessions import SharedSessions
from ..core import jsonrpc
from .auth.resource_server import operation
from .asgi import BodyRefused, Headers, Receive, Scope, Send, body_now, linger, refuse, respond
from ..core.connection import Connection
from ..aio.session import Session
from .stateless import StatelessLane
from ..core.errors import INVALID_REQUEST
from .hosts import HostPolicy
from ..core.log_limit import LOG_INTERVAL
from .answers import Answers
from .legacy import LegacyEndpoint
from .streams import Router
from .session_table import SessionTable
from .signals import drain_on_stop
from .sse_endpoint import SseEndpoint
from .websocket import SUBPROTOCOL, WebSocketTransport, denial, wants_mcp
from ..core.limits import DEFAULT, Limits
from ..core.modern import HttpHeaders
from .post_headers import accepts_answers, is_json, mcp_headers

if TYPE_CHECKING:  # for typing only
    from .auth.principal import Principal
    from .auth.resource_server import ResourceServer


#: Seconds a process serves on after ``SIGTERM``, its readiness check failing meanwhile.
STOP_DELAY_ENV = "MCPGEN_STOP_DELAY"
log = logging.getLogger("mcpgen.runtime.http.endpoint")

#: A request carries modern per-request metadata (then it needs no session).
_PROTOCOL_META = b"io.modelcontextprotocol/protocolVersion"


class McpHttpApp:
    """ASGI app serving ``server`` at ``path`` (default ``/mcp``).

    ``allowed_hosts``/``allowed_origins`` extend the local names accepted in ``Host`` and
    ``Origin`` (see :class:`~runtime.http.hosts.HostPolicy`); a request refused for either
    is logged, once per refused value per ``host_log_interval`` seconds (default 60);
    ``limits`` bound what clients can make the app hold (default: the server's);
    ``max_body`` overrides its ``max_message_bytes``; ``sse_retry_ms`` is the reconnection
    delay legacy SSE streams announce. The 2024-11-05 HTTP+SSE transport is served beside
    it: its stream at ``sse_path`` (default ``/sse``; None: not served), its messages at
    ``messages_path`` (default ``/messages``; see :mod:`~runtime.http.sse_endpoint`). ``websocket_path``
    takes MCP over WebSocket there (default None: not served; see
    :mod:`~runtime.http.websocket`). ``health_path`` (default ``/healthz``; None: not served)
    answers a GET, from any host and without a token, with the server's
    :meth:`~runtime.server.server.Server.health`: 200 when its shared stores can serve, 503
    when one cannot. ``ready_path`` (default ``/readyz``) tells a balancer whether to send
    requests here: 200, or 503 once a stop signal came; ``stop_delay`` (default
    ``$MCPGEN_STOP_DELAY``, else 0) is how long the process serves on after ``SIGTERM``
    before it stops accepting (``runtime.http.signals``). ``shared_sessions`` (``runtime.http.shared_sessions``, e.g.
    ``runtime.cluster.RedisSessions``) keeps legacy sessions for every process of the
    server, so that any of them serves any request of one. ``auth`` (a :class:`~runtime.http.auth.resource_server.ResourceServer`; default: the
    server's ``auth``) makes the endpoint a protected resource: every request needs a
    valid bearer token, and the protected resource metadata is served.
    """

    def __init__(
        self,
        server: HttpServed,
        *,
        path: str = "/mcp",
        allowed_hosts: Iterable[str] = (),
        allowed_origins: Iterable[str] = (),
        limits: Limits | None = None,
        max_body: int | None = None,
        sse_retry_ms: int = 1000,
        auth: ResourceServer | None = None,
        sse_path: str | None = "/sse",
        messages_path: str = "/messages",
        websocket_path: str | None = None,
        health_path: str | None = "/healthz",
        ready_path: str | None = "/readyz",
        stop_delay: float | None = None,
        shared_sessions: SharedSessions | None = None,
        host_log_interval: float = LOG_INTERVAL,
    ) -> None:
        self.server = server
        self.auth: ResourceServer | None = auth or getattr(server, "auth", None)
        self.path = path.rstrip("/") or "/"
        chosen: Limits = limits or getattr(server, "limits", DEFAULT)
        if max_body is not None:
            chosen = chosen.replace(max_message_bytes=max_body)
        self.limits = limits = chosen
        #: A ``Content-Length`` with fewer digits than the body limit is under it.
        self._length_digits = len(str(limits.max_message_bytes))
        self.hosts = HostPolicy(allowed_hosts, allowed_origins, host_log_interval)
        self.sse_retry_ms = sse_retry_ms
        self.sessions = SessionTable(limits)
        #: Shared by all stateless (modern) requests: it never negotiates, so holds no state.
        self.stateless: Connection = server.connection()
        self.direct = StatelessLane(self.stateless)
        self.legacy = server.versions.of_era("legacy")
        self._legacy = frozenset(self.legacy)
        self.answers = Answers(server, self.stateless, sse_retry_ms, limits)
        self.legacy_sessions = LegacyEndpoint(
            server, self.sessions, limits, self.answers, shared_sessions
        )
        #: The HTTP+SSE transport's two paths (None: not served) and its sessions.
        self.sse_path = None if sse_path is None else sse_path.rstrip("/") or "/"
        self.messages_path = messages_path.rstrip("/") or "/"
        self.sse = SseEndpoint(server, self.answers, limits, self.messages_path)
        #: Where WebSocket connections are taken (None: refused; see ``http.websocket``).
        self.websocket_path = None if websocket_path is None else websocket_path.rstrip("/") or "/"
        self.websockets: set[Session] = set()
        #: Where a balancer asks whether this process can serve (None: not served).
        self.health_path = None if health_path is None else health_path.rstrip("/") or "/"
        #: Where a balancer asks whether to send this process requests (None: not served).
        self.ready_path = None if ready_path is None else ready_path.rstrip("/") or "/"
        self.stop_delay = stop_delay if stop_delay is not None else stop_delay_from_environment()
        #: A stop signal came: the readiness check fails (the process still serves).
        self.stopping = False
        self._gauged = False
        server.subscribe(self.publish)
        if shared_sessions is not None:  # told in their outboxes, once, by the process announcing
            server.subscribe(self.legacy_sessions.announce, own=True)
        self._refusal = functools.lru_cache(maxsize=256)(self._host_or_origin_refused)

    # -- ASGI entry -----------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind != "http":
            if kind == "lifespan":
                await self._lifespan(receive, send)
            elif kind == "websocket":
                await self._websocket(scope, receive, send)
            return
        headers: Headers = dict(scope["headers"])
        path = scope["path"]
        if path != self.path and (path.rstrip("/") or "/") != self.path:
            await self._elsewhere(path.rstrip("/") or "/", scope, headers, receive, send)
            return
        rejection = self._refusal(headers.get(b"host", b""), headers.get(b"origin"))
        if rejection is not None:
            await refuse(send, 403, self._logged(headers, rejection))
            return
        principal, auth = None, self.auth
        if auth is not None:  # inline: the path of every request (_admitted for the rest)
            principal = auth.known(headers) or await auth.authenticate(headers, send)
            if principal is None:  # refused
                return
        method = scope["method"]
        if method == "POST":
            await self._post(headers, receive, send, principal)
        elif method == "GET":
            await self.legacy_sessions.get(headers, receive, send, principal)
        elif method == "DELETE":
            await self.legacy_sessions.delete(headers, send, principal)
        else:
            await respond(
                send,
                405,
                jsonrpc.encode_error(None, INVALID_REQUEST, f"Method {method} not allowed"),
                allow=True,
            )

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A WebSocket at ``websocket_path``: checked like a request, then served as one
        persistent connection (see :mod:`~runtime.http.websocket`)."""
        headers: Headers = dict(scope["headers"])
        refuse_with = denial(scope, send)
        path = scope["path"].rstrip("/") or "/"
        if self.websocket_path is None or path != self.websocket_path:
            await refuse(refuse_with, 404, f"Not found: {scope['path']} (no WebSocket here)")
            return
        rejection = self._refusal(headers.get(b"host", b""), headers.get(b"origin"))
        if rejection is not None:
            await refuse(refuse_with, 403, self._logged(headers, rejection))
            return
        if not wants_mcp(scope):
            await refuse(refuse_with, 400, f"Bad Request: ask for the subprotocol {SUBPROTOCOL!r}")
            return
        auth, principal = self.auth, None
        if auth is not None:
            principal = auth.known(headers) or await auth.authenticate(headers, refuse_with)
            if principal is None:  # refused
                return
        if (await receive())["type"] != "websocket.connect":
            return
        asked = bool(scope.get("subprotocols"))
        await send({"type": "websocket.accept", "subprotocol": SUBPROTOCOL if asked else None})
        gate = None
        if auth is not None and principal is not None and auth.policy.varies:
            gate = functools.partial(_scope_gate, auth, principal, self.limits)
        transport = WebSocketTransport(receive, send, self.limits, gate)
        server = self.server
        session = Session(server.connection(), transport, server.dispatch, server.on_notification)
        transport.busy = lambda: session.in_flight > 0
        await self.server.start()
        self.websockets.add(session)
        http = None
        if principal is not None:
            http = HttpHeaders(request=headers, principal=principal, per_request=False)
        try:
            await session.run(drain_timeout=0, http=http)  # gone: nobody reads answers
        finally:
            self.websockets.discard(session)
            await transport.close()

    async def _admitted(self, headers: Headers, send: Send) -> tuple[bool, Principal | None]:
        """``Host``/``Origin`` and the bearer token checked: whether the request may go
        on (a refusal has been sent otherwise), and who it is from on a protected app."""
        rejection = self._refusal(headers.get(b"host", b""), headers.get(b"origin"))
        if rejection is not None:
            await refuse(send, 403, self._logged(headers, rejection))
            return False, None
        auth = self.auth
        if auth is None:
            return True, None
        principal = auth.known(headers) or await auth.authenticate(headers, send)
        return principal is not None, principal

    async def _elsewhere(
        self, path: str, scope: Scope, headers: Headers, receive: Receive, send: Send
    ) -> None:
        """A path other than the endpoint's: HTTP+SSE's two, the protected resource
        metadata, or 404."""
        if self.sse_path is not None and path in (self.sse_path, self.messages_path):
            admitted, principal = await self._admitted(headers, send)
            if admitted:
                await self._sse(path, scope["method"], scope, headers, receive, send, principal)
            return
        if path == self.health_path:
            await self._health(scope["method"], send)
            return
        if path == self.ready_path:
            await self._ready(scope["method"], send)
            return
        auth = self.auth
        if auth is not None and auth.is_metadata_path(scope["path"]):
            await self._metadata(auth, headers, scope["method"], send)
            return
        await refuse(send, 404, f"Not found: {scope['path']}")

    def _stop(self) -> None:
        self.stopping = True

    def _gauges(self) -> None:
        """Report what this process holds to the server's telemetry middleware, if it has
        one (``runtime.server.telemetry``), once."""
        chain = getattr(self.server, "middleware", None)
        found = [m for m in getattr(chain, "items", ()) if hasattr(m, "gauge")]
        if not found or self._gauged:
            return
        self._gauged = True
        gauge = found[0].gauge
        gauge("mcpgen.http.sessions", lambda: len(self.sessions), "Legacy sessions held")
        gauge("mcpgen.http.streams", self.open_streams, "Long-lived streams open")
        tasks = getattr(self.server, "tasks", None)
        running = getattr(tasks, "running", None)
        if isinstance(running, dict):
            counts: dict[str, int] = running  # pyright: ignore[reportUnknownVariableType]
            gauge("mcpgen.tasks.running", lambda: sum(counts.values()), "Tasks running here")

    def open_streams(self) -> int:
        """The long-lived streams this process holds: legacy GET streams (and shared
        sessions' outbox followers), listen streams, HTTP+SSE streams, WebSockets."""
        legacy = sum(len(s.gets) + s.following for s in self.sessions.values())
        return (
            legacy
            + len(self.answers.listen_streams)
            + len(self.sse.sessions)
            + len(self.websockets)
        )

    async def _ready(self, method: str, send: Send) -> None:
        """The readiness endpoint: 200 while this process takes requests (a store away is
        every process's at once: it still serves what needs none), 503 once it stops."""
        if await _only_get(method, self.ready_path, send):
            status = {"status": "stopping" if self.stopping else "ready"}
            await respond(send, 503 if self.stopping else 200, msgspec.json.encode(status))

    async def _health(self, method: str, send: Send) -> None:
        """The health endpoint: what ``Server.health`` says, 200 or 503 (503 too once the
        process stops)."""
        if not await _only_get(method, self.health_path, send):
            return
        health = self.server.health()
        outage = getattr(self.legacy_sessions.shared, "outage", None)
        since = getattr(outage, "since", None)
        if outage is not None:  # the sessions' store is the endpoint's, not the server's
            lasted = time.monotonic() - since if isinstance(since, float) else None
            checks = dict(health.get("checks") or {})
            checks["sessions"] = "ok" if lasted is None else f"unreachable for {lasted:.0f} s"
            ok = all(state == "ok" for state in checks.values())
            health = {"status": "ok" if ok else "unavailable", "checks": checks}
        if self.stopping:
            health = {**health, "status": "stopping"}
        status = 200 if health.get("status") == "ok" else 503
        await respond(send, status, msgspec.json.encode(health))

    async def _sse(
        self,
        path: str,
        method: str,
        scope: Scope,
        headers: Headers,
        receive: Receive,
        send: Send,
        principal: Principal | None,
    ) -> None:
        """The HTTP+SSE transport: GET opens a stream, POST feeds one."""
        if path == self.sse_path and method == "GET":
            await self.server.start()
            await self.sse.get(headers, scope.get("root_path", ""), receive, send, principal)
        elif path == self.messages_path and method == "POST":
            query: bytes = scope.get("query_string", b"")
            await self.sse.post(query, headers, receive, send, principal)
        else:
            allowed = "GET" if path == self.sse_path else "POST"
            message = f"Method {method} not allowed on {path} (only {allowed})"
            await respond(send, 405, jsonrpc.encode_error(None, INVALID_REQUEST, message))

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        restore: Callable[[], None] = lambda: None
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self.server.start()
                    await self.legacy_sessions.start()
                except Exception as exc:
                    log.error("the server cannot start: %s", exc)
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                self._gauges()
                restore = drain_on_stop(self.drain, self._stop, self.stop_delay)
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                restore()
                await self.legacy_sessions.close()
                await self.server.close()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _metadata(
        self, auth: ResourceServer, headers: Headers, method: str, send: Send
    ) -> None:
        """The protected resource metadata, to a request passing the Host/Origin checks."""
        rejection = self._refusal(headers.get(b"host", b""), headers.get(b"origin"))
        if rejection is not None:
            await refuse(send, 403, self._logged(headers, rejection))
            return
        await auth.serve_metadata(method, send)

    def _logged(self, headers: Headers, rejection: str) -> str:
        """``rejection`` of a request's ``Host`` or ``Origin``, logged (rate-limited: only
        refused requests pay for it; the check itself is cached)."""
        origin = headers.get(b"origin")
        self.hosts.warn(
            headers.get(b"host", b"").decode("latin-1"),
            None if origin is None else origin.decode("latin-1"),
        )
        return rejection

    def _host_or_origin_refused(self, raw_host: bytes, raw_origin: bytes | None) -> str | None:
        """Why ``Host``/``Origin`` are refused (DNS-rebinding defence), or None."""
        origin = None if raw_origin is None else raw_origin.decode("latin-1")
        return self.hosts.refusal(raw_host.decode("latin-1"), origin)

    # -- POST -------------------------------------------------------------------------------

    async def _post(
        self, headers: Headers, receive: Receive, send: Send, principal: Principal | None
    ) -> None:
        """Route a POST: a legacy session's, a new session's ``initialize``, or a modern
        stateless request (single ones read headers-first and served inline). On a
        protected endpoint, the scopes its requests need are checked first."""
        if not is_json(headers.get(b"content-type", b"")):
            await refuse(send, 415, "Unsupported Media Type: use application/json")
            return
        if not accepts_answers(headers.get(b"accept", b"")):
            message = "Not Acceptable: Accept must list application/json and text/event-stream"
            await refuse(send, 406, message)
            return
        limits = self.limits
        claimed = headers.get(b"content-length")
        if claimed is not None and len(claimed) >= self._length_digits and _over(claimed, limits):
            if b"expect" not in headers:  # (one asking 100-continue has not sent it)
                await linger(receive, limits.linger_timeout)
            await refuse(send, 413, f"Payload Too Large: limit {limits.max_message_bytes} bytes")
            return
        try:
            body: Any = body_now(receive, limits.max_message_bytes, limits.body_timeout)
            if body.__class__ is CoroutineType:  # (not all of it came with the headers)
                body = await body
        except BodyRefused as refused:
            if refused.unread:  # (not after a 408: a client that slow gets no more time)
                await linger(receive, limits.linger_timeout)
            await refuse(send, refused.status, refused.message)
            return
        said = headers.get(b"mcp-session-id")
        session_id = None if said is None else said.decode("latin-1")
        said = headers.get(b"mcp-protocol-version")
        version = None if said is None else said.decode("latin-1")
        if session_id is not None:
            auth = self.auth
            if principal is None or auth is None or not auth.policy.varies:
                legacy = self.legacy_sessions
                if await legacy.post_one(
                    session_id, headers, body, version, receive, send, principal
                ):
                    return
        elif version is not None and version not in self._legacy:
            http = mcp_headers(headers, version, principal)
            event = self.direct.read(body, http)
            if event is not None:
                if principal is not None:
                    auth = self.auth
                    if auth is not None and auth.policy.varies:
                        needed = auth.lacks(principal, event.spec.name, event.params)
                        if needed:
                            await auth.refuse_scopes(send, needed, event.id)
                            return
                await self.answers.serve_one(event, receive, send)
                return
        parsed = jsonrpc.parse(body, limits.max_depth, limits.max_batch)
        messages = parsed[0]
        if not parsed[1] and type(messages[0]) is jsonrpc.Invalid:
            # no message at all: refused with its own error before anything else is looked
            # at (a notification's too, as the transport requires: 400, the id null)
            refused = messages[0]
            await respond(
                send, 400, jsonrpc.encode_error(refused.id, refused.code, refused.message)
            )
            return
        auth = self.auth
        if principal is not None and auth is not None and auth.policy.varies:
            needed = auth.missing(principal, operation(messages))
            if needed:
                requests = jsonrpc.request_ids(messages)
                await auth.refuse_scopes(send, needed, requests[0] if len(requests) == 1 else None)
                return
        if session_id is not None:
            await self.legacy_sessions.post(session_id, headers, parsed, receive, send, principal)
            return
        if version is None or version in self.legacy:
            requests = jsonrpc.request_ids(messages)
            if any(isinstance(m, jsonrpc.Request) and m.method == "initialize" for m in messages):
                http = mcp_headers(headers, version, principal)
                await self.server.start()  # (at startup, but for a server sending no lifespan)
                await self.legacy_sessions.start()
                await self.legacy_sessions.initialize(parsed, requests, http, receive, send)
                return
            needs_session = [
                m for m in messages if not (isinstance(m, jsonrpc.Request) and m.method == "ping")
            ]
            if (
                needs_session
                and not any(isinstance(m, jsonrpc.Invalid) for m in messages)
                and (version is not None or _PROTOCOL_META not in body)
            ):
                message = "Bad Request: Mcp-Session-Id required (start a session with initialize)"
                await refuse(send, 400, message, requests[0] if requests else None)
                return
        http = mcp_headers(headers, version, principal)
        if (
            len(messages) == 1
            and isinstance(messages[0], jsonrpc.Request)
            and messages[0].method != "subscriptions/listen"
        ):
            events = self.stateless.receive_parsed(parsed, http)
            await self.answers.serve_inline(events, messages[0].id, receive, send)
            return
        await self.server.start()  # a listen stream may be opened: announcements flow
        router = Router()
        await self.answers.exchange(
            self.answers.session(router),
            router,
            parsed,
            jsonrpc.request_ids(messages),
            http,
            receive,
            send,
            None,
        )

    async def drain(self) -> None:
        """The server stops: close the long-lived streams, so that their clients go to
        another process now (a legacy GET stream ends with a ``retry`` hint, a listen or
        HTTP+SSE stream ends, a WebSocket closes with 1012); requests in flight go on."""
        self.legacy_sessions.draining = True
        for legacy in self.sessions.values():
            for stream in list(legacy.gets):
                stream.close()
        for stream in list(self.answers.listen_streams):
            stream.close()
        for sse in list(self.sse.sessions.values()):
            sse.stream.close()
        for session in list(self.websockets):
            transport = session.transport
            if isinstance(transport, WebSocketTransport):
                await transport.restarting()

    async def publish(self, method: str, params: dict[str, Any], wanted: str) -> None:
        """Announce a change to legacy sessions (this process's own: shared ones are told
        by ``LegacyEndpoint.announce``) and to open modern listen streams."""
        if self.legacy_sessions.shared is None:
            for legacy in list(self.sessions.values()):
                await legacy.session.publish(method, params, wanted)
        for sse in list(self.sse.sessions.values()):
            await sse.session.publish(method, params, wanted)
        for session in list(self.websockets):
            await session.publish(method, params, wanted)
        for session in list(self.answers.listeners):
            await session.publish(method, params, wanted)


async def _only_get(method: str, path: str | None, send: Send) -> bool:
    """Whether ``method`` may read ``path`` (GET, HEAD); else answered 405."""
    if method in ("GET", "HEAD"):
        return True
    why = f"Method {method} not allowed on {path} (only GET)"
    await respond(send, 405, jsonrpc.encode_error(None, INVALID_REQUEST, why))
    return False


def stop_delay_from_environment() -> float:
    """``$MCPGEN_STOP_DELAY``: seconds a process serves on after ``SIGTERM`` (0 if unset);
    a value that is no number of seconds stops the app from starting, saying so."""
    said = os.environ.get(STOP_DELAY_ENV, "").strip()
    if not said:
        return 0.0
    try:
        delay = float(said)
    except ValueError:
        delay = -1.0
    if not 0 <= delay <= 3600:
        raise ValueError(f"{STOP_DELAY_ENV} must be seconds from 0 to 3600, not {said!r}")
    return delay


def _scope_gate(
    auth: ResourceServer, principal: Principal, limits: Limits, data: bytes
) -> bytes | None:
    """The refusal of a WebSocket message whose requests need scopes the connection's
    token lacks (-32600 naming them), or None."""
    messages = jsonrpc.parse(data, limits.max_depth, limits.max_batch)[0]
    needed = auth.missing(principal, operation(messages))
    if not needed:
        return None
    requests = jsonrpc.request_ids(messages)
    why = f"Forbidden: this request needs scope {' '.join(sorted(needed))!r}"
    return jsonrpc.encode_error(requests[0] if len(requests) == 1 else None, INVALID_REQUEST, why)


def _over(claimed: bytes, limits: Limits) -> bool:
    """Whether a ``Content-Length`` says the body is over ``max_message_bytes``: refused
    before a byte of it is read (the server's parser has checked that it is a number)."""
    return claimed.isdigit() and int(claimed) > limits.max_message_bytes


__all__ = ["McpHttpApp"]
