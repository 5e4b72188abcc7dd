"""The ceiling: a bare ASGI app under the same uvicorn, no MCP library at all.

``python -I bench/servers/http_bare.py --port PORT [--loop L] [--http H]``. Reads the POST
body, decodes it with msgspec, answers ``tools/call`` (``echo``) with a pre-shaped modern
result as JSON and anything else with "method not found"; no header checks. What uvicorn
(its HTTP parser and event loop) costs per request on this machine.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from pathlib import Path

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as python -I: no script dir
from uvicorn_cli import options as cli_options  # noqa: E402
from uvicorn_cli import serve  # noqa: E402

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]


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
    error: dict[str, Any]
    jsonrpc: str = "2.0"


NOT_FOUND = {"code": -32601, "message": "Method not found"}
JSON = (b"content-type", b"application/json")
decode = msgspec.json.Decoder(Request).decode
encode = msgspec.json.Encoder().encode


async def app(
    scope: Scope,
    receive: Callable[[], Awaitable[Message]],
    send: Callable[[Message], Awaitable[None]],
) -> None:
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] != "http":
        return
    if scope["method"] != "POST":
        await send({"type": "http.response.start", "status": 405, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body", False):
            break
    request = decode(body)
    status = 200
    if request.method == "tools/call":
        text = request.params.get("arguments", {}).get("text", "")
        reply: Any = Result(
            request.id,
            {"content": [{"type": "text", "text": text}], "resultType": "complete"},
        )
    else:
        reply, status = Error(request.id, NOT_FOUND), 404
    data = encode(reply)
    headers = [JSON, (b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


def options(argv: list[str] | None = None) -> argparse.Namespace:
    return cli_options("a bare ASGI echo under uvicorn", argv)


if __name__ == "__main__":
    serve(app, options())
