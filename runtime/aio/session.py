"""The asyncio side of a connection: feeds frames to the sans-IO ``Connection`` and acts
on its events — runs handlers concurrently, cancels them, awaits answers, sends frames.

A transport is anything with ``receive() -> bytes | None`` (``None`` at end of input),
``send(bytes)`` and ``close()``; stdio and HTTP both fit.

The session makes a :class:`RequestScope` for each incoming request: what its handler
can do meanwhile (read who the client is, require a capability, report progress, log, ask
the client for input: a request in the legacy era, ``input_required`` in the modern one,
and notify). ``_support.RequestContext`` wraps it for the generated bindings.
"""

from __future__ import annotations

import asyncio
from contextvars import Context, copy_context
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from msgspec import UNSET, ValidationError, to_builtins

from ..core import connection as c
from ..core import events as ev
from ..core.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    MISSING_CLIENT_CAPABILITY,
    SERVER_BUSY,
    ConnectionClosed,
    McpError,
    RequestTimeout,
    UrlElicitationRequired,
)
from ..core import elicitation
from ..core.capabilities import declares, refusal_to_ask
from ..core.json_values import JSONObject, as_object
from ..core.jsonrpc import Parsed, RequestId, parse
from ..core.lane import Lane
from .at_once import NOTHING, Resumed, start
from .transport import Transport
from .outcomes import answer_now, settled
from ..core.lifecycle import State
from ..core.log_levels import level_at_least
from ..core.negotiation import VersionInfo, has_capability, required_capabilities
from ..core.modern import SUBSCRIPTION_ID, HttpHeaders, InputRequired

log = logging.getLogger("mcpgen.runtime")
#: The listen filter (and the kind of change) of one resource's updates.
RESOURCE_UPDATES = "resourceSubscriptions"
#: Listen filters that name what they want (a list): the param a notification is matched by.
MATCHED = {RESOURCE_UPDATES: "uri", "taskIds": "taskId"}
#: What only modern listen streams are told (the tasks extension's status notifications).
MODERN_ONLY = frozenset({"taskIds"})
#: ``Session(request_timeout=...)``'s default: the connection's ``Limits.request_timeout``.
FROM_LIMITS = -1.0

#: Answers an incoming request: (event, context) -> result.
Dispatch = Callable[[ev.IncomingRequest, "RequestScope"], Awaitable[Any]]
NotificationHook = Callable[[ev.IncomingNotification], Awaitable[None]]
ProgressCallback = Callable[[float, "float | None", "str | None"], Awaitable[None] | None]


class Session:
    """Runs one connection over one transport until the peer goes away."""

    __slots__ = (
        "conn",
        "transport",
        "dispatch",
        "on_notification",
        "request_timeout",
        "_negotiated",
        "_handlers",
        "_waiting",
        "_progress",
        "_batches",
        "_background",
        "listening",
        "_closed",
        "_room",
        "subscriptions",
        "subscribed",
        "_write_now",
    )

    def __init__(
        self,
        conn: c.Connection,
        transport: Transport,
        dispatch: Dispatch | None = None,
        on_notification: NotificationHook | None = None,
        request_timeout: float | None = FROM_LIMITS,
    ) -> None:
        self.conn = conn
        self.transport = transport
        self.dispatch = dispatch
        self.on_notification = on_notification
        self.request_timeout = request_timeout
        self._negotiated: asyncio.Future[str] | None = None
        self._handlers: dict[RequestId, tuple[asyncio.Task[None], RequestScope]] = {}
        self._waiting: dict[RequestId, asyncio.Future[Any]] = {}
        #: Per progress token: the callback, and the request it is for (method, id).
        self._progress: dict[str | int, tuple[ProgressCallback, str, RequestId]] = {}
        self._batches: dict[int, tuple[int, list[bytes]]] = {}
        self._background: set[asyncio.Task[None]] = set()
        #: Open ``subscriptions/listen`` streams: subscription id → honoured filter.
        self.listening: dict[RequestId, Mapping[str, Any]] = {}
        self._closed = False
        #: Set when a handler ends or one starts waiting on the peer (made on first need).
        self._room: asyncio.Event | None = None
        #: The URIs a legacy client subscribed to (``resources/subscribe``).
        self.subscriptions: set[str] = set()
        #: Awaited once ``subscriptions`` changed, before the (un)subscription is answered:
        #: a session kept for several processes writes them back (and may raise
        #: ``McpError``, the request's answer). None: nothing to do.
        self.subscribed: Callable[[], Awaitable[None]] | None = None
        #: The transport's ``write_now`` (``transport.WritesNow``), if it has one.
        self._write_now: Callable[[bytes], Awaitable[None] | None] | None = getattr(
            transport, "write_now", None
        )

    @property
    def negotiated(self) -> asyncio.Future[str]:
        """The version once the handshake is done (made on first use: a stateless request's
        short-lived session never negotiates)."""
        if self._negotiated is None:
            self._negotiated = asyncio.get_running_loop().create_future()
        return self._negotiated

    @property
    def closed(self) -> bool:
        """The connection ended: nothing more is sent or answered."""
        return self._closed

    def renegotiate(self) -> None:
        """A new handshake is under way (the server lost the session): ``negotiated``
        is a new future, for its outcome."""
        self._negotiated = None

    # -- the read loop ------------------------------------------------------------------

    async def run(self, drain_timeout: float = 10.0, http: HttpHeaders | None = None) -> None:
        """Read until end of input; then let running handlers finish (bounded) and stop.
        ``http``: what every frame carries (over a WebSocket, who its handshake showed the
        client to be)."""
        lane = Lane(self.conn).request  # the common request, frame to event in one step
        try:
            while True:
                frame = await self.transport.receive()
                if frame is None:
                    break
                try:
                    event = lane(frame, http)
                    if event is None:
                        await self.feed(frame, http)
                    elif self._handlers:  # in flight already: its id, or room, to check
                        await self._request(event)
                    else:
                        self._begin(event)
                except Exception:  # a defect, not the peer's fault: the next frame is served
                    log.exception("acting on an incoming frame failed")
            self._fail_waiting()  # no answer can arrive any more
            running = [task for task, _ in self._handlers.values()]
            if running:
                await asyncio.wait(running, timeout=drain_timeout)
        finally:
            self._shutdown()

    @property
    def in_flight(self) -> int:
        """Requests whose handlers are running."""
        return len(self._handlers)

    def stop(self) -> None:
        """End the session now: running handlers are cancelled, waiting requests fail."""
        self._shutdown()

    def cancel(self, request_id: RequestId) -> None:
        """The peer gave up on ``request_id`` (e.g. left an HTTP request): cancel its
        handler, or close its listen stream."""
        running = self._handlers.get(request_id)
        if running is not None:
            running[1].cancelled = True
            running[0].cancel()
        if self.listening.pop(request_id, None) is not None and self.conn.on_listen:
            self.conn.on_listen(self, request_id, None)

    async def act(self, event: ev.Event) -> None:
        """Act on one event of this session's connection (for transports that asked the
        connection themselves, e.g. to route a request before reading its body)."""
        await self._handle(event)

    def _fail_waiting(self) -> None:
        why = getattr(self.transport, "ended", None) or "connection closed"
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(ConnectionClosed(f"{why} before answering"))
        self._waiting.clear()

    def _shutdown(self) -> None:
        self._closed = True
        self.conn.close()
        if self.listening and self.conn.on_listen is not None:
            for request_id in list(self.listening):
                self.conn.on_listen(self, request_id, None)
        self.listening.clear()
        for task, _ in list(self._handlers.values()):
            task.cancel()
        self._fail_waiting()
        if self._negotiated is not None and not self._negotiated.done():
            self._negotiated.cancel()  # awaited only by clients, which report ConnectionClosed

    async def feed(self, frame: bytes, http: HttpHeaders | None = None) -> None:
        """Act on one incoming frame (the transport's read loop, or an HTTP request)."""
        await self.feed_parsed(
            parse(frame, self.conn.limits.max_depth, self.conn.limits.max_batch), http
        )

    async def feed_parsed(self, parsed: Parsed, http: HttpHeaders | None = None) -> None:
        """:meth:`feed` for a frame already split by :func:`jsonrpc.parse`."""
        for event in self.conn.receive_parsed(parsed, http):
            await self._handle(event)

    async def _handle(self, event: ev.Event) -> None:
        if isinstance(event, ev.Send):
            await self._send(event.data, event.batch, event.related, event.final, event.status)
        elif isinstance(event, ev.IncomingRequest):
            await self._request(event)
        elif isinstance(event, ev.Listen):
            honoured, frame = self.conn.acknowledge(event, self.listening.values())
            if honoured is None:  # refused: this connection's streams would hold too much
                await self._send(frame, related=event.id, final=True, status=400)
                return
            self.listening[event.id] = honoured
            if self.conn.on_listen is not None:
                self.conn.on_listen(self, event.id, honoured)
            await self._send(frame, related=event.id)
        elif isinstance(event, ev.Answer):
            future = self._waiting.pop(event.id, None)
            if future is not None and not future.done():
                future.set_result(event.result)
        elif isinstance(event, ev.Failure):
            future = self._waiting.pop(event.id, None)
            if future is not None and not future.done():
                future.set_exception(event.error)
        elif isinstance(event, ev.Cancel):
            self.cancel(event.request_id)
        elif isinstance(event, ev.Progress):
            listener = self._progress.get(event.token)
            if listener is not None:
                callback, method, request_id = listener
                try:
                    outcome = callback(event.progress, event.total, event.message)
                    if outcome is not None:
                        await outcome
                except Exception:  # the caller's defect: the request goes on
                    log.exception(
                        "the progress callback of %s request %r raised", method, request_id
                    )
        elif isinstance(event, ev.IncomingNotification):
            if self.on_notification is not None:
                self._spawn(self.on_notification(event))
        elif isinstance(event, ev.BatchOpened):
            if event.expected:
                self._batches[event.batch] = (event.expected, [])
        elif isinstance(event, ev.Negotiated):
            if not self.negotiated.done():
                self.negotiated.set_result(event.version)
        else:  # Refused
            if not self.negotiated.done():
                self.negotiated.set_exception(event.error)

    async def _request(self, event: ev.IncomingRequest) -> None:
        """Answer a request, unless its id is in flight already or no room is left."""
        refusal = self._refusal(event) if self._handlers else None
        if refusal is None and len(self._handlers) >= self.conn.limits.max_in_flight:
            refusal = await self._make_room()
        if refusal is not None:
            frame = self.conn.error(event.id, refusal)
            await self._send(frame, event.batch, event.id, final=True)
            return
        self._begin(event)

    def _begin(self, event: ev.IncomingRequest) -> None:
        """Answer a request in a task of its own, so that reading goes on while it runs;
        or, when its handler cannot suspend, here and now (what a task would have done,
        minus the task: the handler runs in a copy of the context all the same), its
        answer written at once; should the transport make that wait, in a task that
        counts as the request in flight until it is written."""
        scope = RequestScope(self, event)  # (_started's start, inline: a call fewer)
        context = copy_context()
        answer = context.run(answer_now, self.conn, self.dispatch, event, scope)
        if not isinstance(answer, tuple):
            self._in_task(event, scope, self.answer(event, scope, answer), context)
            return
        if answer is NOTHING or self._closed:
            return
        write_now = self._write_now
        try:
            if write_now is not None:
                rest = write_now(answer[0])
                if rest is None:
                    return
            else:
                sending = self.transport.send(answer[0], event.id, True, answer[1])  # as _send
                try:
                    rest = Resumed(sending, sending.send(None))
                except StopIteration:
                    return
        except (ConnectionError, OSError, RuntimeError) as exc:  # the peer is gone
            log.debug("send failed: %s", exc)
            return
        self._in_task(event, scope, self._written(rest))

    def _in_task(
        self,
        event: ev.IncomingRequest,
        scope: RequestScope,
        answering: Awaitable[Any],
        context: Context | None = None,
    ) -> None:
        """Run what answers ``event`` in a task that counts as it in flight (in
        ``context``, the handler's, when given)."""
        task = start(self._serve(event, scope, answering), context)
        if not task.done():  # an eagerly started one may have finished already
            self._handlers[event.id] = (task, scope)

    def _started(
        self, event: ev.IncomingRequest, waiting: Callable[[], None] | None = None
    ) -> tuple[RequestScope, tuple[bytes, int | None] | None]:
        """The request's scope, and its answer when its handler could not suspend; else
        None, the handler running in a task (``waiting`` called before it starts)."""
        scope = RequestScope(self, event)
        context = copy_context()
        answering = context.run(answer_now, self.conn, self.dispatch, event, scope)
        if isinstance(answering, tuple):
            return scope, answering
        if waiting is not None:
            waiting()
        self._in_task(event, scope, self.answer(event, scope, answering), context)
        return scope, None

    async def _written(self, sending: Awaitable[None]) -> None:
        """The rest of a frame's writing (see :meth:`_send`)."""
        try:
            await sending
        except (ConnectionError, OSError, RuntimeError) as exc:  # the peer is gone
            log.debug("send failed: %s", exc)

    def answer_here(
        self, event: ev.IncomingRequest, waiting: Callable[[], None]
    ) -> tuple[bytes, int | None] | bool:
        """:meth:`_begin` for a transport that writes an answer given at once itself: that
        answer (``NOTHING``: the handler cancelled itself); True when the handler runs in a
        task, its frames sent as any (``waiting`` called first, to say where they go);
        False, nothing run, when it must go :meth:`act`'s way (in flight, full, a batch)."""
        handlers = self._handlers
        if self._closed or event.batch is not None or event.id in handlers:
            return False
        if len(handlers) >= self.conn.limits.max_in_flight:
            return False
        return self._started(event, waiting)[1] or True

    def _refusal(self, event: ev.IncomingRequest) -> McpError | None:
        """A request whose id is still in flight is refused: answering both under one id
        would leave the peer unable to tell them apart."""
        if event.id not in self._handlers:
            return None
        return McpError(
            INVALID_REQUEST,
            f"Invalid request: id {event.id!r} is already used by a request in flight",
        )

    async def _make_room(self) -> McpError | None:
        """Wait until fewer than ``max_in_flight`` handlers run: the reader stops, so a
        flood is held by the peer's pipe, not in memory. A wait that could deadlock (a
        handler waits on the peer, whose answer this very reader must read) is cut short:
        the request is refused instead."""
        limit = self.conn.limits.max_in_flight
        while len(self._handlers) >= limit:
            if self._waiting:
                return McpError(
                    SERVER_BUSY,
                    f"Server busy: {limit} requests in flight (Limits.max_in_flight); "
                    "retry after an answer arrives",
                )
            if self._room is None:
                self._room = asyncio.Event()
            self._room.clear()
            await self._room.wait()
        return None

    def _made_room(self) -> None:
        if self._room is not None:
            self._room.set()

    def _spawn(self, coro: Awaitable[None]) -> None:
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _serve(
        self, event: ev.IncomingRequest, scope: RequestScope, answering: Awaitable[Any]
    ) -> None:
        """Answer a request in a task of its own (``answering``: its answer, or the rest
        of its writing). It counts as in flight until its answer is written: a peer that
        stops reading holds the reader back, not just the handlers.
        """
        try:
            answer = await answering
            if answer is not None:
                await self._send(answer[0], event.batch, event.id, final=True, status=answer[1])
        finally:
            self._handlers.pop(event.id, None)
            self._made_room()

    async def answer(
        self,
        event: ev.IncomingRequest,
        scope: RequestScope,
        pending: Awaitable[Any] | None = None,
    ) -> tuple[bytes, int | None] | None:
        """Run the request's handler in the calling task (``pending``: its dispatch,
        already called): the answer frame and its HTTP status hint, or None when the peer
        cancelled the request (nothing is answered)."""
        try:
            if pending is None:
                if self.dispatch is None:
                    raise McpError(INTERNAL_ERROR, "no handlers")
                pending = self.dispatch(event, scope)
            result = await pending
        except asyncio.CancelledError:
            if scope.cancelled or self._closed:
                if event.batch is not None:
                    await self._batch_skip(event.batch)
                return None
            raise
        except Exception as exc:
            return settled(self.conn, event, scope, None, exc)
        return settled(self.conn, event, scope, result, None)

    async def _batch_skip(self, batch: int) -> None:
        """A request of a batch will never be answered (cancelled): expect one reply
        less, and send the others if they are all in."""
        if batch not in self._batches:
            return
        expected, frames = self._batches[batch]
        if len(frames) >= expected - 1:
            del self._batches[batch]
            if frames:
                await self._send(b"[" + b",".join(frames) + b"]")
        else:
            self._batches[batch] = (expected - 1, frames)

    async def _send(
        self,
        data: bytes,
        batch: int | None = None,
        related: RequestId | None = None,
        final: bool = False,
        status: int | None = None,
    ) -> None:
        """Write a frame; ``related`` names the request it belongs to and ``final`` says it
        answers that request (HTTP routes by both; ``status`` is an HTTP status hint).
        Batch replies go out as one array."""
        if batch is not None and batch in self._batches:
            expected, frames = self._batches[batch]
            frames.append(data)
            if len(frames) < expected:
                return
            del self._batches[batch]
            data = b"[" + b",".join(frames) + b"]"
        if self._closed:
            return
        try:
            await self.transport.send(data, related, final, status)
        except (ConnectionError, OSError, RuntimeError) as exc:  # the peer is gone
            log.debug("send failed: %s", exc)

    # -- outgoing -----------------------------------------------------------------------

    async def request(
        self,
        method: str,
        params: Any = UNSET,
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
        related: RequestId | None = None,
        **decoding: Any,
    ) -> Any:
        """Send a request and wait for its (decoded) result; raises ``McpError`` on an error
        answer, ``RequestTimeout`` (after cancelling it at the peer) when none comes in
        ``timeout`` seconds, by default the session's ``request_timeout``.
        ``decoding`` goes to ``Connection.request`` (``result``, ``task_result``,
        ``capabilities``)."""
        if self._closed:
            raise ConnectionClosed("connection closed")
        token = f"p{self.conn.next_id}" if progress is not None else None
        request_id, frame = self.conn.request(method, params, progress_token=token, **decoding)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        self._made_room()  # a reader held back for room must not wait on this answer
        if progress is not None and token is not None:
            self._progress[token] = (progress, method, request_id)
        await self._send(frame, related=related)
        seconds = timeout or self.request_timeout
        if seconds == FROM_LIMITS:
            seconds = self.conn.limits.request_timeout
        try:
            return await asyncio.wait_for(future, seconds)
        except (asyncio.TimeoutError, asyncio.CancelledError) as exc:
            late = isinstance(exc, asyncio.TimeoutError)
            if self.conn.forget(request_id):
                reason = f"timed out after {seconds:g} s" if late else "cancelled by sender"
                await self.notify(ev.CANCELLED, {"requestId": request_id, "reason": reason})
            if not late:
                raise
            raise RequestTimeout(self.conn.role, method, seconds or 0.0, bool(timeout)) from None
        finally:
            self._waiting.pop(request_id, None)
            if token is not None:
                self._progress.pop(token, None)

    async def notify(
        self, method: str, params: Any = UNSET, related: RequestId | None = None
    ) -> None:
        await self._send(self.conn.notification(method, params), related=related)

    async def publish(self, method: str, params: dict[str, Any], wanted: str) -> None:
        """A change notification: to a legacy session directly (a resource's update only
        when the session subscribed to that URI), to each modern listen stream whose filter
        asked for ``wanted`` (tagged with its subscription id)."""
        legacy = self.conn.version is not None and self.conn.state is State.READY
        if legacy and wanted not in MODERN_ONLY:
            uri = params.get("uri") if wanted == RESOURCE_UPDATES else None
            if uri is None or uri in self.subscriptions:
                await self.notify(method, params)
        for subscription, honoured in list(self.listening.items()):
            want = honoured.get(wanted)
            if not want or (isinstance(want, list) and params.get(MATCHED[wanted]) not in want):
                continue
            tagged = {
                **params,
                "_meta": {**params.get("_meta", {}), SUBSCRIPTION_ID: subscription},
            }
            await self.notify(method, tagged, related=subscription)

    async def close(self) -> None:
        await self.transport.close()


class RequestScope:
    """The runtime's side of one incoming request (``_support.RequestContext``)."""

    __slots__ = (
        "_session",
        "_open",
        "event",
        "request_id",
        "meta",
        "cancelled",
        "asked",
        "_calls",
    )

    def __init__(
        self,
        session: Session | None,
        event: ev.IncomingRequest,
        open_session: Callable[[], Session] | None = None,
    ) -> None:
        """``session``: the session the request came in; or None, and ``open_session``
        makes it on first use (a stateless request whose handler answers at once without
        touching it never has one)."""
        if session is None and open_session is None:
            raise TypeError("RequestScope needs a session or a way to open one")
        self._session = session
        self._open = open_session
        self.event = event
        self.request_id = event.id
        self.meta = event.meta
        self.cancelled = False
        #: Input requests a modern handler is waiting for, by key.
        self.asked: dict[str, Any] = {}
        self._calls = 0

    @property
    def session(self) -> Session:
        """The session the request came in (see ``open_session``)."""
        session = self._session
        if session is None:
            assert self._open is not None
            session = self._session = self._open()
        return session

    @property
    def protocol_version(self) -> str:
        if self.event.peer is not None:
            return self.event.peer.version.version
        version = self.session.conn.version
        return version.version if version is not None else ""

    @property
    def principal(self) -> Any:
        """Who the request's verified access token speaks for (a
        ``runtime.http.auth.principal.Principal``), on a protected HTTP endpoint; else None."""
        http = self.event.http
        return http.principal if http is not None else None

    @property
    def peer_version(self) -> VersionInfo | None:
        """The version the client speaks in this request (its session's when legacy)."""
        peer = self.event.peer
        return peer.version if peer is not None else self.session.conn.version

    @property
    def client_info(self) -> Mapping[str, Any]:
        peer = self.event.peer
        return peer.info if peer is not None else self.session.conn.peer_info

    @property
    def client_capabilities(self) -> Mapping[str, Any]:
        peer = self.event.peer
        return peer.capabilities if peer is not None else self.session.conn.peer_capabilities

    def require(self, *capability: str) -> None:
        """Fail the request unless the client declared ``capability`` (a path)."""
        if has_capability(self.client_capabilities, capability):
            return
        raise McpError(
            MISSING_CLIENT_CAPABILITY,
            f"Missing required client capability: {'.'.join(capability)}",
            {"requiredCapabilities": required_capabilities(capability)},
        )

    async def progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        token = self.meta.get("progressToken")
        if token is None or self.cancelled:
            return
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self.session.notify("notifications/progress", params, related=self.request_id)

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        conn = self.session.conn
        if "logging" not in conn.capabilities:
            return
        peer = self.event.peer
        if peer is not None:  # modern: only when this request set a level, and at or above it
            if peer.log_level is None or not level_at_least(level, peer.log_level):
                return
        elif not conn.log_allowed(level):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self.session.notify("notifications/message", params, related=self.request_id)

    async def request(
        self, method: str, params: Any, result: Any = None, key: str | None = None
    ) -> Any:
        """Ask the client for input: a JSON-RPC request in the legacy era; in the modern era
        the answer from this request's input responses, or ``input_required`` when absent.
        """
        if self.event.peer is None:
            return await self.session.request(method, params, related=self.request_id)
        key = key or self.next_key(method)
        inputs = self.event.inputs
        if inputs is None:
            raise McpError(
                INTERNAL_ERROR,
                f"{self.event.spec.name} cannot ask the client for input",
            )
        if key in inputs.answers:
            return self.typed_answer(method, key, inputs.answers[key], result)
        self.asked[key] = {"method": method, "params": self.prepared(method, params)}
        await asyncio.sleep(0)  # let sibling requests (asyncio.gather) register too
        raise InputRequired(key)

    def prepared(self, method: str, params: Any) -> JSONObject:
        """``params`` of an input request to this modern client, as plain JSON: refused
        unless the client declared what ``method`` and the params need, a URL elicitation
        in its version's form."""
        self.require_for(method)
        plain = as_object(to_builtins(params) if params is not None else {}) or {}
        version = self.peer_version
        if version is None:
            return plain
        refusal = refusal_to_ask(method, plain, self.client_capabilities, version)
        if refusal is not None:
            raise refusal
        if method == elicitation.METHOD and elicitation.mode_of(plain) == "url":
            plain = elicitation.url_params_for(plain, version)
        return plain

    async def elicitation_complete(self, elicitation_id: str) -> bool:
        """Tell the client the interaction at the URL of elicitation ``elicitation_id``
        ended (``notifications/elicitation/complete``). Only a 2025-11-25 client that
        takes URL elicitations has the notification; for any other nothing is sent and
        the answer is False. Usable after the request was answered (the session's stream
        carries it then)."""
        version = self.peer_version
        if (
            self.event.peer is not None
            or version is None
            or version.spec("server", elicitation.COMPLETE) is None
            or not declares(self.client_capabilities, ("elicitation", "url"))
        ):
            return False
        params = {"elicitationId": elicitation_id}
        await self.session.notify(elicitation.COMPLETE, params, related=self.request_id)
        return True

    def url_elicitation_required(self, exc: UrlElicitationRequired) -> Exception:
        """What a handler's ``UrlElicitationRequired`` answers this client: -32042 itself
        for a 2025-11-25 client that takes URL elicitations; for a 2026-07-28 one, which
        has no -32042, the same elicitations asked as input (``input_required``, where its
        request may ask); for a client that cannot be sent to a URL, the refusal
        (MissingRequiredClientCapability naming ``elicitation.url``)."""
        version = self.peer_version
        if version is None or not exc.elicitations:
            return McpError(INTERNAL_ERROR, "URL elicitation required, of no URL or no client")
        asking = {"mode": "url"}
        refusal = refusal_to_ask(elicitation.METHOD, asking, self.client_capabilities, version)
        if refusal is not None:
            why = f"URL elicitation required: {refusal.message}"
            return McpError(refusal.code, why, refusal.data)
        if self.event.peer is None:  # legacy: 2025-11-25, the only version with -32042
            return exc
        if self.event.inputs is None:
            name = self.event.spec.name
            return McpError(INTERNAL_ERROR, f"{name} cannot ask the client for input")
        key = ""
        for asked in exc.elicitations:
            key = self.next_key(elicitation.METHOD)
            params = elicitation.url_params_for(dict(asked), version)
            self.asked[key] = {"method": elicitation.METHOD, "params": params}
        return InputRequired(key)

    def next_key(self, method: str) -> str:
        """A key for the next input request of this handler (unique within the request,
        and the same when a modern request is made again with its answers)."""
        self._calls += 1
        return f"{method}#{self._calls}"

    def require_for(self, method: str) -> None:
        """Fail unless the client declared the capability ``method`` (sent to it) needs."""
        spec = self.session.conn.local.types_of("server", method)
        if spec is not None and spec.capability:
            self.require(*spec.capability)

    def typed_answer(self, method: str, key: str, answer: Any, result: Any = None) -> Any:
        """The client's ``answer`` to input request ``key`` as ``method``'s result type
        (-32602 when it is not one)."""
        spec = self.session.conn.local.types_of("server", method)
        try:
            return self.session.conn.local.binding.types.convert(
                answer, spec.result if spec else result
            )
        except ValidationError as exc:
            raise McpError(
                INVALID_PARAMS,
                f"Invalid params: inputResponses.{key}: {exc}",
                {"path": f"$.params.inputResponses.{key}"},
            ) from None

    async def notify(self, method: str, params: Any) -> None:
        await self.session.notify(method, params, related=self.request_id)
