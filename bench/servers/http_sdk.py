"""The official MCP Python SDK's echo server over Streamable HTTP: the low-level ``Server``'s
``streamable_http_app()`` under uvicorn (docs/dev/mcp-sdk-2.3-notes.md, section 3).

``python -I bench/servers/http_sdk.py --port PORT [--stateful] [--loop L] [--http H]``
serves ``http://127.0.0.1:PORT/mcp`` (one worker, log level warning, no access log) until
SIGTERM or SIGINT. By default the app is ``stateless_http=True, json_response=True``: modern
(2026-07-28) POSTs are routed by their ``MCP-Protocol-Version`` header to the SDK's
single-exchange handler either way. ``--stateful`` (``stateless_http=False``) gives legacy
clients a session after ``initialize``, for the legacy-session variant of the benchmark.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any
from pathlib import Path

import mcp.types as types
from mcp import MCPError
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as python -I: no script dir
from uvicorn_cli import options as cli_options  # noqa: E402
from uvicorn_cli import serve  # noqa: E402

Ctx = ServerRequestContext[Any]

TOOL = types.Tool(
    name="echo",
    description="Echo text",
    input_schema={
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
)


async def list_tools(
    ctx: Ctx, params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[TOOL])


async def call_tool(ctx: Ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
    if params.name != "echo":
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")
    args = params.arguments or {}
    return types.CallToolResult(content=[types.TextContent(type="text", text=str(args["text"]))])


server = Server("sdk-echo", version="1.0.0", on_list_tools=list_tools, on_call_tool=call_tool)


def options(argv: list[str] | None = None) -> argparse.Namespace:
    return cli_options("the SDK's echo server over Streamable HTTP", argv, stateful=True)


if __name__ == "__main__":
    args = options()
    serve(server.streamable_http_app(stateless_http=not args.stateful, json_response=True), args)
