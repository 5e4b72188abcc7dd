"""The 2024-11-05 HTTP+SSE transport served beside Streamable HTTP by the same app, spoken
raw over real sockets (uvicorn on 127.0.0.1): the ``endpoint`` event names where to POST,
each POST is accepted with 202 and answered on the stream, and a client may negotiate any
version over it. Bad input gets a clear 4xx and the session serves on; a session ends with
its stream (its running handler cancelled, its id refused after); sessions are bounded;
Host checks apply; announcements reach SSE sessions; the transport can be turned off."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest

from mcpgen.runtime import Limits
from mcpgen.runtime.http.endpoint import McpHttpApp
from support.checkout import ROOT
from support.http_servers import HANG, Probe, ThreadedUvicorn

if str(ROOT) not in sys.path:  # examples/ is not an installed package
    sys.path.append(str(ROOT))

from examples.everything.server import build_app  # noqa: E402

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2024-11-05",
        "capabilities": {},
        "clientInfo": {"name": "raw-sse", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


class World:
    def __init__(self, **options: Any) -> None:
        self.app = build_app()
        self.probe = Probe(self.app)
        server = self.app.server

        async def announce() -> str:
            """Tell every session the tools changed."""
            await server.notify_changed("tools")
            return "announced"

        self.app.add_tool(announce, name="test_sse_announce")
        self.http_app = McpHttpApp(self.app.server, **options)
        self.runner = ThreadedUvicorn(self.http_app)
        self.base = f"http://127.0.0.1:{self.runner.port}"


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    built = World(limits=Limits(max_sessions=3, max_message_bytes=64 * 1024))
    built.runner.start()
    try:
        yield built
    finally:
        built.runner.stop()


class SseClient:
    """One raw HTTP+SSE session: the stream's events, and POSTs to the endpoint it named."""

    def __init__(self, http: httpx.AsyncClient, response: httpx.Response) -> None:
        self.http, self.response = http, response
        self.lines = response.aiter_lines()
        self.endpoint = ""

    async def event(self, timeout: float = 5.0) -> tuple[str, str]:
        """The next event: (its type, its data)."""
        kind, data = "message", []
        while True:
            line = await asyncio.wait_for(self.lines.__anext__(), timeout)
            if not line:
                if data:
                    return kind, "\n".join(data)
                continue
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                kind = value
            elif field == "data":
                data.append(value)

    async def message(self) -> Any:
        kind, data = await self.event()
        assert kind == "message"
        return json.loads(data)

    async def answer_to(self, request_id: Any) -> Any:
        while True:
            found = await self.message()
            if found.get("id") == request_id and "method" not in found:
                return found

    async def post(self, body: Any, **headers: str) -> httpx.Response:
        content = body if isinstance(body, bytes) else json.dumps(body).encode()
        sent = {"content-type": "application/json", **headers}
        return await self.http.post(self.endpoint, content=content, headers=sent)

    async def handshake(self, version: str = "2024-11-05") -> Any:
        init = {**INIT, "params": {**INIT["params"], "protocolVersion": version}}
        assert (await self.post(init)).status_code == 202
        answer = await self.answer_to(0)
        assert (await self.post(INITIALIZED)).status_code == 202
        return answer


@asynccontextmanager
async def opened(world: World, path: str = "/sse") -> AsyncIterator[SseClient]:
    async with httpx.AsyncClient(base_url=world.base, timeout=10) as http:
        async with http.stream("GET", path, headers={"accept": "text/event-stream"}) as response:
            assert response.status_code == 200, await response.aread()
            assert response.headers["content-type"].startswith("text/event-stream")
            client = SseClient(http, response)
            kind, data = await client.event()
            assert kind == "endpoint"
            client.endpoint = data
            yield client


def run(scenario: Any) -> Any:
    return asyncio.run(asyncio.wait_for(scenario, 30))


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-11-25"])
def test_a_session_negotiates_and_calls_a_tool_over_the_stream(world: World, version: str) -> None:
    async def scenario() -> None:
        async with opened(world) as client:
            assert client.endpoint.startswith("/messages?session_id=")
            assert len(client.endpoint.split("=", 1)[1]) == 32  # 128 random bits, hex
            answer = await client.handshake(version)
            assert answer["result"]["protocolVersion"] == version
            call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
            call["params"] = {"name": "test_simple_text", "arguments": {}}
            assert (await client.post(call)).status_code == 202
            result = (await client.answer_to(1))["result"]
            assert result["content"][0]["text"] == "This is a simple text response for testing."

    run(scenario())


def test_bad_posts_get_a_clear_error_and_the_session_serves_on(world: World) -> None:
    async def scenario() -> None:
        async with opened(world) as client:
            await client.handshake()
            garbage = await client.post(b"{not json")
            assert garbage.status_code == 400
            assert garbage.json()["error"]["code"] == -32700
            wrong_type = await client.post(b"{}", **{"content-type": "text/plain"})
            assert wrong_type.status_code == 415
            too_big = await client.post(b'"' + b"x" * 70_000 + b'"')
            assert too_big.status_code == 413
            no_session = await client.http.post("/messages", content=b"{}")
            assert no_session.status_code == 400
            assert "session_id" in no_session.json()["error"]["message"]
            unknown = await client.http.post(
                "/messages?session_id=" + "0" * 32,
                content=json.dumps({"jsonrpc": "2.0", "id": 5, "method": "ping"}),
                headers={"content-type": "application/json"},
            )
            assert unknown.status_code == 404
            invalid = await client.post({"jsonrpc": "2.0", "id": 2, "method": 7})
            assert invalid.status_code == 400  # no message in it: refused with the POST
            assert invalid.json()["id"] == 2 and invalid.json()["error"]["code"] == -32600
            unknown_method = await client.post({"jsonrpc": "2.0", "id": 4, "method": "nope"})
            assert unknown_method.status_code == 202  # a request: answered on the stream
            assert (await client.answer_to(4))["error"]["code"] == -32601
            assert (
                await client.post({"jsonrpc": "2.0", "id": 3, "method": "ping"})
            ).status_code == 202
            assert (await client.answer_to(3))["result"] == {}

    run(scenario())


def test_a_session_ends_with_its_stream_and_its_running_handler_is_cancelled(
    world: World,
) -> None:
    async def scenario() -> None:
        world.probe.started.clear()
        world.probe.cancelled.clear()
        async with opened(world) as client:
            await client.handshake()
            call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
            call["params"] = {"name": HANG, "arguments": {}}
            await client.post(call)
            assert await asyncio.to_thread(world.probe.started.wait, 5)
            endpoint, http = client.endpoint, client.http
        assert await asyncio.to_thread(world.probe.cancelled.wait, 5)
        async with httpx.AsyncClient(base_url=world.base, timeout=10) as http:
            late = await http.post(
                endpoint,
                content=json.dumps({"jsonrpc": "2.0", "id": 9, "method": "ping"}),
                headers={"content-type": "application/json"},
            )
        assert late.status_code == 404
        assert not world.http_app.sse.sessions

    run(scenario())


def test_sessions_are_bounded_and_a_closed_one_makes_room(world: World) -> None:
    async def scenario() -> None:
        async with opened(world), opened(world), opened(world):
            async with httpx.AsyncClient(base_url=world.base, timeout=10) as http:
                refused = await http.get("/sse", headers={"accept": "text/event-stream"})
                assert refused.status_code == 503
                assert "Limits.max_sessions" in refused.json()["error"]["message"]
        async with opened(world) as client:  # the three left: room again
            await client.handshake()

    run(scenario())


def test_announcements_reach_sse_sessions(world: World) -> None:
    async def scenario() -> None:
        async with opened(world) as client:
            await client.handshake("2025-11-25")
            call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
            call["params"] = {"name": "test_sse_announce", "arguments": {}}
            await client.post(call)
            note = await client.message()
            assert note["method"] == "notifications/tools/list_changed" and "id" not in note
            assert (await client.answer_to(1))["result"]["content"][0]["text"] == "announced"

    run(scenario())


def test_the_host_check_and_methods_apply_to_both_paths(world: World) -> None:
    async def scenario() -> None:
        async with httpx.AsyncClient(base_url=world.base, timeout=10) as http:
            evil = {"host": "evil.example", "accept": "text/event-stream"}
            assert (await http.get("/sse", headers=evil)).status_code == 403
            assert (await http.post("/messages?session_id=x", headers=evil)).status_code == 403
            assert (await http.post("/sse")).status_code == 405
            assert (await http.get("/messages")).status_code == 405
            json_only = await http.get("/sse", headers={"accept": "application/json"})
            assert json_only.status_code == 406

    run(scenario())


def test_the_transport_can_be_turned_off() -> None:
    off = World(sse_path=None)
    off.runner.start()
    try:

        async def scenario() -> None:
            async with httpx.AsyncClient(base_url=off.base, timeout=10) as http:
                got = await http.get("/sse", headers={"accept": "text/event-stream"})
                assert got.status_code == 404
                assert (await http.post("/messages?session_id=x")).status_code == 404

        run(scenario())
    finally:
        off.runner.stop()
