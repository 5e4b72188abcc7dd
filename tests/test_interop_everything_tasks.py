"""Our client against the reference TypeScript server, server-everything (from the npm
registry, pinned in ``tests/node_tools.py``), over stdio and over Streamable HTTP on
127.0.0.1: its task flows, 2025-11-25 core tasks.

- ``simulate-research-query`` (task support required) is called as a task, followed
  through its stages (statusMessage) to its report; called ``ambiguous``, the task goes
  ``input_required`` and the server's elicitation, tied to the task and delivered on
  ``tasks/result``, is answered by the client's handler, whose answer the report uses.
- Its tasks are listed (``tasks/list``); one is cancelled (``tasks/cancel``), after which
  its result raises ``TaskCancelled``.
- ``trigger-elicitation-request-async`` and ``trigger-sampling-request-async`` (offered
  only to a client declaring task-augmented elicitation and sampling) make our client the
  receiver: it runs the server's request as a task, and the server polls it with
  ``tasks/get`` and fetches the outcome with ``tasks/result``.
"""

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator
import contextlib
from pathlib import Path
from typing import Any

import pytest

from mcpgen.generated.v2025_11_25 import client as c25
from mcpgen.runtime import http_client, stdio_client
from mcpgen.runtime.task_client import TaskCancelled
from mcpgen.runtime.tasks import Tasks

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from tests.node_tools import (  # noqa: E402
    SERVER_EVERYTHING,
    free_port,
    node_bin,
    node_env,
    npm_package,
    wait_listening,
)
from tests.processes import stop  # noqa: E402

pytestmark = pytest.mark.slow
t = c25.t
RELATED = "io.modelcontextprotocol/related-task"


def entry() -> Path:
    folder = npm_package(SERVER_EVERYTHING)
    return (
        folder
        / "node_modules"
        / "@modelcontextprotocol"
        / "server-everything"
        / "dist"
        / "index.js"
    )


class Handlers(c25.ClientHandlers):
    """A user who picks "programming", gives the name Ada, and a model that says "sampled"."""

    def __init__(self) -> None:
        self.elicited: list[Any] = []
        self.sampled: list[Any] = []

    async def elicit(self, params: Any, ctx: Any) -> Any:
        self.elicited.append(params)
        if "interpretation" in params.requested_schema.properties:
            return t.ElicitResult(action="accept", content={"interpretation": "programming"})
        return t.ElicitResult(action="accept", content={"name": "Ada", "favoriteColor": "Blue"})

    async def create_message(self, params: Any, ctx: Any) -> Any:
        self.sampled.append(params)
        return t.CreateMessageResult(
            role="assistant", content=t.TextContent(text="sampled!"), model="test-model"
        )


@contextlib.asynccontextmanager
async def everything(transport: str, handlers: Handlers) -> AsyncIterator[Any]:
    node = str(node_bin() / "node")
    options: dict[str, Any] = {"handlers": handlers, "tasks": Tasks(), "request_timeout": 30}
    if transport == "stdio":
        async with stdio_client(
            c25.Client,
            node,
            [str(entry()), "stdio"],
            env=node_env(),
            stderr=subprocess.DEVNULL,
            **options,
        ) as client:
            yield client
        return
    port = free_port()
    server = subprocess.Popen(
        [node, str(entry()), "streamableHttp"],
        env={**node_env(), "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_listening(port, 30)
        async with http_client(c25.Client, f"http://127.0.0.1:{port}/mcp", **options) as client:
            yield client
    finally:
        stop(server)


def text(result: Any) -> str:
    return "\n".join(part.text for part in result.content)


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_our_client_completes_server_everythings_task_flows(transport: str) -> None:
    async def research(session: Any, topic: str, ambiguous: bool) -> tuple[Any, str]:
        handle = await session.call_tool_as_task(
            "simulate-research-query", {"topic": topic, "ambiguous": ambiguous}
        )
        assert handle.created.status == "working" and handle.created.poll_interval_ms == 1000
        status = await handle.status()
        assert status.task_id == handle.task_id and status.status_message  # its stage
        return handle, text(await handle.result(max_wait=60))

    async def scenario() -> None:
        handlers = Handlers()
        async with everything(transport, handlers) as client:
            session = client.session
            assert session.protocol_version == "2025-11-25"
            assert "call" in session.server_capabilities["tasks"]["requests"]["tools"]
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            supports = {
                name: tool.execution.task_support
                for name, tool in tools.items()
                if tool.execution and tool.execution.task_support not in (None, "forbidden")
            }
            assert supports == {"simulate-research-query": "required"}
            assert {"trigger-elicitation-request-async", "trigger-sampling-request-async"} <= set(
                tools
            )
            (plain, report), (asked, clarified), elicited, sampled = await asyncio.gather(
                research(session, "bees", False),
                research(session, "python", True),
                client.call_tool(name="trigger-elicitation-request-async", arguments={}),
                client.call_tool(name="trigger-sampling-request-async", arguments={"prompt": "hi"}),
            )
            assert report.startswith("# Research Report: bees\n")
            assert clarified.startswith("# Research Report: python (programming)\n")
            clarifying = [
                e for e in handlers.elicited if "interpretation" in e.requested_schema.properties
            ]
            assert len(clarifying) == 1
            assert clarifying[0].meta[RELATED] == {"taskId": asked.task_id}
            assert "[COMPLETED] User provided the requested information!" in text(elicited)
            assert "- Name: Ada" in text(elicited)
            assert "[COMPLETED] Async sampling completed!" in text(sampled)
            assert '"text": "sampled!"' in text(sampled)
            assert len(handlers.sampled) == 1

            listed = {task.task_id: task.status for task in await session.list_tasks()}
            assert listed[plain.task_id] == "completed" and listed[asked.task_id] == "completed"

            doomed = await session.call_tool_as_task("simulate-research-query", {"topic": "x"})
            cancelled = await doomed.cancel()
            assert cancelled is not None and cancelled.status == "cancelled"
            with pytest.raises(TaskCancelled):
                await doomed.result(max_wait=10)
            assert (await doomed.status()).status == "cancelled"

    asyncio.run(asyncio.wait_for(scenario(), 120))
