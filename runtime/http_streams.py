"""Where the frames a session sends over HTTP go: one stream per POST (or legacy GET),
and the session transports that route frames to them."""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Iterable

from .asgi import Receive, Send, end_body, respond, sse_event, start_sse, wait_disconnect
from .jsonrpc import RequestId

log = logging.getLogger("mcpgen.runtime.http")


class Stream:
    """Where the frames of one POST (or of a legacy GET) go; a resumable one (legacy SSE)
    also keeps its last ``log_size`` events for ``GET`` with ``Last-Event-ID``."""

    __slots__ = ("name", "frames", "waiter", "log", "counter", "requests", "pending", "done")

    def __init__(
        self, name: str, requests: Iterable[RequestId] = (), log_size: int | None = None
    ) -> None:
        self.name = name
        self.frames: deque[tuple[bytes, bool, int | None]] = deque()
        self.waiter: asyncio.Future[None] | None = None
        self.log: deque[tuple[str, bytes]] | None = (
            deque(maxlen=log_size) if log_size is not None else None
        )
        self.counter = 0
        self.requests = tuple(requests)
        #: Requests of the POST not yet answered on this stream.
        self.pending: set[RequestId] = set(self.requests)
        self.done = not self.pending

    def put(self, data: bytes, final: bool, status: int | None = None, whole: bool = False) -> None:
        """Queue a frame. A final one answers a request of the stream; a batch reply (a
        JSON array) or a refusal of the ``whole`` body answers them all at once; an empty
        one closes the stream."""
        if final and data:
            if whole or data[:1] == b"[":
                self.pending.clear()
            elif self.pending:
                self.pending.pop()
            self.done = not self.pending
        self.frames.append((data, final, status))
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    def close(self) -> None:
        """End the stream (its writer stops after what is queued)."""
        self.put(b"", True)

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
            self.future = asyncio.ensure_future(wait_disconnect(self.receive))
        return self.future

    def stop(self) -> None:
        if self.future is not None:
            self.future.cancel()


async def relay(stream: Stream, send: Send, client: ClientWatch, keep_open: bool) -> bool:
    """Write the stream's frames as SSE events until it is complete (or, ``keep_open``,
    until it is closed). False if the client disconnected first."""
    while keep_open or not stream.complete:
        item = await stream.next(client)
        if item is None:
            return False
        if not item[0]:  # closed by the server
            return True
        await sse_event(send, item[0], stream.record(item[0]))
    return True


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
                await respond(self.asgi_send, status or 200, data)
                return
            self.started = True
            await start_sse(self.asgi_send, None)
        await sse_event(self.asgi_send, data, None)
        if final:
            self.done = True
            await end_body(self.asgi_send)

    def answer(self, data: bytes, status: int | None) -> Awaitable[None]:
        """What ``send(data, final=True)`` does; when the answer is the whole response
        (nothing was streamed), that response's writing itself, with no coroutine of
        this method's in between."""
        if self.started or self.done:
            return self.send(data, self.request_id, True, status)
        self.done = True
        return respond(self.asgi_send, status or 200, data)

    async def close(self) -> None:
        """End the response if the handler ended without an answer (it was cancelled)."""
        if self.done or self.gone:
            return
        self.done = True
        if self.started:
            await end_body(self.asgi_send)
        else:
            await respond(self.asgi_send, 204, b"")


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
        whole = False
        if stream is None and related is None and final:
            # An answer to no request in particular answers the body being fed as a whole
            # (a refused batch: one error for all its requests).
            stream = self.feeding
            whole = stream is not None
        if stream is None:
            stream = self.standalone
        if stream is None:
            log.debug("dropping a frame no stream is open for")
            return
        stream.put(data, final, status, whole)
        if final and stream.done:
            for request_id in stream.requests:
                if self.by_request.get(request_id) is stream:
                    del self.by_request[request_id]

    async def close(self) -> None:
        for stream in list(self.by_request.values()):
            stream.close()
