"""``ClientSession.listen`` gives what a server says changed as one stream of ``Change``,
the same in either era; a stream that drops is opened again with what may have been
missed given once; repeats are held once and a flood cannot grow the client's memory."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from mcpgen.runtime import App, McpError
from mcpgen.runtime.aio.middleware import Call
from mcpgen.runtime.client import CLIENT_LIMITS, Change, ListenEnded

from support.scripted_server import SUBSCRIPTION_ID, discovered, notification, result, scripted

pytestmark = pytest.mark.anyio
TIMEOUT = 20.0
NOTES = "file:///notes.txt"


class Watched:
    """An app with a tool, a resource and a prompt, counting what it is asked."""

    def __init__(self) -> None:
        self.asked: dict[str, int] = {}
        self.app = App("watched", middleware=[self.count])

        @self.app.tool
        def echo(text: str) -> str:
            """The text back."""
            return text

        @self.app.resource(NOTES)
        def notes() -> str:
            return "notes"

        @self.app.prompt
        def greet(name: str) -> str:
            """Say hello."""
            return f"Hello {name}"

    async def count(self, call: Call, call_next: Callable[[Call], Awaitable[Any]]) -> Any:
        self.asked[call.method] = self.asked.get(call.method, 0) + 1
        return await call_next(call)


async def next_change(changes: Any) -> Change:
    return await asyncio.wait_for(changes.__anext__(), 5.0)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_list_changes_and_resource_updates_arrive_the_same_in_either_era(
    mode: str,
) -> None:
    server = Watched()

    async def run() -> None:
        async with server.app.test_client(mode=mode) as client:
            session = client.session
            assert session.era == ("modern" if mode == "auto" else "legacy")
            async with session.listen(uris=[NOTES]) as changes:
                assert changes.honoured == {
                    "toolsListChanged": True,
                    "promptsListChanged": True,
                    "resourcesListChanged": True,
                    "resourceSubscriptions": [NOTES],
                }
                server.app.add_tool(lambda: "new", name="new")
                assert await next_change(changes) == Change("tools")
                await server.app.resource_updated(NOTES)
                assert await next_change(changes) == Change("resource", NOTES)
                server.app.remove_tool("new")
                assert await next_change(changes) == Change("tools")

    await asyncio.wait_for(run(), TIMEOUT)


async def test_a_listen_asks_only_for_what_it_names() -> None:
    """``tools=True`` alone: a resource update or a prompt change is not sent to it."""
    server = Watched()

    async def run() -> None:
        async with server.app.test_client() as client:
            async with client.session.listen(tools=True, prompts=False, resources=False) as changes:
                assert changes.honoured == {"toolsListChanged": True}
                await server.app.resource_updated(NOTES)
                server.app.add_tool(lambda: "new", name="new")
                assert await next_change(changes) == Change("tools")
                assert len(changes.backlog) == 0

    await asyncio.wait_for(run(), TIMEOUT)


async def test_repeated_changes_not_read_yet_are_held_once() -> None:
    server = Watched()

    async def run() -> None:
        async with server.app.test_client() as client:
            async with client.session.listen(uris=[NOTES]) as changes:
                for n in range(20):
                    server.app.add_tool(lambda: "x", name=f"t{n}")
                    await server.app.resource_updated(NOTES)
                await client.session.request("tools/list")  # what was sent before is in
                for _ in range(50):
                    if len(changes.backlog) == 2:
                        break
                    await asyncio.sleep(0.02)
                assert len(changes.backlog) == 2
                got = {await next_change(changes), await next_change(changes)}
                assert got == {Change("tools"), Change("resource", NOTES)}

    await asyncio.wait_for(run(), TIMEOUT)


async def test_legacy_listens_share_one_subscription_per_uri() -> None:
    """Two listens on one URI subscribe once; the last to close unsubscribes."""
    server = Watched()

    async def run() -> None:
        async with server.app.test_client(mode="legacy") as client:
            first = await client.session.listen(uris=[NOTES]).__aenter__()
            second = await client.session.listen(uris=[NOTES]).__aenter__()
            assert server.asked.get("resources/subscribe") == 1
            await first.close()
            assert "resources/unsubscribe" not in server.asked
            await server.app.resource_updated(NOTES)
            assert await next_change(second) == Change("resource", NOTES)
            await second.close()
            assert server.asked.get("resources/unsubscribe") == 1

    await asyncio.wait_for(run(), TIMEOUT)


async def test_a_listen_the_server_refuses_fails_when_it_opens() -> None:
    """More URIs than the server's ``Limits.max_subscriptions``: -32602 at ``async with``,
    and the client goes on."""
    server = Watched()
    server.app = App("few", limits=CLIENT_LIMITS.replace(max_subscriptions=2))

    @server.app.resource(NOTES)
    def notes() -> str:
        return "notes"

    async def run() -> None:
        async with server.app.test_client() as client:
            uris = [f"file:///{n}" for n in range(5)]
            with pytest.raises(McpError, match="max_subscriptions"):
                async with client.session.listen(uris=uris):
                    pass
            assert (await client.session.request("resources/list")).resources

    await asyncio.wait_for(run(), TIMEOUT)


def acknowledging(extra: Callable[[Any], list[dict[str, Any]]] | None = None) -> Any:
    """A listen answered with its acknowledgement (what was asked), then ``extra(id)``."""

    def answer(request: dict[str, Any]) -> list[dict[str, Any]]:
        asked = request["params"]["notifications"]
        ack = notification(
            "notifications/subscriptions/acknowledged", request["id"], notifications=asked
        )
        return [ack, *(extra(request["id"]) if extra else [])]

    return answer


CAPS = {"tools": {"listChanged": True}, "resources": {"subscribe": True, "listChanged": True}}


async def test_a_dropped_stream_is_opened_again_and_what_it_carries_given_as_missed() -> None:
    """Over HTTP a stream that drops fails its request with -32603: the client opens it
    again, and on the new acknowledgement gives every kind as ``missed`` once."""

    async def run() -> None:
        script = {"server/discover": discovered(CAPS), "subscriptions/listen": acknowledging()}
        async with scripted(script) as server:
            async with server.session.listen(tools=True, resources=False, uris=[NOTES]) as changes:
                first = changes.stream
                await server.send(notification("notifications/tools/list_changed", first))
                assert await next_change(changes) == Change("tools")
                dropped = {"code": -32603, "message": "the server closed the stream"}
                await server.send({"jsonrpc": "2.0", "id": first, "error": dropped})
                missed = {await next_change(changes), await next_change(changes)}
                assert missed == {Change("tools", missed=True), Change("resource", missed=True)}
                assert changes.reconnects == 1 and changes.stream != first
                assert server.asked("subscriptions/listen") == 2

    await asyncio.wait_for(run(), TIMEOUT)


async def test_a_graceful_end_finishes_the_iteration() -> None:
    async def run() -> None:
        script = {"server/discover": discovered(CAPS), "subscriptions/listen": acknowledging()}
        async with scripted(script) as server:
            async with server.session.listen(tools=True) as changes:
                meta = {SUBSCRIPTION_ID: changes.stream}
                ended = result({"id": changes.stream}, {"_meta": meta})
                await server.send(ended)
                assert [c async for c in changes] == []

    await asyncio.wait_for(run(), TIMEOUT)


async def test_an_unacknowledged_listen_times_out_clearly() -> None:
    limits = CLIENT_LIMITS.replace(request_timeout=0.5)

    async def run() -> None:
        script = {"server/discover": discovered(CAPS), "subscriptions/listen": lambda r: []}
        async with scripted(script, limits=limits) as server:
            with pytest.raises(ListenEnded, match="did not acknowledge"):
                async with server.session.listen(tools=True):
                    pass
            assert server.asked("subscriptions/listen") == 1

    await asyncio.wait_for(run(), TIMEOUT)


async def test_closing_a_listen_cancels_its_stream_at_the_server() -> None:
    async def run() -> None:
        script = {"server/discover": discovered(CAPS), "subscriptions/listen": acknowledging()}
        async with scripted(script) as server:
            async with server.session.listen(tools=True) as changes:
                stream = changes.stream
            cancels: list[dict[str, Any]] = []
            for _ in range(50):
                cancels = [
                    r for r in server.received if r.get("method") == "notifications/cancelled"
                ]
                if cancels:
                    break
                await asyncio.sleep(0.02)
            assert [c["params"]["requestId"] for c in cancels] == [stream]

    await asyncio.wait_for(run(), TIMEOUT)


async def test_a_flooding_server_cannot_grow_the_backlog() -> None:
    """A server sending 5,000 updates of distinct sub-resources and list changes it was
    never asked for: the backlog stays within ``Limits.listen_backlog`` (the updates
    collapse into one), what was not asked for is dropped, and the client still answers."""
    limits = CLIENT_LIMITS.replace(listen_backlog=64)

    def flood(stream: Any) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for n in range(5_000):
            out.append(notification("notifications/resources/updated", stream, uri=f"{NOTES}/{n}"))
            out.append(notification("notifications/prompts/list_changed", stream))
        out.append(notification("notifications/tools/list_changed", stream))
        return out

    async def run() -> None:
        script = {
            "server/discover": discovered(CAPS),
            "subscriptions/listen": acknowledging(flood),
            "tools/list": lambda r: [result(r, {"tools": [], "ttlMs": 0})],
        }
        async with scripted(script, limits=limits) as server:
            async with server.session.listen(tools=True, uris=[f"{NOTES}/"]) as changes:
                for _ in range(200):
                    await server.session.request("tools/list")
                    if (
                        Change("tools") in changes.backlog._held.values()
                    ):  # pyright: ignore[reportPrivateUsage]
                        break
                assert len(changes.backlog) <= 64
                got = [await next_change(changes) for _ in range(len(changes.backlog))]
                assert Change("resource", None) in got and Change("tools") in got
                assert all(c.kind in ("resource", "tools") for c in got)

    await asyncio.wait_for(run(), TIMEOUT)


async def test_iterating_a_listen_starts_it_once() -> None:
    """``async for`` without ``async with`` opens the stream when the first change is asked
    for, and only then, even when the server honours nothing of what was asked."""

    def honouring_nothing(request: dict[str, Any]) -> list[dict[str, Any]]:
        ack = "notifications/subscriptions/acknowledged"
        return [notification(ack, request["id"], notifications={})]

    async def run() -> None:
        script = {"server/discover": discovered(CAPS), "subscriptions/listen": honouring_nothing}
        async with scripted(script) as server:
            changes = server.session.listen(tools=True)
            for _ in range(2):
                with pytest.raises(asyncio.TimeoutError):
                    await asyncio.wait_for(changes.__anext__(), 0.2)
            assert changes.honoured == {} and server.asked("subscriptions/listen") == 1
            with pytest.raises(RuntimeError, match="started already"):
                await changes.start()
            await changes.close()

    await asyncio.wait_for(run(), TIMEOUT)
