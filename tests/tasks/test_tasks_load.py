"""A thousand tasks at once in one server, in both eras: every one is created, runs and
is answered with its own outcome (none lost, none mixed up), and once their TTL passes
the store holds none of them (memory goes back down). Served in process to a raw peer
over in-memory transports; the figures with a real process and RSS are bench/tasks_load.
"""

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.runtime import App
from mcpgen.runtime.tasks.store import MemoryTaskStore
from mcpgen.runtime.tasks.engine import Tasks

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from support.sansio import RawPeer, modern, request, run, serving  # noqa: E402

COUNT = 1_000
#: Long enough that no task expires while a loaded machine polls them all; the test's
#: clock then moves past it.
TTL_MS = 60_000


class Clock:
    """Real time, moved forward on demand (for the store's TTLs)."""

    def __init__(self) -> None:
        self.now = time.time()
        self.started = time.monotonic()

    def __call__(self) -> float:
        return self.now + time.monotonic() - self.started


TASKS = "io.modelcontextprotocol/tasks"


def make_app(store: MemoryTaskStore) -> App:
    tasks = Tasks(store, max_running=COUNT, max_running_per_owner=COUNT, immediate_ms=0)
    app = App("load", binding=stubs, tasks=tasks)  # one requester: its bounds are the server's

    @app.tool(task="optional")
    async def square(n: int) -> str:
        """Square n, after a pause that lets every task be in flight at once."""
        await asyncio.sleep(0.05)
        return str(n * n)

    return app


async def answers(peer: RawPeer, ids: set[Any]) -> dict[Any, Any]:
    """The answers to ``ids``, whatever their order (notifications set aside)."""
    found: dict[Any, Any] = {}
    while len(found) < len(ids):
        message = await peer.read(10.0)
        if message.get("id") in ids and "method" not in message:
            found[message["id"]] = message
    return found


@pytest.mark.slow
def test_a_thousand_legacy_tasks_all_complete_then_leave_memory() -> None:
    async def scenario() -> None:
        clock = Clock()
        store = MemoryTaskStore(default_ttl_ms=TTL_MS, sweep_every_s=0.05, clock=clock)
        async with serving(make_app(store).server) as peer:
            await peer.handshake("2025-11-25")
            for n in range(COUNT):
                params = {"name": "square", "arguments": {"n": n}, "task": {"ttl": TTL_MS}}
                await peer.send(request(n, "tools/call", params))
            created = await answers(peer, set(range(COUNT)))
            task_of = {n: created[n]["result"]["task"]["taskId"] for n in range(COUNT)}
            assert len(set(task_of.values())) == COUNT and len(store) == COUNT
            for n, task_id in task_of.items():
                await peer.send(request(COUNT + n, "tasks/result", {"taskId": task_id}))
            results = await answers(peer, set(range(COUNT, 2 * COUNT)))
            for n in range(COUNT):
                result = results[COUNT + n]["result"]
                assert result["content"][0]["text"] == str(n * n)
                assert (
                    result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"] == task_of[n]
                )
            clock.now += TTL_MS / 1000 + 1  # past the TTL: the next sweep drops them all
            await asyncio.sleep(0.2)
            assert len(store) == 0

    run(scenario(), timeout=60)


@pytest.mark.slow
def test_a_thousand_modern_tasks_all_complete_then_leave_memory() -> None:
    async def scenario() -> None:
        clock = Clock()
        store = MemoryTaskStore(default_ttl_ms=TTL_MS, sweep_every_s=0.05, clock=clock)
        caps = {"extensions": {TASKS: {}}}
        async with serving(make_app(store).server) as peer:
            for n in range(COUNT):
                params = {"name": "square", "arguments": {"n": n}}
                await peer.send(modern(n, "tools/call", params, capabilities=caps))
            created = await answers(peer, set(range(COUNT)))
            task_of = {n: created[n]["result"]["taskId"] for n in range(COUNT)}
            assert len(set(task_of.values())) == COUNT
            await asyncio.sleep(0.2)
            pending = set(range(COUNT))
            rid = COUNT
            while pending:
                asked = {}
                for n in pending:
                    rid += 1
                    asked[rid] = n
                    await peer.send(
                        modern(rid, "tasks/get", {"taskId": task_of[n]}, capabilities=caps)
                    )
                got = await answers(peer, set(asked))
                for r, message in got.items():
                    task = message["result"]
                    if task["status"] == "completed":
                        n = asked[r]
                        assert task["result"]["content"][0]["text"] == str(n * n)
                        pending.discard(n)
                    else:
                        assert task["status"] == "working", task
            clock.now += TTL_MS / 1000 + 1
            await asyncio.sleep(0.2)
            assert len(store) == 0

    run(scenario(), timeout=60)
