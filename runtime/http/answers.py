"""How the HTTP app writes what a session makes of one POST: a JSON body when the first
frame is the whole answer, otherwise an SSE stream that ends once every request of the
POST is answered; a single stateless request served inline, in the ASGI task itself; the
client going away before its answer is that request's cancellation."""

from __future__ import annotations

import asyncio
from functools import partial
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from typing import Any, cast

from .served import HttpServed
from ..core import jsonrpc
from .asgi import (
    OnSuspend,
    Receive,
    Send,
    end_body,
    refuse,
    respond,
    sse_comment,
    sse_event,
    start_sse,
    wait_disconnect,
)
from ..core.connection import Connection
from ..core.events import Event, IncomingRequest
from .streams import QUIET, ClientWatch, Responder, Router, Stream, relay
from .tool_params import ToolHeaderGate
from ..core.jsonrpc import RequestId
from .session_table import LegacySession
from ..core.limits import Limits
from ..core.modern import SUBSCRIPTION_ID, HttpHeaders
from ..aio.session import RequestScope
from ..aio.session import Session
from ..aio.at_once import NOTHING
from ..aio.outcomes import answer_now


class Answers:
    """Writes answers for the app of ``server``; ``stateless`` is the connection shared by
    modern requests; ``sse_retry_ms`` is the reconnection delay legacy SSE streams
    announce. ``listeners`` are the sessions with a modern listen stream open now."""

    def __init__(
        self, server: HttpServed, stateless: Connection, sse_retry_ms: int, limits: Limits
    ) -> None:
        self.server = server
        self.limits = limits
        #: The server's dispatch behind the transport's own check (``Mcp-Param-*``).
        self.dispatch = ToolHeaderGate(server).dispatch
        self.stateless = stateless
        self.sse_retry_ms = sse_retry_ms
        self.listeners: set[Session] = set()
        #: The streams of the listen requests open now (closed when the server stops).
        self.listen_streams: set[Stream] = set()

    def session(self, router: Router, conn: Connection | None = None) -> Session:
        """A session of the server on ``conn`` (default: the stateless one)."""
        server = self.server
        return Session(conn or self.stateless, router, self.dispatch, server.on_notification)

    async def exchange(
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
        kept: Callable[[], Awaitable[str | None]] | None = None,
    ) -> None:
        """Feed one POST body to ``session`` and write what it answers. ``kept``: run once
        the body is fed, before anything is written; what it returns, if anything, is
        answered with 503 in place of the session's answers."""
        expected = set(requests)
        if not expected:  # notifications and responses: 202, unless refused
            stream = Stream("n")
        elif legacy is not None:
            stream = legacy.new_stream(expected)
        else:
            stream = Stream("r", expected, capacity=self.limits.stream_queue)
        if expected:
            for request_id in expected:
                router.by_request[request_id] = stream
        router.feeding = stream
        try:
            await session.feed_parsed(parsed, http)
        finally:
            router.feeding = None
        refusal = await kept() if kept is not None else None
        if refusal is not None:
            for request_id in expected:
                router.by_request.pop(request_id, None)
            await refuse(send, 503, refusal, requests[0] if requests else None)
            return
        if not expected:
            await self._accepted_or_refused(stream, send, extra_headers)
            return
        listening = [i for i in expected if i in session.listening]
        if listening:
            stream.shared = True  # announcements to every listener never wait for one
            self.listeners.add(session)
            self.listen_streams.add(stream)
        try:
            done = await self._write(stream, send, receive, legacy, extra_headers, listening)
        finally:
            self.listeners.discard(session)
            self.listen_streams.discard(stream)
            for request_id in listening:  # the stream ended: so did its listen
                session.cancel(request_id)
        # A legacy stream was settled by _write: an SSE one stays resumable by GET (one the
        # client left keeps collecting its answers); a JSON answer leaves nothing to resume.
        if legacy is None:
            if not done:  # the client left: for a modern request, that is its cancellation
                _cancel(session, expected)
            for request_id in expected:
                router.by_request.pop(request_id, None)

    async def write(
        self, stream: Stream, send: Send, receive: Receive, legacy: LegacySession
    ) -> None:
        """Write what a legacy POST's ``stream`` gets, as :meth:`exchange` does once its
        body is fed (JSON or SSE; the stream settled for resumption)."""
        await self._write(stream, send, receive, legacy, None, [])

    async def _accepted_or_refused(
        self, stream: Stream, send: Send, extra: dict[str, str] | None
    ) -> None:
        if not stream.frames:
            await respond(send, 202, b"", extra=extra)
            return
        _, data, _, status = stream.frames.popleft()
        await respond(send, status or 400, data, extra=extra)

    async def _write(
        self,
        stream: Stream,
        send: Send,
        receive: Receive,
        legacy: LegacySession | None,
        extra: dict[str, str] | None,
        listening: list[RequestId],
    ) -> bool:
        """JSON when the first frame is the whole answer; otherwise an SSE stream that ends
        once every request of the POST is answered (or, for a listen, when the client goes).
        Returns whether every frame was written. A stream whose reader was cut off while
        its client is still there (too far behind, or taken over by a resumption) ends
        cleanly: a listen with its completion result, as the spec has a server end one.

        A legacy stream is settled (kept for resumption or forgotten) before the last bytes
        leave, so a client that looks at the session right after its answer sees it settled.
        """
        client = ClientWatch(receive)
        streamed = settled = False
        keep_open = bool(listening)
        quiet = self.limits.sse_keepalive
        try:
            first = await stream.next(client, quiet)
            if first is None:
                return False
            number, data, _, status = first
            if first is QUIET:  # numbered now: a frame put while the stream starts follows
                number = stream.counter + 1
            if first is not QUIET and stream.complete and not keep_open:
                if legacy is not None:
                    settled = True
                    legacy.finish(stream, streamed)
                await respond(send, status or 200, data, extra=extra)
                return True
            # Streamed: more than the answer, or (QUIET) an answer long in coming, with
            # keep-alive comments meanwhile.
            streamed = True
            if legacy is not None and legacy.recording is not None:
                await legacy.recording(stream)  # (shared: any process resumes it)
            await start_sse(send, extra)
            if legacy is not None and polls(legacy):
                primer = stream.event_id(number - 1)
                await sse_event(send, b"", primer, retry=self.sse_retry_ms)
            if first is QUIET:
                await sse_comment(send)
            else:
                await sse_event(send, data, stream.event_id(number))
            if not await relay(stream, send, client, keep_open, quiet):
                if not client.gone:
                    for listen in listening:
                        await sse_event(send, _listen_ended(listen), None)
                    await end_body(send)
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

    def serve_inline(
        self, events: list[Event], request_id: RequestId, receive: Receive, send: Send
    ) -> Awaitable[None]:
        """One stateless request (what the connection made of it: ``events``), its handler
        run in this task: no task of its own, no turn of the loop between the answer and
        its writing; to await. A handler that cannot wait has answered when this returns,
        and what is left to await is the answer's writing. The client's disconnect (the
        request's cancellation) is watched only once the handler has to wait."""
        event = events[0] if len(events) == 1 else None
        if isinstance(event, IncomingRequest):
            return self.serve_one(event, receive, send)
        responder = Responder(send, request_id)  # refused (or not one request after all)
        session = Session(self.stateless, responder, self.dispatch, self.server.on_notification)
        return _acted(session, events, responder)

    def serve_one(self, event: IncomingRequest, receive: Receive, send: Send) -> Awaitable[None]:
        """:meth:`serve_inline` of a request read already (the stateless lane's)."""
        responder = Responder(send, event.id)
        server = self.server  # built here, not by session(): this is every request's path
        conn, dispatch = self.stateless, self.dispatch
        # the session is made when the handler (or what waits for it) first needs one
        opening = partial(Session, conn, responder, dispatch, server.on_notification)
        scope = RequestScope(None, event, opening)
        answering = answer_now(conn, dispatch, event, scope)
        if answering.__class__ is tuple:  # the handler could not wait: the whole response
            answer = cast("tuple[bytes, int | None]", answering)
            if answer is NOTHING:
                return responder.close()
            responder.done = True
            return respond(send, answer[1] or 200, answer[0])
        waiting = scope.session.answer(event, scope, cast("Awaitable[Any]", answering))
        return _waited(waiting, responder, scope, receive)


async def _acted(session: Session, events: list[Event], responder: Responder) -> None:
    """What a POST's refused (or not single) request's events make the session send."""
    for each in events:
        await session.act(each)
    await responder.close()


async def _waited(
    answering: Coroutine[Any, Any, tuple[bytes, int | None] | None],
    responder: Responder,
    scope: RequestScope,
    receive: Receive,
) -> None:
    """The answer of a handler that may wait, awaited in this task and written; the
    client leaving meanwhile (watched from its first wait on) cancels it."""
    watchers: list[asyncio.Future[None]] = []

    def watch() -> None:
        if not responder.done:
            task = asyncio.current_task()
            assert task is not None
            watchers.append(
                asyncio.ensure_future(_cancel_on_leave(receive, responder, scope, task))
            )

    try:
        answer = await OnSuspend(answering, watch)
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


async def _cancel_on_leave(
    receive: Receive, responder: Responder, scope: RequestScope, task: asyncio.Task[Any]
) -> None:
    """The client went away before its answer: that cancels the request."""
    await wait_disconnect(receive)
    if not responder.done:
        responder.gone = True
        scope.cancelled = True
        task.cancel()


def _cancel(session: Session, requests: Iterable[RequestId]) -> None:
    """The client went away from a modern request: that is its cancellation."""
    for request_id in requests:
        session.cancel(request_id)


def _listen_ended(listen: RequestId) -> bytes:
    """The result that ends a listen stream from the server's side."""
    meta = {SUBSCRIPTION_ID: listen}
    return jsonrpc.encode_result(listen, {"resultType": "complete", "_meta": meta})


def polls(legacy: LegacySession) -> bool:
    """SSE streams open with a priming event (id, ``retry``) from 2025-11-25 on."""
    version = legacy.session.conn.version
    return version is not None and version.version >= "2025-11-25"
