"""A ``Server`` served over in-memory transports to a raw JSON-RPC ``Peer``: what sends a
server frames no client library would (hostile input, undeclared keys) and reads what it
answers, every read bounded in time."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcpgen.runtime import Server
from mcpgen.runtime.aio.memory import MemoryTransport, memory_pair

from support.asgi_driver import initialize


class Peer:
    """The client end of an in-memory connection, speaking raw JSON-RPC."""

    def __init__(self, end: MemoryTransport) -> None:
        self.end = end

    async def send(self, message: Any) -> None:
        await self.end.send(message if isinstance(message, bytes) else json.dumps(message).encode())

    async def read(self, timeout: float = 3.0) -> Any:
        frame = await asyncio.wait_for(self.end.receive(), timeout)
        assert frame is not None, "the server closed the connection"
        return json.loads(frame)

    async def answer_to(self, request_id: Any) -> Any:
        while True:
            message = await self.read()
            if message.get("id") == request_id and "method" not in message:
                return message

    async def handshake(self, version: str = "2025-11-25") -> None:
        await self.send(initialize(version))
        assert "result" in await self.answer_to(0)
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


@asynccontextmanager
async def serving(server: Server, maxsize: int = 0) -> AsyncIterator[Peer]:
    client_end, server_end = memory_pair(maxsize)
    task = asyncio.create_task(server.serve(server_end))
    try:
        yield Peer(client_end)
    finally:
        await client_end.close()
        await asyncio.wait_for(task, 5.0)
