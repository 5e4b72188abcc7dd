"""Our client joined to a server in memory (as ``runtime.testing.connect`` joins them), with
every message each side received kept: what the client's calls put on the wire."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from mcpgen.runtime import App, Server
from mcpgen.runtime.aio.memory import MemoryTransport, memory_pair
from mcpgen.runtime.client import ClientSession, Mode
from mcpgen.runtime.client.in_memory import client_class_of


class Recording:
    """A transport end that keeps each message it receives (decoded) in ``heard``."""

    def __init__(self, inner: MemoryTransport, heard: list[Any]) -> None:
        self.inner, self.heard = inner, heard

    async def receive(self) -> bytes | None:
        frame = await self.inner.receive()
        if frame is not None:
            self.heard.append(json.loads(frame))
        return frame

    async def send(
        self, data: bytes, related: Any = None, final: bool = False, status: Any = None
    ) -> None:
        await self.inner.send(data, related, final, status)

    async def close(self) -> None:
        await self.inner.close()


@dataclass
class Wire:
    """What the server and the client received, in order."""

    to_server: list[Any] = field(default_factory=list)
    to_client: list[Any] = field(default_factory=list)

    def sent(self, method: str) -> list[dict[str, Any]]:
        """The messages of ``method`` the client sent."""
        return [m for m in self.to_server if isinstance(m, dict) and m.get("method") == method]

    def answers_to(self, request_id: Any) -> list[dict[str, Any]]:
        """The answers the server sent to ``request_id``."""
        return [
            m
            for m in self.to_client
            if isinstance(m, dict) and "method" not in m and m.get("id") == request_id
        ]


@asynccontextmanager
async def recorded(
    server: App | Server, mode: Mode = "auto", handlers: Any = None, **options: Any
) -> AsyncIterator[tuple[Any, Wire]]:
    """A typed client of ``server`` (options go to ``ClientSession``) and its ``Wire``."""
    target = server.server if isinstance(server, App) else server
    client_class = client_class_of(target)
    wire = Wire()
    client_end, server_end = memory_pair()
    serving = asyncio.create_task(target.serve(Recording(server_end, wire.to_server)))
    session = ClientSession(client_class.__binding__, handlers, **options)
    try:
        await session.connect(Recording(client_end, wire.to_client), mode=mode, probe_timeout=1.0)
        yield client_class(session), wire
    finally:
        await session.close()
        await client_end.close()
        with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(serving, 5.0)
