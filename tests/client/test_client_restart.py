"""``stdio_client(restart=Restart(...))``: a server process that ends is started again and
the session opened anew (real processes: ``tests/peers/slow_server.py``). A request the end
cut off is sent again when it changes nothing, a tool call fails with ``SessionLost`` and
is not repeated; restarts are bounded; without a policy, the end stands."""

from __future__ import annotations

import asyncio
import sys
from typing import Any, cast

import pytest

from mcpgen.generated.v2025_11_25.client import Client
from mcpgen.runtime import ConnectionClosed
from mcpgen.runtime.aio.stdio import StdioProcess
from mcpgen.runtime.client import ClientSession, Restart, SessionLost, stdio_client
from support.checkout import ROOT

SLOW = ["-m", "tests.peers.slow_server"]


def process_of(client: Client) -> asyncio.subprocess.Process:
    session = client.session
    assert isinstance(session, ClientSession)
    return cast(StdioProcess, session.transport).process


def run(scenario: Any) -> None:
    asyncio.run(asyncio.wait_for(scenario, 60))


def test_a_killed_server_is_started_again_and_a_safe_request_repeated() -> None:
    async def scenario() -> None:
        restart = Restart(max_restarts=2, window=60)
        async with stdio_client(
            Client, sys.executable, SLOW, cwd=str(ROOT), restart=restart
        ) as client:
            first = process_of(client)
            assert (await client.list_tools()).tools
            first.kill()
            await first.wait()
            tools = await client.list_tools()  # the new process answers it
            assert tools.tools
            second = process_of(client)
            assert second.pid != first.pid and second.returncode is None

    run(scenario())


def test_a_tool_call_the_end_cut_off_is_not_repeated_and_the_next_one_served() -> None:
    async def scenario() -> None:
        async with stdio_client(
            Client, sys.executable, SLOW, cwd=str(ROOT), restart=Restart()
        ) as client:
            first = process_of(client)
            with pytest.raises(SessionLost, match="the server process ended during tools/call"):
                await client.call_tool(name="exit", arguments={"code": 3})
            assert first.returncode == 3
            slept = await client.call_tool(name="sleep", arguments={"seconds": 0, "label": "x"})
            assert not slept.is_error and process_of(client).returncode is None

    run(scenario())


def test_restarts_are_bounded_by_the_policy() -> None:
    async def scenario() -> None:
        restart = Restart(max_restarts=2, window=60)
        async with stdio_client(
            Client, sys.executable, SLOW, cwd=str(ROOT), restart=restart
        ) as client:
            for _ in range(2):
                process = process_of(client)
                process.kill()
                await process.wait()
                assert (await client.list_tools()).tools  # restarted
            process = process_of(client)
            process.kill()
            await process.wait()
            with pytest.raises(ConnectionClosed):
                await client.list_tools()  # a third end within the window stands

    run(scenario())


def test_without_a_policy_the_end_stands() -> None:
    async def scenario() -> None:
        async with stdio_client(Client, sys.executable, SLOW, cwd=str(ROOT)) as client:
            process = process_of(client)
            process.kill()
            await process.wait()
            with pytest.raises(ConnectionClosed):
                await client.list_tools()

    run(scenario())


def test_a_policy_refuses_bounds_that_are_not_positive() -> None:
    with pytest.raises(ValueError, match="must be positive"):
        Restart(max_restarts=0)
