"""A client keeps what a 2026-07-28 server says it may (``ttlMs``, ``cacheScope``): a list
or read asked again while fresh makes no request, a private result is never given to
another identity, a change the server announces makes what it changed stale, and hints a
hostile server sends (huge, negative, not a number) keep nothing or are capped."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
import pytest

from mcpgen.runtime import App, McpError
from mcpgen.runtime.aio.middleware import Call
from mcpgen.runtime.client import CLIENT_LIMITS, MemoryStore, ResponseCache
from mcpgen.runtime.client.cache import freshness
from mcpgen.runtime.core.outgoing import CacheHint, CachePolicy

from support.scripted_server import result, scripted

pytestmark = pytest.mark.anyio
TIMEOUT = 20.0
SERVER = "memory://counted"


class Counted:
    """An app whose requests are counted by method, at the server."""

    def __init__(self, policy: CachePolicy) -> None:
        self.asked: dict[str, int] = {}
        self.app = App("counted", cache=policy, middleware=[self.count])

        @self.app.tool
        def echo(text: str) -> str:
            """The text back."""
            return text

        @self.app.resource("file:///notes.txt")
        def notes() -> str:
            return "notes"

    async def count(self, call: Call, call_next: Callable[[Call], Awaitable[Any]]) -> Any:
        self.asked[call.method] = self.asked.get(call.method, 0) + 1
        return await call_next(call)


def kept(ttl_ms: int, scope: str = "public", *methods: str) -> CachePolicy:
    hint = CacheHint(ttl_ms, scope)  # type: ignore[arg-type]
    return CachePolicy(methods={m: hint for m in methods or ("tools/list",)})


async def test_a_list_asked_again_while_fresh_makes_no_request() -> None:
    server = Counted(kept(60_000))

    async def run() -> None:
        async with server.app.test_client() as client:
            first = await client.session.request("tools/list")
            again = await client.session.request("tools/list")
            assert [t.name for t in again.tools] == [t.name for t in first.tools] == ["echo"]
            assert server.asked["tools/list"] == 1
            assert (client.session.cache.hits, client.session.cache.misses) == (1, 1)

    await asyncio.wait_for(run(), TIMEOUT)


async def test_a_result_with_no_time_to_live_is_asked_for_each_time() -> None:
    """The runtime's servers send ``ttlMs`` 0 unless told: nothing is kept."""
    server = Counted(CachePolicy())

    async def run() -> None:
        async with server.app.test_client() as client:
            for _ in range(3):
                await client.session.request("tools/list")
            assert server.asked["tools/list"] == 3

    await asyncio.wait_for(run(), TIMEOUT)


async def test_with_the_cache_off_every_list_reaches_the_server() -> None:
    server = Counted(kept(60_000))

    async def run() -> None:
        async with server.app.test_client(cache=False) as client:
            assert client.session.cache is None
            await client.session.request("tools/list")
            await client.session.request("tools/list")
            assert server.asked["tools/list"] == 2

    await asyncio.wait_for(run(), TIMEOUT)


async def test_private_results_are_kept_per_identity_public_ones_shared() -> None:
    """Two users' clients on one store: a private list read by alice is read again from
    the server for bob; a public one is not."""
    for scope, bob_asks in (("private", 2), ("public", 1)):
        server = Counted(kept(60_000, scope))
        store = MemoryStore()

        async def run() -> None:
            alice_cache = ResponseCache(store, identity="alice")
            bob_cache = ResponseCache(store, identity="bob")
            async with server.app.test_client(cache=alice_cache) as alice:
                async with server.app.test_client(cache=bob_cache) as bob:
                    alice.session.server_key = bob.session.server_key = SERVER
                    await alice.session.request("tools/list")
                    await bob.session.request("tools/list")
                    assert server.asked["tools/list"] == bob_asks, scope
                    await alice.session.request("tools/list")
                    await bob.session.request("tools/list")
                    assert server.asked["tools/list"] == bob_asks, scope

        await asyncio.wait_for(run(), TIMEOUT)


async def test_a_change_the_server_announces_makes_the_list_stale() -> None:
    """While listening, a ``list_changed`` forgets the kept list and a resource update
    the kept read: the next request reaches the server and sees the change."""
    server = Counted(kept(60_000, "public", "tools/list", "resources/read"))

    async def run() -> None:
        async with server.app.test_client() as client:
            session = client.session
            async with session.listen(uris=["file:///notes.txt"]) as changes:
                await session.request("tools/list")
                await session.request("resources/read", {"uri": "file:///notes.txt"})
                await session.request("resources/read", {"uri": "file:///notes.txt"})
                assert server.asked["resources/read"] == 1
                server.app.add_tool(lambda: "new", name="new")
                await server.app.resource_updated("file:///notes.txt")
                seen = {(await changes.__anext__()).kind for _ in range(2)}
                assert seen == {"tools", "resource"}
            tools = await session.request("tools/list")
            assert [t.name for t in tools.tools] == ["echo", "new"]
            await session.request("resources/read", {"uri": "file:///notes.txt"})
            assert server.asked["tools/list"] == 2 and server.asked["resources/read"] == 2

    await asyncio.wait_for(run(), TIMEOUT)


def listing(ttl: Any, scope: Any = "public") -> Any:
    def answer(request: dict[str, Any]) -> list[dict[str, Any]]:
        tools = [{"name": "t", "inputSchema": {"type": "object"}}]
        return [result(request, {"tools": tools, "ttlMs": ttl, "cacheScope": scope})]

    return answer


async def test_a_result_with_ttl_zero_keeps_nothing() -> None:
    async def run() -> None:
        async with scripted({"tools/list": listing(0)}) as server:
            await server.session.request("tools/list")
            await server.session.request("tools/list")
            assert server.asked("tools/list") == 2

    await asyncio.wait_for(run(), TIMEOUT)


@pytest.mark.parametrize("ttl", [-1, "60000", 1.5, True, None, [1]], ids=lambda v: f"ttl={v!r}")
async def test_a_time_to_live_that_is_no_count_of_milliseconds_is_a_clear_error(
    ttl: Any,
) -> None:
    """The schema makes ``ttlMs`` an integer of at least 0: a result with any other is
    refused naming the field, nothing is kept, and the client goes on asking."""

    async def run() -> None:
        async with scripted({"tools/list": listing(ttl)}) as server:
            for _ in range(2):
                with pytest.raises(
                    McpError, match=r"Invalid result of tools/list.*\$\.result\.ttlMs"
                ):
                    await server.session.request("tools/list")
            assert server.asked("tools/list") == 2
            assert len(server.session.cache.store) == 0  # type: ignore[union-attr,arg-type]

    await asyncio.wait_for(run(), TIMEOUT)


async def test_a_huge_time_to_live_is_capped_and_an_odd_scope_is_private() -> None:
    """``ttlMs`` of 10^15 keeps the result ``Limits.max_cache_ttl`` at most; a private
    result is kept under its reader's identity (and a scope that is neither public nor
    private, which the typed client refuses anyway, would be taken as private)."""
    limits = CLIENT_LIMITS.replace(max_cache_ttl=30)
    assert freshness(b'{"ttlMs": 1000000000000000, "cacheScope": "public"}', 30) == (30, True)
    assert freshness(b'{"ttlMs": 5000, "cacheScope": "everyone"}', 30) == (5, False)
    assert freshness(b'{"ttlMs": 5000, "resultType": "input_required"}', 30) is None
    assert freshness(b"not json", 30) is None
    store = MemoryStore()

    async def run() -> None:
        cache = ResponseCache(store, identity="alice", limits=limits)
        big = listing(10**15, "private")
        async with scripted({"tools/list": big}, cache=cache) as server:
            before = time.time()
            await server.session.request("tools/list")
            await server.session.request("tools/list")
            assert server.asked("tools/list") == 1
            ((key, entry),) = store._entries.items()  # pyright: ignore[reportPrivateUsage]
            assert '"alice"' in key and entry.expires <= before + 31

    await asyncio.wait_for(run(), TIMEOUT)


async def test_the_memory_store_holds_at_most_its_entries() -> None:
    store = MemoryStore(max_entries=3)
    cache = ResponseCache(store)
    raw = b'{"ttlMs": 60000, "cacheScope": "public", "contents": []}'
    for n in range(10):
        params = {"uri": f"file:///{n}"}
        assert await cache.keep(SERVER, "resources/read", params, raw, 0)
    assert len(store) == 3
    assert await cache.lookup(SERVER, "resources/read", {"uri": "file:///9"}) == raw
    assert await cache.lookup(SERVER, "resources/read", {"uri": "file:///0"}) is None


async def test_a_result_asked_before_a_change_is_not_kept_after_it() -> None:
    """A list in flight when its ``list_changed`` arrives may predate the change."""
    cache = ResponseCache()
    raw = b'{"ttlMs": 60000, "cacheScope": "public", "tools": []}'
    generation = cache.generation(SERVER, "tools/list")
    await cache.stale(SERVER, "notifications/tools/list_changed")
    assert not await cache.keep(SERVER, "tools/list", None, raw, generation)
    assert await cache.keep(SERVER, "tools/list", None, raw, cache.generation(SERVER, "tools/list"))


async def test_retries_with_answers_are_never_kept() -> None:
    cache = ResponseCache()
    raw = b'{"ttlMs": 60000, "cacheScope": "public", "contents": []}'
    retry = {"uri": "file:///a", "inputResponses": {"k": {}}, "requestState": "s"}
    assert not await cache.keep(SERVER, "resources/read", retry, raw, 0)
    assert not await cache.keep(SERVER, "tools/call", {"name": "x"}, raw, 0)


class BrokenStore:
    """A store out of reach: every call fails (a Redis that went away)."""

    def __init__(self) -> None:
        self.calls = 0

    async def get(self, key: str) -> Any:
        self.calls += 1
        raise ConnectionError("store unreachable")

    async def put(self, key: str, entry: Any) -> None:
        self.calls += 1
        raise ConnectionError("store unreachable")

    async def drop(self, prefix: str) -> None:
        self.calls += 1
        raise ConnectionError("store unreachable")


async def test_a_store_that_fails_costs_only_its_results(caplog: pytest.LogCaptureFixture) -> None:
    """Reads, keeps and forgets that fail are logged; every request reaches the server and
    is answered, and a method the store could not forget is never served from it."""
    server = Counted(kept(60_000))
    store = BrokenStore()

    async def run() -> None:
        async with server.app.test_client(cache=ResponseCache(store)) as client:
            for _ in range(3):
                listed = await client.session.request("tools/list")
                assert [t.name for t in listed.tools] == ["echo"]
            assert server.asked["tools/list"] == 3 and store.calls >= 6
            await client.session.cache.stale(SERVER, "notifications/tools/list_changed")

    await asyncio.wait_for(run(), TIMEOUT)
    assert "failed to read" in caplog.text and "failed to keep" in caplog.text
    assert "failed to forget" in caplog.text


async def test_a_method_the_store_failed_to_forget_is_not_served_until_it_does() -> None:
    class Flaky(MemoryStore):
        failing = True

        async def drop(self, prefix: str) -> None:
            if self.failing:
                raise ConnectionError("store unreachable")
            await super().drop(prefix)

    store = Flaky()
    cache = ResponseCache(store)
    raw = b'{"ttlMs": 60000, "cacheScope": "public", "tools": []}'
    assert await cache.keep(SERVER, "tools/list", None, raw, 0)
    await cache.stale(SERVER, "notifications/tools/list_changed")
    assert await cache.lookup(SERVER, "tools/list", None) is None
    store.failing = False
    await cache.stale(SERVER, "notifications/tools/list_changed")
    assert await cache.keep(SERVER, "tools/list", None, raw, cache.generation(SERVER, "tools/list"))
    assert await cache.lookup(SERVER, "tools/list", None) == raw


class Sum(msgspec.Struct):
    total: int


def add(a: int, b: int) -> Sum:
    """Add two integers."""
    return Sum(a + b)


async def test_a_tool_list_kept_by_another_session_teaches_this_one_its_tools() -> None:
    """Bob's first list comes from what alice's session kept: his session still learns
    the tools' schemas and header annotations from it, so his call needs no list of its
    own."""
    server = Counted(kept(60_000))
    server.app.add_tool(add, name="add")
    store = MemoryStore()

    async def run() -> None:
        async with server.app.test_client(cache=ResponseCache(store)) as alice:
            async with server.app.test_client(cache=ResponseCache(store)) as bob:
                alice.session.server_key = bob.session.server_key = SERVER
                await alice.session.request("tools/list")
                listed = await bob.session.request("tools/list")
                assert [t.name for t in listed.tools] == ["echo", "add"]
                called = await bob.session.call_tool_as(Sum, "add", {"a": 2, "b": 3})
                assert called == Sum(5)
                assert server.asked["tools/list"] == 1

    await asyncio.wait_for(run(), TIMEOUT)
