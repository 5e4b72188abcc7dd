"""Streamable HTTP server transport: a plain ASGI app for the MCP endpoint.

One endpoint serves both eras. A POST that carries ``Mcp-Session-Id`` belongs to a legacy
session (created by ``initialize``); any other POST is a stateless modern request, handled
by a short-lived session of its own. Each request's answer goes back as JSON, or as an SSE
stream as soon as the handler sends anything before its result (progress, logs, a request
to the client). Legacy SSE streams keep their events so a client can resume them with
``GET`` and ``Last-Event-ID``.

Safe by default: ``Host`` and ``Origin`` must name this machine (DNS-rebinding defence,
``runtime.hosts``), and every bound in ``runtime.limits`` holds (body size and time,
nesting, sessions, streams); every rejection is a 4xx (503 when every session is busy)
with a JSON-RPC error body.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import secrets
from collections.abc import Iterable
from typing import Any

from . import jsonrpc
from .asgi import (
    BodyRefused,
    OnSuspend,
    Headers,
    Receive,
    Scope,
    Send,
    end_body,
    read_body,
    refuse,
    respond,
    sse_event,
    start_sse,
    text,
    wait_disconnect,
)
from .connection import Connection
from .direct import DirectLane
from .errors import INVALID_REQUEST
from .events import Event, IncomingRequest
from .hosts import HostPolicy
from .http_streams import ClientWatch, Responder, Router, Stream, relay
from .jsonrpc import RequestId
from .legacy_sessions import LegacySession, SessionTable
from .limits import DEFAULT, Limits
from .modern import HttpHeaders
from .request_headers import accepts_answers, is_json, mcp_headers
from .server import Server
from .request_scope import RequestScope
from .session import Session

log = logging.getLogger("mcpgen.runtime.http")

#: A request carries modern per-request metadata (then it needs no session).
_PROTOCOL_META = b"io.modelcontextprotocol/protocolVersion"


class McpHttpApp:
    """ASGI app serving ``server`` at ``path`` (default ``/mcp``).

    ``allowed_hosts``/``allowed_origins`` extend the local names accepted in ``Host`` and
    ``Origin`` (see :class:`~runtime.hosts.HostPolicy`); ``limits`` bound what clients can
    make the app hold (default: the server's); ``max_body`` overrides its
    ``max_message_bytes``; ``sse_retry_ms`` is the reconnection delay legacy SSE streams
    announce.
    """

    def __init__(
        self,
        server: Server,
        *,
        path: str = "/mcp",
        allowed_hosts: Iterable[str] = (),
        allowed_origins: Iterable[str] = (),
        limits: Limits | None = None,
        max_body: int | None = None,
        sse_retry_ms: int = 1000,
    ) -> None:
        self.server = server
        self.path = path.rstrip("/") or "/"
        chosen: Limits = limits or getattr(server, "limits", DEFAULT)
        if max_body is not None:
            chosen = chosen.but(max_message_bytes=max_body)
        self.limits = limits = chosen
        self.hosts = HostPolicy(allowed_hosts, allowed_origins)
        self.sse_retry_ms = sse_retry_ms
        self.sessions = SessionTable(limits)
        #: Shared by all stateless (modern) requests: it never negotiates, so holds no state.
        self.stateless: Connection = server.connection()
        self.direct = DirectLane(self.stateless)
        self.legacy = server.versions.of_era("legacy")
        self.listeners: set[Session] = set()
        self._refusal = functools.lru_cache(maxsize=256)(self._host_or_origin_refused)

    # -- ASGI entry -----------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        headers: Headers = dict(scope["headers"])
        path = scope["path"]
        if path != self.path and (path.rstrip("/") or "/") != self.path:
            await refuse(send, 404, f"Not found: {path}")
            return
        rejection = self._refusal(headers.get(b"host", b""), headers.get(b"origin"))
        if rejection is not None:
            await refuse(send, 403, rejection)
            return
        method = scope["method"]
        if method == "POST":
            await self._post(headers, receive, send)
        elif method == "GET":
            await self._get(headers, receive, send)
        elif method == "DELETE":
            await self._delete(headers, send)
        else:
            await respond(
                send,
                405,
                jsonrpc.encode_error(None, INVALID_REQUEST, f"Method {method} not allowed"),
                allow=True,
            )

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return

    def _host_or_origin_refused(self, raw_host: bytes, raw_origin: bytes | None) -> str | None:
        """Why ``Host``/``Origin`` are refused (DNS-rebinding defence), or None."""
        origin = None if raw_origin is None else raw_origin.decode("latin-1")
        return self.hosts.refusal(raw_host.decode("latin-1"), origin)

    # -- POST -------------------------------------------------------------------------------

    async def _post(self, headers: Headers, receive: Receive, send: Send) -> None:
        if not is_json(headers.get(b"content-type", b"")):
            await refuse(send, 415, "Unsupported Media Type: use application/json")
            return
        if not accepts_answers(headers.get(b"accept", b"")):
            message = "Not Acceptable: Accept must list application/json and text/event-stream"
            await refuse(send, 406, message)
            return
        limits = self.limits
        try:
            body = await read_body(receive, limits.max_message_bytes, limits.body_timeout)
        except BodyRefused as refused:
            await refuse(send, refused.status, refused.message)
            return
        session_id = text(headers, b"mcp-session-id")
        version = text(headers, b"mcp-protocol-version")
        if session_id is None and version is not None and version not in self.legacy:
            http = mcp_headers(headers, version)
            event = self.direct.read(body, http)
            if event is not None:
                await self._serve_inline([event], event.id, receive, send)
                return
        parsed = jsonrpc.parse(body, limits.max_depth, limits.max_batch)
        messages = parsed[0]
        if session_id is not None:
            await self._in_session(session_id, headers, parsed, receive, send)
            return
        if version is None or version in self.legacy:
            requests = _request_ids(messages)
            if any(isinstance(m, jsonrpc.Request) and m.method == "initialize" for m in messages):
                await self._initialize(parsed, requests, receive, send)
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
        http = mcp_headers(headers, version)
        if (
            len(messages) == 1
            and isinstance(messages[0], jsonrpc.Request)
            and messages[0].method != "subscriptions/listen"
        ):
            events = self.stateless.receive_parsed(parsed, http)
            await self._serve_inline(events, messages[0].id, receive, send)
            return
        router = Router()
        session = Session(self.stateless, router, self.server.dispatch, self.server.on_notification)
        await self._exchange(
            session, router, parsed, _request_ids(messages), http, receive, send, None
        )

    async def _in_session(
        self,
        session_id: str,
        headers: Headers,
        parsed: jsonrpc.Parsed,
        receive: Receive,
        send: Send,
    ) -> None:
        """A POST to a legacy session."""
        requests = _request_ids(parsed[0])
        first = requests[0] if requests else None
        legacy = self.sessions.get(session_id)
        if legacy is None:
            await refuse(send, 404, "Session not found", first)
            return
        stated = text(headers, b"mcp-protocol-version")
        if stated is not None and stated not in self.server.versions:
            # The header SHOULD name the negotiated version; one this server does not
            # speak at all is refused (some clients send an older supported one).
            message = f"Bad Request: unsupported MCP-Protocol-Version {stated!r}"
            await refuse(send, 400, message, first)
            return
        taken = next((r for r in requests if r in legacy.router.by_request), None)
        if taken is not None:
            # Its answer would be routed to this POST and the first one's lost.
            message = f"Invalid request: id {taken!r} is already used by a request in flight"
            await refuse(send, 400, message, taken)
            return
        legacy.posts += 1
        try:
            await self._exchange(
                legacy.session, legacy.router, parsed, requests, None, receive, send, legacy
            )
        finally:
            legacy.posts -= 1

    async def _initialize(
        self, parsed: jsonrpc.Parsed, requests: list[RequestId], receive: Receive, send: Send
    ) -> None:
        if not self.sessions.has_room():
            message = (
                f"Service Unavailable: all {self.limits.max_sessions} sessions are busy "
                "(Limits.max_sessions); retry later"
            )
            await refuse(send, 503, message, requests[0] if requests else None)
            return
        router = Router()
        session = Session(
            self.server.connection(), router, self.server.dispatch, self.server.on_notification
        )
        session_id = secrets.token_urlsafe(24)
        legacy = LegacySession(session, router, self.limits)
        extra = {"mcp-session-id": session_id}
        legacy.posts += 1
        try:
            await self._exchange(
                session, router, parsed, requests, None, receive, send, legacy, extra
            )
        finally:
            legacy.posts -= 1
        if session.conn.version is not None:
            self.sessions.add(session_id, legacy)

    async def _exchange(
        self,
        session: Session,
        router: Router,
        parsed: jsonrpc.Parsed,
        requests: list[RequestId],
        http: HttpHeaders | None,
        receive: Receive,
        send: Send,
        legacy: LegacySession | None,
        extra_headers: dict[str, str] | None = None,
    ) -> None:
        """Feed one POST body to ``session`` and write what it answers."""
        expected = set(requests)
        if not expected:  # notifications and responses: 202, unless refused
            stream = Stream("n")
        else:
            stream = legacy.new_stream(expected) if legacy is not None else Stream("r", expected)
            for request_id in expected:
                router.by_request[request_id] = stream
        router.feeding = stream
        try:
            await session.feed_parsed(parsed, http)
        finally:
            router.feeding = None
        if not expected:
            await self._accepted_or_refused(stream, send, extra_headers)
            return
        listening = [i for i in expected if i in session.listening]
        if listening:
            self.listeners.add(session)
        try:
            done = await self._write(stream, send, receive, legacy, extra_headers, bool(listening))
        finally:
            self.listeners.discard(session)
        # A legacy stream was settled by _write: an SSE one stays resumable by GET (one the
        # client left keeps collecting its answers); a JSON answer leaves nothing to resume.
        if legacy is None:
            if not done:  # the client left: for a modern request, that is its cancellation
                self._cancel(session, expected)
            for request_id in expected:
                router.by_request.pop(request_id, None)

    async def _accepted_or_refused(
        self, stream: Stream, send: Send, extra: dict[str, str] | None
    ) -> None:
        if not stream.frames:
            await respond(send, 202, b"", extra=extra)
            return
        data, _, status = stream.frames.popleft()
        await respond(send, status or 400, data, extra=extra)

    async def _write(
        self,
        stream: Stream,
        send: Send,
        receive: Receive,
        legacy: LegacySession | None,
        extra: dict[str, str] | None,
        keep_open: bool,
    ) -> bool:
        """JSON when the first frame is the whole answer; otherwise an SSE stream that ends
        once every request of the POST is answered (or, for a listen, when the client goes).
        Returns whether every frame was written.

        A legacy stream is settled (kept for resumption or forgotten) before the last bytes
        leave, so a client that looks at the session right after its answer sees it settled.
        """
        client = ClientWatch(receive)
        streamed = settled = False
        try:
            first = await stream.next(client)
            if first is None:
                return False
            data, _, status = first
            if stream.complete and not keep_open:
                if legacy is not None:
                    settled = True
                    legacy.finish(stream, streamed)
                await respond(send, status or 200, data, extra=extra)
                return True
            streamed = True
            await start_sse(send, extra)
            if legacy is not None and _polls(legacy):
                await sse_event(send, b"", stream.record(b""), retry=self.sse_retry_ms)
            await sse_event(send, data, stream.record(data))
            if not await relay(stream, send, client, keep_open):
                return False
            if legacy is not None:
                settled = True
                legacy.finish(stream, streamed)
            await end_body(send)
            return True
        finally:
            client.stop()
            if legacy is not None and not settled:
                legacy.finish(stream, streamed)

    async def _serve_inline(
        self, events: list[Event], request_id: RequestId, receive: Receive, send: Send
    ) -> None:
        """One stateless request (what the connection made of it: ``events``), its handler
        run in this task: no task of its own, no turn of the loop between the answer and
        its writing. The client's disconnect (the request's cancellation) is watched only
        once the handler has to wait."""
        responder = Responder(send, request_id)
        server = self.server
        session = Session(self.stateless, responder, server.dispatch, server.on_notification)
        event = events[0] if len(events) == 1 else None
        if not isinstance(event, IncomingRequest):  # refused (or not one request after all)
            for each in events:
                await session.act(each)
            await responder.close()
            return
        scope = RequestScope(session, event)
        watchers: list[asyncio.Future[None]] = []

        def watch() -> None:
            if not responder.done:
                task = asyncio.current_task()
                assert task is not None
                watchers.append(
                    asyncio.ensure_future(self._cancel_on_leave(receive, responder, scope, task))
                )

        try:
            answer = await OnSuspend(session.answer(event, scope), watch)
        finally:
            for watcher in watchers:
                watcher.cancel()
        if responder.gone:  # the cancellation was ours, and is handled
            uncancel = getattr(asyncio.current_task(), "uncancel", None)  # Python 3.11+
            if uncancel is not None:
                uncancel()
        elif answer is None:
            await responder.close()
        else:
            await responder.answer(answer[0], answer[1])

    @staticmethod
    async def _cancel_on_leave(
        receive: Receive, responder: Responder, scope: RequestScope, task: asyncio.Task[Any]
    ) -> None:
        """The client went away before its answer: that cancels the request."""
        await wait_disconnect(receive)
        if not responder.done:
            responder.gone = True
            scope.cancelled = True
            task.cancel()

    def _cancel(self, session: Session, requests: Iterable[RequestId]) -> None:
        """The client went away from a modern request: that is its cancellation."""
        for request_id in requests:
            session.cancel(request_id)

    # -- GET and DELETE (legacy sessions) ----------------------------------------------------

    async def _get(self, headers: Headers, receive: Receive, send: Send) -> None:
        if b"text/event-stream" not in headers.get(b"accept", b"").lower():
            await refuse(send, 406, "Not Acceptable: GET needs Accept: text/event-stream")
            return
        session_id = text(headers, b"mcp-session-id")
        if session_id is None:
            body = jsonrpc.encode_error(None, INVALID_REQUEST, "GET needs a session")
            await respond(send, 405, body, allow=True)
            return
        legacy = self.sessions.get(session_id)
        if legacy is None:
            await refuse(send, 404, "Session not found")
            return
        last = text(headers, b"last-event-id")
        name = last.split(".", 1)[0] if last is not None else None
        if last is not None and name in legacy.streams:
            await self._resume(legacy.streams[name], last, receive, send)
            return
        stream = legacy.open_get()
        client = ClientWatch(receive)
        try:
            await start_sse(send, None)
            if _polls(legacy):
                await sse_event(send, b"", stream.record(b""), retry=self.sse_retry_ms)
            await relay(stream, send, client, keep_open=True)
        finally:
            client.stop()
            legacy.close_get(stream)
        await end_body(send)

    async def _resume(self, stream: Stream, last: str, receive: Receive, send: Send) -> None:
        """Replay a stream's events after ``last``, then go on with what it still gets."""
        await start_sse(send, None)
        seen = False
        for event_id, data in list(stream.log or ()):
            if seen and data:
                await sse_event(send, data, event_id)
            seen = seen or event_id == last
        client = ClientWatch(receive)
        try:
            await relay(stream, send, client, keep_open=False)
        finally:
            client.stop()
        await end_body(send)

    async def _delete(self, headers: Headers, send: Send) -> None:
        session_id = text(headers, b"mcp-session-id")
        if session_id is None:
            body = jsonrpc.encode_error(None, INVALID_REQUEST, "DELETE needs a session")
            await respond(send, 405, body, allow=True)
            return
        legacy = self.sessions.pop(session_id)
        if legacy is None:
            await refuse(send, 404, "Session not found")
            return
        legacy.end()
        await respond(send, 200, b"")

    async def publish(self, method: str, params: dict[str, Any], wanted: str) -> None:
        """Announce a change to legacy sessions and to open modern listen streams."""
        for legacy in list(self.sessions.values()):
            await legacy.session.publish(method, params, wanted)
        for session in list(self.listeners):
            await session.publish(method, params, wanted)


# -- helpers ----------------------------------------------------------------------------------


def _request_ids(messages: list[jsonrpc.Message]) -> list[RequestId]:
    return [m.id for m in messages if isinstance(m, jsonrpc.Request)]


def _polls(legacy: LegacySession) -> bool:
    """SSE streams open with a priming event (id, ``retry``) from 2025-11-25 on."""
    version = legacy.session.conn.version
    return version is not None and version.version >= "2025-11-25"


def serve(server: Server, host: str = "127.0.0.1", port: int = 3001, **options: Any) -> None:
    """Run ``server`` over Streamable HTTP with uvicorn (``pip install mcpgen[http]``)."""
    from .http_serve import serve as serve_hardened  # cuts off slow clients (header timeout)

    serve_hardened(server, host, port, **options)


__all__ = ["McpHttpApp", "serve"]
