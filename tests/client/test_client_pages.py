"""A client reads every page of a list, and a server's pages cannot keep it reading: a
cursor that comes round again, more pages than ``Limits.max_pages`` or more items than
``Limits.max_list_items`` end the reading with ``PaginationError``, and the client goes on."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpgen.runtime import App
from mcpgen.runtime.client import CLIENT_LIMITS, PaginationError

from support.scripted_server import result, scripted

pytestmark = pytest.mark.anyio
TIMEOUT = 20.0


def many_tools(count: int, page_size: int) -> App:
    app = App("many", page_size=page_size)
    for n in range(count):

        def tool(x: int, n: int = n) -> int:
            return x + n

        app.add_tool(tool, name=f"tool-{n:04d}")
    return app


async def test_every_page_of_a_thousand_tools_is_read_in_order() -> None:
    """``list_all`` follows the cursors to the last page; ``pages`` gives each page."""
    app = many_tools(1050, page_size=100)

    async def run() -> None:
        async with app.test_client() as client:
            tools = await client.session.list_all("tools/list")
            assert [t.name for t in tools] == [f"tool-{n:04d}" for n in range(1050)]
            sizes = [len(page.tools) async for page in client.session.pages("tools/list")]
            assert sizes == [100] * 10 + [50]

    await asyncio.wait_for(run(), TIMEOUT)


def looping(cursors: list[str]) -> Any:
    """A tools/list whose cursors go round ``cursors`` for ever."""

    def answer(request: dict[str, Any]) -> list[dict[str, Any]]:
        asked = request["params"].get("cursor")
        at = cursors.index(asked) + 1 if asked in cursors else 0
        page: dict[str, Any] = {"tools": [{"name": f"t{at}", "inputSchema": {"type": "object"}}]}
        page["nextCursor"] = cursors[at % len(cursors)]
        return [result(request, {**page, "ttlMs": 0, "cacheScope": "private"})]

    return answer


@pytest.mark.parametrize("cursors", [["same"], ["a", "b", "c"]], ids=["repeat", "cycle"])
async def test_a_cursor_loop_stops_with_a_clear_error_and_the_client_goes_on(
    cursors: list[str],
) -> None:
    """A server that sends a cursor it sent before gets ``PaginationError`` naming the
    cursor, after one round of its loop; the next request is answered."""

    async def run() -> None:
        async with scripted({"tools/list": looping(cursors)}) as server:
            with pytest.raises(PaginationError, match="again after .* pages; its pages go round"):
                await server.session.list_all("tools/list")
            assert server.asked("tools/list") == len(cursors) + 1
            first = await server.session.request("tools/list")
            assert first.tools[0].name == "t0"

    await asyncio.wait_for(run(), TIMEOUT)


def endless(request: dict[str, Any]) -> list[dict[str, Any]]:
    """Pages of ten tools whose cursors never repeat and never end."""
    asked = request["params"].get("cursor") or "0"
    at = int(asked)
    tools = [{"name": f"t{at}-{n}", "inputSchema": {"type": "object"}} for n in range(10)]
    return [result(request, {"tools": tools, "nextCursor": str(at + 1), "ttlMs": 0})]


async def test_pages_beyond_max_pages_stop_the_reading() -> None:
    """Cursors that never end are read up to ``Limits.max_pages`` pages, no further."""
    limits = CLIENT_LIMITS.replace(max_pages=7)

    async def run() -> None:
        async with scripted({"tools/list": endless}, limits=limits) as server:
            with pytest.raises(PaginationError, match="more than 7 pages .Limits.max_pages."):
                await server.session.list_all("tools/list")
            assert server.asked("tools/list") == 7

    await asyncio.wait_for(run(), TIMEOUT)


async def test_items_beyond_max_list_items_stop_the_reading() -> None:
    """A list longer than ``Limits.max_list_items`` is refused, not gathered."""
    limits = CLIENT_LIMITS.replace(max_list_items=25)

    async def run() -> None:
        async with scripted({"tools/list": endless}, limits=limits) as server:
            with pytest.raises(PaginationError, match="more than 25 items"):
                await server.session.list_all("tools/list")
            assert server.asked("tools/list") == 3

    await asyncio.wait_for(run(), TIMEOUT)


async def test_only_paginated_lists_are_gathered() -> None:
    app = many_tools(1, page_size=10)
    async with app.test_client() as client:
        with pytest.raises(ValueError, match="no paginated list"):
            await client.session.list_all("tools/call")
