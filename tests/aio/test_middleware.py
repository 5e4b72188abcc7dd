"""The middleware point (``runtime.aio.middleware``) on both sides: order, what a middleware
sees (HTTP headers over HTTP, none elsewhere), params rewritten on the way in, refusals
and failures (the latter answered without their text), and the next call still served.
In memory in both eras, then over real stdio pipes and real HTTP sockets."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpgen.generated.v2026_07_28 import client as client_stubs
from mcpgen.generated.v2026_07_28 import types as t
from mcpgen.generated.v2026_07_28.client import Client
from mcpgen.runtime import Call, McpError, Next
from mcpgen.runtime.core.errors import INTERNAL_ERROR, INVALID_REQUEST
from mcpgen.runtime.client.session import Mode
from mcpgen.runtime.testing import connect

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from peers.extended_app import SEEN, app  # noqa: E402

PEER = ROOT / "tests" / "peers" / "extended_app.py"
MODES: list[Mode] = ["legacy", "auto"]
TIMEOUT = 20.0


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, TIMEOUT))


def text(result: Any) -> str:
    return result.content[0].text


async def refusals_then_good_calls(client: Any) -> list[str]:
    """The policy middleware's refusal and failure, then the calls that still work; what
    the audit middleware saw, as the server reports it."""
    with pytest.raises(McpError) as forbidden:
        await client.call_tool(name="forbidden", arguments={})
    assert forbidden.value.code == INVALID_REQUEST
    assert "forbidden by policy" in forbidden.value.message
    with pytest.raises(McpError) as failed:
        await client.call_tool(name="explode", arguments={})
    assert failed.value.code == INTERNAL_ERROR
    assert "secret" not in failed.value.message and "secret" not in str(failed.value.data)
    return text(await client.call_tool(name="seen", arguments={})).splitlines()


@pytest.mark.parametrize("mode", MODES)
def test_server_middleware_in_memory(mode: Mode) -> None:
    SEEN.clear()

    async def scenario() -> list[str]:
        async with connect(app.server, Client, mode=mode) as client:
            return await refusals_then_good_calls(client)

    seen = run(scenario())
    # the audit middleware (outermost) saw the refused and the failed calls too, in order,
    # and no HTTP header (there is no HTTP here)
    assert seen[-3:] == ["tools/call None"] * 3
    assert seen.count("tools/call None") == 3


class Roots(client_stubs.ClientHandlers):
    async def list_roots(self, params: Any, ctx: Any) -> t.ListRootsResult:
        return t.ListRootsResult(roots=[t.Root(uri="file:///work")])


@pytest.mark.parametrize("mode", MODES)
def test_client_middleware_wraps_what_the_server_asks(mode: Mode) -> None:
    """Legacy: the server's roots/list request; modern: its input request. Either way
    the client's middleware sees it and may change the answer."""
    asked: list[str] = []

    async def extra_root(call: Call, call_next: Next) -> Any:
        asked.append(call.method)
        answer = await call_next(call)
        return t.ListRootsResult(roots=[*answer.roots, t.Root(uri="file:///extra")])

    async def scenario() -> str:
        async with connect(
            app.server, Client, mode=mode, handlers=Roots(), middleware=[extra_root]
        ) as client:
            return text(await client.call_tool(name="roots", arguments={}))

    assert run(scenario()) == "file:///work, file:///extra"
    assert asked == ["roots/list"]


@pytest.mark.parametrize("mode", MODES)
def test_a_client_middleware_that_raises_is_an_internal_error_not_a_crash(mode: Mode) -> None:
    """Legacy: the server's request is answered -32603 (its tool then fails); modern: the
    input request cannot be fulfilled, and the call fails -32603. Neither leaks the text."""

    async def broken(call: Call, call_next: Next) -> Any:
        raise RuntimeError("client internals")

    async def scenario() -> None:
        async with connect(
            app.server, Client, mode=mode, handlers=Roots(), middleware=[broken]
        ) as client:
            with pytest.raises(McpError) as failed:  # the server's tool got an internal error
                await client.call_tool(name="roots", arguments={})
            assert failed.value.code == INTERNAL_ERROR
            assert "client internals" not in failed.value.message
            assert "seen" in [tool.name for tool in (await client.list_tools()).tools]

    run(scenario())


def test_middleware_order_and_late_registration() -> None:
    from mcpgen.generated.v2026_07_28 import server as stubs
    from mcpgen.runtime import App

    order: list[str] = []
    late = App("late", binding=stubs)

    @late.tool
    def ping() -> str:
        """Answers pong."""
        return "pong"

    def tagged(tag: str) -> Any:
        async def middleware(call: Call, call_next: Next) -> Any:
            order.append(f"{tag} in")
            try:
                return await call_next(call)
            finally:
                order.append(f"{tag} out")

        return middleware

    late.use(tagged("a"))
    late.server  # made: later middleware goes to the server directly
    late.use(tagged("b"))

    async def scenario() -> str:
        # Unchecked: checking would list the tools first, through the middleware too.
        async with late.test_client(mode="auto", output_validation="off") as client:
            return text(await client.call_tool(name="ping", arguments={}))

    assert run(scenario()) == "pong"
    assert order == ["a in", "b in", "b out", "a out"]
    with pytest.raises(TypeError):
        late.server.use("not callable")  # type: ignore[arg-type]


# -- real pipes and sockets -------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_server_middleware_over_stdio(mode: Mode) -> None:
    from mcpgen.runtime.client import stdio_client

    async def scenario() -> list[str]:
        async with stdio_client(Client, sys.executable, [str(PEER)], mode=mode) as client:
            return await refusals_then_good_calls(client)

    seen = run(scenario())
    assert seen[-3:] == ["tools/call None"] * 3


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    from support.processes import announced_http

    with announced_http([sys.executable, str(PEER), "--http"], ROOT) as url:
        yield url


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_server_middleware_over_http_sees_the_headers(mode: Mode, http_url: str) -> None:
    from mcpgen.runtime.client import http_client

    async def scenario() -> list[str]:
        async with http_client(Client, http_url, mode=mode, headers={"X-Test": mode}) as client:
            return await refusals_then_good_calls(client)

    seen = run(scenario())
    assert seen[-3:] == [f"tools/call {mode}"] * 3
