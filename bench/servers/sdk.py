"""The SDK's echo server: the low-level ``Server`` (docs/dev/mcp-sdk-2.3-notes.md, section 3),
or ``--mcpserver``: ``MCPServer``; over HTTP stateless JSON, or sessions with ``--stateful``."""

from __future__ import annotations

import os
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # python -I leaves it out
from serve import flag, http, option  # noqa: E402


def low_level() -> Any:
    import mcp.types as types
    from mcp import MCPError
    from mcp.server.lowlevel import Server

    schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    tool = types.Tool(name="echo", description="Echo text", input_schema=schema)

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name != "echo":
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")
        text = str((params.arguments or {})["text"])
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    return Server("sdk-echo", version="1.0.0", on_list_tools=list_tools, on_call_tool=call_tool)


def mcpserver() -> Any:
    from mcp.server.mcpserver import MCPServer

    # log level WARNING: at its default INFO it logs every request
    server = MCPServer("sdk-echo", version="1.0.0", log_level="WARNING")

    @server.tool()
    def echo(text: str) -> str:
        """Echo text"""
        return text

    return server


def build(decorators: bool = False) -> Any:
    return mcpserver() if decorators else low_level()


async def stdio(server: Any) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def sse_app(server: Any) -> Any:
    """The SDK's HTTP+SSE transport: GET ``/sse``, POST ``/messages/``."""
    from mcp.server.sse import SseServerTransport
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Mount, Route

    sse = SseServerTransport("/messages/")

    async def handle(request: Request) -> Response:
        async with sse.connect_sse(request.scope, request.receive, request._send) as streams:
            await server.run(streams[0], streams[1], server.create_initialization_options())
        return Response()

    routes = [Route("/sse", endpoint=handle), Mount("/messages/", app=sse.handle_post_message)]
    return Starlette(routes=routes)


if __name__ == "__main__":
    server = build(flag("--mcpserver"))
    if option("--transport") == "sse":
        http(sse_app(server if not flag("--mcpserver") else server._lowlevel_server))
    elif option("--transport") == "http":
        http(server.streamable_http_app(stateless_http=not flag("--stateful"), json_response=True))
    elif flag("--mcpserver"):
        server.run("stdio")
    else:
        import anyio

        anyio.run(stdio, server)
