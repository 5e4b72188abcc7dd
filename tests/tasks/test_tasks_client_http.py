"""Our client's tasks over Streamable HTTP.

In process (httpx's mock transport): a modern task's ``tasks/get``, ``tasks/update`` and
``tasks/cancel`` are routed by their ``Mcp-Name: <taskId>`` and ``Mcp-Method`` headers,
as the extension requires. Against our server (examples.everything served by uvicorn on
127.0.0.1; slow): every task flow of its fixtures in both eras, input through the task
included, then a cancellation.
"""

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcpgen.generated.v2025_11_25 import client as c25
from mcpgen.generated.v2026_07_28 import client as c26
from mcpgen.runtime.client import ClientSession, http_client
from mcpgen.runtime.client.session import Mode
from mcpgen.runtime.client.http import HttpClientTransport
from mcpgen.runtime.client.tasks import TaskCancelled

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from support.node_tools import wait_listening  # noqa: E402
from support.processes import free_port  # noqa: E402
from support.processes import stop  # noqa: E402

TASKS = "io.modelcontextprotocol/tasks"
NOW = "2026-01-01T00:00:00Z"
TASK = {"taskId": "t/1 é", "status": "working", "createdAt": NOW, "lastUpdatedAt": NOW}


def test_modern_task_requests_carry_the_routing_headers() -> None:
    seen: list[tuple[str, str | None, str | None]] = []
    polls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal polls
        message = json.loads(request.content)
        method = message["method"]
        seen.append((method, request.headers.get("mcp-method"), request.headers.get("mcp-name")))
        result: dict[str, Any]
        if method == "server/discover":
            caps = {"tools": {}, "extensions": {TASKS: {}}}
            result = {"supportedVersions": ["2026-07-28"], "capabilities": caps}
        elif method == "tools/call":
            result = {"resultType": "task", **TASK, "ttlMs": None, "pollIntervalMs": 10}
        elif method == "tasks/get" and polls == 0:
            polls += 1
            ask = {
                "method": "elicitation/create",
                "params": {
                    "message": "Go?",
                    "requestedSchema": {"type": "object", "properties": {}},
                },
            }
            result = {
                **TASK,
                "status": "input_required",
                "ttlMs": None,
                "inputRequests": {"k": ask},
            }
        elif method == "tasks/get":
            done = {"resultType": "complete", "content": [{"type": "text", "text": "done"}]}
            result = {**TASK, "status": "completed", "ttlMs": None, "result": done}
        else:
            result = {}
        result = {"resultType": "complete", **result}
        body = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        return httpx.Response(200, json=body)

    class Handlers(c26.ClientHandlers):
        async def elicit(self, params: Any, ctx: Any) -> Any:
            return c26.t.ElicitResult(action="accept", content={})

    async def scenario() -> None:
        http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
        transport = HttpClientTransport("http://mock/mcp", client=http)
        session = ClientSession(c26.BINDING, Handlers())
        await session.connect(transport, mode="modern")
        handle = await session.call_tool_as_task("work")
        assert (await handle.result(max_wait=5)).content[0].text == "done"
        await handle.cancel()
        await session.close()
        await http.aclose()

    asyncio.run(asyncio.wait_for(scenario(), 10))
    routed = [s for s in seen if s[0].startswith("tasks/")]
    assert [s[0] for s in routed] == ["tasks/get", "tasks/update", "tasks/get", "tasks/cancel"]
    for method, header_method, name in routed:
        assert header_method == method and name == "=?base64?dC8xIMOp?="  # "t/1 é", encoded
    assert ("tools/call", "tools/call", "work") in seen


class Handlers25(c25.ClientHandlers):
    async def elicit(self, params: Any, ctx: Any) -> Any:
        return c25.t.ElicitResult(action="accept", content={"confirm": True, "name": "Ada"})


class Handlers26(c26.ClientHandlers):
    async def elicit(self, params: Any, ctx: Any) -> Any:
        return c26.t.ElicitResult(action="accept", content={"confirm": True, "name": "Ada"})


FLOWS: list[tuple[str, dict[str, Any], str]] = [
    ("slow_compute", {"seconds": 1.5, "label": "x"}, "x: computed for 1.5s"),
    ("confirm_delete", {"filename": "a.txt"}, "a.txt deleted"),
    ("multi_input", {}, "name=Ada, confirm=True"),
    ("test_tool_with_task", {}, "Hello, Ada!"),
    ("failing_job", {}, "failing_job failed, as it always does"),
]


@pytest.mark.slow
def test_our_client_follows_our_servers_tasks_over_http_in_both_eras() -> None:
    async def scenario(url: str) -> None:
        eras: list[tuple[Mode, Any, Any]] = [
            ("legacy", c25.Client, Handlers25()),
            ("modern", c26.Client, Handlers26()),
        ]
        for mode, client_class, handlers in eras:
            async with http_client(client_class, url, handlers=handlers, mode=mode) as client:
                session = client.session
                handles = [await session.call_tool_as_task(n, a) for n, a, _ in FLOWS]
                assert all(not h.immediate for h in handles), mode
                results = await asyncio.gather(*(h.result(max_wait=30) for h in handles))
                assert [r.content[0].text for r in results] == [f[2] for f in FLOWS], mode
                assert results[-1].is_error is True
                doomed = await session.call_tool_as_task(
                    "slow_compute", {"seconds": 60, "label": "c"}
                )
                await doomed.cancel()
                with pytest.raises(TaskCancelled):
                    await doomed.result(max_wait=10)
                if mode == "legacy":
                    listed = {t.task_id for t in await session.list_tasks()}
                    assert {h.task_id for h in handles} <= listed

    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "examples.everything", "--transport", "http", "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_listening(port, 30)
        asyncio.run(asyncio.wait_for(scenario(f"http://127.0.0.1:{port}/mcp"), 90))
    finally:
        stop(server)
