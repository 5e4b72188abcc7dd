"""How our client cancels a request over Streamable HTTP, against a real uvicorn on
127.0.0.1: a 2026-07-28 request that times out is cancelled by closing its stream (the
transport's rule for that revision; no ``notifications/cancelled`` is posted, since the
revision defines no client notification over HTTP), a legacy one by posting
``notifications/cancelled`` with the session's headers. Either way the server's handler is
cancelled, and the next call of the same client is answered."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from mcpgen.generated.v2026_07_28.client import Client
from mcpgen.runtime import RequestTimeout
from mcpgen.runtime.client import CLIENT_LIMITS, Mode, http_client
from mcpgen.runtime.http.endpoint import McpHttpApp
from support.checkout import ROOT
from support.http_servers import HANG, Probe, ThreadedUvicorn

import sys

if str(ROOT) not in sys.path:  # examples/ is not an installed package
    sys.path.append(str(ROOT))

from examples.everything.server import build_app  # noqa: E402

TIMEOUT = 0.5


@dataclass
class Post:
    headers: dict[str, str]
    body: bytearray = field(default_factory=bytearray)

    def message(self) -> Any:
        return json.loads(self.body)


class Recorder:
    """An ASGI app in front of another, keeping every POST it passes on."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.posts: list[Post] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        post = Post({k.decode().lower(): v.decode() for k, v in scope["headers"]})
        self.posts.append(post)

        async def recorded() -> Any:
            message = await receive()
            post.body += message.get("body", b"")
            return message

        await self.app(scope, recorded, send)

    def methods(self) -> list[str]:
        return [p.message().get("method", "(answer)") for p in self.posts]


@dataclass
class World:
    url: str
    probe: Probe
    recorder: Recorder


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    app = build_app()
    probe = Probe(app)
    recorder = Recorder(McpHttpApp(app.server))
    runner = ThreadedUvicorn(recorder)
    try:
        runner.start()
        yield World(f"http://127.0.0.1:{runner.port}/mcp", probe, recorder)
    finally:
        runner.stop()


def timed_out_call(world: World, mode: Mode) -> str:
    """Call the hanging tool with a short timeout, then a quick tool: the latter's text."""
    world.probe.started.clear()
    world.probe.cancelled.clear()
    world.recorder.posts.clear()
    limits = CLIENT_LIMITS.replace(request_timeout=TIMEOUT)

    async def scenario() -> str:
        async with http_client(Client, world.url, mode=mode, limits=limits) as client:
            with pytest.raises(RequestTimeout):
                await client.call_tool(name=HANG, arguments={"seconds": 20})
            assert await asyncio.to_thread(world.probe.cancelled.wait, 5.0)
            answer = await client.call_tool(name="test_simple_text")
            return answer.content[0].text  # type: ignore[union-attr]

    return asyncio.run(asyncio.wait_for(scenario(), 30))


def test_a_2026_request_that_times_out_is_cancelled_by_closing_its_stream(world: World) -> None:
    assert timed_out_call(world, "modern") == "This is a simple text response for testing."
    assert world.probe.started.is_set() and world.probe.cancelled.is_set()
    assert "notifications/cancelled" not in world.recorder.methods()
    for post in world.recorder.posts:  # every POST of the revision carries its headers
        assert post.headers["mcp-protocol-version"] == "2026-07-28"
        assert post.headers["mcp-method"] == post.message()["method"]


def test_a_legacy_request_that_times_out_is_cancelled_by_a_notification(world: World) -> None:
    assert timed_out_call(world, "legacy") == "This is a simple text response for testing."
    (cancel,) = [
        p for p in world.recorder.posts if p.message().get("method") == "notifications/cancelled"
    ]
    called = next(p for p in world.recorder.posts if p.message().get("method") == "tools/call")
    assert cancel.message()["params"]["requestId"] == called.message()["id"]
    assert cancel.headers["mcp-session-id"] == called.headers["mcp-session-id"]
    assert cancel.headers["mcp-protocol-version"] == called.headers["mcp-protocol-version"]
