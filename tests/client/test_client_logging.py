"""``await session.set_logging_level(level)`` asks for the server's log messages at ``level``
and above in either era: ``logging/setLevel`` to a legacy server (none to one that declares
no ``logging``), the ``_meta`` log level of each later request to a 2026-07-28 server
(which has no ``logging/setLevel``). The handlers' ``on_logging_message`` hears what passes,
in order, before the call's result; an unknown level is refused before anything is sent;
a server process started again, or a legacy session that replaces one the server lost, is
asked for the same level."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import pytest

from mcpgen.generated.v2026_07_28 import client as c
from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.generated.v2026_07_28 import types as t
from mcpgen.runtime import App, Server
from mcpgen.runtime.aio.memory import MemoryTransport, memory_pair
from mcpgen.runtime.client import ClientSession, Mode, SessionLost
from support.app_scenarios import run
from support.recorded import recorded

MODES: list[Mode] = ["legacy", "auto"]
LEVEL = "io.modelcontextprotocol/logLevel"


class Logs(c.ClientHandlers):
    """A client that keeps the log messages it hears, as (level, data)."""

    def __init__(self) -> None:
        self.heard: list[tuple[str, Any]] = []

    async def on_logging_message(self, params: t.LoggingMessageNotificationParams) -> None:
        self.heard.append((str(params.level), params.data))


def chatty() -> App:
    """An app whose ``work`` logs once at each of four levels."""
    app = App("chatty", binding=stubs, shared=None, telemetry=False)

    @app.tool
    async def work(ctx: stubs.Context) -> str:
        """Log at debug, info, warning and error."""
        for level in ("debug", "info", "warning", "error"):
            await ctx.log(level, f"{level} message", logger="work")  # type: ignore[arg-type]
        return "worked"

    return app


EVERY = [(level, f"{level} message") for level in ("debug", "info", "warning", "error")]


def text_of(result: Any) -> str:
    return str(msgspec.to_builtins(result)["content"][0]["text"])


@pytest.mark.parametrize("mode", MODES)
def test_a_level_passes_the_messages_at_and_above_it_in_order_before_the_result(
    mode: Mode,
) -> None:
    async def scenario() -> None:
        logs = Logs()
        async with recorded(chatty(), mode, logs) as (client, wire):
            await client.session.set_logging_level("warning")
            assert text_of(await client.call_tool(name="work")) == "worked"
            assert logs.heard == EVERY[2:]
            (call,) = wire.sent("tools/call")
            set_levels = wire.sent("logging/setLevel")
            if mode == "legacy":  # once, for the session
                assert [m["params"] for m in set_levels] == [{"level": "warning"}]
                assert LEVEL not in call["params"].get("_meta", {})
            else:  # the 2026-07-28 schema has no logging/setLevel: each request says it
                assert set_levels == []
                assert call["params"]["_meta"][LEVEL] == "warning"
            await client.session.set_logging_level("debug")  # changed at any time
            await client.call_tool(name="work")
            assert logs.heard == EVERY[2:] + EVERY

    run(scenario())


@pytest.mark.parametrize("mode", MODES)
def test_without_a_level_a_2026_server_sends_none_and_a_legacy_one_chooses(mode: Mode) -> None:
    async def scenario() -> None:
        logs = Logs()
        async with recorded(chatty(), mode, logs) as (client, _):
            assert text_of(await client.call_tool(name="work")) == "worked"
            # the 2025-11-25 spec leaves it to the server; ours sends every message
            assert logs.heard == (EVERY if mode == "legacy" else [])

    run(scenario())


@pytest.mark.parametrize("level", ["verbose", "", "WARNING"])
def test_an_unknown_level_is_refused_before_anything_is_sent(level: str) -> None:
    async def scenario() -> None:
        logs = Logs()
        async with recorded(chatty(), "auto", logs) as (client, wire):
            with pytest.raises(ValueError, match=f"unknown log level {level!r}: one of debug"):
                await client.session.set_logging_level(level)
            await client.call_tool(name="work")
            assert logs.heard == []  # nothing asked for
            assert LEVEL not in wire.sent("tools/call")[0]["params"]["_meta"]
            await client.session.set_logging_level("error")
            await client.call_tool(name="work")
            assert logs.heard == EVERY[3:]

    run(scenario())


class Silent(stubs.ServerHandlers):
    """A server of one tool that declares no ``logging``."""

    async def call_tool(
        self, params: t.CallToolRequestParams, ctx: stubs.Context
    ) -> t.InputRequiredResultOrCallToolResult:
        await ctx.log("error", "never sent")
        return t.CallToolResult(content=[t.TextContent(text="quiet")])


def test_a_legacy_server_that_declares_no_logging_is_not_asked() -> None:
    async def scenario() -> None:
        logs = Logs()
        server = Server(Silent(), name="silent", logging=False)
        async with recorded(server, "legacy", logs) as (client, wire):
            assert "logging" not in client.session.server_capabilities
            await client.session.set_logging_level("debug")
            assert text_of(await client.call_tool(name="any")) == "quiet"
            assert wire.sent("logging/setLevel") == [] and logs.heard == []

    run(scenario())


class Restartable:
    """An app served in memory that can be ended (as a server process exits) and is
    started again by the session's ``reopen``, as ``stdio_client(restart=...)`` does."""

    def __init__(self) -> None:
        self.app = chatty()
        self.ends: list[MemoryTransport] = []
        self.serving: list[asyncio.Task[None]] = []

    async def start(self) -> MemoryTransport:
        client_end, server_end = memory_pair()
        self.ends.append(server_end)
        self.serving.append(asyncio.create_task(self.app.server.serve(server_end)))
        return client_end

    async def end(self) -> None:
        await self.ends[-1].close()
        await asyncio.wait_for(self.serving[-1], 5.0)


@pytest.mark.parametrize("mode", MODES)
def test_a_server_started_again_is_asked_for_the_same_level(mode: Mode) -> None:
    async def scenario() -> None:
        logs = Logs()
        server = Restartable()
        session = ClientSession(c.Client.__binding__, logs)
        session.reopen = server.start
        try:
            await session.connect(await server.start(), mode, probe_timeout=1.0)
            client = c.Client(session)
            await session.set_logging_level("error")
            await server.end()
            await client.list_tools()  # safe to send again: to the new server
            assert len(server.serving) == 2
            assert text_of(await client.call_tool(name="work")) == "worked"
            assert logs.heard == EVERY[3:]
            await server.end()
            with pytest.raises(SessionLost):  # a call the end cut off is not sent again
                await client.call_tool(name="work")
            assert text_of(await client.call_tool(name="work")) == "worked"
            assert logs.heard == EVERY[3:] * 2
        finally:
            await session.close()
            for end in server.ends:
                await end.close()

    run(scenario())


class Forgetful:
    """A transport to ``Restartable`` whose server forgets the legacy session when told
    (as an HTTP server that restarted answers 404): ``sessions_lost`` counts the losses,
    as the HTTP transport's does, and a new server takes the messages that follow."""

    def __init__(self, server: Restartable) -> None:
        self.server = server
        self.sessions_lost = 0
        self.lost_session_id = "forgotten"
        self.inner: MemoryTransport | None = None

    async def open(self) -> Forgetful:
        self.inner = await self.server.start()
        return self

    async def receive(self) -> bytes | None:
        while True:
            inner = self.inner
            assert inner is not None
            frame = await inner.receive()
            if frame is not None or inner is self.inner:
                return frame  # the end of a forgotten session's stream is not the end

    async def send(
        self, data: bytes, related: Any = None, final: bool = False, status: Any = None
    ) -> None:
        assert self.inner is not None
        await self.inner.send(data, related, final, status)

    async def forget(self) -> None:
        old = self.inner
        await self.open()
        self.sessions_lost += 1
        assert old is not None
        await old.close()

    async def close(self) -> None:
        if self.inner is not None:
            await self.inner.close()


def test_a_legacy_session_renewed_after_the_server_lost_it_is_asked_for_the_same_level() -> None:
    async def scenario() -> None:
        logs = Logs()
        server = Restartable()
        transport = await Forgetful(server).open()
        session = ClientSession(c.Client.__binding__, logs)
        try:
            await session.connect(transport, "legacy")
            client = c.Client(session)
            await session.set_logging_level("error")
            await transport.forget()
            assert text_of(await client.call_tool(name="work")) == "worked"
            assert session.renewals == 1 and len(server.serving) == 2
            assert logs.heard == EVERY[3:]
        finally:
            await session.close()
            for end in server.ends:
                await end.close()

    run(scenario())
