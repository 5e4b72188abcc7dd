"""The ``Mcp-Param-*`` check of a proxy's HTTP endpoint: the ``x-mcp-header`` annotations
of the tools it forwards (one upstream as it is, or several mounted, their lists merged)
are learned from the lists it serves, and a call whose header disagrees with its argument
is refused before it reaches the upstream."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

import pytest

from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.runtime import App, header
from mcpgen.runtime.core.errors import HEADER_MISMATCH
from mcpgen.runtime.gateway import Mount, Proxy, Upstream

from support.asgi_driver import call

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
}


def regions(ran: list[str]) -> App:
    app = App("regions", binding=stubs)

    @app.tool
    def where(region: Annotated[str, header("Region")]) -> str:
        """Says where it ran."""
        ran.append(region)
        return f"ran in {region}"

    return app


def message(request_id: int, method: str, params: dict[str, Any]) -> bytes:
    params = {**params, "_meta": META}
    return json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    ).encode()


@pytest.mark.parametrize("mounted", [False, True], ids=["as-is", "mounted"])
@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_call_whose_header_disagrees_is_refused_at_the_proxy(mounted: bool, era: str) -> None:
    ran: list[str] = []
    upstream = Upstream(server=regions(ran), mode=era)  # type: ignore[arg-type]
    other = Upstream(server=App("other", binding=stubs), mode=era)  # type: ignore[arg-type]
    proxy = Proxy([Mount(upstream, "geo"), Mount(other, "other")] if mounted else upstream)
    tool = "geo_where" if mounted else "where"
    http = proxy.http_app()

    def headers(region: str) -> dict[str, str]:
        return {
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/call",
            "mcp-name": tool,
            "mcp-param-region": region,
        }

    async def scenario() -> list[Any]:
        try:
            called = {"name": tool, "arguments": {"region": "us"}}
            refused = await call(http, body=message(1, "tools/call", called), headers=headers("eu"))
            good = await call(http, body=message(2, "tools/call", called), headers=headers("us"))
            return [refused, good]
        finally:
            await proxy.close()

    refused, good = asyncio.run(asyncio.wait_for(scenario(), 20))
    assert refused.status == 400, refused
    assert refused.json()["error"]["code"] == HEADER_MISMATCH
    assert good.status == 200 and "ran in us" in good.body.decode(), good
    assert ran == ["us"]
