"""The official MCP Python SDK's echo server: low-level ``Server`` + ``stdio_server()``.

``python -I bench/servers/sdk.py`` (as in docs/dev/mcp-sdk-2.3-notes.md, section 3).
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp.types as types
from mcp import MCPError
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

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


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
