"""A 2026-07-28 server that answers as a script says, over in-memory transports: what
sends a client results and notifications no server library would (a cursor loop, a
flood, a ``ttlMs`` of any value), and counts what it was asked.

``Script`` maps a method to ``answer(request) -> list of frames`` (plain JSON messages);
``server/discover`` is answered by default. ``scripted(script)`` yields a connected
``ClientSession`` and the server's ``received`` requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from mcpgen.generated.v2026_07_28 import client as c
from mcpgen.runtime.aio.memory import MemoryTransport, memory_pair
from mcpgen.runtime.client import ClientSession, Mode

VERSION = "2026-07-28"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
Answer = Callable[[dict[str, Any]], list[dict[str, Any]]]


def result(request: dict[str, Any], value: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request["id"], "result": {"resultType": "complete", **value}}


def discovered(capabilities: dict[str, Any] | None = None, **extra: Any) -> Answer:
    caps = capabilities if capabilities is not None else {"tools": {"listChanged": True}}

    def answer(request: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            result(
                request,
                {
                    "supportedVersions": [VERSION],
                    "capabilities": caps,
                    "ttlMs": 0,
                    "cacheScope": "private",
                    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}},
                    **extra,
                },
            )
        ]

    return answer


def notification(method: str, subscription: Any, **params: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": method,
        "params": {**params, "_meta": {SUBSCRIPTION_ID: subscription}},
    }


@dataclass
class Scripted:
    session: ClientSession
    received: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    #: The server's end: a test may write to it whenever it likes.
    end: MemoryTransport | None = None

    def asked(self, method: str) -> int:
        return sum(1 for r in self.received if r.get("method") == method)

    async def send(self, *messages: dict[str, Any]) -> None:
        assert self.end is not None
        for message in messages:
            await self.end.send(json.dumps(message).encode())


async def _serve(end: MemoryTransport, script: dict[str, Answer], into: Scripted) -> None:
    while True:
        frame = await end.receive()
        if frame is None:
            return
        message = json.loads(frame)
        into.received.append(message)
        answer = script.get(message.get("method", ""))
        if answer is None or "id" not in message:
            continue
        for out in answer(message):
            await end.send(json.dumps(out).encode())


@contextlib.asynccontextmanager
async def scripted(
    script: dict[str, Answer],
    mode: Mode = "modern",
    server_key: str | None = None,
    **options: Any,
) -> AsyncIterator[Scripted]:
    """A client connected (by default: modern) to a server answering as ``script`` says."""
    script = {"server/discover": discovered(), **script}
    client_end, server_end = memory_pair()
    session = ClientSession(c.Client.__binding__, **options)
    into = Scripted(session, end=server_end)
    serving = asyncio.create_task(_serve(server_end, script, into))
    try:
        await session.connect(client_end, mode=mode, probe_timeout=2.0, server_key=server_key)
        yield into
    finally:
        await session.close()
        await client_end.close()
        await server_end.close()
        serving.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await serving
