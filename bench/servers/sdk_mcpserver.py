"""The official MCP Python SDK's decorator server: ``MCPServer`` (formerly FastMCP) with
``@server.tool() def echo(text: str) -> str``, over ``stdio_server()``.

``python -I bench/servers/sdk_mcpserver.py``. ``log_level="WARNING"``: ``MCPServer``
configures logging at INFO by default, which would log a line per request; the low-level
``sdk.py`` logs nothing, so neither does this one. The SDK derives an ``outputSchema`` from
``-> str`` and answers ``structuredContent: {"result": text}`` beside the text block.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("sdk-echo", version="1.0.0", log_level="WARNING")


@server.tool()
def echo(text: str) -> str:
    """Echo text"""
    return text


if __name__ == "__main__":
    server.run("stdio")
