"""The official Python SDK 1.x over WebSocket (1.x shipped both sides; 2.x dropped them),
run in a venv of its own (``tests/support/py_peers.py``) by
``tests/interop/test_interop_websocket.py``:

* ``python sdk1_websocket.py client URL`` — the SDK's ``websocket_client`` lists the
  tools, calls ``test_simple_text``, reads ``test://static-text`` and gets
  ``test_simple_prompt`` of ``examples/everything``, then prints one JSON object of what
  it saw;
* ``python sdk1_websocket.py server --port PORT`` — a FastMCP server (tools ``echo`` and
  ``add``, one resource, one prompt) served over the SDK's ``websocket_server`` at
  ``ws://127.0.0.1:PORT/ws`` with uvicorn, until SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any


async def client(url: str) -> None:
    from mcp import ClientSession
    from mcp.client.websocket import websocket_client

    async with websocket_client(url) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            tools = [tool.name for tool in (await session.list_tools()).tools]
            called = await session.call_tool("test_simple_text", {})
            read_ = await session.read_resource("test://static-text")  # type: ignore[arg-type]
            prompt = await session.get_prompt("test_simple_prompt")
            seen = {
                "version": init.protocolVersion,
                "server": init.serverInfo.name,
                "tools": tools,
                "called": [part.text for part in called.content],  # type: ignore[union-attr]
                "read": read_.contents[0].text,  # type: ignore[union-attr]
                "promptRoles": [m.role for m in prompt.messages],
            }
    print(json.dumps(seen))


def server(port: int) -> None:
    import uvicorn
    from mcp.server.fastmcp import FastMCP
    from mcp.server.websocket import websocket_server

    mcp = FastMCP("sdk1-websocket-peer")

    @mcp.tool()
    def echo(text: str) -> str:
        """The text back."""
        return text

    @mcp.tool()
    def add(a: int, b: int) -> int:
        """The sum."""
        return a + b

    @mcp.resource("sdk1://readme")
    def readme() -> str:
        """A text resource."""
        return "Served over WebSocket by the Python SDK 1.x."

    @mcp.prompt()
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Hello, {name}!"

    lowlevel = mcp._mcp_server  # noqa: SLF001 — FastMCP 1.x runs over any streams this way

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "websocket" and scope["path"] == "/ws":
            async with websocket_server(scope, receive, send) as (read, write):
                await lowlevel.run(read, write, lowlevel.create_initialization_options())
        elif scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return

    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python sdk1_websocket.py")
    sub = parser.add_subparsers(dest="role", required=True)
    sub.add_parser("client").add_argument("url")
    sub.add_parser("server").add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    if args.role == "client":
        asyncio.run(asyncio.wait_for(client(args.url), 60))
    else:
        server(args.port)


if __name__ == "__main__":
    main()
