"""The tools the conformance suite's ``tasks-*`` scenarios (the 2026-07-28 tasks
extension, SEP-2663) call, and what server-everything's task flows look like in mcpgen:
tools that may or must run as tasks, one that fails as a tool and one as a request, and
ones that ask the user while they run, through the task, or before it exists.
"""

from __future__ import annotations

import asyncio
from typing import Any

from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.generated.v2026_07_28 import types as t
from mcpgen.runtime import App, ToolError
from mcpgen.runtime import INTERNAL_ERROR, McpError

Context = stubs.Context


def ask(message: str, properties: dict[str, Any], required: list[str]) -> t.ElicitRequestParams:
    schema = {"type": "object", "properties": properties, "required": required}
    return t.convert({"message": message, "requestedSchema": schema}, t.ElicitRequestParams)


def add_task_tools(app: App) -> None:
    """Register the task fixtures on ``app`` (bound to the 2026-07-28 stubs)."""

    @app.tool
    def greet(name: str) -> str:
        """Greet someone, at once (never a task)."""
        return f"Hello, {name}!"

    @app.tool(task="optional")
    async def slow_compute(seconds: float, label: str, ctx: Context) -> str:
        """Work for ``seconds``, reporting progress each second; a task when it runs long."""
        whole = max(0.0, min(seconds, 3600.0))
        done = 0.0
        while done < whole:
            step = min(1.0, whole - done)
            await asyncio.sleep(step)
            done += step
            await ctx.report_progress(done, whole, f"{label}: {done:g}s of {whole:g}s")
        return f"{label}: computed for {whole:g}s"

    @app.tool(task="required")
    async def failing_job() -> str:
        """Run as a task for a second, then fail as a tool (``isError``)."""
        await asyncio.sleep(1)
        raise ToolError("failing_job failed, as it always does")

    @app.tool(task="required")
    async def protocol_error_job() -> str:
        """Run as a task for half a second, then fail as a request (a JSON-RPC error)."""
        await asyncio.sleep(0.5)
        raise McpError(INTERNAL_ERROR, "protocol_error_job broke, as it always does")

    @app.tool(task="required", immediate_ms=0)
    async def confirm_delete(filename: str, ctx: Context) -> str:
        """Ask, through the task, whether to delete ``filename``."""
        answer = await ctx.elicit(
            ask(f"Delete {filename}?", {"confirm": {"type": "boolean"}}, ["confirm"])
        )
        confirmed = answer.action == "accept" and (answer.content or {}).get("confirm") is True
        return f"{filename} {'deleted' if confirmed else 'kept'}"

    @app.tool(task="required", immediate_ms=0)
    async def multi_input(ctx: Context) -> str:
        """Ask two things at once, through the task."""
        name, confirm = await asyncio.gather(
            ctx.elicit(ask("Your name?", {"name": {"type": "string"}}, ["name"])),
            ctx.elicit(ask("Go on?", {"confirm": {"type": "boolean"}}, ["confirm"])),
        )
        return f"name={(name.content or {}).get('name')}, confirm={(confirm.content or {}).get('confirm')}"

    @app.tool(task="required")
    async def test_tool_with_task(ctx: Context) -> str:
        """Ask the user's name first (multi-round, before any task), then work as a task."""
        answer = await ctx.elicit(ask("Your name?", {"name": {"type": "string"}}, ["name"]))
        await asyncio.sleep(0.5)
        return f"Hello, {(answer.content or {}).get('name')}!"
