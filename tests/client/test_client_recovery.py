"""A client whose legacy HTTP session the server lost starts a new one, as the transport
requires (a 404 to a request carrying ``Mcp-Session-Id`` → a fresh ``initialize``), against
uvicorn on 127.0.0.1: after a server restart in place, and after the server evicted the
idle session. A request that changes nothing is sent again on the new session; a tool call
only with the caller's consent (``Recovery.retry``), else it fails with ``SessionLost`` and
nothing ran twice. Subscriptions are made again, the application is told
(``SessionRenewed``), and renewals in a row are bounded."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, Literal

import pytest

from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.generated.v2025_11_25.client import Client
from mcpgen.runtime import App, Limits
from mcpgen.runtime import ConnectionClosed
from mcpgen.runtime.client import SAFE_TO_RETRY, Recovery, SessionLost, SessionRenewed
from mcpgen.runtime.client import ClientSession, http_client
from mcpgen.runtime.http.endpoint import McpHttpApp
from support.http_servers import ThreadedUvicorn

URI = "memo://today"


def make_app(calls: list[str]) -> App:
    """A server whose ``add`` tool records each time it runs (in ``calls``)."""
    app = App("restartable", binding=stubs)

    @app.tool
    def add(label: str) -> str:
        """Record one call."""
        calls.append(label)
        return f"added {label}"

    @app.resource(URI)
    def today() -> str:
        """Today's memo."""
        return "memo"

    return app


def no_get_stream(app: Any) -> Any:
    """The server offers no GET stream (405, as the transport allows), so a client is
    never "present" and an idle session is evicted on time."""

    async def asgi(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "GET":
            await send({"type": "http.response.start", "status": 405, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        await app(scope, receive, send)

    return asgi


class Restartable:
    """A server on one port that can be stopped and started again in place (a new
    process would forget its sessions the same way: every session is in memory)."""

    def __init__(self, wrap: Callable[[Any], Any] = lambda app: app, **limits: Any) -> None:
        self.calls: list[str] = []
        self.wrap, self.limits = wrap, Limits(**limits)
        self.runner = self._runner(0)
        self.port = self.runner.port

    def _runner(self, port: int) -> ThreadedUvicorn:
        app = make_app(self.calls)
        return ThreadedUvicorn(self.wrap(McpHttpApp(app.server, limits=self.limits)), port)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    @property
    def sse_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/sse"

    async def restart(self) -> None:
        await asyncio.to_thread(self.runner.stop)
        self.runner = self._runner(self.port)
        await asyncio.to_thread(self.runner.start)


@asynccontextmanager
async def serving(server: Restartable) -> AsyncIterator[Restartable]:
    await asyncio.to_thread(server.runner.start)
    try:
        yield server
    finally:
        await asyncio.to_thread(server.runner.stop)


def run(scenario: Any) -> None:
    asyncio.run(asyncio.wait_for(scenario, 60))


def text(result: Any) -> str:
    return result.content[0].text


@pytest.mark.parametrize("transport", ["streamable-http", "sse"])
def test_after_a_restart_the_client_initializes_again_and_repeats_what_changes_nothing(
    transport: Literal["streamable-http", "sse"],
) -> None:
    """Streamable HTTP: the next request gets 404. HTTP+SSE: the stream drops with the
    server, and the transport opens a new one (the server's ``retry`` delay)."""
    renewed: list[SessionRenewed] = []

    async def scenario() -> None:
        async with serving(Restartable()) as server:
            recovery = Recovery(on_renewed=renewed.append)
            url = server.url if transport == "streamable-http" else server.sse_url
            async with http_client(
                Client, url, mode="legacy", recovery=recovery, transport=transport
            ) as client:
                session = client.session
                assert isinstance(session, ClientSession)
                wire: Any = session.transport
                first_id = wire.session_id
                assert (
                    text(await client.call_tool(name="add", arguments={"label": "a"})) == "added a"
                )
                await client.subscribe(uri=URI)
                await server.restart()
                listed = await client.list_tools()  # 404, a new session, the list again
                assert [tool.name for tool in listed.tools] == ["add"]
                assert len(renewed) == 1 and session.renewals == 1
                event = renewed[0]
                assert event.lost == first_id and event.version == "2025-11-25"
                assert event.resubscribed == (URI,)
                assert wire.session_id not in (None, first_id)
                assert (
                    text(await client.call_tool(name="add", arguments={"label": "b"})) == "added b"
                )
                assert server.calls == ["a", "b"]

    run(scenario())


def test_a_tool_call_the_lost_session_failed_is_not_repeated_without_consent() -> None:
    async def scenario() -> None:
        async with serving(Restartable()) as server:
            async with http_client(Client, server.url, mode="legacy") as client:
                await client.call_tool(name="add", arguments={"label": "a"})
                await server.restart()
                with pytest.raises(SessionLost) as lost:
                    await client.call_tool(name="add", arguments={"label": "b"})
                assert lost.value.method == "tools/call"
                assert "was not sent again (Recovery.retry)" in str(lost.value)
                assert server.calls == ["a"]  # the new server never ran "b"
                assert (
                    text(await client.call_tool(name="add", arguments={"label": "c"})) == "added c"
                )
                assert server.calls == ["a", "c"]

    run(scenario())


def test_with_consent_a_tool_call_is_sent_again_on_the_new_session_once() -> None:
    async def scenario() -> None:
        async with serving(Restartable()) as server:
            recovery = Recovery(retry=SAFE_TO_RETRY | {"tools/call"})
            async with http_client(Client, server.url, mode="legacy", recovery=recovery) as client:
                await client.call_tool(name="add", arguments={"label": "a"})
                await server.restart()
                assert (
                    text(await client.call_tool(name="add", arguments={"label": "b"})) == "added b"
                )
                assert server.calls == ["a", "b"]

    run(scenario())


def test_a_session_the_server_evicted_when_idle_is_replaced_by_a_new_one() -> None:
    renewed: list[SessionRenewed] = []

    async def scenario() -> None:
        server = Restartable(no_get_stream, session_idle_timeout=0.3)
        async with serving(server):
            recovery = Recovery(on_renewed=renewed.append)
            async with http_client(Client, server.url, mode="legacy", recovery=recovery) as client:
                await client.call_tool(name="add", arguments={"label": "a"})
                started = time.monotonic()
                await asyncio.sleep(0.6)  # past the idle timeout
                read = await client.read_resource(uri=URI)
                assert read.contents[0].text == "memo"  # type: ignore[union-attr]
                assert len(renewed) == 1
                assert time.monotonic() - started < 5

    run(scenario())


def test_a_server_that_loses_every_new_session_is_given_up_on_after_max_renewals() -> None:
    """Every session forgotten at once (each request evicts): the client initializes
    again at most ``max_renewals`` times in a row, then says why it stopped."""

    async def scenario() -> None:
        server = Restartable(no_get_stream, session_idle_timeout=0.05)
        async with serving(server):

            async def slow_list(*_: Any) -> None:
                await asyncio.sleep(0.2)  # every session idles past its timeout meanwhile

            recovery = Recovery(max_renewals=2, on_renewed=slow_list)
            async with http_client(Client, server.url, mode="legacy", recovery=recovery) as client:
                await asyncio.sleep(0.2)
                with pytest.raises(ConnectionClosed, match=r"lost 2 sessions in a row"):
                    await client.list_tools()
                assert isinstance(client.session, ClientSession)
                assert client.session.renewals == 2

    run(scenario())


def test_recovery_refuses_a_bound_that_is_not_positive() -> None:
    with pytest.raises(ValueError, match="max_renewals must be positive"):
        Recovery(max_renewals=0)
