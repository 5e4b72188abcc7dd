"""A high-level stdio server built on the official MCP Python SDK (``mcp`` 2.3's
``MCPServer``) whose tools return structured output, the peer of
``tests/interop/test_interop_sdk_outputs.py``: run as
``python tests/peers/sdk_structured_server.py``.

Tools: ``forecast`` [city] — a pydantic model (the SDK lists its JSON Schema as the
``outputSchema`` and returns it as ``structuredContent``); ``total`` [prices] — an ``int``,
which the SDK wraps as ``{"result": ...}``.
"""

from __future__ import annotations

from pydantic import BaseModel

from mcp.server.mcpserver import MCPServer


class Day(BaseModel):
    day: str
    high: float


class Forecast(BaseModel):
    city: str
    days: list[Day]


server = MCPServer("sdk-structured")


@server.tool()
def forecast(city: str) -> Forecast:
    """Two days of highs."""
    return Forecast(city=city, days=[Day(day="mon", high=21.5), Day(day="tue", high=19.0)])


@server.tool()
def total(prices: list[int]) -> int:
    """The sum of ``prices``."""
    return sum(prices)


if __name__ == "__main__":
    server.run()
