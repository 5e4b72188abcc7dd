"""Typed tool results against the official MCP Python SDK (``mcp`` 2.3): an ``MCPServer``
(``tests/peers/sdk_structured_server.py``, over stdio in a real process) lists output
schemas made by pydantic and returns structured content; our client checks each result
against its tool's schema and ``call_tool_as`` returns the type the caller declared."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import msgspec
import pytest

from mcpgen.generated.v2025_11_25.client import Client
from mcpgen.runtime.client import ClientSession, stdio_client
from mcpgen.runtime.client.outputs import OutputValidationError

ROOT = Path(__file__).resolve().parents[2]
PEER = ROOT / "tests" / "peers" / "sdk_structured_server.py"

pytestmark = pytest.mark.anyio


class Day(msgspec.Struct):
    day: str
    high: float


class Forecast(msgspec.Struct):
    city: str
    days: list[Day]


class NumberedDay(msgspec.Struct):
    day: int
    high: float


class Misread(msgspec.Struct):
    city: str
    days: list[NumberedDay]


async def test_a_typed_call_to_an_sdk_server_returns_the_declared_type() -> None:
    with anyio.fail_after(30):
        async with stdio_client(Client, sys.executable, [str(PEER)], cwd=str(ROOT)) as client:
            session = client.session
            assert isinstance(session, ClientSession)
            forecast = await session.call_tool_as(Forecast, "forecast", {"city": "Lyon"})
            assert forecast == Forecast("Lyon", [Day("mon", 21.5), Day("tue", 19.0)])
            # The SDK's schema was learned (every tool, one listing) and checked against.
            assert session.outputs.complete
            assert session.outputs.schemas["forecast"]["required"] == ["city", "days"]
            assert await session.call_tool_as(int, "total", {"prices": [1, 2, 3]}) == 6
            with pytest.raises(OutputValidationError, match=r"got `str` at \$\.days\[0\]\.day"):
                await session.call_tool_as(Misread, "forecast", {"city": "Lyon"})
