"""The asyncio side of a connection: feeds frames to the sans-IO ``Connection`` and acts
on its events — runs handlers concurrently, cancels them, awaits answers, sends frames.

A transport is anything with ``receive() -> bytes | None`` (``None`` at end of input),
``send(bytes)`` and ``close()``; stdio and HTTP both fit.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any, Protocol

from msgspec import UNSET

from . import connection as c
from . import events as ev
from .errors import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    SERVER_BUSY,
    ConnectionClosed,
    McpError,
    RequestTimeout,
)
from .jsonrpc import Parsed, RequestId, parse
from .lifecycle import State
from .modern import SUBSCRIPTION_ID, HttpHeaders, InputRequired, http_status
from .request_scope import RequestScope

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


class Transport(Protocol):
    async def receive(self) -> bytes | None: ...
    async def send(
        self,
        data: bytes,
        related: RequestId | None = None,
        final: bool = False,
        status: int | None = None,
    ) -> None: ...
    async def close(self) -> None: ...


if sys.version_info >= (3, 12):

    def _start(coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        """Run a handler as a task that starts at once: one that needs not wait for
        anything answers before this returns, with no extra turn of the event loop."""
        return asyncio.Task(coro, loop=asyncio.get_running_loop(), eager_start=True)

else:
    _start = asyncio.create_task


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
        self._progress: dict[str | int, ProgressCallback] = {}
        self._batches: dict[int, tuple[int, list[bytes]]] = {}
        self._background: set[asyncio.Task[None]] = set()
        #: Open ``subscriptions/listen`` streams: subscription id → honoured filter.
        self.listening: dict[RequestId, Mapping[str, Any]] = {}
        self._closed = False
        #: Set when a handler ends or one starts waiting on the peer (made on first need).
        self._room: asyncio.Event | None = None
        #: The URIs a legacy client subscribed to (``resources/subscribe``).
        self.subscriptions: set[str] = set()

    @property
    def negotiated(self) -> asyncio.Future[str]:
        """The version once the handshake is done (made on first use: a stateless request's
        short-lived session never negotiates)."""
        if self._negotiated is None:
            self._negotiated = asyncio.get_running_loop().create_future()
        return self._negotiated

    # -- the read loop ------------------------------------------------------------------

    async def run(self, drain_timeout: float = 10.0) -> None:
        """Read until end of input; then let running handlers finish (bounded) and stop."""
        try:
            while True:
                frame = await self.transport.receive()
                if frame is None:
                    break
                try:
                    await self.feed(frame)
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
        self.listening.pop(request_id, None)

    async def act(self, event: ev.Event) -> None:
        """Act on one event of this session's connection (for transports that asked the
        connection themselves, e.g. to route a request before reading its body)."""
        await self._handle(event)

    def _fail_waiting(self) -> None:
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(ConnectionClosed("connection closed"))
        self._waiting.clear()

    def _shutdown(self) -> None:
        self._closed = True
        self.conn.close()
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
            refusal = self._refusal(event) if self._handlers else None
            if refusal is None and len(self._handlers) >= self.conn.limits.max_in_flight:
                refusal = await self._make_room()
            if refusal is not None:
                frame = self.conn.error(event.id, refusal)
                await self._send(frame, event.batch, event.id, final=True)
                return
            scope = RequestScope(self, event)
            task = _start(self._serve(event, scope))
            if not task.done():  # an eagerly started handler may have finished already
                self._handlers[event.id] = (task, scope)
        elif isinstance(event, ev.Listen):
            honoured, frame = self.conn.modern.acknowledge(event, self.listening.values())
            if honoured is None:  # refused: this connection's streams would hold too much
                await self._send(frame, related=event.id, final=True, status=400)
                return
            self.listening[event.id] = honoured
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
            callback = self._progress.get(event.token)
            if callback is not None:
                outcome = callback(event.progress, event.total, event.message)
                if outcome is not None:
                    await outcome
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

    async def _serve(self, event: ev.IncomingRequest, scope: RequestScope) -> None:
        """Answer a request in a task of its own. It counts as in flight until its answer
        is written: a peer that stops reading holds the reader back, not just the handlers.
        """
        try:
            answer = await self.answer(event, scope)
            if answer is not None:
                await self._send(answer[0], event.batch, event.id, final=True, status=answer[1])
        finally:
            self._handlers.pop(event.id, None)
            self._made_room()

    async def answer(
        self, event: ev.IncomingRequest, scope: RequestScope
    ) -> tuple[bytes, int | None] | None:
        """Run the request's handler in the calling task: the answer frame and its HTTP
        status hint, or None when the peer cancelled the request (nothing is answered)."""
        version = event.peer.version if event.peer is not None else None
        status = None
        try:
            try:
                if self.dispatch is None:
                    raise McpError(INTERNAL_ERROR, "no handlers")
                result = await self.dispatch(event, scope)
                frame = self.conn.result(event.id, result, event.spec.name, version)
            except InputRequired:
                frame = self.conn.result(
                    event.id, self.conn.modern.input_required(event, scope.asked)
                )
            except McpError as exc:
                frame = self.conn.error(event.id, exc, version)
                status = http_status(exc.code) if version is not None else None
            except RequestTimeout as exc:  # the handler's own request went unanswered
                frame = self.conn.error(event.id, McpError(INTERNAL_ERROR, str(exc)), version)
        except asyncio.CancelledError:
            if scope.cancelled or self._closed:
                if event.batch is not None:
                    await self._batch_skip(event.batch)
                return None
            raise
        except Exception:  # the handler failed, or what it returned cannot be sent
            log.exception("handler for %s failed", event.spec.name)
            frame = self.conn.error(event.id, McpError(INTERNAL_ERROR, "Internal error"), version)
            status = None
        return None if scope.cancelled else (frame, status)

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
            self._progress[token] = progress
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
                await self.notify(
                    "notifications/cancelled", {"requestId": request_id, "reason": reason}
                )
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
