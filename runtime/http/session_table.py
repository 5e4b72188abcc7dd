"""Legacy Streamable HTTP sessions (``Mcp-Session-Id``): what each one holds, and the
bounded table of them.

A session is state a client leaves on the server, so the table bounds it: at most
``Limits.max_sessions`` at once (a new one evicts the session idle longest), an idle
session ends after ``Limits.session_idle_timeout``, each session keeps at most
``Limits.max_get_streams`` GET streams and ``Limits.finished_streams`` finished SSE streams
for resumption, each of those at most ``Limits.event_log_size`` events. A request naming an
ended session gets 404, after which the spec has the client start a new one.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable, Iterable, Iterator

from .shared_sessions import SessionRecord
from .streams import ClientWatch, Router, Stream
from ..core.jsonrpc import RequestId
from ..core.lane import Lane
from ..core.limits import Limits
from ..aio.session import Session

#: The longest request id (a string) remembered for a stream no longer kept.
_KEPT_ID = 256
#: Sessions looked at per request for idle expiry (the table is kept oldest first, so
#: expiry costs a constant per request however many sessions there are).
_EXPIRY_SCAN = 8


class LegacySession:
    """One legacy session: its asyncio session, router, and the streams a client may
    resume."""

    def __init__(self, session: Session, router: Router, limits: Limits) -> None:
        self.session = session
        self.router = router
        self.limits = limits
        self.streams: dict[str, Stream] = {}
        self.finished: deque[str] = deque()
        #: Streams no longer kept, and the requests they answered (a resumption of one is
        #: told its answers are lost): as many as ``finished_streams``.
        self.dropped: OrderedDict[str, tuple[RequestId, ...]] = OrderedDict()
        self.next_stream = 0
        #: Open standalone GET streams, oldest first.
        self.gets: list[Stream] = []
        #: POSTs of this session being served right now.
        self.posts = 0
        self.last_seen = time.monotonic()
        #: Who began it, on a protected endpoint (``Principal.key``): only they may use it.
        self.owner: str | None = None
        #: Its record as last read or written, when processes share their sessions
        #: (``runtime.http.shared_sessions``); None: this process's alone.
        self.record: SessionRecord | None = None
        #: When this process last renewed its expiry in the shared store.
        self.touched_at = 0.0
        #: Shared: what its stream names begin with (the process's tag: unique among
        #: them), what begins recording a stream once it is SSE, and how many GET streams
        #: here follow its outbox.
        self.stream_prefix = ""
        self.recording: Callable[[Stream], Awaitable[None]] | None = None
        self.following = 0
        #: The session ended (its GET streams end too).
        self.ended = False
        #: Reads its POSTs of one plain request (``runtime.core.lane``).
        self.lane = Lane(session.conn)

    @property
    def busy(self) -> bool:
        """A request of this session is being answered (it must not be evicted)."""
        return self.posts > 0 or self.session.in_flight > 0

    @property
    def present(self) -> bool:
        """The client is here: busy, or listening on a GET stream."""
        return self.busy or bool(self.gets) or self.following > 0

    def new_stream(self, requests: Iterable[RequestId] = ()) -> Stream:
        self.next_stream += 1
        limits = self.limits
        name = f"{self.stream_prefix}s{self.next_stream}"
        stream = Stream(name, requests, limits.event_log_size, limits.stream_queue)
        self.streams[stream.name] = stream
        return stream

    def finish(self, stream: Stream, streamed: bool) -> None:
        """A stream is complete: keep it for resumption only if it was SSE."""
        if not streamed:
            self.streams.pop(stream.name, None)
            return
        self.finished.append(stream.name)
        while len(self.finished) > self.limits.finished_streams:
            gone = self.streams.pop(self.finished.popleft(), None)
            if gone is not None and gone.requests:
                self._forget(gone)

    def _forget(self, stream: Stream) -> None:
        """Remember what a dropped stream answered: only short ids (a client chooses
        them), at most ``finished_streams`` streams."""
        short = all(isinstance(i, int) or len(i) <= _KEPT_ID for i in stream.requests)
        self.dropped[stream.name] = stream.requests if short else ()
        while len(self.dropped) > self.limits.finished_streams:
            self.dropped.popitem(last=False)

    def open_get(self) -> Stream:
        """A new standalone GET stream; beyond ``max_get_streams`` the oldest is ended (a
        client that lost its stream and reconnects replaces it)."""
        stream = self.new_stream()
        stream.shared = True  # announcements to every session never wait for this one
        self.gets.append(stream)
        while len(self.gets) > self.limits.max_get_streams:
            self.gets.pop(0).close()
        self.router.standalone = stream
        return stream

    def reopen_get(self, stream: Stream) -> None:
        """A GET stream resumed (``Last-Event-ID``): the session's GET stream again."""
        if stream.name in self.finished:
            self.finished.remove(stream.name)
        if stream in self.gets:
            self.gets.remove(stream)
        self.gets.append(stream)
        while len(self.gets) > self.limits.max_get_streams:
            self.gets.pop(0).close()
        self.router.standalone = stream

    def close_get(self, stream: Stream, reader: ClientWatch) -> None:
        """A GET stream's ``reader`` is done (its client left, or the stream was replaced
        or closed); nothing changes if another reader has taken the stream over."""
        if stream.reader is not None and stream.reader is not reader:
            return
        if stream in self.gets:
            self.gets.remove(stream)
        if self.router.standalone is stream and self.gets:
            self.router.standalone = self.gets[-1]
        # Otherwise announcements still go to it, recorded for the client's resumption.
        self.finish(stream, True)

    def end(self) -> None:
        """Stop the session: running handlers are cancelled, GET streams closed."""
        self.ended = True
        self.session.stop()
        for stream in self.gets:
            stream.close()


class SessionTable:
    """The live legacy sessions by id, least recently used first."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._by_id: OrderedDict[str, LegacySession] = OrderedDict()

    def __len__(self) -> int:
        return len(self._by_id)

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._by_id

    def values(self) -> Iterator[LegacySession]:
        return iter(list(self._by_id.values()))

    def get(self, session_id: str) -> LegacySession | None:
        """The session, marked as used now; None when unknown, ended or expired."""
        self.expire()
        legacy = self._by_id.get(session_id)
        if legacy is None:
            return None
        now = time.monotonic()
        if now - legacy.last_seen > self.limits.session_idle_timeout and not legacy.present:
            del self._by_id[session_id]  # expired, though not yet among the oldest looked at
            legacy.end()
            return None
        legacy.last_seen = now
        self._by_id.move_to_end(session_id)
        return legacy

    def has_room(self) -> bool:
        """Whether a new session can be added, evicting the one idle longest if need be
        (False when every session is busy answering a request)."""
        self.expire()
        while len(self._by_id) >= self.limits.max_sessions:
            victim = next((sid for sid, s in self._by_id.items() if not s.busy), None)
            if victim is None:
                return False
            self._by_id.pop(victim).end()
        return True

    def add(self, session_id: str, legacy: LegacySession) -> bool:
        """Keep a new session; False (and the session ended) when there is no room."""
        if not self.has_room():
            legacy.end()
            return False
        self._by_id[session_id] = legacy
        return True

    def pop(self, session_id: str) -> LegacySession | None:
        return self._by_id.pop(session_id, None)

    def expire(self) -> None:
        """End sessions idle for ``session_idle_timeout`` (a client still present, busy or
        listening on a GET stream, counts as use)."""
        cutoff = time.monotonic() - self.limits.session_idle_timeout
        for _ in range(min(_EXPIRY_SCAN, len(self._by_id))):
            session_id, legacy = next(iter(self._by_id.items()))
            if legacy.last_seen >= cutoff:
                return
            if legacy.present:
                legacy.last_seen = time.monotonic()
                self._by_id.move_to_end(session_id)
            else:
                del self._by_id[session_id]
                legacy.end()
