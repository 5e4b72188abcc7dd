"""Our HTTP+SSE and WebSocket client transports against hostile servers on 127.0.0.1: an
endpoint on another origin, no endpoint at all, an endless event, garbage on the stream,
binary and oversize WebSocket frames. Each ends in a clear error or is skipped, never a
hang, and a good answer after garbage is still taken."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from mcpgen.runtime import ConnectionClosed
from mcpgen.runtime.client import CLIENT_LIMITS
from mcpgen.runtime.client.http_sse import SseClientTransport
from mcpgen.runtime.client.websocket import WebSocketClientTransport
from support.http_servers import ThreadedUvicorn

Asgi = Callable[[Any, Any, Any], Awaitable[None]]
PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
ANSWER = '{"jsonrpc":"2.0","id":1,"result":{}}'


def sse_server(events: list[bytes], hold: bool = True) -> Asgi:
    """An app whose ``/sse`` sends ``events`` (raw SSE text) and then stays open; POSTs to
    ``/messages`` are accepted and ignored."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        if scope["method"] == "POST":
            await receive()
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for event in events:
            await send({"type": "http.response.body", "body": event, "more_body": True})
        if hold:
            await receive()  # until the client leaves
        await send({"type": "http.response.body", "body": b""})

    return app


def served(app: Asgi, scenario: Callable[[str], Awaitable[None]]) -> None:
    runner = ThreadedUvicorn(app)
    runner.start()
    try:
        asyncio.run(asyncio.wait_for(scenario(f"127.0.0.1:{runner.port}"), 20))
    finally:
        runner.stop()


def test_an_endpoint_on_another_origin_is_refused() -> None:
    app = sse_server([b"event: endpoint\ndata: http://evil.example/messages?s=1\n\n"])

    async def scenario(where: str) -> None:
        transport = SseClientTransport(f"http://{where}/sse", timeout=5)
        with pytest.raises(ConnectionClosed, match="not on the stream's origin"):
            await transport.open()

    served(app, scenario)


def test_a_stream_without_an_endpoint_event_times_out_clearly() -> None:
    app = sse_server([b": just a comment\n\n"])

    async def scenario(where: str) -> None:
        transport = SseClientTransport(f"http://{where}/sse", timeout=0.5)
        with pytest.raises(ConnectionClosed, match="no endpoint event .* within 0.5 s"):
            await transport.open()

    served(app, scenario)


def test_an_endless_event_is_cut_off_at_the_message_limit() -> None:
    app = sse_server([b"event: endpoint\ndata: /messages?s=1\n\n", b"data: " + b"x" * 200_000])
    limits = CLIENT_LIMITS.replace(max_message_bytes=64 * 1024)

    async def scenario(where: str) -> None:
        transport = SseClientTransport(
            f"http://{where}/sse", timeout=5, limits=limits, max_reconnects=0
        )
        await transport.open()
        assert await asyncio.wait_for(transport.receive(), 5) is None  # given up on
        await transport.close()

    served(app, scenario)


def test_garbage_on_the_stream_is_passed_on_and_a_good_answer_after_it_taken() -> None:
    events = [
        b"event: endpoint\ndata: /messages?s=1\n\n",
        b"event: message\ndata: {not json\n\n",
        b"event: surprise\ndata: whatever\n\n",  # an unknown event type: skipped
        b"data: " + ANSWER.encode() + b"\n\n",
    ]

    async def scenario(where: str) -> None:
        transport = SseClientTransport(f"http://{where}/sse", timeout=5)
        await transport.open()
        await transport.send(PING)
        assert await transport.receive() == b"{not json"  # the session's to refuse
        assert json.loads(await transport.receive() or b"") == json.loads(ANSWER)
        await transport.close()

    served(sse_server(events), scenario)


def websocket_server(frames: list[dict[str, Any]]) -> Asgi:
    """An app that accepts a WebSocket (subprotocol mcp) and sends ``frames`` (ASGI
    ``websocket.send`` bodies), then waits for the client to leave."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "websocket":
            return
        await receive()  # websocket.connect
        await send({"type": "websocket.accept", "subprotocol": "mcp"})
        for frame in frames:
            await send({"type": "websocket.send", **frame})
        while (await receive())["type"] != "websocket.disconnect":
            pass

    return app


def test_binary_frames_are_skipped_and_the_next_text_frame_taken() -> None:
    app = websocket_server([{"bytes": b"\x00\x01binary"}, {"text": ANSWER}])

    async def scenario(where: str) -> None:
        transport = WebSocketClientTransport(f"ws://{where}/ws")
        await transport.open()
        assert await asyncio.wait_for(transport.receive(), 5) == ANSWER.encode()
        await transport.close()

    served(app, scenario)


def test_an_oversize_frame_ends_the_connection_cleanly() -> None:
    app = websocket_server([{"text": "x" * 200_000}, {"text": ANSWER}])
    limits = CLIENT_LIMITS.replace(max_message_bytes=64 * 1024)

    async def scenario(where: str) -> None:
        transport = WebSocketClientTransport(f"ws://{where}/ws", limits=limits)
        await transport.open()
        assert await asyncio.wait_for(transport.receive(), 5) is None  # closed: 1009
        await transport.close()

    served(app, scenario)
