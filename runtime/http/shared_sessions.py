"""Legacy sessions shared by the processes of one server, so that any of them serves any
POST of a session (no sticky routing).

A session's record (its negotiated version, the client's info and capabilities, its log
level, its resource subscriptions, who began it) lives in a :class:`SharedSessions` store
(``runtime.cluster`` has one over Redis); each process keeps a view of the sessions it
serves (``runtime.http.session_table``), made from the record the first time a request of
one reaches it (``Connection.take_up``), and writes back what a request changed. A record
unused for ``Limits.session_idle_timeout`` expires everywhere; at most
``Limits.max_sessions`` are kept, the one used longest ago leaving first.

What one process asks of a client (sampling, elicitation, roots) has an id beginning with
that process's ``tag``: the client's answer, whichever process it reaches, is routed to
the one waiting for it; a cancellation is routed to every process, each cancelling the
request if it runs it; a change of the record (a subscription, a log level, its end) is
announced to every process, whose views read it again (or end).

What a session is sent goes through the store's :class:`SessionEvents`, so that no
event depends on the process that made it: a POST's SSE stream is recorded as it is
sent (any process resumes it after ``Last-Event-ID``, and ends it with an error for each
request whose process died before answering); what the server sends outside any request
goes to the session's outbox, which its GET stream follows, on whichever process holds
it (one GET stream per session: a new one replaces the last).
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from typing import Any, Protocol

import msgspec

from ..core import jsonrpc
from ..core.jsonrpc import RequestId
from ..core.limits import Limits

#: Takes a frame routed here: (session id, the frame as the client sent it).
Routed = Callable[[str, bytes], Awaitable[None]]
CANCELLED = "notifications/cancelled"
#: The frame routed to every process when a session's record changed (or is gone): their
#: views read it again.
CHANGED = b""
#: What the tag of every process sharing sessions ends with (the ids of the requests one
#: sends are ``<tag><n>``; a client's own ids never matter here: only answers are routed).
TAG_END = "~"
#: A process's tag (``p`` and ten hex digits, then :data:`TAG_END`), and an id it made.
TAG = re.compile(r"p[0-9a-f]{10}" + re.escape(TAG_END))
TAGGED_ID = re.compile(r"(" + TAG.pattern + r")[0-9]{1,18}")


class SessionStoreUnavailable(Exception):
    """The sessions' store cannot serve now (its requests are answered 503: retry)."""


class SessionRecord(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What a legacy session is, as every process serving it reads it."""

    version: str
    client_info: dict[str, Any] = msgspec.field(default_factory=dict[str, Any])
    client_capabilities: dict[str, Any] = msgspec.field(default_factory=dict[str, Any])
    log_level: str | None = None
    owner: str | None = None
    subscriptions: list[str] = msgspec.field(default_factory=list[str])


#: An event of a recorded stream: its number on the stream, its data.
Recorded = tuple[int, bytes]
#: A message of a session's outbox: its id there, its data.
Posted = tuple[str, bytes]


class SessionEvents(Protocol):
    """The events of the shared sessions' SSE streams, kept for every process: what a
    stream resumed on any process replays, and what a session's GET stream follows.
    Writes never raise (an event that cannot be kept is logged, as the store's outage);
    reads raise :class:`SessionStoreUnavailable`."""

    async def opened(
        self,
        session_id: str,
        stream: str,
        requests: Sequence[RequestId],
        sent: Sequence[tuple[int, bytes, bool]],
        limits: Limits,
    ) -> None:
        """Begin recording the SSE stream ``stream`` (named ``<tag>s<n>``) of a POST
        answering ``requests``, with what it ``sent`` so far (number, data, whether it is
        an answer); the session's oldest recorded streams beyond
        ``limits.finished_streams`` are forgotten."""
        ...

    async def record(
        self, session_id: str, stream: str, number: int, data: bytes, final: bool, limits: Limits
    ) -> None:
        """Record the next event of a stream begun with :meth:`opened`."""
        ...

    async def requests_of(self, session_id: str, stream: str) -> list[RequestId] | None:
        """The requests a recorded stream answers (None: no such stream is kept)."""
        ...

    def follow(
        self, session_id: str, stream: str, after: int, requests: Sequence[RequestId]
    ) -> AsyncGenerator[Recorded, None]:
        """A recorded stream's events after number ``after`` (its answers always), then
        the next ones as they come, until every request is answered; a request whose
        process stopped before answering it gets an error instead (numbered 0). Numbered
        -1: nothing came for a while (no event; the reader may look around)."""
        ...

    async def post(self, session_id: str, data: bytes, limits: Limits) -> None:
        """Put a message of the server's own in the session's outbox."""
        ...

    async def announce(self, data: bytes, uri: str | None, limits: Limits) -> int:
        """Put an announcement in the outbox of every session (with ``uri``: of every
        session subscribed to it); how many."""
        ...

    async def head(self, session_id: str) -> str:
        """The id of the last message in the session's outbox (where following begins)."""
        ...

    def outbox(
        self, session_id: str, after: str, limits: Limits
    ) -> AsyncGenerator[list[Posted], None]:
        """The outbox's messages after ``after``, in batches as they come (an empty batch
        now and then: the caller may look around), until another GET stream of the
        session takes the outbox over."""
        ...


class SharedSessions(Protocol):
    """Where the processes of one server keep their legacy sessions, and how frames
    reach the process they concern."""

    #: This process's name among them: what the ids of the requests it sends begin with.
    tag: str

    @property
    def events(self) -> SessionEvents:
        """Where the sessions' events are kept."""
        ...

    async def start(self, routed: Routed) -> None:
        """Begin handing the frames other processes route here to ``routed``."""
        ...

    async def create(
        self, session_id: str, record: SessionRecord, idle_s: float, max_sessions: int
    ) -> None:
        """Keep a new session (the one used longest ago leaves when there are more than
        ``max_sessions``)."""
        ...

    async def load(self, session_id: str) -> SessionRecord | None:
        """The session's record (None: unknown, ended or expired)."""
        ...

    async def touch(self, session_id: str, idle_s: float) -> bool:
        """Mark the session used now; False when it is gone."""
        ...

    async def save(self, session_id: str, record: SessionRecord, idle_s: float) -> None:
        """Write back what a request changed of the session (nothing, if it is gone)."""
        ...

    async def delete(self, session_id: str) -> None: ...

    async def route(self, session_id: str, frame: bytes, to: str | None) -> None:
        """Send ``frame`` of the session to the process tagged ``to`` (None: to all the
        others)."""
        ...

    async def close(self) -> None: ...


def frame_of(message: jsonrpc.Message) -> bytes | None:
    """A client's response or notification as a frame to route (None: anything else)."""
    if isinstance(message, jsonrpc.Response):
        return jsonrpc.encode_result(message.id, message.result)
    if isinstance(message, jsonrpc.ErrorResponse):
        return jsonrpc.encode_error(message.id, message.code, message.message, message.data)
    if isinstance(message, jsonrpc.Notification):
        return jsonrpc.encode_notification(message.method, message.params or msgspec.UNSET)
    return None


def owner_tag(request_id: RequestId | None) -> str | None:
    """The tag of the process a response's ``request_id`` names (ids of requests sent by
    a process sharing sessions are ``<tag><n>``, a tag being :data:`TAG`); None for any
    other id (a client's answer naming no such id is this process's to refuse)."""
    if not isinstance(request_id, str):
        return None
    found = TAGGED_ID.fullmatch(request_id)
    return found.group(1) if found is not None else None


def split_routed(
    parsed: jsonrpc.Parsed, tag: str
) -> tuple[jsonrpc.Parsed, list[tuple[bytes, str | None]]]:
    """What of a POST body this process feeds itself, and what it routes: answers to
    another process's requests (to it), cancellations (to all the others too)."""
    messages, batch = parsed
    kept: list[jsonrpc.Message] = []
    routed: list[tuple[bytes, str | None]] = []
    for message in messages:
        if isinstance(message, (jsonrpc.Response, jsonrpc.ErrorResponse)):
            owner = owner_tag(message.id)
            frame = frame_of(message)
            if owner is not None and owner != tag and frame is not None:
                routed.append((frame, owner))
                continue
        elif isinstance(message, jsonrpc.Notification) and message.method == CANCELLED:
            frame = frame_of(message)
            if frame is not None:
                routed.append((frame, None))
        kept.append(message)
    return (kept, batch), routed


__all__ = [
    "CANCELLED",
    "CHANGED",
    "Posted",
    "Recorded",
    "SessionEvents",
    "TAG",
    "TAGGED_ID",
    "TAG_END",
    "Routed",
    "SessionRecord",
    "SessionStoreUnavailable",
    "SharedSessions",
    "frame_of",
    "owner_tag",
    "split_routed",
]
