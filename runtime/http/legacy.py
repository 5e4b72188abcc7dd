"""The legacy side of the HTTP app (2025-03-26 to 2025-11-25): sessions begun by an
``initialize`` POST and named by ``Mcp-Session-Id``, their later POSTs, GET streams (the
server's own messages, and resumption of any stream after ``Last-Event-ID``), DELETE."""

from __future__ import annotations


import asyncio
import contextlib
import logging
import re
import secrets
import time
from collections.abc import AsyncGenerator, Callable
from typing import TYPE_CHECKING, Any

import msgspec

from .served import HttpServed
from ..core import jsonrpc
from .asgi import Headers, Receive, Send, end_body, refuse, respond, sse_comment, sse_event
from .asgi import start_sse, text
from ..core.errors import INTERNAL_ERROR, INVALID_REQUEST, McpError
from .answers import Answers, polls
from .streams import ClientWatch, Router, Stream, event_number, relay
from ..aio.at_once import NOTHING
from ..core.jsonrpc import RequestId
from .session_table import LegacySession, SessionTable
from .shared_sessions import TAG, SessionRecord, SessionStoreUnavailable, SharedSessions
from .shared_sessions import CHANGED, Recorded, split_routed
from ..core.limits import Limits
from ..core.modern import HttpHeaders
from .post_headers import mcp_headers
from ..aio.session import MODERN_ONLY, RESOURCE_UPDATES

if TYPE_CHECKING:
    from .auth.principal import Principal

log = logging.getLogger("mcpgen.runtime.http.endpoint")
#: A shared session's expiry is renewed in the store at most this often per process (and
#: at most every tenth of the idle timeout): a session ended elsewhere (DELETE, the cap)
#: is told to every process at once, expiry needs no more.
TOUCH_EVERY_S = 10.0
#: What the SSE ids of a shared session's outbox messages begin with (``g.<id>``), and
#: the form of the id (a store's: ``<milliseconds>-<sequence>``).
OUTBOX = "g."
OUTBOX_ID = re.compile(r"[0-9]{1,20}-[0-9]{1,20}")


class LegacyEndpoint:
    """Serves the legacy sessions of ``server`` held in ``sessions`` (this process's views
    of them, when ``shared`` keeps them for every process of the server)."""

    def __init__(
        self,
        server: HttpServed,
        sessions: SessionTable,
        limits: Limits,
        answers: Answers,
        shared: SharedSessions | None = None,
    ) -> None:
        self.server = server
        self.sessions = sessions
        self.limits = limits
        self.answers = answers
        self.shared = shared
        self._starting = False
        #: The server is stopping: GET streams it closes end with a ``retry`` hint.
        self.draining = False

    # -- sessions shared by processes ----------------------------------------------------------

    async def start(self) -> None:
        """Begin taking the frames other processes route here (once)."""
        if self.shared is not None and not self._starting:
            self._starting = True
            await self.shared.start(self.routed)

    async def close(self) -> None:
        """Let go of the store (this process's streams are no longer followed elsewhere as
        running: what it did not answer, nothing will)."""
        if self.shared is not None and self._starting:
            self._starting = False
            await self.shared.close()

    async def _found(self, session_id: str) -> LegacySession | None:
        """The session, from this process's views, else (shared) taken up from its record;
        None when unknown, ended or expired (everywhere, when shared)."""
        legacy = self.sessions.get(session_id)
        shared = self.shared
        if shared is None:
            return legacy
        await self.start()  # (at startup, but for a server sending no lifespan)
        idle = self.limits.session_idle_timeout
        if legacy is not None:
            now = time.monotonic()
            if now - legacy.touched_at < min(idle / 10, TOUCH_EVERY_S):
                return legacy  # renewed a moment ago (an end elsewhere is told at once)
            if await shared.touch(session_id, idle):
                legacy.touched_at = now
                return legacy
            gone = self.sessions.pop(session_id)  # ended elsewhere (DELETE, expiry)
            if gone is not None:
                gone.end()
            return None
        record = await shared.load(session_id)
        if record is None or record.version not in self.server.versions:
            return None
        await shared.touch(session_id, idle)
        conn = self.server.connection()
        conn.take_up(
            record.version,
            record.client_info,
            record.client_capabilities,
            record.log_level,
            shared.tag,
        )
        router = Router()
        legacy = LegacySession(self.answers.session(router, conn), router, self.limits)
        self._share(session_id, legacy)
        legacy.owner, legacy.record = record.owner, record
        legacy.touched_at = time.monotonic()
        legacy.session.subscriptions.update(record.subscriptions)
        if not self.sessions.add(session_id, legacy):
            return None
        return legacy

    async def _written_back(self, session_id: str, legacy: LegacySession) -> None:
        """Write back what a request changed of a shared session: its log level, its
        subscriptions."""
        record, shared = legacy.record, self.shared
        if record is None or shared is None:
            return
        conn = legacy.session.conn
        subscriptions = sorted(legacy.session.subscriptions)
        if conn.log_level == record.log_level and subscriptions == record.subscriptions:
            return
        record = msgspec.structs.replace(
            record, log_level=conn.log_level, subscriptions=subscriptions
        )
        await shared.save(session_id, record, self.limits.session_idle_timeout)
        legacy.record = record  # (only once kept: a failed save is tried again next time)
        await shared.route(session_id, CHANGED, None)  # the others' views read it again

    def _share(self, session_id: str, legacy: LegacySession) -> None:
        """Make this process's view of a shared session send through the store: its SSE
        streams recorded (named after this process), its messages outside any request to
        its outbox (whichever process holds its GET stream follows it)."""
        shared = self.shared
        assert shared is not None
        events, limits = shared.events, self.limits
        legacy.stream_prefix = f"{shared.tag}v{secrets.token_hex(3)}"  # (this view's own)

        async def elsewhere(data: bytes) -> None:
            await events.post(session_id, data, limits)

        async def recording(stream: Stream) -> None:
            stream.lock = lock = asyncio.Lock()
            async with lock:
                sent = stream.sent()

                async def record(number: int, data: bytes, final: bool) -> None:
                    await events.record(session_id, stream.name, number, data, final, limits)

                stream.recorder = record
                await events.opened(session_id, stream.name, stream.requests, sent, limits)

        async def subscribed() -> None:
            try:
                await self._written_back(session_id, legacy)
            except SessionStoreUnavailable as exc:
                raise McpError(INTERNAL_ERROR, f"{exc}; subscribe again later") from None

        legacy.router.elsewhere = elsewhere
        legacy.recording = recording
        legacy.session.subscribed = subscribed

    async def announce(self, method: str, params: dict[str, Any], wanted: str) -> None:
        """An announcement made in this process, to every shared session it concerns
        (their views do not deliver announcements: each session is told once, in its
        outbox)."""
        if self.shared is None or wanted in MODERN_ONLY:
            return
        uri = params.get("uri") if wanted == RESOURCE_UPDATES else None
        data = jsonrpc.encode_notification(method, params)
        await self.shared.events.announce(data, uri if isinstance(uri, str) else None, self.limits)

    async def routed(self, session_id: str, frame: bytes) -> None:
        """A frame another process routed here: an answer to a request this one sent, or a
        cancellation, fed to this process's view of the session (if it has one); or word
        that the session changed (:data:`CHANGED`): the view reads its record again, and
        ends if it is gone (a DELETE elsewhere: its GET streams close)."""
        legacy = self.sessions.get(session_id)
        if legacy is None:
            return
        if frame != CHANGED:
            await legacy.session.feed(frame)
            return
        assert self.shared is not None
        try:
            record = await self.shared.load(session_id)
        except SessionStoreUnavailable:
            return  # the next request of the session finds out
        if record is None:
            gone = self.sessions.pop(session_id)
            if gone is not None:
                gone.end()
            return
        legacy.record = record
        legacy.session.conn.log_level = record.log_level
        legacy.session.subscriptions.clear()
        legacy.session.subscriptions.update(record.subscriptions)

    async def post(
        self,
        session_id: str,
        headers: Headers,
        parsed: jsonrpc.Parsed,
        receive: Receive,
        send: Send,
        principal: Principal | None = None,
    ) -> None:
        """A POST to a legacy session (by the principal that began it, when protected)."""
        requests = jsonrpc.request_ids(parsed[0])
        first = requests[0] if requests else None
        try:
            if self.shared is None:  # (no coroutine on the one-process path)
                legacy = _owned(self.sessions.get(session_id), principal)
            else:
                legacy = _owned(await self._found(session_id), principal)
        except SessionStoreUnavailable as exc:
            await refuse(send, 503, f"Service Unavailable: {exc}; retry later", first)
            return
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
        shared = self.shared
        if shared is not None:
            parsed, routed = split_routed(parsed, shared.tag)
            try:
                for frame, to in routed:
                    await shared.route(session_id, frame, to)
            except SessionStoreUnavailable as exc:
                await refuse(send, 503, f"Service Unavailable: {exc}; retry later", first)
                return
        legacy.posts += 1
        try:
            http = mcp_headers(headers, stated, principal)
            await self.answers.exchange(
                legacy.session, legacy.router, parsed, requests, http, receive, send, legacy
            )
        finally:
            legacy.posts -= 1
        if legacy.record is not None:
            try:
                await self._written_back(session_id, legacy)
            except SessionStoreUnavailable as exc:  # answered already: the change waits
                log.warning("session %s: its change is not kept yet: %s", session_id, exc)

    async def post_one(
        self,
        session_id: str,
        headers: Headers,
        body: bytes,
        stated: str | None,
        receive: Receive,
        send: Send,
        principal: Principal | None = None,
    ) -> bool:
        """A POST of a session that carries one plain request, served as a stateless one
        is: read by the session's lane (``runtime.core.lane``), its handler run in this
        task when it cannot suspend (``Session.answer_here``), its answer written as JSON
        with no stream; a handler that may suspend runs in a task of its own, as before.
        False, with nothing sent, when the general way (:meth:`post`) must serve it: any
        other body, a session of several processes, or anything :meth:`post` would
        refuse."""
        if self.shared is not None:
            return False
        legacy = _owned(self.sessions.get(session_id), principal)
        if legacy is None or (stated is not None and stated not in self.server.versions):
            return False
        session, router = legacy.session, legacy.router
        event = legacy.lane.request(body, mcp_headers(headers, stated, principal))
        if event is None or event.id in router.by_request:
            return False
        request_id = event.id
        stream: Stream | None = None

        def waiting() -> None:  # the handler's frames go to this POST's stream
            nonlocal stream
            stream = legacy.new_stream((request_id,))
            router.by_request[request_id] = stream

        legacy.posts += 1
        try:
            answer = session.answer_here(event, waiting)
            if type(answer) is tuple and answer is not NOTHING:
                await respond(send, answer[1] or 200, answer[0])  # (nothing came before it)
                return True
            if stream is None:  # the general way's, or no answer (the handler cancelled)
                waiting()
                if answer is False:
                    await session.act(event)
            assert stream is not None
            await self.answers.write(stream, send, receive, legacy)
        finally:
            legacy.posts -= 1
        return True

    async def initialize(
        self,
        parsed: jsonrpc.Parsed,
        requests: list[RequestId],
        http: HttpHeaders,
        receive: Receive,
        send: Send,
    ) -> None:
        """An ``initialize`` POST: a new session, kept once the handshake succeeds."""
        if not self.sessions.has_room():
            message = (
                f"Service Unavailable: all {self.limits.max_sessions} sessions are busy "
                "(Limits.max_sessions); retry later"
            )
            await refuse(send, 503, message, requests[0] if requests else None)
            return
        router = Router()
        conn = self.server.connection()
        session_id = secrets.token_urlsafe(24)
        session = self.answers.session(router, conn)
        legacy = LegacySession(session, router, self.limits)
        if self.shared is not None:
            conn.id_prefix = self.shared.tag  # the client's answers find this process
            self._share(session_id, legacy)
        legacy.owner = _owner(http.principal)
        extra = {"mcp-session-id": session_id}

        async def kept() -> str | None:
            """Before the answer goes out, the session is kept (in this process's table,
            and in the store every process reads): the client's next POST, whichever
            process it reaches, finds it. A refusal (no room, the store unreachable)
            answers in place of the handshake, and the session ends."""
            if session.conn.version is None:
                return None  # the handshake failed: its error is the answer
            if not self.sessions.add(session_id, legacy):
                return (
                    f"Service Unavailable: all {self.limits.max_sessions} sessions are busy "
                    "(Limits.max_sessions); retry later"
                )
            try:
                await self._recorded(session_id, legacy)
            except SessionStoreUnavailable as exc:
                self.sessions.pop(session_id)
                legacy.end()
                return f"Service Unavailable: {exc}; retry later"
            return None

        legacy.posts += 1
        try:
            await self.answers.exchange(
                session, router, parsed, requests, http, receive, send, legacy, extra, kept
            )
        finally:
            legacy.posts -= 1

    async def _recorded(self, session_id: str, legacy: LegacySession) -> None:
        """Keep a new session for every process, when they share them."""
        shared, conn = self.shared, legacy.session.conn
        if shared is None or conn.version is None:
            return
        await self.start()
        legacy.record = SessionRecord(
            version=conn.version.version,
            client_info=conn.peer_info,
            client_capabilities=conn.peer_capabilities,
            log_level=conn.log_level,
            owner=legacy.owner,
        )
        limits = self.limits
        await shared.create(
            session_id, legacy.record, limits.session_idle_timeout, limits.max_sessions
        )

    async def get(
        self, headers: Headers, receive: Receive, send: Send, principal: Principal | None = None
    ) -> None:
        """A GET: the session's own stream, or a stream resumed after ``Last-Event-ID``."""
        if b"text/event-stream" not in headers.get(b"accept", b"").lower():
            await refuse(send, 406, "Not Acceptable: GET needs Accept: text/event-stream")
            return
        session_id = text(headers, b"mcp-session-id")
        try:
            found = await self._found(session_id) if session_id is not None else None
        except SessionStoreUnavailable as exc:
            await refuse(send, 503, f"Service Unavailable: {exc}; retry later")
            return
        legacy = await self._named_session(headers, send, "GET", lambda _: _owned(found, principal))
        if legacy is None:
            return
        last = text(headers, b"last-event-id")
        if self.shared is not None and session_id is not None:
            await self._shared_get(session_id, legacy, last, receive, send)
            return
        if last is not None:
            name = last.split(".", 1)[0]
            resumed = legacy.streams.get(name)
            if resumed is not None:
                await self._resume(legacy, resumed, last, receive, send)
                return
            if name in legacy.dropped:
                await _unresumable(name, legacy.dropped[name], send)
                return
        stream = legacy.open_get()
        client = ClientWatch(receive)
        try:
            await start_sse(send, None)
            if polls(legacy):
                await sse_event(send, b"", stream.event_id(0), retry=self.answers.sse_retry_ms)
            await relay(stream, send, client, True, self.limits.sse_keepalive)
            if self.draining:  # come back (elsewhere) soon
                await sse_event(send, b"", None, retry=self.answers.sse_retry_ms)
        finally:
            client.stop()
            legacy.close_get(stream, client)
        await end_body(send)

    async def _shared_get(
        self, session_id: str, legacy: LegacySession, last: str | None, receive: Receive, send: Send
    ) -> None:
        """A GET of a session every process serves: a POST's stream resumed after
        ``last`` (here if this process serves it, else from the store, whichever process
        serves it or did), or the session's outbox followed (after ``last``, a message of
        it; else from now)."""
        shared = self.shared
        assert shared is not None
        name = last.rpartition(".")[0] if last is not None else ""
        try:
            if last is not None and not last.startswith(OUTBOX):
                kept = legacy.streams.get(name)
                if kept is not None:
                    await self._resume(legacy, kept, last, receive, send)
                    return
                requests = await shared.events.requests_of(session_id, name)
                if requests is not None:
                    replay = shared.events.follow(session_id, name, event_number(last), requests)
                    await self._replayed(name, replay, receive, send)
                    return
                if TAG.match(name):  # one of ours, no longer kept
                    await _unresumable(name, legacy.dropped.get(name, ()), send)
                    return
            after = last[len(OUTBOX) :] if last is not None and last.startswith(OUTBOX) else None
            if after is None or not _outbox_id(after):  # none, or garbage: from now
                after = await shared.events.head(session_id)
        except SessionStoreUnavailable as exc:
            await refuse(send, 503, f"Service Unavailable: {exc}; retry later")
            return
        await self._followed(session_id, legacy, after, receive, send)

    async def _replayed(
        self, name: str, replay: AsyncGenerator[Recorded, None], receive: Receive, send: Send
    ) -> None:
        """Write a stream recorded in the store, as its events come, until it ends (its
        requests answered), the client leaves or the store fails (the client resumes
        again)."""
        client = ClientWatch(receive)
        gone = client.watch()
        await start_sse(send, None)
        try:
            written = time.monotonic()
            async for number, data in replay:
                if gone.done() or self.draining:
                    break
                if number >= 0:
                    await sse_event(send, data, f"{name}.{number}" if number else None)
                written = await _kept_alive(send, number >= 0, written, self.limits)
        except SessionStoreUnavailable as exc:
            log.warning("stream %s: resumption cut short: %s", name, exc)
        finally:
            client.stop()
            await replay.aclose()
        if self.draining:  # resume (elsewhere) soon
            await sse_event(send, b"", None, retry=self.answers.sse_retry_ms)
        await end_body(send)

    async def _followed(
        self, session_id: str, legacy: LegacySession, after: str, receive: Receive, send: Send
    ) -> None:
        """The session's GET stream: its outbox from ``after`` on, until the client leaves,
        another GET stream takes over, the session ends or the server stops."""
        shared = self.shared
        assert shared is not None
        client = ClientWatch(receive)
        gone = client.watch()
        idle = self.limits.session_idle_timeout
        follow = shared.events.outbox(session_id, after, self.limits)
        legacy.following += 1
        try:
            await start_sse(send, None)
            if polls(legacy):
                await sse_event(send, b"", OUTBOX + after, retry=self.answers.sse_retry_ms)
            written = time.monotonic()
            async for batch in follow:
                for message_id, data in batch:
                    await sse_event(send, data, OUTBOX + message_id)
                if gone.done() or self.draining or legacy.ended:
                    break
                written = await _kept_alive(send, bool(batch), written, self.limits)
                now = time.monotonic()
                if now - legacy.touched_at >= min(idle / 10, TOUCH_EVERY_S):
                    if not await shared.touch(session_id, idle):
                        break  # the session ended (elsewhere)
                    legacy.touched_at = now
        except SessionStoreUnavailable as exc:
            log.warning("session %s: its GET stream ends: %s", session_id, exc)
        finally:
            legacy.following -= 1
            client.stop()
            await follow.aclose()
        if self.draining:  # come back (elsewhere) soon
            await sse_event(send, b"", None, retry=self.answers.sse_retry_ms)
        await end_body(send)

    async def _resume(
        self, legacy: LegacySession, stream: Stream, last: str, receive: Receive, send: Send
    ) -> None:
        """Replay a stream's events after ``last`` (its answers always), then go on with
        what it still gets: a POST's stream until it is answered, a GET stream as the
        session's GET stream again."""
        client = ClientWatch(receive)
        replay = stream.resume(client, last)
        standalone = not stream.requests
        if standalone:
            legacy.reopen_get(stream)
        try:
            await start_sse(send, None)
            for event_id, data in replay:
                await sse_event(send, data, event_id)
            await relay(stream, send, client, standalone, self.limits.sse_keepalive)
        finally:
            client.stop()
            if standalone:
                legacy.close_get(stream, client)
        await end_body(send)

    async def delete(
        self, headers: Headers, send: Send, principal: Principal | None = None
    ) -> None:
        """A DELETE: the session ends."""
        sessions = self.sessions

        def take(session_id: str) -> LegacySession | None:
            owned = _owned(sessions.get(session_id), principal)
            return sessions.pop(session_id) if owned is not None else None

        session_id = text(headers, b"mcp-session-id")
        try:
            if session_id is not None and self.shared is not None:
                await self._found(session_id)  # (a view of it here, to check its owner)
        except SessionStoreUnavailable as exc:
            await refuse(send, 503, f"Service Unavailable: {exc}; retry later")
            return
        legacy = await self._named_session(headers, send, "DELETE", take)
        if legacy is None:
            return
        legacy.end()
        if session_id is not None and self.shared is not None:
            with contextlib.suppress(SessionStoreUnavailable):  # it expires there
                await self.shared.delete(session_id)
                await self.shared.route(session_id, CHANGED, None)  # gone: views end
        await respond(send, 200, b"")

    async def _named_session(
        self,
        headers: Headers,
        send: Send,
        method: str,
        lookup: Callable[[str], LegacySession | None],
    ) -> LegacySession | None:
        """The session ``Mcp-Session-Id`` names, found by ``lookup`` (``get``, or ``pop`` to
        take it out); None once the refusal is sent (405 without the header: GET and DELETE
        mean nothing outside a session; 404 for one that is unknown)."""
        session_id = text(headers, b"mcp-session-id")
        if session_id is None:
            body = jsonrpc.encode_error(None, INVALID_REQUEST, f"{method} needs a session")
            await respond(send, 405, body, allow=True)
            return None
        legacy = lookup(session_id)
        if legacy is None:
            await refuse(send, 404, "Session not found")
        return legacy


def _outbox_id(text: str) -> bool:
    """Whether ``text`` is an outbox id as the store makes them (two 64-bit numbers)."""
    if not OUTBOX_ID.fullmatch(text):
        return False
    return all(int(part) < 1 << 64 for part in text.split("-"))


async def _kept_alive(send: Send, sent: bool, written: float, limits: Limits) -> float:
    """When a stream last had bytes, a comment written after ``sse_keepalive`` seconds of
    silence."""
    now = time.monotonic()
    if sent:
        return now
    if now - written >= limits.sse_keepalive:
        await sse_comment(send)
        return now
    return written


async def _unresumable(name: str, requests: tuple[RequestId, ...], send: Send) -> None:
    """A resumption of a stream no longer kept: an error for each request it answered, so
    the client knows its answers are lost rather than waiting for them."""
    message = (
        f"Cannot resume stream {name}: it is no longer kept (Limits.finished_streams); "
        "send the request again"
    )
    await start_sse(send, None)
    for request_id in requests or (None,):
        await sse_event(send, jsonrpc.encode_error(request_id, INTERNAL_ERROR, message), None)
    await end_body(send)


def _owner(principal: Principal | None) -> str | None:
    return principal.key if principal is not None else None


def _owned(legacy: LegacySession | None, principal: Principal | None) -> LegacySession | None:
    """``legacy`` if it belongs to ``principal`` (who began it); a session of someone
    else is, to this request, no session at all (404), whoever learned its id."""
    if legacy is None or legacy.owner != _owner(principal):
        return None
    return legacy
