"""A request the peer never answers ends with an error that says so: which request, after
how many seconds, and the setting that sets the timeout. On the server a tool's question
to the client (elicitation here) times out after ``Limits.request_timeout``, is cancelled
at the client, and the tool's result says why; on the client a call the server never
answers times out after its own ``Limits.request_timeout``, and over HTTP the
transport's own timeout names itself. Each is followed by a request that works."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from mcpgen.generated.v2025_11_25 import client as legacy
from mcpgen.generated.v2025_11_25 import types as lt
from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.generated.v2026_07_28 import types as t
from mcpgen.runtime import INTERNAL_ERROR, App, Limits, McpError, RequestTimeout, Server
from mcpgen.runtime.client import CLIENT_LIMITS
from mcpgen.runtime.testing import connect
from mcpgen.runtime.client.session import Mode
from support.app_scenarios import plain, run

#: Short enough for a test, long enough for any loaded machine to send and read a frame.
TIMEOUT = 0.5


def form() -> t.ElicitRequestFormParams:
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    return t.ElicitRequestFormParams(
        message="ok?", requested_schema=t.convert(schema, t.ElicitRequestFormParamsRequestedSchema)
    )


class Silent(legacy.ClientHandlers):
    """A client that never answers an elicitation (until the server cancels it)."""

    def __init__(self) -> None:
        self.cancelled = asyncio.Event()

    async def elicit(self, params: lt.ElicitRequestParams, ctx: Any) -> lt.ElicitResult:
        try:
            await asyncio.Event().wait()  # nobody is there to answer
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        raise AssertionError("unreachable")


asking = App("asking", binding=stubs, limits=Limits(request_timeout=TIMEOUT))


@asking.tool
async def confirm(ctx: stubs.Context) -> str:
    """Ask the user to confirm."""
    answer = await ctx.elicit(form())
    return str(answer.action)


@asking.tool
def echo(text: str) -> str:
    return text


def test_a_tool_whose_question_the_client_never_answers_says_it_timed_out() -> None:
    silent = Silent()

    async def scenario() -> None:
        options: dict[str, Any] = {"mode": "legacy", "client_class": legacy.Client}
        async with asking.test_client(handlers=silent, **options) as client:
            result = plain(await client.call_tool(name="confirm"))
            assert result["isError"] is True
            assert result["content"] == [
                {
                    "type": "text",
                    "text": "Tool 'confirm' gave up: the client did not answer "
                    "elicitation/create within 0.5 s (Limits.request_timeout)",
                }
            ]
            # the server cancelled its request at the client
            await asyncio.wait_for(silent.cancelled.wait(), 5.0)
            said = plain(await client.call_tool(name="echo", arguments={"text": "still here"}))
            assert said["content"] == [{"type": "text", "text": "still here"}]

    run(scenario())


class Handwritten(stubs.ServerHandlers):
    """A server of handwritten handlers: ``ask`` elicits, anything else answers at once."""

    async def call_tool(
        self, params: t.CallToolRequestParams, ctx: stubs.Context
    ) -> t.InputRequiredResultOrCallToolResult:
        if params.name == "ask":
            answer = await ctx.elicit(form())
            return t.CallToolResult(content=[t.TextContent(text=str(answer.action))])
        return t.CallToolResult(content=[t.TextContent(text="quick")])


def test_a_handler_whose_request_times_out_answers_with_an_error_naming_the_timeout() -> None:
    server = Server(Handwritten(), name="handwritten", limits=Limits(request_timeout=TIMEOUT))

    async def scenario() -> None:
        options: dict[str, Any] = {"mode": "legacy", "client_class": legacy.Client}
        async with connect(server, handlers=Silent(), **options) as client:
            with pytest.raises(McpError) as failed:
                await client.call_tool(name="ask")
            assert failed.value.code == INTERNAL_ERROR
            assert failed.value.message == (
                "the client did not answer elicitation/create within 0.5 s"
                " (Limits.request_timeout)"
            )
            assert plain(await client.call_tool(name="other"))["content"][0]["text"] == "quick"

    run(scenario())


class Stalling(stubs.ServerHandlers):
    """``stall`` never answers (until cancelled); anything else answers at once."""

    async def call_tool(
        self, params: t.CallToolRequestParams, ctx: stubs.Context
    ) -> t.InputRequiredResultOrCallToolResult:
        if params.name == "stall":
            await asyncio.Event().wait()
        return t.CallToolResult(content=[t.TextContent(text="quick")])


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_a_client_whose_request_goes_unanswered_names_its_timeout(mode: Mode) -> None:
    server = Server(Stalling(), name="stalling")

    async def scenario() -> None:
        async with connect(
            server, mode=mode, limits=CLIENT_LIMITS.replace(request_timeout=TIMEOUT)
        ) as client:
            with pytest.raises(RequestTimeout) as late:
                await client.call_tool(name="stall")
            assert isinstance(late.value, TimeoutError)
            assert isinstance(late.value, asyncio.TimeoutError)
            assert str(late.value) == (
                "the server did not answer tools/call within 0.5 s"
                " (Limits.request_timeout of ClientSession(limits=...))"
            )
            assert plain(await client.call_tool(name="other"))["content"][0]["text"] == "quick"

    run(scenario())


def test_an_http_request_the_server_never_answers_names_the_transports_timeout() -> None:
    """httpx's own timeouts carry no message: the request's error names the timeout."""
    from mcpgen.runtime.client.http import HttpClientTransport

    async def scenario() -> None:
        accepted: list[asyncio.StreamWriter] = []

        async def mute(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            accepted.append(writer)  # reads nothing, answers nothing

        listener = await asyncio.start_server(mute, "127.0.0.1", 0)
        port = listener.sockets[0].getsockname()[1]
        transport = HttpClientTransport(f"http://127.0.0.1:{port}/mcp", timeout=TIMEOUT)
        try:
            await transport.send(b'{"jsonrpc":"2.0","id":7,"method":"ping"}')
            frame = await asyncio.wait_for(transport.receive(), 10.0)
        finally:
            await transport.close()
            for writer in accepted:
                writer.close()
            listener.close()
            await listener.wait_closed()
        assert frame is not None
        answer = json.loads(frame)
        assert answer["id"] == 7 and answer["error"]["code"] == INTERNAL_ERROR
        assert answer["error"]["message"] == (
            "HTTP request failed: ReadTimeout: the server sent nothing within the HTTP"
            " client's timeout (HttpClientTransport(timeout=...))"
        )

    run(scenario())
