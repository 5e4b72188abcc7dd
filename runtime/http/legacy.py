"""The legacy side of the HTTP app (2025-03-26 to 2025-11-25): sessions begun by an
``initialize`` POST and named by ``Mcp-Session-Id``, their later POSTs, GET streams (the
server's own messages, and resumption of any stream after ``Last-Event-ID``), DELETE."""

from __future__ import annotations


import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING

from .served import HttpServed
from ..core import jsonrpc
from .asgi import Headers, Receive, Send, end_body, refuse, respond, sse_event, start_sse, text
from ..core.errors import INTERNAL_ERROR, INVALID_REQUEST
from .answers import Answers, polls
from .streams import ClientWatch, Router, Stream, relay
from ..core.jsonrpc import RequestId
from .session_table import LegacySession, SessionTable
from ..core.limits import Limits
from ..core.modern import HttpHeaders
from .post_headers import mcp_headers

if TYPE_CHECKING:
    from .auth.principal import Principal


class LegacyEndpoint:
    """Serves the legacy sessions of ``server`` held in ``sessions``."""

    def __init__(
        self, server: HttpServed, sessions: SessionTable, limits: Limits, answers: Answers
    ) -> None:
        self.server = server
        self.sessions = sessions
        self.limits = limits
        self.answers = answers

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
        legacy = _owned(self.sessions.get(session_id), principal)
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
            http = mcp_headers(headers, stated, principal)
            await self.answers.exchange(
                legacy.session, legacy.router, parsed, requests, http, receive, send, legacy
            )
        finally:
            legacy.posts -= 1

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
        session = self.answers.session(router, self.server.connection())
        session_id = secrets.token_urlsafe(24)
        legacy = LegacySession(session, router, self.limits)
        legacy.owner = _owner(http.principal)
        extra = {"mcp-session-id": session_id}
        legacy.posts += 1
        try:
            await self.answers.exchange(
                session, router, parsed, requests, http, receive, send, legacy, extra
            )
        finally:
            legacy.posts -= 1
        if session.conn.version is not None:
            self.sessions.add(session_id, legacy)

    async def get(
        self, headers: Headers, receive: Receive, send: Send, principal: Principal | None = None
    ) -> None:
        """A GET: the session's own stream, or a stream resumed after ``Last-Event-ID``."""
        if b"text/event-stream" not in headers.get(b"accept", b"").lower():
            await refuse(send, 406, "Not Acceptable: GET needs Accept: text/event-stream")
            return
        found = self.sessions.get
        legacy = await self._named_session(
            headers, send, "GET", lambda session_id: _owned(found(session_id), principal)
        )
        if legacy is None:
            return
        last = text(headers, b"last-event-id")
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
            await relay(stream, send, client, keep_open=True)
        finally:
            client.stop()
            legacy.close_get(stream, client)
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
            await relay(stream, send, client, keep_open=standalone)
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

        legacy = await self._named_session(headers, send, "DELETE", take)
        if legacy is None:
            return
        legacy.end()
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
