"""The health endpoint (``/healthz``): 200 while the server's shared stores can serve,
503 naming the one that cannot; answered from any host and without a token, to GET (and
HEAD) only; moved or turned off by ``health_path``; garbage methods refused and the
endpoint still answering. The readiness endpoint a balancer asks (``/readyz``): ready
whatever the stores say, stopping once a stop signal came; the stop delay read from the
environment, garbage there refused."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.runtime import App, Tasks
from mcpgen.runtime.http.endpoint import STOP_DELAY_ENV
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


def test_readiness_says_ready_whatever_the_stores_say_and_stopping_once_a_stop_came() -> None:
    """``/readyz`` is 200 with a store away (every process's at once); once the process
    is stopping, it and ``/healthz`` say 503 ``stopping``; garbage methods get 405."""
    away = Away()
    http = app(bus=away).http_app()

    async def scenario() -> list[Any]:
        away.outage.lost(OSError("refused"))
        ready = await call(http, "GET", path="/readyz")
        posted = await call(http, "POST", b"garbage", path="/readyz")
        http.stopping = True
        return [ready, posted, await call(http, "GET", path="/readyz")] + [
            await call(http, "GET", path="/healthz")
        ]

    ready, posted, stopping, health = asyncio.run(asyncio.wait_for(scenario(), 10))
    assert ready.status == 200 and ready.json() == {"status": "ready"}
    assert posted.status == 405
    assert stopping.status == 503 and stopping.json() == {"status": "stopping"}
    assert health.status == 503 and health.json()["status"] == "stopping"


def test_the_stop_delay_comes_from_the_environment_and_garbage_there_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(STOP_DELAY_ENV, "2.5")
    assert app().http_app().stop_delay == 2.5
    assert app().http_app(stop_delay=0).stop_delay == 0
    for garbage in ("soon", "-1", "nan", "1e9"):
        monkeypatch.setenv(STOP_DELAY_ENV, garbage)
        with pytest.raises(ValueError, match=STOP_DELAY_ENV):
            app().http_app()
    monkeypatch.delenv(STOP_DELAY_ENV)
    assert app().http_app().stop_delay == 0
