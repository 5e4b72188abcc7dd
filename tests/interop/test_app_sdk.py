"""An ``App`` as the official Python SDK client meets it: the four-line ``add``
tool of an ``App`` (``tests/peers/add_app.py``), over stdio and Streamable HTTP, in the
SDK's default ``auto`` mode and in ``legacy`` mode: its schemas, its structured result,
and bad arguments answered as invalid, naming the field."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client as SdkClient
from mcp import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from support.processes import announced_http

ROOT = Path(__file__).resolve().parents[2]
PEER = ROOT / "tests" / "peers" / "add_app.py"
TIMEOUT = 30.0

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    """The app over Streamable HTTP (its own process, a free port on 127.0.0.1)."""
    with announced_http([sys.executable, str(PEER), "--http"], ROOT) as url:
        yield url


@asynccontextmanager
async def sdk(transport: str, mode: str, url: str) -> AsyncIterator[SdkClient]:
    if transport == "stdio":
        server = StdioServerParameters(command=sys.executable, args=[str(PEER)], cwd=str(ROOT))
        async with SdkClient(server, mode=mode) as client:  # type: ignore[arg-type]
            yield client
        return
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(30.0)) as http:
        async with SdkClient(
            streamable_http_client(url, http_client=http), mode=mode  # type: ignore[arg-type]
        ) as client:
            yield client


def text_of(result: Any) -> str:
    return " ".join(block.text for block in result.content)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_the_four_line_tool_through_the_official_sdk(
    transport: str, mode: str, http_url: str
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with sdk(transport, mode, http_url) as client:
            (tool,) = (await client.list_tools()).tools
            assert tool.name == "add" and tool.description == "Add two integers."
            schema = tool.input_schema
            assert schema["required"] == ["a", "b"]
            assert schema["properties"] == {"a": {"type": "integer"}, "b": {"type": "integer"}}
            assert tool.output_schema is not None
            assert tool.output_schema["properties"] == {"result": {"type": "integer"}}
            result = await client.call_tool("add", {"a": 2, "b": 3})
            assert not result.is_error and result.structured_content == {"result": 5}
            missing = await client.call_tool("add", {"a": 2})
            assert missing.is_error and "`b`" in text_of(missing)
            wrong = await client.call_tool("add", {"a": "x", "b": 1})
            assert wrong.is_error and "$.a" in text_of(wrong)
            again = await client.call_tool("add", {"a": 40, "b": 2})
            assert again.structured_content == {"result": 42}
