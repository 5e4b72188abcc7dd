"""A test peer: slow, cancellable, progress-reporting and failing tools.

Written against the generated 2025-11-25 stubs and served by ``mcpgen.runtime.Server``.
Run from the repository root::

    python -m tests.peers.slow_server [--versions 2024-11-05,2025-06-18]

Tools (arguments in brackets):

* ``sleep`` [seconds, label] — sleeps; records ``started:``/``finished:``/``cancelled:<label>``
* ``progress`` [steps] — reports ``steps`` progress notifications, then answers
* ``boom`` — raises an exception carrying a secret text (must not reach the client)
* ``fail`` — a tool-level failure (``isError: true``)
* ``events`` — the recorded events, as JSON text
* ``whoami`` — the negotiated version, client info and client capabilities, as JSON text
* ``roots`` — asks the client for its roots (``roots/list``) and returns their URIs
* ``roots_default`` — the same, calling ``ctx.list_roots()`` with its default params
* ``exit`` [code] — ends the process at once (a crash, as the client sees it)

``notifications/roots/list_changed`` is recorded as the event ``roots-changed``.

Every recorded event is also logged to stderr; stdout carries JSON-RPC only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from typing import Any

from mcpgen.generated.v2025_11_25 import server as s
from mcpgen.generated.v2025_11_25 import types as t
from mcpgen.runtime import INVALID_PARAMS, McpError, Server, run

log = logging.getLogger("slow_server")
SECRET = "SECRET-7f3a"
TOOLS = (
    "sleep",
    "progress",
    "boom",
    "fail",
    "events",
    "whoami",
    "roots",
    "roots_default",
    "exit",
)


def text(value: str, is_error: bool = False) -> t.CallToolResult:
    return t.CallToolResult(content=[t.TextContent(text=value)], is_error=is_error or t.UNSET)


class SlowServer(s.ServerHandlers):
    def __init__(self) -> None:
        self.events: list[str] = []

    def record(self, event: str) -> None:
        self.events.append(event)
        log.warning("event %s", event)

    async def list_tools(
        self, params: t.PaginatedRequestParams, ctx: s.Context
    ) -> t.ListToolsResult:
        schema = t.convert({"type": "object"}, t.ToolInputSchema)
        return t.ListToolsResult(tools=[t.Tool(name=name, input_schema=schema) for name in TOOLS])

    async def call_tool(self, params: t.CallToolRequestParams, ctx: s.Context) -> t.CallToolResult:
        args: dict[str, Any] = params.arguments if isinstance(params.arguments, dict) else {}
        name = params.name
        if name == "sleep":
            seconds = float(args.get("seconds", 1.0))
            label = str(args.get("label", ctx.request_id))
            self.record(f"started:{label}")
            try:
                await asyncio.sleep(seconds)
            except asyncio.CancelledError:
                self.record(f"cancelled:{label}")
                raise
            self.record(f"finished:{label}")
            return text(f"slept {seconds}s ({label})")
        if name == "progress":
            steps = int(args.get("steps", 3))
            for step in range(1, steps + 1):
                await ctx.report_progress(step, steps, f"step {step} of {steps}")
                await asyncio.sleep(0.02)
            return text(f"{steps} steps done")
        if name == "boom":
            raise RuntimeError(f"{SECRET}: the handler blew up")
        if name == "fail":
            return text("this tool failed on purpose", is_error=True)
        if name == "events":
            return text(json.dumps(self.events))
        if name == "whoami":
            return text(
                json.dumps(
                    {
                        "protocolVersion": ctx.protocol_version,
                        "clientInfo": dict(ctx.raw.client_info),
                        "clientCapabilities": dict(ctx.raw.client_capabilities),
                    }
                )
            )
        if name in ("roots", "roots_default"):
            if name == "roots":
                answer = await ctx.list_roots(t.RequestParams())
            else:
                answer = await ctx.list_roots()
            return text(json.dumps([root.uri for root in answer.roots]))
        if name == "exit":
            code = int(args.get("code", 3))
            log.warning("exiting with %d", code)
            os._exit(code)
        raise McpError(INVALID_PARAMS, f"Unknown tool: {name}")

    async def on_roots_list_changed(self, params: t.NotificationParams) -> None:
        self.record("roots-changed")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.peers.slow_server")
    parser.add_argument(
        "--versions", help="comma-separated protocol versions to accept (default: all)"
    )
    args = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=logging.INFO)
    versions = args.versions.split(",") if args.versions else None
    log.info("slow_server started pid=%d versions=%s", os.getpid(), versions)
    run(Server(SlowServer(), name="slow-server", versions=versions))
    log.info("slow_server stopped: end of input")


if __name__ == "__main__":
    main()
