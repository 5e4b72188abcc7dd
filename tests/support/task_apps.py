"""An ``App`` whose tools say ``task=`` (never, optional, required; quick, slow, failing,
asking the client for input), for the tests of 2026-07-28 tasks, and the client
capabilities that opt in to the ``io.modelcontextprotocol/tasks`` extension."""

from __future__ import annotations

import asyncio

from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.generated.v2026_07_28 import types as t
from mcpgen.runtime import App
from mcpgen.runtime.app.tools import ToolError
from mcpgen.runtime.core.errors import McpError
from mcpgen.runtime.tasks.engine import Tasks

TASKS = "io.modelcontextprotocol/tasks"


OPTED = {"elicitation": {}, "extensions": {TASKS: {}}}


def make_app() -> App:
    app = App("tasks", binding=stubs, tasks=Tasks(immediate_ms=50))

    @app.tool
    def greet(name: str) -> str:
        """Never a task."""
        return f"Hello, {name}!"

    @app.tool(task="optional")
    async def slow_compute(seconds: float, label: str) -> str:
        """Sleep, then say so."""
        await asyncio.sleep(seconds)
        return f"{label} done after {seconds}s"

    @app.tool(task="required")
    async def failing_job() -> str:
        """Fail as a tool does."""
        await asyncio.sleep(0.1)
        raise ToolError("the job failed")

    @app.tool(task="required")
    async def protocol_error_job() -> str:
        """Fail as a request does."""
        await asyncio.sleep(0.1)
        raise McpError(-32603, "the job broke")

    @app.tool(task="required", immediate_ms=0)
    async def multi_input(ctx: stubs.Context) -> str:
        """Ask two things at once."""
        form = {"type": "object", "properties": {"name": {"type": "string"}}}
        asks = [
            ctx.elicit(t.convert({"message": m, "requestedSchema": form}, t.ElicitRequestParams))
            for m in ("first?", "second?")
        ]
        answers = await asyncio.gather(*asks)
        return " & ".join(str((a.content or {}).get("name")) for a in answers)

    @app.tool(task="required")
    async def test_tool_with_task(ctx: stubs.Context) -> str:
        """Ask first (before any task), then work as a task."""
        form = {"type": "object", "properties": {"name": {"type": "string"}}}
        answer = await ctx.elicit(
            t.convert({"message": "Name?", "requestedSchema": form}, t.ElicitRequestParams),
            key="user_name",
        )
        await asyncio.sleep(0.1)
        return f"Hello, {(answer.content or {}).get('name')}!"

    return app
