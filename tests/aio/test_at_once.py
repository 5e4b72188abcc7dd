"""Handlers that cannot suspend are answered where their request was read
(``runtime.aio.at_once``): each still in a context of its own, a waiting one still in a
task of its own (reading goes on, it can be cancelled), and an answer the transport holds
back still counts as in flight until written."""

from __future__ import annotations

import asyncio
import contextvars
import json
from typing import Any

import pytest
from mcpgen.generated.v2025_11_25 import server as stubs
from mcpgen.generated.v2025_11_25 import types as t
from mcpgen.runtime import Limits, Server
from mcpgen.runtime.aio.at_once import WAITS, at_once, never_waits
from mcpgen.runtime.aio.memory import MemoryTransport, memory_pair

TIMEOUT = 10.0
SEEN: contextvars.ContextVar[str] = contextvars.ContextVar("seen", default="nothing")


class Handlers(stubs.ServerHandlers):
    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.saw: list[str] = []

    async def list_tools(self, params: Any, ctx: Any) -> t.ListToolsResult:
        return t.ListToolsResult(tools=[])

    async def call_tool(self, params: Any, ctx: Any) -> t.CallToolResult:
        if params.name == "wait":
            return await self.waiting()
        self.saw.append(SEEN.get())  # what an earlier handler set must not show here
        SEEN.set(params.name)
        return t.CallToolResult(content=[t.TextContent(text=params.name)])

    async def waiting(self) -> t.CallToolResult:
        await self.release.wait()
        return t.CallToolResult(content=[t.TextContent(text="waited")])


def frame(request_id: int, method: str, params: dict[str, Any] | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


def call(request_id: int, name: str) -> bytes:
    return frame(request_id, "tools/call", {"name": name, "arguments": {}})


HANDSHAKE = [
    frame(
        0,
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    ),
    b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
]


async def serving(
    server: Server, maxsize: int = 0, writes_now: bool = True
) -> tuple[Any, asyncio.Task[None]]:
    client, end = memory_pair(maxsize)
    task = asyncio.ensure_future(server.serve(end if writes_now else SendOnly(end)))
    for line in HANDSHAKE:
        await client.send(line)
    assert b'"protocolVersion"' in (await asyncio.wait_for(client.receive(), TIMEOUT) or b"")
    return client, task


async def answer(client: Any) -> dict[str, Any]:
    data = await asyncio.wait_for(client.receive(), TIMEOUT)
    assert data is not None
    return json.loads(data)


def test_never_waits_tells_a_coroutine_without_a_yield_point() -> None:
    async def plain() -> int:
        return 1

    async def awaits() -> None:
        await asyncio.sleep(0)

    async def with_async(lock: asyncio.Lock) -> None:
        async with lock:
            pass

    async def iterates(items: Any) -> None:
        async for _ in items:
            pass

    coroutines = [plain(), awaits(), with_async(asyncio.Lock()), iterates(None)]
    assert [never_waits(c) for c in coroutines] == [True, False, False, False]
    for c in coroutines:
        c.close()
    assert not never_waits(asyncio.Future.__await__)  # type: ignore[arg-type]


def test_at_once_runs_only_a_coroutine_that_cannot_suspend_and_gives_what_it_returns() -> None:
    ran: list[str] = []

    async def returns() -> int:
        ran.append("returns")
        return 7

    async def raises() -> int:
        raise ValueError("boom")

    async def awaits() -> int:
        ran.append("awaits")
        await asyncio.sleep(0)
        return 1

    assert at_once(returns()) == 7
    with pytest.raises(ValueError, match="boom"):
        at_once(raises())
    waiting = awaits()
    assert at_once(waiting) is WAITS and ran == ["returns"]  # not even started
    waiting.close()
    loop = asyncio.new_event_loop()
    assert at_once(loop.create_future()) is WAITS
    loop.close()
    assert at_once(returns()) == 7  # (what it learnt of the code, remembered, still holds)


def test_handlers_answered_at_once_each_run_in_a_context_of_their_own() -> None:
    handlers = Handlers()

    async def scenario() -> list[str]:
        client, serving_task = await serving(Server(handlers, name="t"))
        for i in range(1, 4):
            await client.send(call(i, f"tool{i}"))
            reply = await answer(client)
            assert reply["id"] == i and reply["result"]["content"][0]["text"] == f"tool{i}"
        await client.close()
        await asyncio.wait_for(serving_task, TIMEOUT)
        return handlers.saw

    assert asyncio.run(scenario()) == ["nothing"] * 3
    assert SEEN.get() == "nothing"


def test_a_waiting_handler_holds_up_no_other_request_and_can_be_cancelled() -> None:
    handlers = Handlers()

    async def scenario() -> None:
        server = Server(handlers, name="t")
        client, serving_task = await serving(server)
        await client.send(call(1, "wait"))
        await client.send(call(2, "now"))
        assert (await answer(client))["id"] == 2  # answered while 1 waits
        (session,) = server.sessions
        assert session.in_flight == 1
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
        await client.send(json.dumps(cancel).encode())
        await client.send(call(3, "wait"))
        handlers.release.set()
        assert (await answer(client))["result"]["content"][0]["text"] == "waited"
        await client.close()
        await asyncio.wait_for(serving_task, TIMEOUT)
        assert session.in_flight == 0

    asyncio.run(scenario())


class SendOnly:
    """A transport with ``send`` alone (no ``write_now``): answers go through its coroutine."""

    def __init__(self, end: MemoryTransport) -> None:
        self.end = end

    async def receive(self) -> bytes | None:
        return await self.end.receive()

    async def send(
        self, data: bytes, related: Any = None, final: bool = False, status: Any = None
    ) -> None:
        await self.end.send(data)

    async def close(self) -> None:
        await self.end.close()


@pytest.mark.parametrize("writes_now", [True, False], ids=["write_now", "send"])
def test_an_answer_the_transport_holds_back_counts_as_in_flight_until_written(
    writes_now: bool,
) -> None:
    """Whether the transport starts a write without a coroutine (``write_now``) or not."""

    async def scenario() -> None:
        server = Server(Handlers(), name="t", limits=Limits(max_in_flight=3))
        client, serving_task = await serving(server, maxsize=1, writes_now=writes_now)

        async def send_all() -> None:  # the server's inbox holds one: sending waits too
            for i in range(1, 8):
                await client.send(call(i, f"tool{i}"))

        sending = asyncio.ensure_future(send_all())
        await asyncio.sleep(0.1)  # nobody reads: one answer queued, three held, reader waits
        (session,) = server.sessions
        assert session.in_flight == 3
        assert client.inbox.qsize() == 1
        assert [(await answer(client))["id"] for _ in range(7)] == list(range(1, 8))
        await asyncio.wait_for(sending, TIMEOUT)
        await client.close()
        await asyncio.wait_for(serving_task, TIMEOUT)

    asyncio.run(scenario())
