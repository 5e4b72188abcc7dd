"""The announcement bus over a real redis-server (127.0.0.1, started and stopped here):
two servers of one app, as two processes would hold them, each with its own clients. A
change announced in one reaches the other's legacy session and listen stream once, and
its own clients once; a resource update reaches only the sessions subscribed to it.
Garbage on the channel is dropped and the bus goes on; with Redis away, announcing fails
nothing (the health check says the bus is unreachable) and the bus listens again once
Redis is back."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import pytest
from redis.asyncio import Redis

from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.generated.v2026_07_28 import types as t
from mcpgen.runtime import App
from mcpgen.runtime.cluster import RedisBus
from mcpgen.runtime.testing import connect
from support.app_scenarios import Answering, run
from support.redis_server import RedisServer


@pytest.fixture
def redis() -> Iterator[RedisServer]:
    with RedisServer() as server:
        yield server


class Heard(Answering):
    """A client noting the changes it is told of."""

    def __init__(self) -> None:
        self.heard: list[Any] = []

    async def on_tool_list_changed(self, params: t.NotificationParams) -> None:
        self.heard.append("tools changed")

    async def on_resource_updated(self, params: t.ResourceUpdatedNotificationParams) -> None:
        self.heard.append(("updated", params.uri))


def worker(url: str) -> App:
    """One process's server of the app (each with a bus of its own)."""
    app = App("clustered", binding=stubs, bus=RedisBus(url, prefix="test:"))

    @app.tool
    def one() -> int:
        """One."""
        return 1

    @app.resource("mem://note", mime_type="text/plain")
    def note() -> str:
        return "a note"

    return app


@asynccontextmanager
async def clients_of(app: App) -> AsyncIterator[tuple[Heard, Heard, Heard]]:
    """A legacy client subscribed to ``mem://note``, one not subscribed, and a 2026-07-28
    client listening for tool changes and that resource's updates."""
    subscribed, plain, listening = Heard(), Heard(), Heard()
    async with AsyncExitStack() as stack:
        first = await stack.enter_async_context(connect(app, mode="legacy", handlers=subscribed))
        await first.session.request("resources/subscribe", {"uri": "mem://note"})
        await stack.enter_async_context(connect(app, mode="legacy", handlers=plain))
        modern = await stack.enter_async_context(connect(app, mode="auto", handlers=listening))
        filters = {"toolsListChanged": True, "resourceSubscriptions": ["mem://note"]}
        listen = asyncio.create_task(
            modern.session.session.request(
                "subscriptions/listen", {"notifications": filters}, timeout=60
            )
        )
        try:
            await asyncio.sleep(0.1)  # the listen stream is open
            yield subscribed, plain, listening
        finally:
            listen.cancel()


async def settled(*clients: Heard, expected: int) -> None:
    for _ in range(200):
        if all(len(c.heard) >= expected for c in clients):
            break
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.2)  # anything more (a duplicate) would have come by now


def test_a_change_in_one_process_reaches_every_processs_clients_once(redis: RedisServer) -> None:
    async def scenario() -> None:
        a, b = worker(redis.url), worker(redis.url)
        try:
            await a.server.start()
            await b.server.start()
            for app in (a, b):
                bus = app.server.bus
                assert isinstance(bus, RedisBus)
                await bus.subscribed()
            async with clients_of(a) as (sub_a, plain_a, listen_a):
                async with clients_of(b) as (sub_b, plain_b, listen_b):
                    await b.server.notify_changed("tools")
                    await a.resource_updated("mem://note")
                    everyone = (sub_a, plain_a, listen_a, sub_b, plain_b, listen_b)
                    await settled(*everyone, expected=1)
                    update = ("updated", "mem://note")
                    for subscribed in (sub_a, listen_a, sub_b, listen_b):
                        assert sorted(map(str, subscribed.heard)) == sorted(
                            map(str, ["tools changed", update])
                        ), subscribed.heard
                    for plain in (plain_a, plain_b):
                        assert plain.heard == ["tools changed"]
        finally:
            await a.server.close()
            await b.server.close()

    run(scenario())


def test_garbage_on_the_channel_is_dropped_and_the_bus_goes_on(
    redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    async def scenario() -> None:
        a, b = worker(redis.url), worker(redis.url)
        raw = Redis.from_url(redis.url)
        try:
            await a.server.start()
            await b.server.start()
            for app in (a, b):
                bus = app.server.bus
                assert isinstance(bus, RedisBus)
                await bus.subscribed()
            async with clients_of(a) as (_, plain_a, _):
                for garbage in (b"not json", b'{"o": 1}', b"[]", b"\xff" * 100, b"{" * 5000):
                    await raw.publish("test:announcements", garbage)
                await raw.publish("test:announcements", b"x" * (2 << 20))  # past max_message
                await b.server.notify_changed("tools")
                await settled(plain_a, expected=1)
                assert plain_a.heard == ["tools changed"]
        finally:
            await raw.aclose()
            await a.server.close()
            await b.server.close()

    with caplog.at_level(logging.WARNING, logger="mcpgen.runtime.cluster.bus"):
        run(scenario())
    dropped = [r for r in caplog.records if "dropped" in r.getMessage()]
    assert len(dropped) == 12  # six by each process's bus


def test_with_redis_away_announcing_fails_nothing_and_the_bus_comes_back(
    redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    async def scenario() -> None:
        a, b = worker(redis.url), worker(redis.url)
        port = redis.port
        try:
            await a.server.start()
            await b.server.start()
            bus_a, bus_b = a.server.bus, b.server.bus
            assert isinstance(bus_a, RedisBus) and isinstance(bus_b, RedisBus)
            await bus_a.subscribed()
            await bus_b.subscribed()
            async with clients_of(a) as (_, plain_a, _):
                redis.stop(keep_dir=True)
                await b.server.notify_changed("tools")  # lost (logged), nothing raised
                await a.server.notify_changed("tools")  # its own clients still hear it
                await settled(plain_a, expected=1)
                assert plain_a.heard == ["tools changed"]
                assert bus_b.outage.since is not None
                assert b.server.health()["status"] == "unavailable"
                redis.start(port)
                bus_a._subscribed.clear()
                await bus_a.subscribed(timeout=15)  # listening again
                await b.server.notify_changed("tools")
                await settled(plain_a, expected=2)
                assert plain_a.heard == ["tools changed"] * 2
                assert bus_b.outage.since is None
                assert b.server.health() == {"status": "ok", "checks": {"bus": "ok"}}
        finally:
            await a.server.close()
            await b.server.close()

    with caplog.at_level(logging.WARNING):
        run(scenario())
    began = [r for r in caplog.records if "announcement bus (Redis) unreachable" in r.getMessage()]
    assert began, [r.getMessage() for r in caplog.records]
