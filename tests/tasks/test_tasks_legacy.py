"""Tasks in protocol 2025-11-25, served by an ``App`` whose tools say ``task=``: a raw
JSON-RPC peer over in-memory transports makes task-augmented calls, polls, waits,
lists, cancels and answers the task's elicitation; every answer and notification is
checked against the official 2025-11-25 schema with ``jsonschema``. Bad input (unknown
ids, misfit augmentation, cancelling twice) gets the spec's error, then a good call works.
Both an app typed against 2025-11-25 and one typed against 2026-07-28 serve it."""

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpgen.generated.v2025_11_25 import server as stubs25
from mcpgen.generated.v2025_11_25 import types as t25
from mcpgen.generated.v2026_07_28 import server as stubs26
from mcpgen.runtime import App
from mcpgen.runtime.app.tools import ToolError

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from support.sansio import RawPeer, request, run, serving  # noqa: E402
from support.wire_oracle import Schema  # noqa: E402

SCHEMA = Schema("2025-11-25", ROOT / "schema" / "2025-11-25" / "schema.json")
RELATED = "io.modelcontextprotocol/related-task"
NAME_FORM = {
    "mode": "form",
    "message": "Name?",
    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
}


def valid(definition: str, instance: Any) -> Any:
    problem = SCHEMA.error_of(definition, instance)
    assert problem is None, problem
    return instance


def make_app(stubs: Any) -> tuple[App, dict[str, Any]]:
    app = App("tasks", binding=stubs)
    seen: dict[str, Any] = {"cancelled": 0, "release": asyncio.Event()}

    @app.tool(task="optional")
    async def slow(text: str) -> str:
        """Echo after the test lets it go."""
        try:
            await seen["release"].wait()
        except asyncio.CancelledError:
            seen["cancelled"] += 1
            raise
        return f"echo {text}"

    @app.tool(task="required")
    async def research(
        topic: str, ctx: stubs.Context  # pyright: ignore[reportInvalidTypeForm]
    ) -> str:
        """Ask the user's name, report progress, then answer."""
        await ctx.report_progress(1, 2, "asking")
        answer = await ctx.elicit(app.types.convert(NAME_FORM, app.types.ElicitRequestParams))
        return f"{topic} for {(answer.content or {}).get('name')}"

    @app.tool(task="optional")
    def broken() -> str:
        """Fail as a tool does (isError)."""
        raise ToolError("no luck")

    @app.tool
    def quick() -> str:
        """Never a task."""
        return "quick"

    return app, seen


async def call(peer: RawPeer, rid: int, method: str, params: Any = None) -> dict[str, Any]:
    await peer.send(request(rid, method, params))
    return await peer.answer_to(rid)


async def status_of(peer: RawPeer, rid: int, task_id: str) -> str:
    answer = await call(peer, rid, "tasks/get", {"taskId": task_id})
    return valid("GetTaskResult", answer["result"])["status"]


@pytest.mark.parametrize("stubs", [stubs25, stubs26], ids=["typed-2025-11-25", "typed-2026"])
def test_a_task_augmented_call_is_answered_at_once_then_polled_and_awaited(stubs: Any) -> None:
    async def scenario() -> None:
        app, seen = make_app(stubs)
        async with serving(app.server) as peer:
            await peer.handshake("2025-11-25")
            caps = (await call(peer, 1, "tools/list"))["result"]
            support = {t["name"]: t.get("execution", {}).get("taskSupport") for t in caps["tools"]}
            assert support == {
                "slow": "optional",
                "research": "required",
                "broken": "optional",
                "quick": None,
            }
            params = {"name": "slow", "arguments": {"text": "hi"}, "task": {"ttl": 60_000}}
            created = valid(
                "CreateTaskResult", (await call(peer, 2, "tools/call", params))["result"]
            )
            task = created["task"]
            assert task["status"] == "working" and task["ttl"] == 60_000
            assert task["pollInterval"] > 0
            assert await status_of(peer, 3, task["taskId"]) == "working"
            await peer.send(request(4, "tasks/result", {"taskId": task["taskId"]}))
            assert await peer.quiet(0.05) == []  # blocks while the task works
            seen["release"].set()
            payload = await peer.answer_to(4)
            result = valid("CallToolResult", payload["result"])
            assert result["content"] == [{"type": "text", "text": "echo hi"}]
            assert result["_meta"][RELATED] == {"taskId": task["taskId"]}
            statuses = [m for m in peer.backlog if m.get("method") == "notifications/tasks/status"]
            assert statuses and statuses[-1]["params"]["status"] == "completed"
            for note in statuses:
                valid("TaskStatusNotification", note)
            assert await status_of(peer, 5, task["taskId"]) == "completed"
            # the same tool without a task is an ordinary call
            plain = await call(peer, 6, "tools/call", {"name": "slow", "arguments": {"text": "x"}})
            assert plain["result"]["content"][0]["text"] == "echo x"

    run(scenario())


def test_a_task_that_asks_for_input_waits_in_input_required_and_goes_on() -> None:
    async def scenario() -> None:
        app, _ = make_app(stubs25)
        async with serving(app.server) as peer:
            await peer.send(
                request(
                    0,
                    "initialize",
                    {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {"elicitation": {"form": {}}},
                        "clientInfo": {"name": "raw", "version": "0"},
                    },
                )
            )
            await peer.answer_to(0)
            await peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            params = {"name": "research", "arguments": {"topic": "bees"}, "task": {}}
            meta = {"progressToken": "p1"}
            created = (await call(peer, 1, "tools/call", {**params, "_meta": meta}))["result"]
            task_id = valid("CreateTaskResult", created)["task"]["taskId"]
            asked = None
            while asked is None:
                message = await peer.read()
                if message.get("method") == "elicitation/create":
                    asked = message
                else:
                    peer.backlog.append(message)
            valid("ElicitRequest", asked)
            assert asked["params"]["_meta"][RELATED] == {"taskId": task_id}
            record = (await call(peer, 2, "tasks/get", {"taskId": task_id}))["result"]
            assert record["status"] == "input_required"
            await peer.send(
                {
                    "jsonrpc": "2.0",
                    "id": asked["id"],
                    "result": {"action": "accept", "content": {"name": "Ada"}},
                }
            )
            payload = (await call(peer, 3, "tasks/result", {"taskId": task_id}))["result"]
            assert payload["content"][0]["text"] == "bees for Ada"
            progress = [m for m in peer.backlog if m.get("method") == "notifications/progress"]
            assert progress and progress[0]["params"]["message"] == "asking"
            notes = [
                m["params"] for m in peer.backlog if m.get("method") == "notifications/tasks/status"
            ]
            assert [n["status"] for n in notes][-3:] == ["input_required", "working", "completed"]
            assert any(n.get("statusMessage") == "asking" for n in notes)  # progress as status

    run(scenario())


def test_cancelling_stops_the_handler_and_leaves_no_outcome() -> None:
    async def scenario() -> None:
        app, seen = make_app(stubs25)
        async with serving(app.server) as peer:
            await peer.handshake("2025-11-25")
            params = {"name": "slow", "arguments": {"text": "hi"}, "task": {}}
            task_id = (await call(peer, 1, "tools/call", params))["result"]["task"]["taskId"]
            await peer.send(request(2, "tasks/result", {"taskId": task_id}))
            cancelled = valid(
                "CancelTaskResult",
                (await call(peer, 3, "tasks/cancel", {"taskId": task_id}))["result"],
            )
            assert cancelled["status"] == "cancelled"
            waited = await peer.answer_to(2)  # a request with no outcome: its task alone
            assert valid("GetTaskPayloadResult", waited["result"]) == {
                "_meta": {RELATED: {"taskId": task_id}}
            }
            await asyncio.sleep(0.01)
            assert seen["cancelled"] == 1
            again = await call(peer, 4, "tasks/cancel", {"taskId": task_id})
            assert again["error"]["code"] == -32602  # terminal tasks are not cancelled
            assert await status_of(peer, 5, task_id) == "cancelled"

    run(scenario())


def test_a_tool_error_fails_the_task_and_tasks_result_gives_that_result() -> None:
    async def scenario() -> None:
        app, _ = make_app(stubs25)
        async with serving(app.server) as peer:
            await peer.handshake("2025-11-25")
            params = {"name": "broken", "arguments": {}, "task": {}}
            task_id = (await call(peer, 1, "tools/call", params))["result"]["task"]["taskId"]
            payload = (await call(peer, 2, "tasks/result", {"taskId": task_id}))["result"]
            assert valid("CallToolResult", payload)["isError"] is True
            assert await status_of(peer, 3, task_id) == "failed"

    run(scenario())


def test_tasks_are_listed_a_page_at_a_time() -> None:
    async def scenario() -> None:
        app, seen = make_app(stubs25)
        app.server.legacy_tasks.page_size = 2  # type: ignore[union-attr]
        seen["release"].set()
        async with serving(app.server) as peer:
            await peer.handshake("2025-11-25")
            made = []
            for rid in range(1, 6):
                params = {"name": "slow", "arguments": {"text": str(rid)}, "task": {}}
                made.append(
                    (await call(peer, rid, "tools/call", params))["result"]["task"]["taskId"]
                )
            listed: list[str] = []
            cursor = None
            for rid in range(10, 20):
                page = valid(
                    "ListTasksResult",
                    (await call(peer, rid, "tasks/list", {"cursor": cursor} if cursor else {}))[
                        "result"
                    ],
                )
                listed += [t["taskId"] for t in page["tasks"]]
                cursor = page.get("nextCursor")
                if cursor is None:
                    break
            assert listed == made

    run(scenario())


def test_bad_task_requests_get_the_spec_errors_and_the_server_goes_on() -> None:
    async def scenario() -> None:
        app, seen = make_app(stubs25)
        seen["release"].set()
        async with serving(app.server) as peer:
            await peer.handshake("2025-11-25")
            bad: list[tuple[str, Any, int]] = [
                ("tasks/get", {"taskId": "no-such-task"}, -32602),
                ("tasks/result", {"taskId": "no-such-task"}, -32602),
                ("tasks/cancel", {"taskId": "no-such-task"}, -32602),
                ("tasks/list", {"cursor": "not-a-cursor"}, -32602),
                ("tasks/get", {}, -32602),
                ("tools/call", {"name": "quick", "arguments": {}, "task": {}}, -32601),
                ("tools/call", {"name": "research", "arguments": {"topic": "x"}}, -32601),
                ("tools/call", {"name": "slow", "arguments": {"text": "x"}, "task": 7}, -32602),
            ]
            for rid, (method, params, code) in enumerate(bad, start=1):
                answer = await call(peer, rid, method, params)
                assert answer.get("error", {}).get("code") == code, (method, params, answer)
                valid("JSONRPCErrorResponse", answer)
                good = await call(peer, 100 + rid, "tools/call", {"name": "quick", "arguments": {}})
                assert good["result"]["content"][0]["text"] == "quick"

    run(scenario())


def test_an_expired_task_is_unknown_in_both_eras_and_the_server_goes_on() -> None:
    async def scenario() -> None:
        app, seen = make_app(stubs26)
        seen["release"].set()
        async with serving(app.server) as peer:
            await peer.handshake("2025-11-25")
            params = {"name": "slow", "arguments": {"text": "brief"}, "task": {"ttl": 30}}
            task = (await call(peer, 1, "tools/call", params))["result"]["task"]
            assert task["ttl"] == 30
            await asyncio.sleep(0.1)
            for rid, method in enumerate(("tasks/get", "tasks/result", "tasks/cancel"), start=2):
                gone = await call(peer, rid, method, {"taskId": task["taskId"]})
                assert gone["error"]["code"] == -32602, gone
            good = await call(peer, 9, "tools/call", {"name": "quick", "arguments": {}})
            assert good["result"]["content"][0]["text"] == "quick"

    run(scenario())


class Handwritten(stubs25.ServerHandlers):
    """Generated handlers, no ``App``: the server's task table says which tools are tasks."""

    def __init__(self) -> None:
        self.release = asyncio.Event()

    async def call_tool(self, params: Any, ctx: Any) -> Any:
        if params.name == "slow":
            await self.release.wait()
        return t25.CallToolResult(content=[t25.TextContent(text=f"{params.name} done")])


def test_a_server_of_generated_handlers_runs_the_tools_its_task_table_names_as_tasks() -> None:
    """``Server(tasks=Tasks(), task_tools={name: support})``: a named tool runs as a task
    when asked to, a tool the table does not name refuses task augmentation (-32601), and
    an ordinary call of either still works."""
    from mcpgen.runtime import Server, Tasks

    async def scenario() -> None:
        handlers = Handwritten()
        server = Server(handlers, name="low", tasks=Tasks(), task_tools={"slow": "optional"})
        async with serving(server) as peer:
            await peer.handshake("2025-11-25")
            params = {"name": "slow", "arguments": {}, "task": {"ttl": 60_000}}
            created = valid(
                "CreateTaskResult", (await call(peer, 1, "tools/call", params))["result"]
            )
            task_id = created["task"]["taskId"]
            assert await status_of(peer, 2, task_id) == "working"
            handlers.release.set()
            done = await call(peer, 3, "tasks/result", {"taskId": task_id})
            assert valid("CallToolResult", done["result"])["content"][0]["text"] == "slow done"
            refused = await call(peer, 4, "tools/call", {"name": "fast", "task": {}})
            assert refused["error"]["code"] == -32601
            plain = await call(peer, 5, "tools/call", {"name": "fast"})
            assert plain["result"]["content"] == [{"type": "text", "text": "fast done"}]

    run(scenario())
