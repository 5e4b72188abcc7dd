"""A hostile server cannot stop or stall our client: every answer that is not one (invalid
UTF-8, deep nesting, garbage, an endless SSE event, an oversize body) fails the request it
was for at once, with an error, and the next request works. In process (httpx's mock
transport): no socket."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from mcpgen.generated.v2025_11_25 import methods
from mcpgen.runtime.client import ClientSession
from mcpgen.runtime import McpError
from mcpgen.runtime.client.http import HttpClientTransport
from mcpgen.runtime.core.limits import CLIENT

VERSION = "2025-11-25"
LIMIT = 64 * 1024
DEEP = b"[" * 5000 + b"]" * 5000


def sse(*events: bytes) -> bytes:
    return b"".join(b"event: message\ndata: " + e + b"\n\n" for e in events)


def answer(request_id: Any, text: str = "ok") -> bytes:
    result = {"content": [{"type": "text", "text": text}]}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode()


#: What the server answers a tools/call with, by the tool's name: (content type, body of
#: the request id).
HOSTILE: dict[str, tuple[str, Any]] = {
    "garbage-json": ("application/json", lambda i: b"\xff\xfe not json"),
    "deep-json": ("application/json", lambda i: DEEP),
    "other-id-json": ("application/json", lambda i: answer("someone else")),
    "oversize-json": ("application/json", lambda i: b'{"x":"' + b"a" * LIMIT + b'"}'),
    "garbage-sse": ("text/event-stream", lambda i: sse(b"\xff\xfe{", b"not json")),
    "deep-sse": ("text/event-stream", lambda i: sse(DEEP)),
    "endless-sse": ("text/event-stream", lambda i: b"data: " + b"a" * (2 * LIMIT)),
    "no-answer-sse": ("text/event-stream", lambda i: sse(b'{"jsonrpc":"2.0","method":"x"}')),
}


def handler(request: httpx.Request) -> httpx.Response:
    if request.method != "POST":  # the GET stream and the DELETE at the end
        return httpx.Response(405 if request.method == "GET" else 200)
    message = json.loads(request.content)
    method, request_id = message.get("method"), message.get("id")
    if request_id is None:
        return httpx.Response(202)
    if method == "initialize":
        result = {
            "protocolVersion": VERSION,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile", "version": "0"},
        }
        body = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode()
        return httpx.Response(200, content=body, headers={"mcp-session-id": "s1", **JSON})
    name = message["params"]["name"]
    if name in HOSTILE:
        kind, make = HOSTILE[name]
        return httpx.Response(200, content=make(request_id), headers={"content-type": kind})
    return httpx.Response(200, content=answer(request_id), headers=JSON)


JSON = {"content-type": "application/json"}


@pytest.mark.parametrize("tool", sorted(HOSTILE))
def test_a_hostile_answer_fails_its_request_at_once_and_the_client_goes_on(tool: str) -> None:
    async def scenario() -> float:
        limits = CLIENT.replace(max_message_bytes=LIMIT, request_timeout=30.0)
        http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
        transport = HttpClientTransport("http://hostile/mcp", client=http, limits=limits)
        session = ClientSession(methods.BINDING, limits=limits)
        await session.connect(transport, mode="legacy", timeout=5.0)
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            with pytest.raises(McpError):
                await session.request("tools/call", {"name": tool, "arguments": {}})
            took = loop.time() - started
            ok = await session.request("tools/call", {"name": "fine", "arguments": {}})
            assert ok.content[0].text == "ok"
        finally:
            await session.close()
            await http.aclose()
        return took

    assert asyncio.run(asyncio.wait_for(scenario(), 20.0)) < 2.0
