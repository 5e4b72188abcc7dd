"""The health endpoint a balancer asks (``/healthz``): 200 while the server's shared
stores can serve, 503 naming the one that cannot; answered from any host and without a
token, to GET (and HEAD) only; moved or turned off by ``health_path``; garbage methods
refused and the endpoint still answering."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.runtime import App, Tasks
from mcpgen.runtime.tasks.outage import Outage
from support.asgi_driver import call


class Away:
    """A shared store that reports outages (as the Redis bus and task store do)."""

    def __init__(self) -> None:
        self.outage = Outage("a store")

    async def publish(self, method: str, params: dict[str, Any], wanted: str) -> None:
        return None

    async def start(self, deliver: Any) -> None:
        return None

    async def close(self) -> None:
        return None


def app(**options: Any) -> App:
    made = App("healthy", binding=stubs, **options)

    @made.tool
    def one() -> int:
        """One."""
        return 1

    return made


def test_a_server_with_no_shared_store_is_healthy_from_any_host() -> None:
    http = app().http_app()

    async def scenario() -> list[Any]:
        return [
            await call(http, "GET", path="/healthz", headers={"host": "10.0.0.7:8000"}),
            await call(http, "HEAD", path="/healthz"),
            await call(http, "POST", b"{}", path="/healthz"),
            await call(http, "DELETE", path="/healthz"),
            await call(http, "GET", path="/healthz/"),
        ]

    got, head, posted, deleted, slash = asyncio.run(asyncio.wait_for(scenario(), 10))
    assert got.status == 200 and got.json() == {"status": "ok", "checks": {}}
    assert head.status == 200
    assert posted.status == 405 and deleted.status == 405
    assert slash.status == 200


def test_a_store_that_cannot_serve_makes_it_unavailable_until_it_can() -> None:
    store = Away()
    served = app(bus=store, tasks=Tasks())
    http = served.http_app()

    async def scenario() -> list[Any]:
        replies = [await call(http, "GET", path="/healthz")]
        store.outage.lost(ConnectionError("refused"))
        replies.append(await call(http, "GET", path="/healthz"))
        store.outage.since = time.monotonic() - 1  # settled: the next success ends it
        store.outage.settled_at = 0.0
        store.outage.reached()
        replies.append(await call(http, "GET", path="/healthz"))
        return replies

    before, during, after = asyncio.run(asyncio.wait_for(scenario(), 10))
    assert before.status == 200
    # (the in-memory task store cannot be away: it has no check)
    assert before.json() == {"status": "ok", "checks": {"bus": "ok"}}
    assert during.status == 503
    assert during.json()["status"] == "unavailable"
    assert during.json()["checks"]["bus"].startswith("unreachable for")
    assert after.status == 200


def test_the_health_path_can_move_or_be_turned_off() -> None:
    moved = app().http_app(health_path="/status")
    off = app().http_app(health_path=None)

    async def scenario() -> list[Any]:
        return [
            await call(moved, "GET", path="/status"),
            await call(moved, "GET", path="/healthz"),
            await call(off, "GET", path="/healthz"),
        ]

    status, old, none = asyncio.run(asyncio.wait_for(scenario(), 10))
    assert status.status == 200 and old.status == 404 and none.status == 404
