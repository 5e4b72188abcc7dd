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
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as python -I: no script dir
from uvicorn_cli import options as cli_options  # noqa: E402
from uvicorn_cli import serve  # noqa: E402

server = MCPServer("sdk-echo", version="1.0.0", log_level="WARNING")


@server.tool()
def echo(text: str) -> str:
    """Echo text"""
    return text


def options(argv: list[str] | None = None) -> argparse.Namespace:
    return cli_options("the SDK's MCPServer echo over Streamable HTTP", argv, stateful=True)


if __name__ == "__main__":
    args = options()
    serve(server.streamable_http_app(stateless_http=not args.stateful, json_response=True), args)
