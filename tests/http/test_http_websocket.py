"""MCP over WebSocket served by the HTTP app (``websocket_path``), spoken raw with the
``websockets`` client over real sockets (uvicorn on 127.0.0.1): the subprotocol ``mcp``,
one message per text frame, either era over the one connection. Hostile frames (binary,
over the message limit, not JSON) get an error and the connection serves on; refused
handshakes (path, Host, subprotocol) are HTTP answers; a connection idle past its limit is
closed; a client that leaves cancels its running handler; announcements reach it."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from mcpgen.runtime import Limits
from mcpgen.runtime.http.endpoint import McpHttpApp
from support.checkout import ROOT
from support.http_servers import HANG, Probe, ThreadedUvicorn

if str(ROOT) not in sys.path:  # examples/ is not an installed package
    sys.path.append(str(ROOT))

from examples.everything.server import build_app  # noqa: E402

LIMIT = 64 * 1024
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw-ws", "version": "0"},
    },
}


class World:
    def __init__(self, **limits: Any) -> None:
        self.app = build_app()
        self.probe = Probe(self.app)
        server = self.app.server

        async def announce() -> str:
            """Tell every session the tools changed."""
            await server.notify_changed("tools")
            return "announced"

        self.app.add_tool(announce, name="test_ws_announce")
        chosen = Limits(max_message_bytes=LIMIT, **limits)
        self.http_app = McpHttpApp(server, websocket_path="/ws", limits=chosen)
        self.runner = ThreadedUvicorn(self.http_app)
        self.url = f"ws://127.0.0.1:{self.runner.port}/ws"


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    built = World()
    built.runner.start()
    try:
        yield built
    finally:
        built.runner.stop()


class Peer:
    def __init__(self, socket: ClientConnection) -> None:
        self.socket = socket

    async def send(self, message: Any) -> None:
        await self.socket.send(json.dumps(message))

    async def message(self) -> Any:
        return json.loads(await asyncio.wait_for(self.socket.recv(), 5))

    async def answer_to(self, request_id: Any) -> Any:
        while True:
            found = await self.message()
            if found.get("id") == request_id and "method" not in found:
                return found

    async def call(self, request_id: int, method: str, params: Any = None) -> Any:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        return await self.answer_to(request_id)

    async def handshake(self, version: str = "2025-11-25") -> Any:
        await self.send({**INIT, "params": {**INIT["params"], "protocolVersion": version}})
        answer = await self.answer_to(0)
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer


@asynccontextmanager
async def opened(url: str, **options: Any) -> AsyncIterator[Peer]:
    options.setdefault("subprotocols", ["mcp"])
    async with connect(url, open_timeout=5, **options) as socket:
        yield Peer(socket)


def run(scenario: Any) -> Any:
    return asyncio.run(asyncio.wait_for(scenario, 30))


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-11-25"])
def test_a_legacy_session_over_one_websocket(world: World, version: str) -> None:
    async def scenario() -> None:
        async with opened(world.url) as peer:
            assert peer.socket.subprotocol == "mcp"
            assert (await peer.handshake(version))["result"]["protocolVersion"] == version
            called = await peer.call(1, "tools/call", {"name": "test_simple_text"})
            assert called["result"]["content"][0]["type"] == "text"

    run(scenario())


def test_a_2026_request_needs_no_handshake_over_the_websocket(world: World) -> None:
    async def scenario() -> None:
        async with opened(world.url) as peer:
            meta: dict[str, Any] = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
            meta["io.modelcontextprotocol/clientInfo"] = {"name": "raw-ws", "version": "0"}
            meta["io.modelcontextprotocol/clientCapabilities"] = {}
            found = await peer.call(1, "server/discover", {"_meta": meta})
            assert "2026-07-28" in found["result"]["supportedVersions"]
            params = {"name": "test_simple_text", "arguments": {}, "_meta": meta}
            called = await peer.call(2, "tools/call", params)
            assert called["result"]["resultType"] == "complete"

    run(scenario())


def test_hostile_frames_get_an_error_and_the_connection_serves_on(world: World) -> None:
    async def scenario() -> None:
        async with opened(world.url, max_size=4 * LIMIT) as peer:
            await peer.handshake()
            await peer.socket.send(b'{"jsonrpc":"2.0","id":1,"method":"ping"}')  # binary
            binary = await peer.message()
            assert binary["error"]["code"] == -32600 and "binary" in binary["error"]["message"]
            big = {"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"x": "y" * LIMIT}}
            await peer.send(big)
            refused = await peer.answer_to(2)
            assert refused["error"]["code"] == -32600
            assert f"over the limit of {LIMIT} bytes" in refused["error"]["message"]
            await peer.socket.send("{not json")
            assert (await peer.message())["error"]["code"] == -32700
            await peer.socket.send("[]")
            assert (await peer.message())["error"]["code"] == -32600
            assert (await peer.call(3, "ping"))["result"] == {}

    run(scenario())


def test_refused_handshakes_are_http_answers(world: World) -> None:
    async def scenario() -> None:
        base = world.url.removesuffix("/ws")
        for url, options, status in [
            (f"{base}/elsewhere", {}, 404),
            (f"{base}/mcp", {}, 404),  # the Streamable HTTP path takes no WebSocket
            (world.url, {"subprotocols": ["graphql-ws"]}, 400),
            (world.url, {"additional_headers": {"Origin": "http://evil.example"}}, 403),
        ]:
            with pytest.raises(InvalidStatus) as refused:
                async with opened(url, **options):
                    pass
            assert refused.value.response.status_code == status, url
        async with opened(world.url, subprotocols=None) as peer:  # none asked: accepted
            assert peer.socket.subprotocol is None
            assert (await peer.call(1, "ping"))["result"] == {}

    run(scenario())


def test_a_client_that_leaves_cancels_its_running_handler(world: World) -> None:
    async def scenario() -> None:
        world.probe.started.clear()
        world.probe.cancelled.clear()
        async with opened(world.url) as peer:
            await peer.handshake()
            await peer.send(
                {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": HANG}}
            )
            assert await asyncio.to_thread(world.probe.started.wait, 5)
        assert await asyncio.to_thread(world.probe.cancelled.wait, 5)
        for _ in range(250):  # the session is gone within 5 s
            if not world.http_app.websockets:
                break
            await asyncio.sleep(0.02)
        assert not world.http_app.websockets

    run(scenario())


def test_announcements_reach_websocket_sessions(world: World) -> None:
    async def scenario() -> None:
        async with opened(world.url) as peer:
            await peer.handshake()
            await peer.send(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "tools/call",
                    "params": {"name": "test_ws_announce"},
                }
            )
            note = await peer.message()
            assert note["method"] == "notifications/tools/list_changed"
            assert (await peer.answer_to(1))["result"]["content"][0]["text"] == "announced"

    run(scenario())


def test_an_idle_connection_is_closed_and_a_busy_one_is_not() -> None:
    idle = World(session_idle_timeout=0.3)
    idle.runner.start()
    try:

        async def scenario() -> None:
            async with opened(idle.url) as peer:
                await peer.handshake()
                call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
                call["params"] = {"name": HANG, "arguments": {"seconds": 0.8}}
                await peer.send(call)  # running longer than the idle limit: not idle
                answer = await asyncio.wait_for(peer.answer_to(1), 5)
                assert answer["result"]["content"][0]["text"] == "not cancelled"
                with pytest.raises(ConnectionClosed) as closed:
                    await asyncio.wait_for(peer.socket.recv(), 5)
                assert closed.value.rcvd is not None
                assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (1000, "idle")

        run(scenario())
    finally:
        idle.runner.stop()


def test_no_websocket_is_taken_unless_a_path_is_given() -> None:
    app = build_app()
    runner = ThreadedUvicorn(McpHttpApp(app.server))
    runner.start()
    try:

        async def scenario() -> None:
            with pytest.raises(InvalidStatus) as refused:
                async with opened(f"ws://127.0.0.1:{runner.port}/mcp"):
                    pass
            assert refused.value.response.status_code == 404

        run(scenario())
    finally:
        runner.stop()


@pytest.mark.parametrize("http", ["httptools", "h11"])
def test_a_websocket_outlives_the_http_idle_timeout_under_the_guarded_protocols(
    http: Any,
) -> None:
    """``serve`` runs uvicorn with guarded HTTP protocols whose idle clock closes quiet
    connections (``Limits.idle_timeout``); once a connection is a WebSocket that clock is
    stopped (it closed every WebSocket after 5 s, and held each upgraded connection's
    objects that long), and only ``session_idle_timeout`` applies."""
    import socket
    import threading
    import time

    import uvicorn

    from mcpgen.runtime.http.serve import config

    limits = Limits(idle_timeout=0.3, session_idle_timeout=60)
    app = build_app(limits)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    http_app = McpHttpApp(app.server, websocket_path="/ws")
    server = uvicorn.Server(config(http_app, "127.0.0.1", port, limits, http))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.02)

        async def scenario() -> None:
            async with opened(f"ws://127.0.0.1:{port}/ws") as peer:
                assert (await peer.call(1, "ping"))["result"] == {}
                await asyncio.sleep(1.0)  # over three idle timeouts
                assert (await peer.call(2, "ping"))["result"] == {}

        run(scenario())
    finally:
        server.should_exit = True
        thread.join(10)
        listener.close()
