"""Tasks over Streamable HTTP (the ASGI app in process): a 2025-11-25 session's task
asks the client for input after the call was answered, so the question and the task's
status notifications go out on the session's GET stream, tied to the task; the answer
comes back in a POST, and ``tasks/result`` gives the outcome. A 2026-07-28 task is
followed statelessly, its headers checked (``Mcp-Name`` must name the task)."""

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.generated.v2026_07_28 import types as t
from mcpgen.runtime import App, Tasks

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from support.asgi_driver import Reply, call, open_session, request  # noqa: E402
from support.wire_oracle import Schema  # noqa: E402

RELATED = "io.modelcontextprotocol/related-task"
TASKS = "io.modelcontextprotocol/tasks"
SCHEMA_25 = Schema("2025-11-25", ROOT / "schema" / "2025-11-25" / "schema.json")


def valid(definition: str, instance: Any) -> Any:
    problem = SCHEMA_25.error_of(definition, instance)
    assert problem is None, problem
    return instance


def make_app() -> App:
    app = App("http-tasks", binding=stubs, tasks=Tasks(immediate_ms=0))

    @app.tool(task="optional")
    async def research(topic: str, ctx: stubs.Context) -> str:
        """Ask whose research it is, then do it."""
        form = {"type": "object", "properties": {"name": {"type": "string"}}}
        answer = await ctx.elicit(
            t.convert({"message": "For whom?", "requestedSchema": form}, t.ElicitRequestParams)
        )
        return f"{topic} for {(answer.content or {}).get('name')}"

    return app


async def until_sent(reply: Reply, method: str) -> dict[str, Any]:
    """The first message ``method`` the (still open) stream ``reply`` carried."""
    for _ in range(500):
        for message in reply.events():
            if message.get("method") == method:
                return message
        await asyncio.sleep(0.01)
    raise AssertionError(f"no {method} on the stream: {reply.body[-500:]!r}")


def test_a_legacy_tasks_questions_and_status_go_on_the_get_stream() -> None:
    async def scenario() -> None:
        asgi = make_app().http_app()
        headers = await open_session(asgi)
        leave = asyncio.Event()
        stream_headers = {**headers, "accept": "text/event-stream"}
        stream = Reply()
        getting = asyncio.create_task(
            call(asgi, "GET", headers=stream_headers, leave=leave, timeout=20, into=stream)
        )
        await asyncio.sleep(0.05)
        params = {"name": "research", "arguments": {"topic": "bees"}, "task": {"ttl": 60_000}}
        created = await call(asgi, body=request(1, "tools/call", params), headers=headers)
        (answer,) = created.messages()
        task_id = valid("CreateTaskResult", answer["result"])["task"]["taskId"]
        asked = await until_sent(stream, "elicitation/create")
        valid("ElicitRequest", asked)
        assert asked["params"]["_meta"][RELATED] == {"taskId": task_id}
        polled = await call(
            asgi, body=request(2, "tasks/get", {"taskId": task_id}), headers=headers
        )
        assert polled.messages()[0]["result"]["status"] == "input_required"
        reply = {
            "jsonrpc": "2.0",
            "id": asked["id"],
            "result": {"action": "accept", "content": {"name": "Ada"}},
        }
        posted = await call(asgi, body=json.dumps(reply).encode(), headers=headers)
        assert posted.status == 202
        waited = await call(
            asgi, body=request(3, "tasks/result", {"taskId": task_id}), headers=headers
        )
        result = valid("CallToolResult", waited.messages()[0]["result"])
        assert result["content"][0]["text"] == "bees for Ada"
        statuses = [
            m["params"]["status"]
            for m in stream.events()
            if m.get("method") == "notifications/tasks/status"
        ]
        assert statuses[:2] == ["input_required", "working"]
        leave.set()
        await asyncio.wait_for(getting, 5)

    asyncio.run(asyncio.wait_for(scenario(), 30))


def modern(
    rid: int, method: str, params: dict[str, Any], name: str | None
) -> tuple[bytes, dict[str, str]]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {},
            "extensions": {TASKS: {}},
        },
    }
    headers = {"mcp-protocol-version": "2026-07-28", "mcp-method": method}
    if name is not None:
        headers["mcp-name"] = name
    return request(rid, method, {**params, "_meta": meta}), headers


def test_a_modern_task_is_followed_statelessly_with_its_headers_checked() -> None:
    async def scenario() -> None:
        asgi = make_app().http_app()
        body, headers = modern(
            1, "tools/call", {"name": "research", "arguments": {"topic": "ants"}}, "research"
        )
        made = (await call(asgi, body=body, headers=headers)).messages()[0]["result"]
        assert made["resultType"] == "task"
        task_id = made["taskId"]
        waiting: dict[str, Any] = {}
        for attempt in range(200):
            body, headers = modern(10 + attempt, "tasks/get", {"taskId": task_id}, task_id)
            waiting = (await call(asgi, body=body, headers=headers)).messages()[0]["result"]
            if waiting["status"] == "input_required":
                break
            await asyncio.sleep(0.01)
        (key,) = waiting["inputRequests"]
        for bad_name, code, status in ((None, -32020, 400), ("another-task", -32020, 400)):
            body, headers = modern(2, "tasks/get", {"taskId": task_id}, bad_name)
            refused = await call(asgi, body=body, headers=headers)
            assert (refused.status, refused.messages()[0]["error"]["code"]) == (status, code)
        body, headers = modern(3, "tasks/result", {"taskId": task_id}, None)
        gone = await call(asgi, body=body, headers=headers)
        assert (gone.status, gone.messages()[0]["error"]["code"]) == (404, -32601)
        garbage = await call(
            asgi, body=b'{"jsonrpc": "2.0", "id": 4, "method": "tasks/upd', headers=headers
        )
        assert garbage.messages()[0]["error"]["code"] == -32700
        answer = {key: {"action": "accept", "content": {"name": "Bo"}}}
        body, headers = modern(
            5, "tasks/update", {"taskId": task_id, "inputResponses": answer}, task_id
        )
        assert (await call(asgi, body=body, headers=headers)).messages()[0]["result"] == {
            "resultType": "complete"
        }
        done: dict[str, Any] = {}
        for attempt in range(200):
            body, headers = modern(100 + attempt, "tasks/get", {"taskId": task_id}, task_id)
            done = (await call(asgi, body=body, headers=headers)).messages()[0]["result"]
            if done["status"] == "completed":
                assert done["result"]["content"][0]["text"] == "ants for Bo"
                return
            await asyncio.sleep(0.01)
        raise AssertionError(f"not completed: {done}")

    asyncio.run(asyncio.wait_for(scenario(), 30))
