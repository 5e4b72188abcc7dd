"""Our WebSocket client against our server over real sockets (uvicorn on 127.0.0.1): either
era over the one connection, a refused handshake named, and a server that goes away
failing every waiting request at once instead of at its timeout."""

from __future__ import annotations

import asyncio
import sys
import time
from typing import Any

import pytest

from mcpgen.generated.v2025_11_25.client import Client
from mcpgen.runtime import ConnectionClosed
from mcpgen.runtime.client import ClientSession, websocket_client
from mcpgen.runtime.http.endpoint import McpHttpApp
from support.checkout import ROOT
from support.http_servers import HANG, Probe, ThreadedUvicorn

if str(ROOT) not in sys.path:  # examples/ is not an installed package
    sys.path.append(str(ROOT))

from examples.everything.server import build_app  # noqa: E402


def served() -> tuple[ThreadedUvicorn, Probe, str]:
    app = build_app()
    probe = Probe(app)
    runner = ThreadedUvicorn(McpHttpApp(app.server, websocket_path="/ws"))
    return runner, probe, f"ws://127.0.0.1:{runner.port}/ws"


def run(scenario: Any) -> Any:
    return asyncio.run(asyncio.wait_for(scenario, 30))


@pytest.mark.parametrize(("mode", "version"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
def test_our_client_speaks_either_era_over_one_websocket(mode: Any, version: str) -> None:
    runner, _, url = served()
    runner.start()
    try:

        async def scenario() -> None:
            async with websocket_client(Client, url, mode=mode) as client:
                assert isinstance(client.session, ClientSession)
                assert client.session.protocol_version == version
                called = await client.call_tool(name="test_simple_text")
                assert called.content[0].text  # type: ignore[union-attr]
                assert (await client.list_prompts()).prompts

        run(scenario())
    finally:
        runner.stop()


def test_a_refused_handshake_says_where_and_why() -> None:
    runner, _, url = served()
    runner.start()
    try:

        async def scenario() -> None:
            with pytest.raises(ConnectionClosed, match=r"no WebSocket at .*/nowhere: .*404"):
                async with websocket_client(Client, url.replace("/ws", "/nowhere")):
                    pass

        run(scenario())
    finally:
        runner.stop()


def test_a_server_that_goes_away_fails_the_waiting_request_at_once() -> None:
    runner, probe, url = served()
    runner.start()
    stopped = False
    try:

        async def scenario() -> float:
            nonlocal stopped
            async with websocket_client(Client, url, mode="legacy") as client:
                call = asyncio.ensure_future(client.call_tool(name=HANG, arguments={"seconds": 30}))
                assert await asyncio.to_thread(probe.started.wait, 5)
                started = time.monotonic()
                await asyncio.to_thread(runner.stop)
                stopped = True
                with pytest.raises(ConnectionClosed):
                    await call
                return time.monotonic() - started

        assert run(scenario()) < 10  # the request's timeout is 60 s
    finally:
        if not stopped:
            runner.stop()
