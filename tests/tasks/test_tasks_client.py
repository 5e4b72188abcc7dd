"""Our client's side of tasks, against our server over in-memory transports, in both eras:
a tool called as a task (``ClientSession.call_tool_as_task``) is followed to its result,
polled or woken by status notifications; the task's input requests are answered by the
client's handlers (2025-11-25: a request over the session tied to the task; 2026-07-28:
``inputRequests`` answered with ``tasks/update``); a task is cancelled; a failed task
raises its error, a tool's own failure is a result; ``tasks/list`` pages (2025-11-25). The
generated 2025-11-25 ``Client.call_tool(task=...)`` returns the task, typed; a modern
session that declares the extension follows the tasks its plain calls become."""

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from mcpgen.generated.v2025_11_25 import client as client25
from mcpgen.generated.v2025_11_25 import server as stubs25
from mcpgen.generated.v2026_07_28 import client as client26
from mcpgen.generated.v2026_07_28 import server as stubs26
from mcpgen.runtime import App, McpError
from mcpgen.runtime.client.tasks import TaskCancelled, TaskHandle, TaskPolling, handle_of
from mcpgen.runtime.tasks.extension import EXTENSION
from mcpgen.runtime.tasks.engine import Tasks
from mcpgen.runtime.tasks.store import MemoryTaskStore
from mcpgen.runtime.app.tools import ToolError

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from support.sansio import run  # noqa: E402

RELATED = "io.modelcontextprotocol/related-task"
FORM = {"type": "object", "properties": {"name": {"type": "string"}}}
ERAS = [("legacy", stubs25), ("modern", stubs26)]


def make_app(stubs: Any, poll_ms: int = 1_000) -> tuple[App, dict[str, Any]]:
    store = MemoryTaskStore(poll_interval_ms=poll_ms)
    app = App("tasks", binding=stubs, tasks=Tasks(store, immediate_ms=20))
    seen: dict[str, Any] = {"release": asyncio.Event(), "cancelled": 0}

    @app.tool(task="optional")
    async def slow(text: str) -> str:
        """Echo once the test lets it go."""
        try:
            await seen["release"].wait()
        except asyncio.CancelledError:
            seen["cancelled"] += 1
            raise
        return f"echo {text}"

    @app.tool(task="optional")
    def quick(text: str) -> str:
        """Quick enough never to become a (modern) task."""
        return f"quick {text}"

    @app.tool(task="required")
    async def research(topic: str, ctx: stubs.Context) -> str:  # type: ignore[name-defined]
        """Ask the user's name through the task, then answer."""
        asked = {"mode": "form", "message": "Name?", "requestedSchema": FORM}
        answer = await ctx.elicit(app.types.convert(asked, app.types.ElicitRequestParams))
        return f"{topic} for {(answer.content or {}).get('name')}"

    @app.tool(task="required")
    async def broken() -> str:
        """Fail as a tool does (isError)."""
        await asyncio.sleep(0.05)
        raise ToolError("no luck")

    @app.tool(task="required")
    async def crash() -> str:
        """Fail as a request does."""
        await asyncio.sleep(0.05)
        raise McpError(-32603, "the job broke")

    return app, seen


def handlers_of(stubs: Any, asked: list[Any]) -> Any:
    """Client handlers of ``stubs``' version that answer every elicitation with "Ada"."""

    class Handlers25(client25.ClientHandlers):
        async def elicit(self, params: Any, ctx: Any) -> Any:
            asked.append(params)
            return client25.t.ElicitResult(action="accept", content={"name": "Ada"})

    class Handlers26(client26.ClientHandlers):
        async def elicit(self, params: Any, ctx: Any) -> Any:
            asked.append(params)
            return client26.t.ElicitResult(action="accept", content={"name": "Ada"})

    return Handlers25() if stubs is stubs25 else Handlers26()


def text(result: Any) -> str:
    return result.content[0].text


@pytest.mark.parametrize("mode,stubs", ERAS, ids=["2025-11-25", "2026-07-28"])
def test_a_tool_called_as_a_task_is_followed_to_its_result(mode: str, stubs: Any) -> None:
    async def scenario() -> None:
        app, seen = make_app(stubs)
        async with app.test_client(mode=mode, handlers=handlers_of(stubs, [])) as client:
            session = client.session
            handle = await session.call_tool_as_task("slow", {"text": "hi"}, ttl_ms=60_000)
            assert not handle.immediate and handle.task_id
            assert handle.created.status == "working" and handle.created.poll_interval_ms == 1_000
            if mode == "legacy":
                assert handle.created.ttl_ms == 60_000
            status = await handle.status()
            assert (status.task_id, status.status, status.terminal) == (
                handle.task_id,
                "working",
                False,
            )
            waiting = asyncio.ensure_future(handle.result())
            await asyncio.sleep(0.05)
            assert not waiting.done()
            seen["release"].set()
            started = time.monotonic()
            result = await asyncio.wait_for(waiting, 5)
            assert text(result) == "echo hi"
            assert isinstance(result, client.__binding__.types.CallToolResult)
            if mode == "legacy":  # woken by the status notification, not the 1 s poll
                assert time.monotonic() - started < 0.5
                assert result.meta[RELATED] == {"taskId": handle.task_id}
            assert (await handle.status()).status == "completed"
            assert await handle.result() is result  # kept

    run(scenario())


@pytest.mark.parametrize("mode,stubs", ERAS, ids=["2025-11-25", "2026-07-28"])
def test_the_tasks_input_requests_are_answered_by_the_clients_handlers(
    mode: str, stubs: Any
) -> None:
    async def scenario() -> None:
        app, _ = make_app(stubs, poll_ms=20)
        asked: list[Any] = []
        async with app.test_client(mode=mode, handlers=handlers_of(stubs, asked)) as client:
            handle = await client.session.call_tool_as_task("research", {"topic": "bees"})
            assert not handle.immediate
            assert text(await handle.result(max_wait=5)) == "bees for Ada"
            assert [a.message for a in asked] == ["Name?"]
            if mode == "legacy":  # a request over the session, tied to its task
                assert asked[0].meta[RELATED] == {"taskId": handle.task_id}

    run(scenario())


@pytest.mark.parametrize("mode,stubs", ERAS, ids=["2025-11-25", "2026-07-28"])
def test_failures_cancellation_and_immediate_answers(mode: str, stubs: Any) -> None:
    async def scenario() -> None:
        app, seen = make_app(stubs, poll_ms=20)
        async with app.test_client(mode=mode, handlers=handlers_of(stubs, [])) as client:
            session = client.session
            broken = await (await session.call_tool_as_task("broken")).result()
            assert broken.is_error is True and text(broken) == "no luck"  # a result
            with pytest.raises(McpError) as failed:
                await (await session.call_tool_as_task("crash")).result()
            assert (failed.value.code, failed.value.message) == (-32603, "the job broke")
            handle = await session.call_tool_as_task("slow", {"text": "never"})
            cancelled = await handle.cancel()
            assert cancelled is None if mode == "modern" else cancelled.status == "cancelled"
            with pytest.raises(TaskCancelled):
                await handle.result()
            assert (await handle.status()).status == "cancelled"
            await asyncio.sleep(0.01)
            assert seen["cancelled"] == 1
            if mode == "legacy":  # cancelling an ended task is the spec's error there
                with pytest.raises(McpError) as again:
                    await handle.cancel()
                assert again.value.code == -32602
            else:
                assert await handle.cancel() is None  # and acknowledged here
            # a modern server answers a quick call as it is: the handle is complete
            quick = await session.call_tool_as_task("quick", {"text": "q"})
            if mode == "modern":
                assert quick.immediate and (await quick.status()).status == "completed"
            assert text(await quick.result()) == "quick q"

    run(scenario())


def test_a_task_that_does_not_end_in_time_raises_timeout_and_goes_on() -> None:
    async def scenario() -> None:
        app, seen = make_app(stubs25, poll_ms=20)
        async with app.test_client(mode="legacy") as client:
            polling = TaskPolling(max_wait=0.2, min_interval=0.01)
            handle = await client.session.call_tool_as_task("slow", {"text": "late"})
            handle.polling = polling
            started = time.monotonic()
            with pytest.raises(TimeoutError):
                await handle.result()
            assert time.monotonic() - started < 1.0
            assert (await handle.status()).status == "working"
            seen["release"].set()
            assert text(await handle.result(max_wait=5)) == "echo late"

    run(scenario())
    with pytest.raises(ValueError):
        TaskPolling(max_wait=0)
    with pytest.raises(ValueError):
        TaskPolling(min_interval=2, max_interval=1)
    assert TaskPolling().interval(None) == 1.0
    assert TaskPolling().interval(0) == 0.05 and TaskPolling().interval(10**9) == 10.0


def test_tasks_list_pages_through_every_task_of_the_client() -> None:
    async def scenario() -> None:
        app, seen = make_app(stubs25)
        seen["release"].set()
        app.server.legacy_tasks.page_size = 2  # type: ignore[union-attr]
        async with app.test_client(mode="legacy") as client:
            made = [
                (await client.session.call_tool_as_task("slow", {"text": str(n)})).task_id
                for n in range(5)
            ]
            listed = await client.session.list_tasks()
            assert [t.task_id for t in listed] == made
            assert {t.status for t in listed} <= {"working", "completed"}

    run(scenario())


async def typed_calls(client: client25.Client) -> None:
    """What the type checker sees: a plain call's result, or with ``task`` maybe the task."""
    t = client25.t
    created = await client.call_tool(
        name="slow", arguments={"text": "typed"}, task=t.TaskMetadata(ttl=30_000)
    )
    assert isinstance(created, t.CreateTaskResult)
    assert created.task.status == "working" and created.task.ttl == 30_000
    payload = await client.get_task_payload(task_id=created.task.task_id)
    assert payload["content"][0]["text"] == "echo typed"
    handle = handle_of(client.session, created)  # type: ignore[arg-type]
    assert handle.task_id == created.task.task_id
    assert text(await handle.result()) == "echo typed"
    plain: client25.t.CallToolResult = await client.call_tool(
        name="slow", arguments={"text": "plain"}
    )
    assert isinstance(plain, t.CallToolResult) and text(plain) == "echo plain"


def test_the_generated_legacy_call_tool_with_task_returns_the_task_typed() -> None:
    async def scenario() -> None:
        app, seen = make_app(stubs25)
        seen["release"].set()
        async with app.test_client(mode="legacy") as client:
            await typed_calls(client)

    run(scenario())


def test_a_modern_session_declaring_the_extension_follows_the_tasks_plain_calls_become() -> None:
    async def scenario() -> None:
        app, seen = make_app(stubs26, poll_ms=20)
        async with app.test_client(mode="modern", extensions=[EXTENSION]) as client:
            later = asyncio.get_running_loop().call_later(0.1, seen["release"].set)
            result = await client.call_tool(name="slow", arguments={"text": "followed"})
            later.cancel()
            assert text(result) == "echo followed"
        # without the extension, a required task tool is refused as the extension says
        async with app.test_client(mode="modern") as client:
            with pytest.raises(McpError) as refused:
                await client.call_tool(name="broken")
            assert refused.value.code == -32021
            handle = await client.session.call_tool_as_task("broken")  # opts in per request
            assert isinstance(handle, TaskHandle) and (await handle.result()).is_error

    run(scenario())
