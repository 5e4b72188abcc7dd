"""A 2026-07-28 server on the official MCP Python SDK's high-level ``MCPServer`` (``mcp``
2.3), the peer of ``tests/interop/test_interop_client_2026.py``: run as ``python
tests/peers/sdk_mcpserver.py [--tools N] [--page-size P] [--loops]``, it serves Streamable
HTTP with uvicorn on a port of its own choosing on 127.0.0.1 and says where on stderr
("mcpgen: serving MCP at http://127.0.0.1:PORT/mcp"), until SIGTERM/SIGINT.

* tools ``count`` [method] (how many requests of ``method`` reached the server: counted by
  a ``ServerMiddleware`` before the handler), ``add_tool`` [name] (adds a tool, then
  publishes tools/list_changed to the ``subscriptions/listen`` streams), ``touch`` [uri]
  (publishes resources/updated), and N more tools ``bulk_0000``… (``--tools``);
* the resource ``test://watched`` and a ``greet`` prompt; ``MCPServer`` serves
  ``subscriptions/listen`` itself (so it announces listChanged and subscribe);
* the SDK's cache hints: tools/list ``ttlMs`` 60000 ``private``, resources/list 60000
  ``public``;
* tools/list in pages of P (``--page-size``; default all at once) by a low-level handler
  in place of ``MCPServer``'s; with ``--loops``, prompts/list answers every page with the
  ``nextCursor`` "again" and resources/templates/list goes round A → B → A.
"""

from __future__ import annotations

import argparse
import socket
import sys
from collections import Counter
from typing import Any

import mcp.types as types
import uvicorn
from mcp.server.caching import CacheHint
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer

WATCHED = "test://watched"
COUNTS: Counter[str] = Counter()


class Count:
    """Counts every request by method, as it reaches the server."""

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if ctx.request_id is not None:
            COUNTS[ctx.method] += 1
        return await call_next(ctx)


def answering(text: str) -> Any:
    """A tool of no arguments that answers ``text``."""

    def tool() -> str:
        return text

    return tool


def build(bulk: int, page_size: int, loops: bool) -> MCPServer:
    server = MCPServer(
        "sdk-mcpserver-peer",
        version="1.0.0",
        cache_hints={
            "tools/list": CacheHint(ttl_ms=60_000, scope="private"),
            "resources/list": CacheHint(ttl_ms=60_000, scope="public"),
        },
        middleware=[Count()],
    )

    @server.tool()
    def count(method: str) -> str:
        """Requests of a method this server received"""
        return str(COUNTS[method])

    @server.tool()
    async def add_tool(name: str, ctx: Context) -> str:
        """Adds a tool, then says the tool list changed"""
        server.add_tool(answering(name), name=name, description=f"tool {name}")
        await ctx.notify_tools_changed()
        return f"added {name}"

    @server.tool()
    async def touch(uri: str, ctx: Context) -> str:
        """Says a resource was updated"""
        await ctx.notify_resource_updated(uri)
        return f"touched {uri}"

    for i in range(bulk):
        name = f"bulk_{i:04d}"
        server.add_tool(answering(name), name=name, description=f"tool {name}")

    @server.resource(WATCHED, mime_type="text/plain")
    def watched() -> str:
        return "watched"

    @server.prompt()
    def greet() -> str:
        """A greeting"""
        return "Hello"

    lowlevel = server._lowlevel_server  # pyright: ignore[reportPrivateUsage]
    if page_size > 0:

        async def paged(
            ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams
        ) -> types.ListToolsResult:
            tools = await server.list_tools()  # the bulk last, after those added
            tools.sort(key=lambda tool: tool.name.startswith("bulk_"))
            start = int(params.cursor or "0")
            end = start + page_size
            after = str(end) if end < len(tools) else None
            return types.ListToolsResult(tools=tools[start:end], next_cursor=after)

        lowlevel.add_request_handler("tools/list", types.PaginatedRequestParams, paged)
    if loops:

        async def same(
            ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams
        ) -> types.ListPromptsResult:
            return types.ListPromptsResult(prompts=await server.list_prompts(), next_cursor="again")

        async def cycle(
            ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams
        ) -> types.ListResourceTemplatesResult:
            template = types.ResourceTemplate(name="item", uri_template="test://items/{id}")
            after = "B" if params.cursor == "A" else "A"
            return types.ListResourceTemplatesResult(
                resource_templates=[template], next_cursor=after
            )

        lowlevel.add_request_handler("prompts/list", types.PaginatedRequestParams, same)
        lowlevel.add_request_handler(
            "resources/templates/list", types.PaginatedRequestParams, cycle
        )
    return server


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python tests/peers/sdk_mcpserver.py")
    parser.add_argument("--tools", type=int, default=0)
    parser.add_argument("--page-size", type=int, default=0)
    parser.add_argument("--loops", action="store_true")
    args = parser.parse_args(argv)
    app = build(args.tools, args.page_size, args.loops).streamable_http_app()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # connections wait in the backlog until uvicorn accepts them
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=2)
    print(f"mcpgen: serving MCP at http://127.0.0.1:{port}/mcp", file=sys.stderr, flush=True)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
