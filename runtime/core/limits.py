"""Every bound the runtime puts on what a peer can make it hold, in one settings object.

A server exposed to untrusted clients must not let any of them grow its memory or tie up
its tasks without limit. Each field below caps one resource; the defaults are safe for a
server on the open network and generous for well-behaved clients. Pass your own with
``Server(..., limits=Limits(max_in_flight=256))``; ``dataclasses.replace``-style copies come
from :meth:`Limits.but`.

What each limit yields when reached is part of its contract (and of the table in docs/limits.md):
the peer always gets an answer, never silence, and the server keeps serving.
"""

from __future__ import annotations

import msgspec

MiB = 1024 * 1024


class Limits(msgspec.Struct, frozen=True, kw_only=True):
    """Bounds on one server (or client) and each of its connections."""

    #: Longest message read: a stdio line or an HTTP request body, in bytes. A stdio line
    #: over it is skipped and answered with -32600; an HTTP body gets 413.
    max_message_bytes: int = 4 * MiB
    #: Deepest nesting of JSON arrays and objects in a message. Deeper input is refused
    #: with -32600 before anything decodes it (HTTP: 400).
    max_depth: int = 64
    #: Messages in one JSON-RPC batch (2025-03-26 has batches). A longer batch is refused
    #: as a whole with one -32600 (HTTP: 400) instead of one answer per element.
    max_batch: int = 64
    #: Requests of one connection (a stdio peer, a legacy HTTP session) whose handlers run
    #: at once. Beyond it the reader waits (backpressure: nothing more is read, so nothing
    #: more is held); while a handler waits on the peer, excess requests are refused with
    #: -32000 instead, since the peer's answer must still be read.
    max_in_flight: int = 64
    #: Legacy Streamable HTTP sessions kept at once. A new session beyond it evicts the
    #: session idle longest; when every session is busy, ``initialize`` gets 503.
    max_sessions: int = 1000
    #: Seconds a legacy HTTP session may go without a request before it is ended; its
    #: next request gets 404 (the spec's answer, after which a client starts anew).
    session_idle_timeout: float = 1800.0
    #: Standalone GET streams open at once per legacy session; a new one beyond it ends
    #: the oldest (a client reconnecting replaces the stream it lost).
    max_get_streams: int = 1
    #: Events a legacy SSE stream keeps for resumption with ``Last-Event-ID``, besides its
    #: answers (kept whatever came after them, so a resumed stream always ends with them).
    event_log_size: int = 256
    #: Seconds a legacy session's recorded events stay in a shared store
    #: (``runtime.cluster``) after the last one: a stream resumed later finds nothing. In
    #: one process, events go with their session (``session_idle_timeout``).
    event_log_age: float = 600.0
    #: Frames an SSE stream holds for a client that has not read them yet. A handler
    #: sending more waits until the client reads (backpressure); a GET or listen stream,
    #: fed by announcements to every session, cuts such a client off instead (a legacy
    #: one resumes with ``Last-Event-ID``).
    stream_queue: int = 64
    #: Finished SSE streams a legacy session keeps for resumption; older ones are dropped.
    finished_streams: int = 64
    #: Seconds an HTTP client may take to send its request headers (``serve`` and the
    #: ``mcpgen`` HTTP command; other ASGI servers have their own setting).
    header_timeout: float = 10.0
    #: Seconds an HTTP client may take to send a request body; a slower one gets 408.
    body_timeout: float = 30.0
    #: HTTP connections open at once (``serve``; lowered to what the process's file
    #: descriptor limit leaves room for). One more gets 503 and is closed at once; a
    #: warning is logged at most every 10 s while connections are refused.
    max_connections: int = 1000
    #: Seconds an HTTP connection may stay open with no request under way: after it
    #: connects and after each response (``serve``: uvicorn's ``timeout_keep_alive``).
    #: Bytes that begin no request do not extend it.
    idle_timeout: float = 5.0
    #: Seconds a connection whose request was answered before its body came (a refusal
    #: decided from the headers) is kept half-closed, what the client still sends
    #: discarded, so that it reads the answer rather than a reset; then it is closed.
    linger_timeout: float = 2.0
    #: Seconds the requests in flight get to finish when an HTTP server stops (SIGTERM:
    #: ``serve``'s uvicorn, its ``timeout_graceful_shutdown``), once it stopped accepting
    #: and closed its streams (each told to come back, ``retry``); those still running are
    #: then cancelled.
    shutdown_grace: float = 30.0
    #: Seconds an HTTP SSE stream may stay silent before the server writes a comment line
    #: (which clients ignore), so that a proxy or balancer cutting idle responses (nginx
    #: and haproxy after 60 s by default) leaves a quiet GET or listen stream, or a long
    #: tool call, open.
    sse_keepalive: float = 15.0
    #: Resources one session may be subscribed to at once: a legacy session's
    #: ``resources/subscribe`` URIs; in 2026-07-28 the URIs (and task ids) one
    #: ``subscriptions/listen`` names, and (stdio) those of one connection's open listen
    #: streams together (a stream naming none counts as one; over HTTP each stream is a
    #: connection, bounded by ``max_connections``). Beyond it: -32602 naming this limit;
    #: the subscriptions held are kept.
    max_subscriptions: int = 1000
    #: Longest URI (in characters) a client may subscribe to, or name in a listen filter
    #: (task ids there too); a longer one is refused with -32602 and nothing is held.
    #: 2,048 is more than real resource URIs need; a server whose own URIs run longer
    #: raises it.
    max_uri_length: int = 2048
    #: Seconds one side waits for the answer to its own request; then it cancels the
    #: request at the peer. A server's requests to the client (sampling, elicitation,
    #: roots, ping): the handler gets ``errors.RequestTimeout`` (a tool's result says so).
    #: A client's requests: the caller gets ``RequestTimeout``. ``math.inf``: no timeout.
    request_timeout: float = 60.0
    #: Rounds of ``input_required`` (2026-07-28 multi-round requests) a client answers for
    #: one request before it gives up with -32600; a server that keeps asking cannot keep
    #: the client's request going forever.
    max_input_rounds: int = 8
    #: Pages a client reads of one list (``ClientSession.pages``, ``list_all``): a server
    #: whose cursors never end, or come round again, cannot keep it reading. Beyond it:
    #: ``PaginationError`` naming this limit.
    max_pages: int = 1000
    #: Items a client gathers from the pages of one list (``ClientSession.list_all``);
    #: beyond it: ``PaginationError`` naming this limit, and nothing gathered is kept.
    max_list_items: int = 100_000
    #: Results a client's response cache holds (``runtime.client.cache``, memory store);
    #: beyond it the least recently used is dropped.
    cache_entries: int = 1024
    #: Longest a client keeps a result fresh, in seconds, whatever its ``ttlMs`` says.
    max_cache_ttl: float = 3600.0
    #: Distinct changes one ``ClientSession.listen`` holds before its reader takes them
    #: (repeats of one change are held once); beyond it the resource updates collapse
    #: into one "re-read every subscribed resource".
    listen_backlog: int = 1024

    def __post_init__(self) -> None:
        for name in self.__struct_fields__:
            value = getattr(self, name)
            if value <= 0:
                raise ValueError(f"Limits.{name} must be positive, got {value!r}")

    def replace(self, **changes: float) -> Limits:
        """A copy with ``changes`` applied (validated like the original)."""
        return msgspec.structs.replace(self, **changes)


#: The defaults of a server.
DEFAULT = Limits()
#: The defaults of a client: it trusts the server it chose to reach more than a server
#: trusts anyone who connects, and server answers (a resource, an image) run larger.
CLIENT = Limits(max_message_bytes=64 * MiB, max_in_flight=256)
