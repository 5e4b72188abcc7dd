"""The task engine when its store fails (a shared store restarting): a task's outcome is
offered again until the store takes it; a request the store cannot answer now gets
-32000 "task store unavailable; retry later", and the server goes on."""

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.runtime import App, MemoryTaskStore, Tasks
from mcpgen.runtime.core.errors import SERVER_BUSY
from mcpgen.runtime.tasks.store import TaskStoreUnavailable

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from support.sansio import modern, request, run, serving  # noqa: E402

import mcpgen.runtime.tasks.engine as engine  # noqa: E402


class Flaky(MemoryTaskStore):
    """A memory store whose next ``failures`` calls of ``method`` find it unreachable."""

    def __init__(self) -> None:
        super().__init__()
        self.failing: dict[str, int] = {}

    def fail(self, method: str, times: int) -> None:
        self.failing[method] = times

    def _maybe(self, method: str) -> None:
        if self.failing.get(method, 0) > 0:
            self.failing[method] -= 1
            raise TaskStoreUnavailable(f"store away ({method})")

    async def update(self, *args: Any, **kwargs: Any) -> Any:
        self._maybe("update")
        return await super().update(*args, **kwargs)

    async def get(self, *args: Any, **kwargs: Any) -> Any:
        self._maybe("get")
        return await super().get(*args, **kwargs)


def test_an_outcome_is_kept_once_the_store_is_back_and_a_failing_read_is_retryable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(engine, "FINISH_RETRY_S", 0.01)

    async def scenario() -> None:
        store = Flaky()
        app = App("flaky", binding=stubs, tasks=Tasks(store))
        release = asyncio.Event()

        @app.tool(task="optional")
        async def wait() -> str:
            """Wait for the test."""
            await release.wait()
            return "done"

        async with serving(app.server) as peer:
            await peer.handshake("2025-11-25")
            params = {"name": "wait", "arguments": {}, "task": {}}
            await peer.send(request(1, "tools/call", params))
            task_id = (await peer.answer_to(1))["result"]["task"]["taskId"]
            store.fail("update", 3)  # the outcome's first three offers fail
            release.set()
            await peer.send(request(2, "tasks/result", {"taskId": task_id}))
            assert (await peer.answer_to(2))["result"]["content"][0]["text"] == "done"
            store.fail("get", 1)
            await peer.send(request(3, "tasks/get", {"taskId": task_id}))
            refused = (await peer.answer_to(3))["error"]
            assert refused == {
                "code": SERVER_BUSY,
                "message": "Server busy: task store unavailable; retry later",
            }
            await peer.send(request(4, "tasks/get", {"taskId": task_id}))
            assert (await peer.answer_to(4))["result"]["status"] == "completed"

    run(scenario())


def test_past_max_running_a_call_is_refused_and_its_handler_stopped() -> None:
    async def scenario() -> None:
        app = App("full", binding=stubs, tasks=Tasks(max_running=1, immediate_ms=20))
        started: list[str] = []
        stopped: list[str] = []

        @app.tool(task="required")
        async def hold(label: str) -> str:
            """Hold until cancelled."""
            started.append(label)
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                stopped.append(label)
                raise
            return label

        caps = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
        async with serving(app.server) as peer:
            await peer.send(
                modern(
                    1,
                    "tools/call",
                    {"name": "hold", "arguments": {"label": "a"}},
                    capabilities=caps,
                )
            )
            first = (await peer.answer_to(1))["result"]
            assert first["resultType"] == "task"
            await peer.send(
                modern(
                    2,
                    "tools/call",
                    {"name": "hold", "arguments": {"label": "b"}},
                    capabilities=caps,
                )
            )
            refused = await peer.answer_to(2)
            assert refused["error"]["code"] == SERVER_BUSY  # retryable: room comes back
            assert "too many tasks running (at most 1: max_running)" in refused["error"]["message"]
            await asyncio.sleep(0.05)
            assert started == ["a", "b"] and stopped == ["b"]  # b ran its grace time, then stopped
            await peer.send(
                modern(3, "tasks/cancel", {"taskId": first["taskId"]}, capabilities=caps)
            )
            await peer.answer_to(3)
            await peer.send(
                modern(
                    4,
                    "tools/call",
                    {"name": "hold", "arguments": {"label": "c"}},
                    capabilities=caps,
                )
            )
            assert (await peer.answer_to(4))["result"]["resultType"] == "task"  # room again

    run(scenario())
