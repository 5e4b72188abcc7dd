"""A caller that gives up on a request cancels it at the server, in either era: cancelling
the task that awaits it, an ``asyncio`` timeout around it, the session's
``Limits.request_timeout`` or a request's own ``timeout=``. The server is sent
``notifications/cancelled`` naming the request and why (over stdio and in memory; over
Streamable HTTP a 2026-07-28 request is cancelled by closing its stream, see
``test_client_http``), its handler is cancelled, no answer comes, and the next call is
answered."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
import pytest

from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.runtime import App, RequestTimeout
from mcpgen.runtime.client import CLIENT_LIMITS, Mode
from support.app_scenarios import run
from support.recorded import Wire, recorded

MODES: list[Mode] = ["legacy", "auto"]
#: Short enough for a test, long enough for any loaded machine to send and read a frame.
TIMEOUT = 0.5


class Hanging:
    """An app whose ``hang`` runs until cancelled (saying it started, and how it ended),
    ``count`` reports progress and answers a number, and ``echo`` answers at once."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.stopped = asyncio.Event()
        self.seen_cancelled: list[bool] = []
        self.app = App("hanging", binding=stubs, shared=None, telemetry=False)

        @self.app.tool
        async def hang(ctx: stubs.Context) -> str:
            """Run until cancelled."""
            self.started.set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.seen_cancelled.append(ctx.cancelled)
                self.stopped.set()
                raise
            return "never"

        @self.app.tool
        async def count(upto: int, ctx: stubs.Context) -> int:
            """Count, reporting each number."""
            for n in range(1, upto + 1):
                await ctx.report_progress(n, upto)
            return upto

        @self.app.tool
        def echo(text: str) -> str:
            """The text back."""
            return text

    async def cancelled_at_the_server(self, wire: Wire, client: Any, reason: str) -> None:
        """The last ``tools/call`` was cancelled by a notification giving ``reason``, its
        handler saw it, no answer came for it, and the next call is answered."""
        await asyncio.wait_for(self.stopped.wait(), 5.0)
        assert self.seen_cancelled == [True]
        hung = wire.sent("tools/call")[-1]
        (cancel,) = wire.sent("notifications/cancelled")
        assert cancel["params"] == {"requestId": hung["id"], "reason": reason}
        echoed = await client.call_tool(name="echo", arguments={"text": "still here"})
        assert msgspec.to_builtins(echoed)["content"][0]["text"] == "still here"
        assert wire.answers_to(hung["id"]) == []


def cancel_the_task(client: Any, started: asyncio.Event) -> Awaitable[None]:
    async def give_up() -> None:
        call = asyncio.create_task(client.call_tool(name="hang"))
        await started.wait()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call

    return give_up()


def wait_for_a_while(client: Any, started: asyncio.Event) -> Awaitable[None]:
    async def give_up() -> None:
        with pytest.raises((TimeoutError, asyncio.TimeoutError)):  # asyncio's, not the session's
            await asyncio.wait_for(client.call_tool(name="hang"), TIMEOUT)
        assert started.is_set()

    return give_up()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("how", [cancel_the_task, wait_for_a_while], ids=["cancel", "wait_for"])
def test_giving_up_on_the_awaiting_task_cancels_the_handler_at_the_server(
    mode: Mode, how: Callable[[Any, asyncio.Event], Awaitable[None]]
) -> None:
    async def scenario() -> None:
        server = Hanging()
        async with recorded(server.app, mode) as (client, wire):
            await how(client, server.started)
            await server.cancelled_at_the_server(wire, client, "cancelled by sender")

    run(scenario())


@pytest.mark.parametrize("mode", MODES)
def test_the_sessions_request_timeout_cancels_at_the_server_saying_so(mode: Mode) -> None:
    async def scenario() -> None:
        server = Hanging()
        limits = CLIENT_LIMITS.replace(request_timeout=TIMEOUT)
        async with recorded(server.app, mode, limits=limits) as (client, wire):
            with pytest.raises(RequestTimeout) as late:
                await client.call_tool(name="hang")
            assert str(late.value) == (
                "the server did not answer tools/call within 0.5 s"
                " (Limits.request_timeout of ClientSession(limits=...))"
            )
            await server.cancelled_at_the_server(wire, client, "timed out after 0.5 s")

    run(scenario())


@pytest.mark.parametrize("mode", MODES)
def test_a_requests_own_timeout_takes_the_place_of_the_sessions(mode: Mode) -> None:
    async def scenario() -> None:
        server = Hanging()
        async with recorded(server.app, mode) as (client, wire):  # the default: 60 s
            session = client.session
            with pytest.raises(RequestTimeout) as late:
                await session.request("tools/call", {"name": "hang"}, timeout=TIMEOUT)
            assert isinstance(late.value, TimeoutError)
            assert str(late.value) == (
                "the server did not answer tools/call within 0.5 s (the caller's timeout)"
            )
            await server.cancelled_at_the_server(wire, client, "timed out after 0.5 s")
            heard: list[float] = []
            counted = await session.call_tool_as(
                int, "count", {"upto": 3}, progress=lambda n, *_: heard.append(n), timeout=5.0
            )
            assert counted == 3 and heard == [1, 2, 3]

    run(scenario())


@pytest.mark.parametrize("mode", MODES)
def test_the_typed_clients_methods_take_a_timeout_of_their_own(mode: Mode) -> None:
    async def scenario() -> None:
        server = Hanging()
        async with recorded(server.app, mode) as (client, wire):  # the session's: 60 s
            with pytest.raises(RequestTimeout) as late:
                await client.call_tool(name="hang", timeout=TIMEOUT)
            assert (late.value.method, late.value.seconds) == ("tools/call", TIMEOUT)
            assert late.value.setting == "the caller's timeout"
            await server.cancelled_at_the_server(wire, client, "timed out after 0.5 s")
            heard: list[float] = []
            counted = await client.call_tool(
                name="count",
                arguments={"upto": 2},
                progress=lambda n, *_: heard.append(n),
                timeout=5.0,
            )
            assert counted.structured_content == {"result": 2} and heard == [1, 2]

    run(scenario())


@pytest.mark.parametrize("mode", MODES)
def test_a_progress_callback_that_raises_is_logged_naming_its_request_which_goes_on(
    mode: Mode, caplog: pytest.LogCaptureFixture
) -> None:
    async def scenario() -> None:
        def clumsy(progress: float, total: float | None, message: str | None) -> None:
            raise ZeroDivisionError("a defect of the caller's")

        async with recorded(Hanging().app, mode) as (client, _):
            counted = await client.call_tool(name="count", arguments={"upto": 2}, progress=clumsy)
            assert counted.structured_content == {"result": 2}

    with caplog.at_level("ERROR"):
        run(scenario())
    failed = [r for r in caplog.records if "progress callback" in r.getMessage()]
    assert len(failed) == 2
    assert all(
        r.getMessage().startswith("the progress callback of tools/call request ") for r in failed
    )
    assert all(r.exc_info and r.exc_info[0] is ZeroDivisionError for r in failed)


@pytest.mark.parametrize("timeout", [0, -1.0, math.nan])
def test_a_timeout_that_is_no_positive_number_is_refused_before_anything_is_sent(
    timeout: float,
) -> None:
    async def scenario() -> None:
        async with recorded(Hanging().app) as (client, wire):
            session = client.session
            with pytest.raises(ValueError, match="timeout must be positive seconds"):
                await session.request("tools/call", {"name": "hang"}, timeout=timeout)
            with pytest.raises(ValueError, match="timeout must be positive seconds"):
                await session.call_tool_as(int, "count", {"upto": 1}, timeout=timeout)
            assert wire.sent("tools/call") == []
            assert await session.call_tool_as(int, "count", {"upto": 2}, timeout=5.0) == 2

    run(scenario())
