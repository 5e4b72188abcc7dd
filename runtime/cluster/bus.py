"""The announcement bus over Redis pub/sub: a server's changes reach the clients every
process of it holds.

Each process publishes what it announces on one channel (``{prefix}announcements``) as a
small JSON message naming its origin, and delivers what the others publish to its own
legacy sessions and listen streams (its own it has delivered already, at once). Pub/sub
keeps nothing: a process subscribes at start and again after a lost connection, and what
was published while it was not subscribed does not reach it (list changes and resource
updates are hints: a client lists or reads again). While Redis is away, publishing fails
fast and is logged once as an outage begins and once as it ends; nothing queues up.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from typing import Any, cast

import msgspec

try:
    from redis import exceptions as redis_errors
    from redis.asyncio import Redis
except ImportError as missing:  # pragma: no cover - exercised without the extra installed
    raise ImportError("RedisBus needs redis-py: pip install 'mcpgen[redis]'") from missing

from ..server.bus import Deliver
from ..tasks.outage import Outage
from ..tasks.redis_errors import UNREACHABLE
from .pubsub import listen

log = logging.getLogger("mcpgen.runtime.cluster.bus")

#: The largest announcement published (bytes of JSON); a bigger one stays in its process.
MAX_MESSAGE = 1 << 20
SOCKET_TIMEOUT = CONNECT_TIMEOUT = 5.0


class Announcement(msgspec.Struct, frozen=True):
    """One announcement on the channel: its origin, method, params, what it concerns."""

    o: str
    m: str
    p: dict[str, Any]
    w: str


_decode = msgspec.json.Decoder(Announcement).decode


class RedisBus:
    """Announcements between the processes of one server, through the Redis at ``url``
    (or a ``redis.asyncio.Redis`` client), on the channel ``{prefix}announcements``:
    processes serving one server share the prefix, other servers use their own.
    ``max_message`` bounds what is published (bytes of JSON)."""

    def __init__(
        self,
        url: str | Redis = "redis://127.0.0.1:6379/0",
        *,
        prefix: str = "mcpgen:",
        max_message: int = MAX_MESSAGE,
        socket_timeout: float = SOCKET_TIMEOUT,
        connect_timeout: float = CONNECT_TIMEOUT,
    ) -> None:
        if max_message < 1 or not min(socket_timeout, connect_timeout) > 0:
            raise ValueError("max_message, socket_timeout and connect_timeout must be positive")
        self.channel = f"{prefix}announcements"
        self.max_message = max_message
        #: This process's name on the channel (what it published comes back: skipped).
        self.origin = secrets.token_hex(8)
        self.outage = Outage(
            "announcement bus (Redis)",
            "announcements reach this process's clients only until it is back",
        )
        self._owns_client = isinstance(url, str)
        if isinstance(url, str):
            url = cast(Any, Redis).from_url(
                url,
                socket_timeout=socket_timeout,
                socket_connect_timeout=connect_timeout,
                # the listener waits longer than the socket timeout between messages
                health_check_interval=0,
            )
        self._client: Redis = cast(Redis, url)
        self._listener: asyncio.Task[None] | None = None
        self._subscribed = asyncio.Event()

    async def publish(self, method: str, params: dict[str, Any], wanted: str) -> None:
        message = msgspec.json.encode(Announcement(self.origin, method, params, wanted))
        if len(message) > self.max_message:
            log.warning(
                "%s (%d bytes) exceeds the bus's max_message (%d): announced in this process"
                " only",
                method,
                len(message),
                self.max_message,
            )
            return
        try:
            await cast(Any, self._client).publish(self.channel, message)
        except (*UNREACHABLE, redis_errors.RedisError, OSError) as error:
            self.outage.lost(error)
            return
        self.outage.reached()

    async def start(self, deliver: Deliver) -> None:
        if self._listener is None:
            self._listener = asyncio.get_running_loop().create_task(self._listen(deliver))

    async def subscribed(self, timeout: float = 10.0) -> None:
        """Wait until the bus receives (its first subscription made)."""
        await asyncio.wait_for(self._subscribed.wait(), timeout)

    async def _listen(self, deliver: Deliver) -> None:
        """Hand the other processes' announcements to ``deliver``; on a lost connection,
        subscribe again (what was published meanwhile does not come)."""

        async def take(data: Any) -> None:
            await self._deliver(deliver, data)

        await listen(self._client, [self.channel], take, self.outage, self._subscribed, "the bus")

    async def _deliver(self, deliver: Deliver, data: Any) -> None:
        raw = data if isinstance(data, bytes) else str(data).encode()
        if len(raw) > self.max_message:
            log.warning("an announcement of %d bytes on the bus was dropped", len(raw))
            return
        try:
            announced = _decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError) as error:
            log.warning("a malformed announcement on the bus was dropped: %s", error)
            return
        if announced.o == self.origin:
            return  # delivered here when it was made
        try:
            await deliver(announced.m, announced.p, announced.w)
        except Exception:  # one delivery failing never stops the bus
            log.exception("delivering %s from the bus failed", announced.m)

    async def close(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await listener
        if self._owns_client:
            with contextlib.suppress(redis_errors.RedisError, OSError):
                await self._client.aclose()


__all__ = ["Announcement", "MAX_MESSAGE", "RedisBus"]
