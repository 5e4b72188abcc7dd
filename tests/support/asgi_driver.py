"""Drive an ASGI app in process, as an HTTP server would: no socket, every wait bounded.

``call`` sends one request and collects the whole response (JSON or SSE); the client
"leaves" (``http.disconnect``) when ``leave`` is set or once the response is complete.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from support import messages

App = Callable[[Any, Any, Any], Awaitable[None]]

BASE_HEADERS = {
    "host": "127.0.0.1:3001",
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
}


@dataclass
class Reply:
    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    complete: bool = False

    def json(self) -> Any:
        return json.loads(self.body)

    def events(self) -> list[Any]:
        """The JSON data of every SSE event (priming events without data skipped)."""
        out = []
        for block in self.body.decode().split("\n\n"):
            data = [line[6:] for line in block.split("\n") if line.startswith("data: ")]
            if data and data[0]:
                out.append(json.loads("\n".join(data)))
        return out

    def messages(self) -> list[Any]:
        """The JSON-RPC messages of the response, JSON or SSE."""
        if self.headers.get("content-type", "").startswith("text/event-stream"):
            return self.events()
        return [self.json()] if self.body else []


async def call(
    app: App,
    method: str = "POST",
    body: bytes | Sequence[bytes] = b"",
    headers: Mapping[str, str] | None = None,
    *,
    path: str = "/mcp",
    timeout: float = 5.0,
    leave: asyncio.Event | None = None,
    chunk_delay: float = 0.0,
    into: Reply | None = None,
    iterator_awaitables: bool = False,
) -> Reply:
    """One request; ``body`` may be chunks (sent ``chunk_delay`` apart); ``headers`` are
    added to (or, with a ``None``-free override, replace) the base headers. ``into``: the
    reply to fill as the response arrives (a stream still open can be read meanwhile).
    ``iterator_awaitables``: ``receive()`` gives what granian's does, an awaitable whose
    iterator has no ``send``, instead of a coroutine."""
    merged = {**BASE_HEADERS, **(headers or {})}
    chunks = [body] if isinstance(body, bytes) else list(body)
    reply = into if into is not None else Reply()
    done = asyncio.Event()
    leave = leave or done
    sent = 0

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent < len(chunks):
            if sent and chunk_delay:
                await asyncio.sleep(chunk_delay)
            sent += 1
            return {
                "type": "http.request",
                "body": chunks[sent - 1],
                "more_body": sent < len(chunks),
            }
        await leave.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            reply.status = message["status"]
            reply.headers = {k.decode(): v.decode() for k, v in message.get("headers", [])}
        elif message["type"] == "http.response.body":
            reply.body += message.get("body", b"")
            if not message.get("more_body", False):
                reply.complete = True
                done.set()

    def receive_iterated() -> Any:
        return OnlyIterates(receive())

    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in merged.items()],
    }
    given = receive_iterated if iterator_awaitables else receive
    await asyncio.wait_for(app(scope, given, send), timeout)
    return reply


class OnlyIterates:
    """An awaitable whose iterator only iterates (no ``send`` or ``throw``), as some ASGI
    servers' futures are: awaiting it awaits ``coro``."""

    def __init__(self, coro: Any) -> None:
        self._steps = coro.__await__()

    def __await__(self) -> Any:
        return self

    def __iter__(self) -> Any:
        return self

    def __next__(self) -> Any:
        return next(self._steps)


def request(request_id: Any, method: str, params: Any = None) -> bytes:
    return json.dumps(messages.request(request_id, method, params)).encode()


def initialize(version: str, request_id: Any = 0) -> bytes:
    return request(
        request_id,
        "initialize",
        {
            "protocolVersion": version,
            "capabilities": {"elicitation": {}, "sampling": {}},
            "clientInfo": {"name": "test", "version": "0"},
        },
    )


async def open_session(app: App, version: str = "2025-11-25") -> dict[str, str]:
    """A legacy session: initialize + initialized; the headers its requests carry."""
    reply = await call(app, body=initialize(version))
    assert reply.status == 200, reply
    headers = {"mcp-session-id": reply.headers["mcp-session-id"], "mcp-protocol-version": version}
    note = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
    assert (await call(app, body=note, headers=headers)).status == 202
    return headers
