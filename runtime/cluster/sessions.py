"""Legacy sessions in Redis, for every process of one server
(:class:`~runtime.http.shared_sessions.SharedSessions`).

* A session's record is ``{prefix}session:{id}`` (msgspec JSON), expiring after the idle
  timeout, which every use renews; ``{prefix}sessions`` orders the sessions by last use,
  so that past ``max_sessions`` the one used longest ago leaves (cluster-wide).
* What sessions are sent (their SSE streams, their outboxes) is kept by
  :class:`~runtime.cluster.events.RedisEvents` (``events``), for any process to resume.
* Frames for another process (a client's answer to one of its requests, a cancellation)
  go on ``{prefix}frames:{tag}`` (one process) or ``{prefix}frames:*all`` (every other).
  Pub/sub keeps nothing: a frame routed while the process is not subscribed is lost, as
  an answer to a process that died is (its request died with it).

While Redis is away, a request of a session gets an error saying the sessions' store is
unavailable (the HTTP layer answers it as a server error), logged once as the outage
begins and once as it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from typing import Any, cast

import msgspec

try:
    from redis import exceptions as redis_errors
    from redis.asyncio import Redis
except ImportError as missing:  # pragma: no cover - exercised without the extra installed
    raise ImportError("RedisSessions needs redis-py: pip install 'mcpgen[redis]'") from missing

from ..http.shared_sessions import CHANGED, TAG_END, Routed, SessionRecord
from ..http.shared_sessions import SessionStoreUnavailable
from ..tasks.outage import Outage
from .events import BLOCK_S, RedisEvents
from .pubsub import listen
from ..tasks.redis_errors import UNREACHABLE

log = logging.getLogger("mcpgen.runtime.cluster.sessions")

SOCKET_TIMEOUT = CONNECT_TIMEOUT = 5.0
#: The largest frame routed (bytes): a client's POST body is bounded far below it.
MAX_FRAME = 8 << 20
ALL = "*all"
#: Seconds a process that stops renewing its heartbeat is still taken for alive: a
#: stream it served, resumed elsewhere, waits this long for its answers at most.
ALIVE_S = 15.0
#: Connections the followers' blocking reads may hold at once, per process.
FOLLOWERS = 10_000


class Routing(msgspec.Struct, frozen=True):
    """A frame on its way to another process: origin, session, the frame."""

    o: str
    s: str
    f: str


_record = msgspec.json.Decoder(SessionRecord).decode
_routing = msgspec.json.Decoder(Routing).decode


class RedisSessions:
    """Legacy sessions kept in the Redis at ``url`` (or a ``redis.asyncio.Redis``), under
    ``prefix``, for the processes of one server."""

    def __init__(
        self,
        url: str | Redis = "redis://127.0.0.1:6379/0",
        *,
        prefix: str = "mcpgen:",
        socket_timeout: float = SOCKET_TIMEOUT,
        connect_timeout: float = CONNECT_TIMEOUT,
        alive_s: float = ALIVE_S,
    ) -> None:
        if not min(socket_timeout, connect_timeout, alive_s) > 0:
            raise ValueError("socket_timeout, connect_timeout and alive_s must be positive")
        self.prefix = prefix
        self.tag = "p" + secrets.token_hex(5) + TAG_END
        self.outage = Outage(
            "sessions' store (Redis)", "requests of legacy sessions fail until it is back"
        )
        self._owns_client = isinstance(url, str)
        blocking: Any = None
        if isinstance(url, str):
            timeouts = {"socket_timeout": socket_timeout, "socket_connect_timeout": connect_timeout}
            # The followers' blocking reads each hold a connection of their own pool, as
            # many as streams are followed here (at most Limits.max_sessions GET streams):
            # the other calls' pool is never drained by them.
            blocking = cast(Any, Redis).from_url(url, max_connections=FOLLOWERS, **timeouts)
            url = cast(Any, Redis).from_url(url, **timeouts)
        self._client: Any = url
        self._blocking: Any = blocking
        self._listener: asyncio.Task[None] | None = None
        self._subscribed = asyncio.Event()
        #: A follower's wait for the next event: well within the socket timeout.
        block_s = min(BLOCK_S, socket_timeout / 2)
        self.events = RedisEvents(
            self._client,
            prefix,
            self.tag,
            self.outage,
            alive_s=alive_s,
            block_s=block_s,
            blocking=blocking,
        )

    # -- records ----------------------------------------------------------------------------

    def _key(self, session_id: str) -> str:
        return f"{self.prefix}session:{session_id}"

    async def _call(self, work: Any) -> Any:
        try:
            result = await work
        except (*UNREACHABLE, redis_errors.RedisError, OSError) as error:
            self.outage.lost(error)
            raise SessionStoreUnavailable(f"the sessions' store is unavailable: {error}") from None
        self.outage.reached()
        return result

    async def create(
        self, session_id: str, record: SessionRecord, idle_s: float, max_sessions: int
    ) -> None:
        now = time.time()
        index = f"{self.prefix}sessions"
        pipe = self._client.pipeline(transaction=False)
        pipe.zremrangebyscore(index, "-inf", now - idle_s)
        pipe.set(self._key(session_id), msgspec.json.encode(record), ex=_seconds(idle_s))
        pipe.zadd(index, {session_id: now})
        pipe.zcard(index)
        results = await self._call(pipe.execute())
        excess = int(results[-1]) - max_sessions
        if excess > 0:  # the ones used longest ago leave
            oldest = await self._call(self._client.zrange(index, 0, excess - 1))
            names = [_text(name) for name in oldest]
            pipe = self._client.pipeline(transaction=False)
            pipe.delete(*(self._key(name) for name in names))
            pipe.zrem(index, *names)
            await self._call(pipe.execute())
            for name in names:  # every process's view of it ends
                await self.route(name, CHANGED, None)

    async def load(self, session_id: str) -> SessionRecord | None:
        data = await self._call(self._client.get(self._key(session_id)))
        if data is None:
            return None
        try:
            return _record(data)
        except (msgspec.DecodeError, msgspec.ValidationError) as error:
            log.warning("session %s: a record that cannot be read (%s): ended", session_id, error)
            return None

    async def touch(self, session_id: str, idle_s: float) -> bool:
        pipe = self._client.pipeline(transaction=False)
        pipe.expire(self._key(session_id), _seconds(idle_s))
        pipe.zadd(f"{self.prefix}sessions", {session_id: time.time()}, xx=True)
        renewed, _ = await self._call(pipe.execute())
        return bool(renewed)

    async def save(self, session_id: str, record: SessionRecord, idle_s: float) -> None:
        encoded = msgspec.json.encode(record)
        await self._call(
            self._client.set(self._key(session_id), encoded, ex=_seconds(idle_s), xx=True)
        )

    async def delete(self, session_id: str) -> None:
        pipe = self._client.pipeline(transaction=False)
        pipe.delete(self._key(session_id), f"{self.prefix}outbox:{session_id}")
        pipe.zrem(f"{self.prefix}sessions", session_id)
        await self._call(pipe.execute())

    # -- frames between processes ---------------------------------------------------------

    async def route(self, session_id: str, frame: bytes, to: str | None) -> None:
        if len(frame) > MAX_FRAME:
            log.warning("session %s: a frame of %d bytes not routed", session_id, len(frame))
            return
        message = msgspec.json.encode(Routing(self.tag, session_id, frame.decode()))
        channel = f"{self.prefix}frames:{to or ALL}"
        await self._call(self._client.publish(channel, message))

    async def start(self, routed: Routed) -> None:
        if self._listener is None:
            self._listener = asyncio.get_running_loop().create_task(self._listen(routed))
            self.events.start()

    async def subscribed(self, timeout: float = 10.0) -> None:
        """Wait until frames routed here arrive (its subscriptions made)."""
        await asyncio.wait_for(self._subscribed.wait(), timeout)

    async def _listen(self, routed: Routed) -> None:
        channels = (f"{self.prefix}frames:{self.tag}", f"{self.prefix}frames:{ALL}")

        async def take(data: Any) -> None:
            await self._routed(routed, data)

        what = "frames routed to this process"
        await listen(self._client, channels, take, self.outage, self._subscribed, what)

    async def _routed(self, routed: Routed, data: Any) -> None:
        raw = data if isinstance(data, bytes) else str(data).encode()
        if len(raw) > 2 * MAX_FRAME:
            log.warning("a routed frame of %d bytes was dropped", len(raw))
            return
        try:
            found = _routing(raw)
        except (msgspec.DecodeError, msgspec.ValidationError) as error:
            log.warning("a malformed routed frame was dropped: %s", error)
            return
        if found.o == self.tag:
            return  # (one sent to all comes back to its sender too)
        try:
            await routed(found.s, found.f.encode())
        except Exception:  # one frame failing never stops the routing
            log.exception("session %s: a routed frame could not be taken", found.s)

    async def close(self) -> None:
        await self.events.close()
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await listener
        if self._owns_client:
            with contextlib.suppress(redis_errors.RedisError, OSError):
                await self._client.aclose()
            if self._blocking is not None:
                with contextlib.suppress(redis_errors.RedisError, OSError):
                    await self._blocking.aclose()


def _seconds(idle_s: float) -> int:
    return max(1, int(idle_s + 0.999))


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


__all__ = ["RedisSessions"]
