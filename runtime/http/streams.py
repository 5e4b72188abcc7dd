"""Where the frames a session sends over HTTP go: one stream per POST (or legacy GET),
and the session transports that route frames to them."""

from __future__ import annotations

import asyncio
import logging
from asyncio import FIRST_COMPLETED as FIRST
from collections import deque
from collections.abc import Awaitable, Callable, Iterable

from .asgi import Receive, Send, end_body, respond, sse_comment, sse_event, start_sse
from .asgi import wait_disconnect
from ..core.jsonrpc import RequestId
from ..core.limits import DEFAULT

log = logging.getLogger("mcpgen.runtime.http.endpoint")


#: A frame for the reader: its number on the stream, data, whether it answers a request,
#: and the answer's HTTP status hint.
Frame = tuple[int, bytes, bool, "int | None"]


class _Expected:
    """``Stream.reader`` before the first reader takes a frame (frames wait for it)."""


_EXPECTED = _Expected()
#: What :meth:`Stream.next` gives when nothing came for ``quiet`` seconds (not a frame).
QUIET: Frame = (0, b"", False, None)


class Stream:
    """Where the frames of one POST (or of a legacy GET) go, in order, for the one reader
    that writes them out.

    At most ``capacity`` frames wait for the reader: a handler sending more waits for room
    (backpressure, as a stateless answer waits on its socket), unless the stream is
    ``shared`` (a GET or listen stream, fed by announcements to many sessions), which never
    waits: a reader that far behind is cut off instead. Answers never wait: there are at
    most as many as the POST has requests.

    A resumable stream (legacy SSE, ``log_size`` given) records each event as it is put:
    the last ``log_size`` of the others, and every answer however many came after it, so a
    client that lost the stream gets its answers when it resumes with ``Last-Event-ID``.
    While no reader is attached (its client left), events go to that record alone.
    """

    __slots__ = (
        "name",
        "frames",
        "capacity",
        "shared",
        "reader",
        "waiter",
        "room",
        "log",
        "answers",
        "counter",
        "requests",
        "pending",
        "done",
        "recorder",
        "lock",
    )

    def __init__(
        self,
        name: str,
        requests: Iterable[RequestId] = (),
        log_size: int | None = None,
        capacity: int = DEFAULT.stream_queue,
    ) -> None:
        self.name = name
        self.frames: deque[Frame] = deque()
        self.capacity = capacity
        self.shared = False
        #: The reader's client watch; ``_EXPECTED`` until it takes a frame; None once it
        #: left or was cut off (nothing waits for it then).
        self.reader: ClientWatch | _Expected | None = _EXPECTED
        self.waiter: asyncio.Future[None] | None = None
        self.room: asyncio.Future[None] | None = None
        self.log: deque[tuple[int, bytes]] | None = (
            deque(maxlen=log_size) if log_size is not None else None
        )
        self.answers: list[tuple[int, bytes]] = []
        self.counter = 0
        self.requests = tuple(requests)
        #: Requests of the POST not yet answered on this stream.
        self.pending: set[RequestId] = set(self.requests)
        self.done = not self.pending
        #: Records each event (number, data, whether it answers) in a shared store as it
        #: is put, in order (``lock``): a session several processes serve
        #: (``runtime.http.shared_sessions``). None: this process's record alone.
        self.recorder: Callable[[int, bytes, bool], Awaitable[None]] | None = None
        self.lock: asyncio.Lock | None = None

    def put(self, data: bytes, final: bool, status: int | None = None, whole: bool = False) -> None:
        """Add a frame now. A final one answers a request of the stream; a batch reply (a
        JSON array) or a refusal of the ``whole`` body answers them all at once; an empty
        one closes the stream."""
        if final and data:
            if whole or data[:1] == b"[":
                self.pending.clear()
            elif self.pending:
                self.pending.pop()
            self.done = not self.pending
        self.counter += 1
        if self.log is not None and data:
            (self.answers if final else self.log).append((self.counter, data))
        if self.reader is None:  # nobody reads: recorded (if resumable), never queued
            return
        self.frames.append((self.counter, data, final, status))
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def push(
        self, data: bytes, final: bool, status: int | None = None, whole: bool = False
    ) -> None:
        """:meth:`put`, once there is room for the reader (see the class)."""
        while self.reader is not None and not final and len(self.frames) >= self.capacity:
            if self.shared:
                log.debug("stream %s: reader %d frames behind, cut off", self.name, self.capacity)
                self.leave()
                break
            if self.room is None or self.room.done():
                self.room = asyncio.get_running_loop().create_future()
            await self.room
        recorder, lock = self.recorder, self.lock
        if recorder is None or lock is None or not data:
            self.put(data, final, status, whole)
            return
        async with lock:
            self.put(data, final, status, whole)
            await recorder(self.counter, data, final)

    def sent(self) -> list[tuple[int, bytes, bool]]:
        """What the record holds, oldest first: (number, data, whether it answers)."""
        kept = [(n, data, False) for n, data in self.log or ()]
        return sorted([*kept, *((n, data, True) for n, data in self.answers)])

    def close(self) -> None:
        """End the stream (its writer stops after what is queued)."""
        self.put(b"", True)

    def event_id(self, number: int) -> str | None:
        """The SSE id of the frame ``number`` (None when the stream is not resumable). A
        priming event takes the number before its first frame's: resuming after it replays
        that frame."""
        return f"{self.name}.{number}" if self.log is not None else None

    async def next(self, client: ClientWatch, quiet: float | None = None) -> Frame | None:
        """The next frame, or None once the client has disconnected (or another reader
        took the stream over); :data:`QUIET` when nothing came for ``quiet`` seconds."""
        if self.reader is _EXPECTED:
            self.reader = client
        if not self.frames:
            await asyncio.sleep(0)  # a quick handler answers within one turn of the loop
        while not self.frames:
            gone = client.watch()
            if self.reader is not client:
                return None
            if gone.done():
                self.leave()  # nothing waits for a reader that is gone
                return None
            self.waiter = waiter = asyncio.get_running_loop().create_future()
            try:
                await asyncio.wait((waiter, gone), timeout=quiet, return_when=FIRST)
            finally:
                self.waiter = None
            if not waiter.done() and not gone.done():
                return QUIET
        if self.reader is not client:
            return None
        frame = self.frames.popleft()
        room = self.room
        if room is not None and not room.done():
            room.set_result(None)
        return frame

    def leave(self) -> None:
        """The reader is gone (its client left, or it was cut off): what is queued stays
        in the record only, and senders waiting for room go on."""
        self.reader = None
        self.frames.clear()
        for future in (self.waiter, self.room):
            if future is not None and not future.done():
                future.set_result(None)

    def resume(self, client: ClientWatch, last: str) -> list[tuple[str, bytes]]:
        """A new reader (``client``) after the event ``last`` (an SSE id of this stream):
        the events recorded after it, answers included whatever else has left the record;
        what comes next is queued for it. A reader still attached is cut off."""
        self.leave()
        self.reader = client
        after = event_number(last)
        recorded = sorted([*(self.log or ()), *self.answers])
        return [(f"{self.name}.{n}", data) for n, data in recorded if n > after]

    @property
    def complete(self) -> bool:
        """Every request is answered and every frame taken."""
        return self.done and not self.frames


def event_number(event_id: str) -> int:
    """The event's number on its stream (``s3.17`` -> 17); 0 when it has none."""
    number = event_id.rpartition(".")[2]
    return int(number) if number.isdigit() and len(number) < 19 else 0


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

    @property
    def gone(self) -> bool:
        """The client is known to have disconnected."""
        return self.future is not None and self.future.done()

    def stop(self) -> None:
        if self.future is not None:
            self.future.cancel()


async def relay(
    stream: Stream, send: Send, client: ClientWatch, keep_open: bool, quiet: float | None = None
) -> bool:
    """Write the stream's frames as SSE events until it is complete (or, ``keep_open``,
    until it is closed), a comment after each ``quiet`` seconds of silence. False if the
    client disconnected first (or another reader took the stream over): the stream is
    left, and what was not written stays recorded."""
    gone = client.watch()
    while keep_open or not stream.complete:
        frame = await stream.next(client, quiet)
        if frame is QUIET:
            await sse_comment(send)
            continue
        if frame is None or gone.done():
            if stream.reader is client:
                stream.leave()
            return False
        number, data, _, _ = frame
        if not data:  # closed by the server
            return True
        await sse_event(send, data, stream.event_id(number))
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
        #: Where a frame goes that belongs to no request and finds no GET stream open here
        #: (a session other processes serve too: to theirs); None: it is dropped.
        self.elsewhere: Callable[[bytes], Awaitable[None]] | None = None

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
            if self.elsewhere is not None and related is None and not final:
                await self.elsewhere(data)
                return
            log.debug("dropping a frame no stream is open for")
            return
        await stream.push(data, final, status, whole)
        if final and stream.done:
            for request_id in stream.requests:
                if self.by_request.get(request_id) is stream:
                    del self.by_request[request_id]

    async def close(self) -> None:
        for stream in list(self.by_request.values()):
            stream.close()
