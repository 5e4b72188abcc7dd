"""A frozen Redis (its redis-server stopped with SIGSTOP, as a hung host or a long pause
looks from the client) under a server running tasks: each task request is refused with
-32000 "task store unavailable; retry later" within the store's ``socket_timeout`` (plus
slack for a loaded machine), the log gets one line as the outage begins and one as it
ends, not one per watcher per second, and once Redis runs again (SIGCONT, always sent)
the next request succeeds and the tasks complete. The server is served in process to a
raw peer; Redis is a real redis-server of its own."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.runtime import App, Tasks
from mcpgen.runtime.core.errors import SERVER_BUSY
from mcpgen.runtime.tasks.redis_store import RedisTaskStore
from redis import Redis
from support.redis_server import RedisServer

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from support.sansio import RawPeer, modern, serving  # noqa: E402

#: The store's timeouts here (seconds), and what a loaded machine may add to one.
TIMEOUT, SLACK = 1.0, 2.5
#: Tasks running (each with a watcher re-reading its task every RECHECK_MS).
RUNNING, RECHECK_MS = 10, 100
#: How long Redis stays frozen after the refused requests: many re-checks per watcher.
FROZEN_S = 2.0
CAPS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
UNAVAILABLE = {"code": SERVER_BUSY, "message": "Server busy: task store unavailable; retry later"}

pytestmark = pytest.mark.slow


def make_app(url: str, release: asyncio.Event) -> App:
    store = RedisTaskStore(
        url, socket_timeout=TIMEOUT, connect_timeout=TIMEOUT, recheck_ms=RECHECK_MS
    )
    app = App("outage", binding=stubs, tasks=Tasks(store, immediate_ms=0))

    @app.tool(task="optional")
    async def hold(label: str) -> str:
        """Hold until released."""
        await release.wait()
        return f"held {label}"

    return app


async def answer(peer: RawPeer, rid: int, method: str, params: dict[str, Any]) -> Any:
    """The answer to a modern request (read with a bound well past any timeout here)."""
    await peer.send(modern(rid, method, params, capabilities=CAPS))
    while True:
        message = await peer.read(30)
        if message.get("id") == rid and "method" not in message:
            return message


def our_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    """What the runtime logged at WARNING and above."""
    return [
        r.getMessage()
        for r in caplog.records
        if r.name.startswith("mcpgen") and r.levelno >= logging.WARNING
    ]


def test_a_frozen_redis_refuses_task_requests_in_time_logs_once_and_then_serves_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="mcpgen")
    redis = RedisServer().start()
    assert redis.process is not None
    pid = redis.process.pid

    async def scenario() -> None:
        release = asyncio.Event()
        app = make_app(redis.url, release)
        async with serving(app.server) as peer:
            ids = []
            for n in range(RUNNING):
                made = await answer(
                    peer, n, "tools/call", {"name": "hold", "arguments": {"label": str(n)}}
                )
                ids.append(made["result"]["taskId"])
            assert our_lines(caplog) == []
            os.kill(pid, signal.SIGSTOP)
            try:
                for rid, method, params in (
                    (100, "tasks/get", {"taskId": ids[0]}),
                    (101, "tools/call", {"name": "hold", "arguments": {"label": "new"}}),
                    (102, "tasks/cancel", {"taskId": ids[1]}),
                ):
                    asked = time.monotonic()
                    refused = await answer(peer, rid, method, params)
                    took = time.monotonic() - asked
                    assert refused.get("error") == UNAVAILABLE, refused
                    print(f"{method} with Redis frozen: refused after {took:.2f} s")
                    assert took < TIMEOUT + SLACK, f"{method} refused after {took:.1f} s"
                await asyncio.sleep(FROZEN_S)  # the watchers meet the outage again and again
                lines = our_lines(caplog)
                print(f"{len(lines)} line(s) logged with {RUNNING} watchers over the outage")
                assert len(lines) == 1, lines
                assert "task store (Redis) unreachable" in lines[0]
                assert "refused with -32000 until it is back" in lines[0]
            finally:
                os.kill(pid, signal.SIGCONT)
            polled = await answer(peer, 200, "tasks/get", {"taskId": ids[0]})
            assert polled["result"]["status"] == "working", polled  # the next call succeeds
            release.set()
            for n, task_id in enumerate(ids):
                task: dict[str, Any] = {}
                for attempt in range(300):
                    task = (
                        await answer(
                            peer, 300 + 1000 * n + attempt, "tasks/get", {"taskId": task_id}
                        )
                    )["result"]
                    if task["status"] == "completed":
                        assert task["result"]["content"][0]["text"] == f"held {n}"
                        break
                    await asyncio.sleep(0.02)
                else:
                    raise AssertionError(f"task {n} did not complete: {task}")
            lines = our_lines(caplog)
            assert len(lines) == 2, lines
            assert "task store (Redis) reachable again after" in lines[1]
            assert app.tasks is not None
            await app.tasks.store.close()

    try:
        asyncio.run(asyncio.wait_for(scenario(), 60))
    finally:
        os.kill(pid, signal.SIGCONT)
        redis.stop()


@pytest.mark.parametrize(
    "refusing",
    [
        (("config", "set", "maxmemory", "1"), ("config", "set", "maxmemory", "0")),
        (("replicaof", "127.0.0.1", "1"), ("replicaof", "no", "one")),
    ],
    ids=["out-of-memory", "read-only-replica"],
)
def test_a_redis_that_answers_but_cannot_write_is_an_outage_too(
    caplog: pytest.LogCaptureFixture, refusing: tuple[tuple[str, ...], tuple[str, ...]]
) -> None:
    """Out of memory, or a replica during a failover: Redis answers, refusing every write.
    Task requests that write get -32000 "unavailable; retry later" (not -32603 and a
    traceback), the outage is logged once, and once Redis writes again all is served."""
    caplog.set_level(logging.INFO, logger="mcpgen")
    redis = RedisServer().start()
    control = Redis.from_url(redis.url)
    start, undo = refusing

    async def scenario() -> None:
        release = asyncio.Event()
        app = make_app(redis.url, release)
        async with serving(app.server) as peer:
            made = await answer(
                peer, 1, "tools/call", {"name": "hold", "arguments": {"label": "a"}}
            )
            task_id = made["result"]["taskId"]
            control.execute_command(*start)
            try:
                for rid in range(2, 12):  # each write refused; the task still readable
                    label = {"label": str(rid)}
                    refused = await answer(
                        peer, rid, "tools/call", {"name": "hold", "arguments": label}
                    )
                    assert refused.get("error") == UNAVAILABLE, refused
                    read = await answer(peer, 100 + rid, "tasks/get", {"taskId": task_id})
                    assert read["result"]["status"] == "working", read
                lines = our_lines(caplog)
                assert len(lines) == 1 and "unreachable" in lines[0], lines
                assert not any(r.exc_info for r in caplog.records), "a traceback was logged"
            finally:
                control.execute_command(*undo)
            again = await answer(
                peer, 4, "tools/call", {"name": "hold", "arguments": {"label": "c"}}
            )
            assert again["result"]["status"] == "working", again
            release.set()
            assert app.tasks is not None
            await app.tasks.store.close()

    try:
        asyncio.run(asyncio.wait_for(scenario(), 60))
    finally:
        control.close()
        redis.stop()
