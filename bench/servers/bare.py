"""The ceiling: no MCP library, msgspec and pre-shaped results, in an asyncio line loop (stdio)
or a bare ASGI app answering ``tools/call`` without any header check (HTTP).

``--checked``: the floor of an MCP server instead, the same loop or app doing only what the
protocol asks of every call and what mcpgen is for: the request decoded into the generated
types (its nesting bounded, UTF-8 checked by the decoder), the result built as the generated
type and encoded; over HTTP also the headers a stateless request must carry (``Host`` and
``Origin`` against DNS rebinding, ``Content-Type``, ``Accept``, ``MCP-Protocol-Version``,
``Mcp-Method``, ``Mcp-Name``) and the ``_meta`` keys that name the version. No JSON-RPC
errors, limits, cancellation, dispatch table or registry: what a server does beyond this
floor is what a toolkit costs."""

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


async def pipes() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """stdin and stdout as asyncio streams."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=2**24)
    stdin = os.fdopen(os.dup(sys.stdin.fileno()), "rb", buffering=0)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
    stdout = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    transport, protocol = await loop.connect_write_pipe(
        lambda: asyncio.streams.FlowControlMixin(loop), stdout
    )
    writer = asyncio.StreamWriter(transport, protocol, reader, loop)
    return reader, writer


async def stdio() -> None:
    reader, writer = await pipes()
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


# -- --checked ---------------------------------------------------------------------------------

MAX_DEPTH, LOCAL_HOSTS = 64, (b"127.0.0.1", b"localhost")
PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"


def checked_codecs(version: str) -> tuple[Any, Any, Any]:
    """For ``version``: a decoder of its ``tools/call``, whose ``_meta`` stays text; what that
    text decodes to (the generated type, once per text: clients repeat theirs); and the
    ``(call) -> bytes`` encoder of the echo's answer."""
    import importlib

    types = importlib.import_module(f"mcpgen.generated.{version}.types")
    from mcpgen.generated._decoding import dec_hook

    # (made with defstruct: the module's annotations are strings, `types` a local)
    raw_meta = ("meta", msgspec.Raw, msgspec.field(default=msgspec.Raw(), name="_meta"))
    base = (types.CallToolRequestParams,)
    Params = msgspec.defstruct("Params", [raw_meta], bases=base, kw_only=True)
    fields = [("id", int | str), ("jsonrpc", str), ("method", str)]
    Call = msgspec.defstruct("Call", [*fields, ("params", Params)])
    answer = [("id", int | str), ("result", types.CallToolResult), ("jsonrpc", str, "2.0")]
    Answer = msgspec.defstruct("Answer", answer)
    decoder = msgspec.json.Decoder(Call)
    metas: dict[bytes, Any] = {}

    def meta_of(raw: msgspec.Raw) -> Any:
        text = bytes(raw)
        if (meta := metas.get(text)) is None:
            meta = msgspec.json.decode(text, type=types.RequestMetaObject, dec_hook=dec_hook)
            if len(metas) >= 64:  # bounded: a client may vary its _meta
                metas.clear()
            metas[text] = meta
        return meta

    def echo(call: Any) -> bytes:
        arguments = call.params.arguments
        text = arguments.get("text", "") if isinstance(arguments, dict) else ""
        result = types.CallToolResult(content=[types.TextContent(text=str(text))])
        return encode(Answer(call.id, result))

    return decoder.decode, meta_of, echo


def nested_too_deeply(body: bytes) -> bool:
    return body.count(b"{") + body.count(b"[") > MAX_DEPTH and _depth(body) > MAX_DEPTH


def _depth(body: bytes) -> int:
    depth = deepest = 0
    for byte in body:  # (strings' brackets counted too: a bound, not a parse)
        if byte in b"{[":
            depth += 1
            deepest = max(deepest, depth)
        elif byte in b"}]":
            depth -= 1
    return deepest


async def stdio_checked() -> None:
    decode_call, _, echo = checked_codecs("v2025_11_25")
    reader, writer = await pipes()
    while line := await reader.readline():
        if nested_too_deeply(line):
            continue
        try:
            call = decode_call(line)
            if call.method != "tools/call":
                raise msgspec.DecodeError(call.method)
            reply = echo(call)
        except msgspec.DecodeError:  # initialize and initialized: the plain loop's answers
            request = decode(line)
            if request.id is None:
                continue
            reply = encode(answer(request, False))
        writer.write(reply + b"\n")
        await writer.drain()
    writer.close()


def checked_app() -> Any:
    decode, meta_of, echo = checked_codecs("v2026_07_28")

    async def refuse(send: Any, status: int) -> None:
        await send({"type": "http.response.start", "status": status, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def checked(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await app(scope, receive, send)
            return
        if scope["method"] != "POST" or scope["path"] != "/mcp":
            return await refuse(send, 404)
        headers = dict(scope["headers"])
        host, origin = headers.get(b"host", b""), headers.get(b"origin")
        if host.rsplit(b":", 1)[0] not in LOCAL_HOSTS or origin is not None:
            return await refuse(send, 403)
        accept = headers.get(b"accept", b"")
        if (
            headers.get(b"content-type") != b"application/json"
            or accept.find(b"application/json") < 0
            or accept.find(b"text/event-stream") < 0
            or headers.get(b"mcp-protocol-version") != b"2026-07-28"
            or headers.get(b"mcp-method") != b"tools/call"
        ):
            return await refuse(send, 400)
        body, more = b"", True
        while more:
            message = await receive()
            body, more = body + message.get("body", b""), message.get("more_body", False)
        if nested_too_deeply(body):
            return await refuse(send, 400)
        try:
            call = decode(body)
        except msgspec.DecodeError:
            return await refuse(send, 400)
        params, name = call.params, headers.get(b"mcp-name")
        if call.method != "tools/call" or name is None or name.decode() != params.name:
            return await refuse(send, 400)
        try:
            meta = meta_of(params.meta) if params.meta else None
        except msgspec.DecodeError:
            return await refuse(send, 400)
        if meta is None or meta.get(PROTOCOL_VERSION) != "2026-07-28":
            return await refuse(send, 400)
        data = echo(call)
        headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(data))]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": data})

    return checked


if __name__ == "__main__":
    checking = "--checked" in sys.argv
    if option("--transport") == "http":
        http(checked_app() if checking else app)
    else:
        asyncio.run(stdio_checked() if checking else stdio())
