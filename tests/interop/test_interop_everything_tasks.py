"""Our client against the reference TypeScript server, server-everything (from the npm
registry, pinned in ``tests/support/node_tools.py``), over stdio and over Streamable HTTP on
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

import msgspec
import pytest

from mcpgen.generated.v2025_11_25 import client as c25
from mcpgen.generated.v2026_07_28 import client as c26
from mcpgen.runtime.client import http_client, stdio_client
from mcpgen.runtime.client.tasks import TaskCancelled
from mcpgen.runtime.tasks.engine import Tasks
from mcpgen.runtime.client import CLIENT_LIMITS

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from support.node_tools import (  # noqa: E402
    SERVER_EVERYTHING,
    node_bin,
    node_env,
    npm_package,
    wait_listening,
)
from support.processes import free_port, stop  # noqa: E402

pytestmark = pytest.mark.slow
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


class Handlers:
    """A user who picks "programming", gives the name Ada, and a model that says "sampled"
    (``types``: the generated types of the client's binding)."""

    def __init__(self, types: Any) -> None:
        self.t = types
        self.elicited: list[Any] = []
        self.sampled: list[Any] = []

    async def elicit(self, params: Any, ctx: Any) -> Any:
        self.elicited.append(params)
        if "interpretation" in params.requested_schema.properties:
            content = {"interpretation": "programming"}
        else:
            content = {"name": "Ada", "favoriteColor": "Blue"}
        return self.t.ElicitResult(action="accept", content=content)

    async def create_message(self, params: Any, ctx: Any) -> Any:
        self.sampled.append(params)
        text = self.t.TextContent(text="sampled!")
        return self.t.CreateMessageResult(role="assistant", content=text, model="test-model")


class Handlers25(Handlers, c25.ClientHandlers):
    pass


class Handlers26(Handlers, c26.ClientHandlers):
    pass


@contextlib.asynccontextmanager
async def everything(transport: str, client_class: Any, handlers: Any) -> AsyncIterator[Any]:
    node = str(node_bin() / "node")
    options: dict[str, Any] = {
        "handlers": handlers,
        "tasks": Tasks(),
        "limits": CLIENT_LIMITS.replace(request_timeout=30),
    }
    if transport == "stdio":
        async with stdio_client(
            client_class,
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
        async with http_client(client_class, f"http://127.0.0.1:{port}/mcp", **options) as client:
            yield client
    finally:
        stop(server)


def text(result: Any) -> str:
    return "\n".join(part.text for part in result.content)


@pytest.mark.parametrize(
    "transport,binding",
    [("stdio", "2025-11-25"), ("http", "2025-11-25"), ("stdio", "2026-07-28")],
    ids=["stdio", "http", "stdio-typed-2026"],
)
def test_our_client_completes_server_everythings_task_flows(transport: str, binding: str) -> None:
    """``binding``: the version our client is typed against (it speaks 2025-11-25 to this
    server either way)."""
    client_class, handlers = (
        (c25.Client, Handlers25(c25.t))
        if binding == "2025-11-25"
        else (c26.Client, Handlers26(c26.t))
    )

    async def research(session: Any, topic: str, ambiguous: bool) -> tuple[Any, str]:
        handle = await session.call_tool_as_task(
            "simulate-research-query", {"topic": topic, "ambiguous": ambiguous}
        )
        assert handle.created.status == "working" and handle.created.poll_interval_ms == 1000
        status = await handle.status()
        assert status.task_id == handle.task_id and status.status_message  # its stage
        return handle, text(await handle.result(max_wait=60))

    async def scenario() -> None:
        async with everything(transport, client_class, handlers) as client:
            session = client.session
            assert session.protocol_version == "2025-11-25"
            assert "call" in session.server_capabilities["tasks"]["requests"]["tools"]
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            listed = {name: msgspec.to_builtins(tool) for name, tool in tools.items()}
            supports = {  # the 2026-07-28 Tool keeps execution as a key it does not declare
                name: tool.get("execution", {}).get("taskSupport")
                for name, tool in listed.items()
                if tool.get("execution", {}).get("taskSupport") not in (None, "forbidden")
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
            if binding == "2025-11-25":  # 2026-07-28's elicitation params have no _meta
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
