"""Streamable HTTP server transport: a plain ASGI app for the MCP endpoint.

One endpoint serves both eras. A POST that carries ``Mcp-Session-Id`` belongs to a legacy
session (created by ``initialize``); any other POST is a stateless modern request, handled
by a short-lived session of its own. Each request's answer goes back as JSON, or as an SSE
stream as soon as the handler sends anything before its result (progress, logs, a request
to the client). Legacy SSE streams keep their events so a client can resume them with
``GET`` and ``Last-Event-ID``.

Safe by default: ``Host`` and ``Origin`` must name this machine (DNS-rebinding defence),
bodies are size-limited, and every rejection is a 4xx with a JSON-RPC error body.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import secrets
from collections import deque
from collections.abc import (
    Awaitable,
    Callable,
    Coroutine,
    Generator,
    Iterable,
    Iterator,
    Mapping,
    MutableMapping,
)
from typing import Any, Generic, TypeVar

from . import jsonrpc
from .connection import Connection
from .errors import INVALID_REQUEST
from .direct import DirectLane
from .events import Event, IncomingRequest
from .jsonrpc import RequestId
from .modern import HttpHeaders
from .server import Server
from .session import RequestScope, Session

log = logging.getLogger("mcpgen.runtime.http")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
T = TypeVar("T")
#: A request's headers as ASGI gives them (names lower-cased), the last of repeats kept.
Headers = dict[bytes, bytes]

LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "[::1]", "::1"})
#: A request carries modern per-request metadata (then it needs no session).
_PROTOCOL_META = b"io.modelcontextprotocol/protocolVersion"
MAX_BODY = 4 * 1024 * 1024
#: Events a legacy session keeps per stream for resumption.
EVENT_LOG_SIZE = 256


def _host_of(value: str) -> str:
    """``example.com:8080`` → ``example.com``; ``[::1]:80`` → ``[::1]``."""
    if value.startswith("["):
        return value.split("]", 1)[0] + "]"
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def _text(headers: Headers, name: bytes) -> str | None:
    """A request header's value (ASGI gives names lower-cased, values as latin-1 bytes)."""
    value = headers.get(name)
    return None if value is None else value.decode("latin-1")


# Verdicts on header values, remembered: clients repeat the same few on every request.
@functools.lru_cache(maxsize=256)
def _is_json(content_type: bytes) -> bool:
    return content_type.split(b";", 1)[0].strip().lower() == b"application/json"


@functools.lru_cache(maxsize=256)
def _accepts_answers(accept: bytes) -> bool:
    """A POST's ``Accept`` must allow both a JSON answer and an SSE stream."""
    accept = accept.lower()
    return b"*/*" in accept or (b"application/json" in accept and b"text/event-stream" in accept)


def _error_body(code: int, message: str, request_id: RequestId | None = None) -> bytes:
    return jsonrpc.encode_error(request_id, code, message)


# -- one HTTP response that carries frames -------------------------------------------------


class Stream:
    """Where the frames of one POST (or of a legacy GET) go; a resumable one (legacy SSE)
    also keeps its recent events for ``GET`` with ``Last-Event-ID``."""

    __slots__ = ("name", "frames", "waiter", "log", "counter", "requests", "pending", "done")

    def __init__(
        self, name: str, requests: Iterable[RequestId] = (), resumable: bool = False
    ) -> None:
        self.name = name
        self.frames: deque[tuple[bytes, bool, int | None]] = deque()
        self.waiter: asyncio.Future[None] | None = None
        self.log: deque[tuple[str, bytes]] | None = (
            deque(maxlen=EVENT_LOG_SIZE) if resumable else None
        )
        self.counter = 0
        self.requests = tuple(requests)
        #: Requests of the POST not yet answered on this stream.
        self.pending: set[RequestId] = set(self.requests)
        self.done = not self.pending

    def put(self, data: bytes, final: bool, status: int | None = None) -> None:
        """Queue a frame. A final one answers a request of the stream; a batch reply (a
        JSON array) answers them all at once; an empty one closes the stream."""
        if final and data:
            if data[:1] == b"[":
                self.pending.clear()
            elif self.pending:
                self.pending.pop()
            self.done = not self.pending
        self.frames.append((data, final, status))
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    async def next(self, client: ClientWatch) -> tuple[bytes, bool, int | None] | None:
        """The next frame, or None once the client has disconnected."""
        if not self.frames:
            await asyncio.sleep(0)  # a quick handler answers within one turn of the loop
        while not self.frames:
            gone = client.watch()
            if gone.done():
                return None
            self.waiter = asyncio.get_running_loop().create_future()
            try:
                await asyncio.wait((self.waiter, gone), return_when=asyncio.FIRST_COMPLETED)
            finally:
                self.waiter = None
        return self.frames.popleft()

    @property
    def complete(self) -> bool:
        """Every request is answered and every frame taken."""
        return self.done and not self.frames

    def record(self, data: bytes) -> str | None:
        """Log an event for resumption; its SSE id (None when the stream is not resumable)."""
        if self.log is None:
            return None
        self.counter += 1
        event_id = f"{self.name}.{self.counter}"
        self.log.append((event_id, data))
        return event_id


class ClientWatch:
    """Notices the client's disconnect; started only once a frame has to be waited for,
    so a quick JSON answer costs no extra task."""

    __slots__ = ("receive", "future")

    def __init__(self, receive: Receive) -> None:
        self.receive = receive
        self.future: asyncio.Future[None] | None = None

    def watch(self) -> asyncio.Future[None]:
        if self.future is None:
            self.future = asyncio.ensure_future(_wait_disconnect(self.receive))
        return self.future

    def stop(self) -> None:
        if self.future is not None:
            self.future.cancel()


class _PushedTo:
    """A session transport the app feeds frames to itself: nothing is read from it."""

    __slots__ = ()

    async def receive(self) -> bytes | None:
        return None


class Responder(_PushedTo):
    """The transport of a POST's one stateless request: writes the answer as its handler
    sends it (the handler runs in the request's own task), JSON when the first frame is the
    answer, otherwise an SSE stream that ends with the answer. Frames of no request of the
    POST have nowhere to go (a stateless request has no GET stream) and are dropped."""

    __slots__ = ("asgi_send", "request_id", "started", "done", "gone")

    def __init__(self, send: Send, request_id: RequestId) -> None:
        self.asgi_send = send
        self.request_id = request_id
        self.started = False
        self.done = False
        #: The client disconnected before the answer (its handler was cancelled).
        self.gone = False

    async def send(
        self,
        data: bytes,
        related: RequestId | None = None,
        final: bool = False,
        status: int | None = None,
    ) -> None:
        if self.done or not (final or related == self.request_id):
            return
        if not self.started:
            if final:
                self.done = True
                await _respond(self.asgi_send, status or 200, data)
                return
            self.started = True
            await _start_sse(self.asgi_send, None)
        await _sse_event(self.asgi_send, data, None)
        if final:
            self.done = True
            await _end_body(self.asgi_send)

    async def close(self) -> None:
        """End the response if the handler ended without an answer (it was cancelled)."""
        if self.done or self.gone:
            return
        self.done = True
        if self.started:
            await _end_body(self.asgi_send)
        else:
            await _respond(self.asgi_send, 204, b"")


class Router(_PushedTo):
    """A session's transport: routes each outgoing frame to the stream of the request it
    belongs to, and everything else to the session's GET stream (if one is open)."""

    def __init__(self) -> None:
        self.by_request: dict[RequestId, Stream] = {}
        self.standalone: Stream | None = None
        #: The POST being fed right now: answers to input that had no readable id go there.
        self.feeding: Stream | None = None

    async def send(
        self,
        data: bytes,
        related: RequestId | None = None,
        final: bool = False,
        status: int | None = None,
    ) -> None:
        stream = self.by_request.get(related) if related is not None else None
        if stream is None and related is None and final:
            stream = self.feeding
        if stream is None:
            stream = self.standalone
        if stream is None:
            log.debug("dropping a frame no stream is open for")
            return
        stream.put(data, final, status)
        if final and stream.done:
            for request_id in stream.requests:
                if self.by_request.get(request_id) is stream:
                    del self.by_request[request_id]

    async def close(self) -> None:
        for stream in list(self.by_request.values()):
            stream.put(b"", True)


class LegacySession:
    """A legacy session: its asyncio session, router, and the streams a client may resume."""

    #: Finished SSE streams kept for resumption; older ones are forgotten.
    KEEP_FINISHED: int = 64

    def __init__(self, session: Session, router: Router) -> None:
        self.session = session
        self.router = router
        self.streams: dict[str, Stream] = {}
        self.finished: deque[str] = deque()
        self.next_stream = 0

    def new_stream(self, requests: Iterable[RequestId] = ()) -> Stream:
        self.next_stream += 1
        stream = Stream(f"s{self.next_stream}", requests, resumable=True)
        self.streams[stream.name] = stream
        return stream

    def finish(self, stream: Stream, streamed: bool) -> None:
        """A POST's stream is complete: keep it for resumption only if it was SSE."""
        if not streamed:
            self.streams.pop(stream.name, None)
            return
        self.finished.append(stream.name)
        while len(self.finished) > self.KEEP_FINISHED:
            self.streams.pop(self.finished.popleft(), None)


# -- the app ----------------------------------------------------------------------------


class McpHttpApp:
    """ASGI app serving ``server`` at ``path`` (default ``/mcp``).

    ``allowed_hosts``/``allowed_origins`` extend the local names accepted in ``Host`` and
    ``Origin``; ``sse_retry_ms`` is the reconnection delay legacy SSE streams announce.
    """

    def __init__(
        self,
        server: Server,
        *,
        path: str = "/mcp",
        allowed_hosts: Iterable[str] = (),
        allowed_origins: Iterable[str] = (),
        max_body: int = MAX_BODY,
        sse_retry_ms: int = 1000,
    ) -> None:
        self.server = server
        self.path = path.rstrip("/") or "/"
        self.allowed_hosts = LOCAL_HOSTS | {h.lower() for h in allowed_hosts}
        self.allowed_origins = {o.lower().rstrip("/") for o in allowed_origins}
        self.max_body = max_body
        self.sse_retry_ms = sse_retry_ms
        self.sessions: dict[str, LegacySession] = {}
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
        path = scope["path"].rstrip("/") or "/"
        if path != self.path:
            await _respond(send, 404, _error_body(INVALID_REQUEST, f"Not found: {scope['path']}"))
            return
        rejection = self._refusal(headers.get(b"host", b""), headers.get(b"origin"))
        if rejection is not None:
            await _respond(send, 403, _error_body(INVALID_REQUEST, rejection))
            return
        method = scope["method"]
        if method == "POST":
            await self._post(headers, receive, send)
        elif method == "GET":
            await self._get(headers, receive, send)
        elif method == "DELETE":
            await self._delete(headers, send)
        else:
            await _respond(
                send, 405, _error_body(INVALID_REQUEST, f"Method {method} not allowed"), allow=True
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
        host = raw_host.decode("latin-1")
        if _host_of(host.lower()) not in self.allowed_hosts:
            return f"Forbidden: host {host!r} is not allowed"
        origin = None if raw_origin is None else raw_origin.decode("latin-1")
        if origin is not None and origin.lower().rstrip("/") not in self.allowed_origins:
            name = origin.lower().split("://", 1)[-1]
            if _host_of(name.split("/", 1)[0]) not in self.allowed_hosts:
                return f"Forbidden: origin {origin!r} is not allowed"
        return None

    # -- POST -------------------------------------------------------------------------------

    async def _post(self, headers: Headers, receive: Receive, send: Send) -> None:
        if not _is_json(headers.get(b"content-type", b"")):
            await _respond(
                send,
                415,
                _error_body(INVALID_REQUEST, "Unsupported Media Type: use application/json"),
            )
            return
        if not _accepts_answers(headers.get(b"accept", b"")):
            await _respond(
                send,
                406,
                _error_body(
                    INVALID_REQUEST,
                    "Not Acceptable: Accept must list application/json and text/event-stream",
                ),
            )
            return
        body = await _read_body(receive, self.max_body)
        if body is None:
            await _respond(
                send,
                413,
                _error_body(INVALID_REQUEST, f"Payload Too Large: limit {self.max_body} bytes"),
            )
            return
        session_id = _text(headers, b"mcp-session-id")
        version = _text(headers, b"mcp-protocol-version")
        if session_id is None and version is not None and version not in self.legacy:
            http = _mcp_headers(headers, version)
            event = self.direct.read(body, http)
            if event is not None:
                await self._serve_inline([event], event.id, receive, send)
                return
        parsed = jsonrpc.parse(body)
        messages = parsed[0]
        if session_id is not None:
            requests = _request_ids(messages)
            legacy = self.sessions.get(session_id)
            if legacy is None:
                await _respond(
                    send,
                    404,
                    _error_body(
                        INVALID_REQUEST, "Session not found", requests[0] if requests else None
                    ),
                )
                return
            stated = _text(headers, b"mcp-protocol-version")
            if stated is not None and stated not in self.server.versions:
                # The header SHOULD name the negotiated version; one this server does not
                # speak at all is refused (some clients send an older supported one).
                message = f"Bad Request: unsupported MCP-Protocol-Version {stated!r}"
                await _respond(
                    send,
                    400,
                    _error_body(INVALID_REQUEST, message, requests[0] if requests else None),
                )
                return
            await self._exchange(
                legacy.session, legacy.router, parsed, requests, None, receive, send, legacy
            )
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
                await _respond(
                    send,
                    400,
                    _error_body(INVALID_REQUEST, message, requests[0] if requests else None),
                )
                return
        http = _mcp_headers(headers, version)
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

    async def _initialize(
        self, parsed: jsonrpc.Parsed, requests: list[RequestId], receive: Receive, send: Send
    ) -> None:
        router = Router()
        session = Session(
            self.server.connection(), router, self.server.dispatch, self.server.on_notification
        )
        session_id = secrets.token_urlsafe(24)
        legacy = LegacySession(session, router)
        extra = {"mcp-session-id": session_id}
        await self._exchange(session, router, parsed, requests, None, receive, send, legacy, extra)
        if session.conn.version is not None:
            self.sessions[session_id] = legacy

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
            await _respond(send, 202, b"", extra=extra)
            return
        data, _, status = stream.frames.popleft()
        await _respond(send, status or 400, data, extra=extra)

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
                await _respond(send, status or 200, data, extra=extra)
                return True
            streamed = True
            await _start_sse(send, extra)
            if legacy is not None and _polls(legacy):
                await _sse_event(send, b"", stream.record(b""), retry=self.sse_retry_ms)
            await _sse_event(send, data, stream.record(data))
            if not await _relay(stream, send, client, keep_open):
                return False
            if legacy is not None:
                settled = True
                legacy.finish(stream, streamed)
            await _end_body(send)
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
                await session._handle(each)  # noqa: SLF001 - same package
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
            answer = await _OnSuspend(session.answer(event, scope), watch)
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
            await responder.send(answer[0], request_id, True, answer[1])

    @staticmethod
    async def _cancel_on_leave(
        receive: Receive, responder: Responder, scope: RequestScope, task: asyncio.Task[Any]
    ) -> None:
        """The client went away before its answer: that cancels the request."""
        await _wait_disconnect(receive)
        if not responder.done:
            responder.gone = True
            scope.cancelled = True
            task.cancel()

    def _cancel(self, session: Session, requests: Iterable[RequestId]) -> None:
        """The client went away from a modern request: that is its cancellation."""
        for request_id in requests:
            running = session._handlers.get(request_id)  # noqa: SLF001 - same package
            if running is not None:
                running[1].cancelled = True
                running[0].cancel()
            session.listening.pop(request_id, None)

    # -- GET and DELETE (legacy sessions) ----------------------------------------------------

    async def _get(self, headers: Headers, receive: Receive, send: Send) -> None:
        if b"text/event-stream" not in headers.get(b"accept", b"").lower():
            await _respond(
                send,
                406,
                _error_body(INVALID_REQUEST, "Not Acceptable: GET needs Accept: text/event-stream"),
            )
            return
        session_id = _text(headers, b"mcp-session-id")
        if session_id is None:
            await _respond(
                send, 405, _error_body(INVALID_REQUEST, "GET needs a session"), allow=True
            )
            return
        legacy = self.sessions.get(session_id)
        if legacy is None:
            await _respond(send, 404, _error_body(INVALID_REQUEST, "Session not found"))
            return
        last = _text(headers, b"last-event-id")
        name = last.split(".", 1)[0] if last is not None else None
        if last is not None and name in legacy.streams:
            await self._resume(legacy.streams[name], last, receive, send)
            return
        stream = legacy.new_stream()
        legacy.router.standalone = stream
        await _start_sse(send, None)
        if _polls(legacy):
            await _sse_event(send, b"", stream.record(b""), retry=self.sse_retry_ms)
        client = ClientWatch(receive)
        try:
            await _relay(stream, send, client, keep_open=True)
        finally:
            client.stop()
            if legacy.router.standalone is stream:
                legacy.router.standalone = None
        await _end_body(send)

    async def _resume(self, stream: Stream, last: str, receive: Receive, send: Send) -> None:
        """Replay a stream's events after ``last``, then go on with what it still gets."""
        await _start_sse(send, None)
        seen = False
        for event_id, data in list(stream.log or ()):
            if seen and data:
                await _sse_event(send, data, event_id)
            seen = seen or event_id == last
        client = ClientWatch(receive)
        try:
            await _relay(stream, send, client, keep_open=False)
        finally:
            client.stop()
        await _end_body(send)

    async def _delete(self, headers: Headers, send: Send) -> None:
        session_id = _text(headers, b"mcp-session-id")
        if session_id is None:
            await _respond(
                send, 405, _error_body(INVALID_REQUEST, "DELETE needs a session"), allow=True
            )
            return
        legacy = self.sessions.pop(session_id, None)
        if legacy is None:
            await _respond(send, 404, _error_body(INVALID_REQUEST, "Session not found"))
            return
        legacy.session._shutdown()  # noqa: SLF001 - same package
        if legacy.router.standalone is not None:
            legacy.router.standalone.put(b"", True)
        await _respond(send, 200, b"")

    async def publish(self, method: str, params: dict[str, Any], wanted: str) -> None:
        """Announce a change to legacy sessions and to open modern listen streams."""
        for legacy in list(self.sessions.values()):
            await legacy.session.publish(method, params, wanted)
        for session in list(self.listeners):
            await session.publish(method, params, wanted)


# -- ASGI helpers -----------------------------------------------------------------------------


class _OnSuspend(Generic[T]):
    """Awaits ``coro`` in the awaiting task, as ``await coro`` would, and calls ``hook`` the
    first time it suspends. A handler that answers without waiting costs nothing more; one
    that waits gets its disconnect watcher then (no timer or callback per request)."""

    __slots__ = ("coro", "hook")

    def __init__(self, coro: Coroutine[Any, Any, T], hook: Callable[[], None]) -> None:
        self.coro = coro
        self.hook = hook

    def __await__(self) -> Generator[Any, Any, T]:
        coro = self.coro
        try:
            step = coro.send(None)
        except StopIteration as done:
            return done.value
        self.hook()
        while True:  # what ``yield from coro`` does from here on
            try:
                sent = yield step
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:  # a cancellation (or any error) thrown at the task
                try:
                    step = coro.throw(exc)
                except StopIteration as done:
                    return done.value
            else:
                try:
                    step = coro.send(sent)
                except StopIteration as done:
                    return done.value


def _request_ids(messages: list[jsonrpc.Message]) -> list[RequestId]:
    return [m.id for m in messages if isinstance(m, jsonrpc.Request)]


def _mcp_headers(headers: Headers, protocol_version: str | None) -> HttpHeaders:
    """The MCP request headers of a modern request (``MCP-Protocol-Version`` read already)."""
    return HttpHeaders(
        protocol_version,
        _text(headers, b"mcp-method"),
        _text(headers, b"mcp-name"),
        _ParamHeaders(headers),
    )


class _ParamHeaders(Mapping[str, str]):
    """The ``Mcp-Param-*`` headers, keyed by the rest of their name; read on first use
    (only a call of a tool with header annotations needs them)."""

    __slots__ = ("_headers", "_params")

    def __init__(self, headers: Headers) -> None:
        self._headers = headers
        self._params: dict[str, str] | None = None

    def _read(self) -> dict[str, str]:
        if self._params is None:
            self._params = {
                k[10:].decode("latin-1"): v.decode("latin-1")
                for k, v in self._headers.items()
                if k.startswith(b"mcp-param-")
            }
        return self._params

    def __getitem__(self, key: str) -> str:
        return self._read()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._read())

    def __len__(self) -> int:
        return len(self._read())


def _polls(legacy: LegacySession) -> bool:
    """SSE streams open with a priming event (id, ``retry``) from 2025-11-25 on."""
    version = legacy.session.conn.version
    return version is not None and version.version >= "2025-11-25"


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    """The request body (``b""`` if the client left first), or None when over ``limit``."""
    chunks: list[bytes] = []
    size = 0
    message = await receive()
    while message["type"] != "http.disconnect":
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        if not message.get("more_body", False):
            return b"".join((*chunks, chunk)) if chunks else chunk
        chunks.append(chunk)
        message = await receive()
    return b""


async def _wait_disconnect(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


async def _end_body(send: Send) -> None:
    await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _relay(stream: Stream, send: Send, client: ClientWatch, keep_open: bool) -> bool:
    """Write the stream's frames as SSE events until it is complete (or, ``keep_open``,
    until it is closed). False if the client disconnected first."""
    while keep_open or not stream.complete:
        item = await stream.next(client)
        if item is None:
            return False
        if not item[0]:  # closed by the server
            return True
        await _sse_event(send, item[0], stream.record(item[0]))
    return True


_JSON_TYPE = (b"content-type", b"application/json")


async def _respond(
    send: Send,
    status: int,
    body: bytes,
    *,
    extra: dict[str, str] | None = None,
    allow: bool = False,
) -> None:
    headers = [(b"content-length", b"%d" % len(body))]
    if body:
        headers.append(_JSON_TYPE)
    if allow:
        headers.append((b"allow", b"GET, POST, DELETE"))
    if extra:
        headers += [(name.encode(), value.encode()) for name, value in extra.items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _start_sse(send: Send, extra: dict[str, str] | None) -> None:
    headers = [
        (b"content-type", b"text/event-stream"),
        (b"cache-control", b"no-cache"),
        (b"x-accel-buffering", b"no"),
    ]
    for name, value in (extra or {}).items():
        headers.append((name.encode(), value.encode()))
    await send({"type": "http.response.start", "status": 200, "headers": headers})


async def _sse_event(
    send: Send, data: bytes, event_id: str | None, retry: int | None = None
) -> None:
    lines = []
    if event_id is not None:
        lines.append(b"id: " + event_id.encode())
    if retry is not None:
        lines.append(b"retry: " + str(retry).encode())
    if data:
        lines.append(b"event: message")
    lines.append(b"data: " + data)
    await send(
        {"type": "http.response.body", "body": b"\n".join(lines) + b"\n\n", "more_body": True}
    )


def serve(server: Server, host: str = "127.0.0.1", port: int = 3001, **options: Any) -> None:
    """Run ``server`` over Streamable HTTP with uvicorn (``pip install mcpgen[http]``)."""
    import uvicorn

    uvicorn.run(server.http_app(**options), host=host, port=port, log_level="warning")


__all__ = ["McpHttpApp", "serve"]
