"""The ceiling: no MCP library, msgspec and pre-shaped results, in an asyncio line loop (stdio)
or a bare ASGI app answering ``tools/call`` without any header check (HTTP)."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

import msgspec

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # python -I leaves it out
from serve import http, option  # noqa: E402


class Request(msgspec.Struct):
    method: str
    id: int | str | None = None
    params: dict[str, Any] = {}


class Result(msgspec.Struct):
    id: int | str | None
    result: Any
    jsonrpc: str = "2.0"


class Error(msgspec.Struct):
    id: int | str | None
    error: Any
    jsonrpc: str = "2.0"


INITIALIZED = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "bare-echo", "version": "1.0.0"},
}
NOT_FOUND = {"code": -32601, "message": "Method not found"}
decode = msgspec.json.Decoder(Request).decode
encode = msgspec.json.Encoder().encode


def answer(request: Request, modern: bool) -> Result | Error:
    if request.method == "tools/call":
        text = request.params.get("arguments", {}).get("text", "")
        result = {"content": [{"type": "text", "text": text}]}
        return Result(request.id, result | {"resultType": "complete"} if modern else result)
    if request.method == "initialize" and not modern:
        return Result(request.id, INITIALIZED)
    return Error(request.id, NOT_FOUND)


async def stdio() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=2**24)
    stdin = os.fdopen(os.dup(sys.stdin.fileno()), "rb", buffering=0)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
    stdout = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.streams.FlowControlMixin(loop), stdout
    )
    writer = asyncio.StreamWriter(transport, protocol, reader, loop)
    while line := await reader.readline():
        request = decode(line)
        if request.id is not None:
            writer.write(encode(answer(request, False)) + b"\n")
            await writer.drain()
    writer.close()


async def app(scope: Any, receive: Any, send: Any) -> None:
    """The ASGI app (``http``): lifespan acknowledged, every POST decoded and answered."""
    if scope["type"] == "lifespan":
        while (message := await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    body, more = b"", True
    while more:
        message = await receive()
        body, more = body + message.get("body", b""), message.get("more_body", False)
    reply = answer(decode(body), True)
    data = encode(reply)
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(data))]
    status = 404 if isinstance(reply, Error) else 200
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


if __name__ == "__main__":
    if option("--transport") == "http":
        http(app)
    else:
        asyncio.run(stdio())
