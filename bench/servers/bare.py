"""The ceiling: a bare asyncio + msgspec line loop, no MCP library at all.

``python -I bench/servers/bare.py``. Reads a line from stdin through asyncio pipes, decodes
it with msgspec, answers ``initialize`` and ``tools/call`` (``echo``) with pre-shaped
results, ignores notifications and answers anything else with "method not found".
"""

import asyncio
import os
import sys
from typing import Any

import msgspec

PROTOCOL_VERSION = "2025-11-25"


class Request(msgspec.Struct):
    method: str
    id: int | str | None = None
    params: dict[str, Any] = {}


class Result(msgspec.Struct):
    id: int | str
    result: Any
    jsonrpc: str = "2.0"


class Error(msgspec.Struct):
    id: int | str
    error: dict[str, Any]
    jsonrpc: str = "2.0"


INITIALIZE = {
    "protocolVersion": PROTOCOL_VERSION,
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "bare-echo", "version": "1.0.0"},
}
NOT_FOUND = {"code": -32601, "message": "Method not found"}


async def serve() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=2**24)
    stdin = os.fdopen(os.dup(sys.stdin.fileno()), "rb", buffering=0)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
    stdout = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.streams.FlowControlMixin(loop), stdout
    )
    writer = asyncio.StreamWriter(transport, protocol, reader, loop)
    decode = msgspec.json.Decoder(Request).decode
    encode = msgspec.json.Encoder().encode
    while True:
        line = await reader.readline()
        if not line:
            break
        request = decode(line)
        if request.id is None:
            continue
        if request.method == "tools/call":
            text = request.params.get("arguments", {}).get("text", "")
            reply: Any = Result(request.id, {"content": [{"type": "text", "text": text}]})
        elif request.method == "initialize":
            reply = Result(request.id, INITIALIZE)
        else:
            reply = Error(request.id, NOT_FOUND)
        writer.write(encode(reply) + b"\n")
        await writer.drain()
    writer.close()


if __name__ == "__main__":
    asyncio.run(serve())
