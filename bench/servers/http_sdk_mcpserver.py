"""The official MCP Python SDK's decorator server over Streamable HTTP: ``MCPServer``'s
``streamable_http_app(stateless_http=True, json_response=True)`` under uvicorn, with
``@server.tool() def echo(text: str) -> str``.

``python -I bench/servers/http_sdk_mcpserver.py --port PORT [--stateful] [--loop L]
[--http H]``: the same uvicorn options and app settings as ``http_sdk.py`` (which serves the
SDK's low-level ``Server``). ``log_level="WARNING"``: ``MCPServer`` configures logging at
INFO by default, which would log a line per request.
"""

from __future__ import annotations

import argparse

import uvicorn
from mcp.server.mcpserver import MCPServer

server = MCPServer("sdk-echo", version="1.0.0", log_level="WARNING")


@server.tool()
def echo(text: str) -> str:
    """Echo text"""
    return text


def options(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="the SDK's MCPServer echo over Streamable HTTP")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--stateful", action="store_true", help="stateless_http=False")
    p.add_argument("--loop", default="auto", help="uvicorn --loop (auto)")
    p.add_argument("--http", default="auto", help="uvicorn --http (auto)")
    return p.parse_args(argv)


if __name__ == "__main__":
    args = options()
    app = server.streamable_http_app(stateless_http=not args.stateful, json_response=True)
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=args.port,
        loop=args.loop,
        http=args.http,
        log_level="warning",
        access_log=False,
    )
