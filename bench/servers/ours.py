"""mcpgen's echo server: ``Server`` with handlers on the generated stubs, or ``--app``: ``App``."""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

from mcpgen.runtime import INVALID_PARAMS, App, McpError, Server, run

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # python -I leaves it out
from serve import flag, http, option, profile_on_signal  # noqa: E402


def handlers(s: Any, t: Any) -> Any:
    """The echo tool on the raw stubs: the handlers read the arguments by hand."""

    class Echo(s.ServerHandlers):
        async def list_tools(self, params: Any, ctx: Any) -> Any:
            properties = {"text": {"type": "string"}}
            schema = {"type": "object", "properties": properties, "required": ["text"]}
            tool = t.Tool(
                name="echo",
                description="Echo text",
                input_schema=t.convert(schema, t.ToolInputSchema),
            )
            return t.ListToolsResult(tools=[tool])

        async def call_tool(self, params: Any, ctx: Any) -> Any:
            if params.name != "echo":
                raise McpError(INVALID_PARAMS, f"Unknown tool: {params.name}")
            args = params.arguments if isinstance(params.arguments, dict) else {}
            return t.CallToolResult(content=[t.TextContent(text=str(args.get("text", "")))])

    return Echo()


def build(transport: str = "stdio", app: bool = False) -> Server:
    version = "v2026_07_28" if transport == "http" else "v2025_11_25"
    stubs = importlib.import_module(f"mcpgen.generated.{version}.server")
    if not app:
        types = importlib.import_module(f"mcpgen.generated.{version}.types")
        return Server(handlers(stubs, types), name="mcpgen-echo", version="1.0.0")
    registry = App("mcpgen-echo", "1.0.0", binding=stubs)

    @registry.tool
    def echo(text: str) -> str:
        """Echo text"""
        return text

    return registry.server


def shared_sessions() -> Any:
    """Legacy sessions in the Redis ``MCPGEN_STORE`` names, as an ``App``'s HTTP endpoint
    keeps them (None when it is unset): ``bench shared_calls`` sets it."""
    from mcpgen.runtime.cluster import Shared

    shared = Shared.from_environment()
    return shared.sessions() if shared is not None else None


if __name__ == "__main__":
    server = build(option("--transport", "stdio"), flag("--app"))
    profile_on_signal()
    if option("--transport") not in ("http", "sse", "websocket"):  # stdio: no HTTP app
        run(server)
    else:
        from mcpgen.runtime.http.endpoint import McpHttpApp

        if option("--transport") == "http":
            http(McpHttpApp(server, shared_sessions=shared_sessions()))
        else:  # sse, websocket: HTTP+SSE at /sse, WebSocket at /mcp
            http(McpHttpApp(server, websocket_path="/mcp"), ws_per_message_deflate=False)
