"""In-memory transports: a client and a server in one process, joined by queues.

For tests (yours and ours) and for embedding a server in the same program as its client:
no subprocess, no socket, the same sessions and connections as any other transport.
``memory_pair(maxsize)`` bounds each direction, so a peer that stops reading pushes back
on the sender exactly as a full pipe would.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable

from ..core.jsonrpc import RequestId


class MemoryTransport:
    """One end of an in-memory connection (the ``Transport`` protocol of ``Session``)."""

    def __init__(
        self, inbox: asyncio.Queue[bytes | None], outbox: asyncio.Queue[bytes | None]
    ) -> None:
        self.inbox = inbox
        self.outbox = outbox
        self.closed = False
        self._ending: list[asyncio.Future[None]] = []

    async def receive(self) -> bytes | None:
        """The next frame from the other end, or None once it closed."""
        return await self.inbox.get()

    async def send(
        self,
        data: bytes,
        related: RequestId | None = None,
        final: bool = False,
        status: int | None = None,
    ) -> None:
        rest = self.write_now(data)
        if rest is not None:
            await rest

    def write_now(self, data: bytes) -> Awaitable[None] | None:
        """Queue ``data`` at once: None, or the wait for room when the queue is full
        (``transport.WritesNow``)."""
        if self.closed:
            raise ConnectionError("in-memory transport closed")
        try:
            self.outbox.put_nowait(data)
        except asyncio.QueueFull:
            return self.outbox.put(data)
        return None

    async def close(self) -> None:
        """Tell the other end that nothing more comes (it reads None), and end this end's
        own reading too."""
        if self.closed:
            return
        self.closed = True
        for queue in (self.outbox, self.inbox):
            try:
                queue.put_nowait(None)
            except asyncio.QueueFull:  # nobody is reading it: the end marker waits its turn
                self._ending.append(asyncio.ensure_future(queue.put(None)))


def memory_pair(maxsize: int = 0) -> tuple[MemoryTransport, MemoryTransport]:
    """Two connected ends (say, client and server); ``maxsize`` bounds the frames in
    flight each way (0: unbounded)."""
    to_server: asyncio.Queue[bytes | None] = asyncio.Queue(maxsize)
    to_client: asyncio.Queue[bytes | None] = asyncio.Queue(maxsize)
    return MemoryTransport(to_client, to_server), MemoryTransport(to_server, to_client)
