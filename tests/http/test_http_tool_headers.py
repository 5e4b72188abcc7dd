"""The ``Mcp-Param-*`` check in front of an HTTP server's dispatch: no call goes unchecked
while the server is still listing its tools to learn their ``x-mcp-header``s."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.runtime import App, header
from mcpgen.runtime.core.errors import HEADER_MISMATCH

from support.asgi_driver import call

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
}


def body(request_id: int, region: str) -> bytes:
    params = {"name": "where", "arguments": {"region": region}, "_meta": META}
    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    return json.dumps(message).encode()


HEADERS = {
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
    "mcp-name": "where",
    "mcp-param-region": "us",
}


def test_calls_arriving_while_the_tools_are_listed_wait_and_are_checked() -> None:
    app = App("regions", binding=stubs)

    @app.tool
    def where(region: Annotated[str, header("Region")]) -> str:
        """Says where it ran."""
        return f"ran in {region}"

    server = app.server
    listing = server.implemented["list_tools"]

    async def slow_listing(params: Any, ctx: Any) -> Any:
        await asyncio.sleep(0.05)
        return await listing(params, ctx)

    server.implemented["list_tools"] = slow_listing
    http = app.http_app()

    async def scenario() -> list[Any]:
        mismatched = [call(http, body=body(i, "eu"), headers=HEADERS) for i in range(1, 4)]
        replies = await asyncio.gather(*mismatched)
        good = await call(http, body=body(9, "us"), headers=HEADERS)
        return [*replies, good]

    *refused, good = asyncio.run(asyncio.wait_for(scenario(), 10))
    for reply in refused:
        assert reply.status == 400, reply
        assert reply.json()["error"]["code"] == HEADER_MISMATCH
    assert good.status == 200 and "ran in us" in good.body.decode()
