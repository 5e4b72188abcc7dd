"""The HTTP+SSE transport of protocol 2024-11-05, which the later revisions keep for
backwards compatibility: a client opens a stream with GET on the SSE path; its first event,
``endpoint``, names the URL to POST its messages to (the messages path with the session's
id); each POST is accepted with 202, and everything the server sends (answers,
notifications, its own requests) goes down the stream as ``event: message``.

A session lives as long as its stream: when the client leaves, its running handlers are
cancelled and the session forgotten (a later POST naming it gets 404). Over the stream a
client may negotiate any version this server speaks, as over stdio.

Bounded like the Streamable HTTP side: at most ``Limits.max_sessions`` streams at once
(503 beyond), POST bodies of ``max_message_bytes`` read within ``body_timeout`` (413, 408),
``stream_queue`` frames waiting for a slow reader (then a handler writing more waits),
``max_in_flight`` requests per session. ``Host``/``Origin`` and authorization are checked by
the app before a request reaches this module; a session answers only the principal that
opened it.
"""

from __future__ import annotations

import logging
import secrets
from typing import TYPE_CHECKING
from urllib.parse import parse_qs

from ..core import jsonrpc
from ..core.limits import Limits
from ..core.modern import HttpHeaders
from ..aio.session import Session
from .answers import Answers
from .asgi import BodyRefused, Headers, Receive, Send, end_body, read_body, refuse, respond
from .asgi import start_sse
from .post_headers import is_json
from .served import HttpServed
from .streams import ClientWatch, Router, Stream, relay

if TYPE_CHECKING:
    from .auth.principal import Principal

log = logging.getLogger("mcpgen.runtime.http.sse_endpoint")

#: The query parameter naming the session in the messages URL (what the SDKs use).
SESSION_PARAM = "session_id"


class SseSession:
    """One HTTP+SSE session: its asyncio session, the stream it writes to, and who
    opened it (``Principal.key``, on a protected endpoint)."""

    __slots__ = ("session", "stream", "owner")

    def __init__(self, session: Session, stream: Stream, owner: str | None) -> None:
        self.session = session
        self.stream = stream
        self.owner = owner


class SseEndpoint:
    """Serves ``server``'s HTTP+SSE sessions: ``get`` opens one, ``post`` feeds one;
    ``messages_path`` is where the ``endpoint`` event sends the client."""

    def __init__(
        self, server: HttpServed, answers: Answers, limits: Limits, messages_path: str
    ) -> None:
        self.server = server
        self.answers = answers
        self.limits = limits
        self.messages_path = messages_path
        self.sessions: dict[str, SseSession] = {}

    async def get(
        self,
        headers: Headers,
        root_path: str,
        receive: Receive,
        send: Send,
        principal: Principal | None = None,
    ) -> None:
        """A client opens its stream: a new session, served until it leaves."""
        if b"text/event-stream" not in headers.get(b"accept", b"text/event-stream").lower():
            await refuse(send, 406, "Not Acceptable: the SSE endpoint sends text/event-stream")
            return
        if len(self.sessions) >= self.limits.max_sessions:
            message = (
                f"Service Unavailable: all {self.limits.max_sessions} sessions are open "
                "(Limits.max_sessions); retry later"
            )
            await refuse(send, 503, message)
            return
        limits = self.limits
        stream = Stream("sse", (), limits.event_log_size, limits.stream_queue)
        router = Router()
        router.standalone = stream  # one stream carries everything
        session = self.answers.session(router, self.server.connection())
        session_id = secrets.token_hex(16)
        self.sessions[session_id] = SseSession(session, stream, _owner(principal))
        client = ClientWatch(receive)
        try:
            await start_sse(send, None)
            where = f"{root_path}{self.messages_path}?{SESSION_PARAM}={session_id}"
            event = b"event: endpoint\ndata: " + where.encode() + b"\n\n"
            await send({"type": "http.response.body", "body": event, "more_body": True})
            await relay(stream, send, client, True, self.limits.sse_keepalive)
        except OSError as exc:  # the client went away while we wrote
            log.debug("SSE session %s: %s", session_id, exc)
        finally:
            client.stop()
            self.sessions.pop(session_id, None)
            session.stop()
            stream.close()
        await end_body(send)

    async def post(
        self,
        query: bytes,
        headers: Headers,
        receive: Receive,
        send: Send,
        principal: Principal | None = None,
    ) -> None:
        """A client's message(s) for its session: 202, the answers on its stream."""
        named = parse_qs(query.decode("latin-1")).get(SESSION_PARAM, [])
        if len(named) != 1:
            await refuse(send, 400, f"Bad Request: name one session ({SESSION_PARAM}=...)")
            return
        sse = self.sessions.get(named[0])
        if sse is None or sse.owner != _owner(principal):
            await refuse(send, 404, "Session not found")
            return
        if not is_json(headers.get(b"content-type", b"")):
            await refuse(send, 415, "Unsupported Media Type: use application/json")
            return
        limits = self.limits
        try:
            body = await read_body(receive, limits.max_message_bytes, limits.body_timeout)
        except BodyRefused as refused:
            await refuse(send, refused.status, refused.message)
            return
        parsed = jsonrpc.parse(body, limits.max_depth, limits.max_batch)
        messages = parsed[0]
        if not parsed[1] and type(messages[0]) is jsonrpc.Invalid:
            refused = messages[0]  # nothing readable: refused here, the stream untouched
            error = jsonrpc.encode_error(refused.id, refused.code, refused.message)
            await respond(send, 400, error)
            return
        await respond(send, 202, b"")
        # Messages over the stream are read as over stdio: no per-request MCP headers;
        # only who sent them, on a protected endpoint.
        http = None
        if principal is not None:
            http = HttpHeaders(request=headers, principal=principal, per_request=False)
        await sse.session.feed_parsed(parsed, http)


def _owner(principal: Principal | None) -> str | None:
    return principal.key if principal is not None else None


__all__ = ["SESSION_PARAM", "SseEndpoint", "SseSession"]
