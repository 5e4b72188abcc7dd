"""A client's bounds live in its ``Limits`` like a server's: a 2026-07-28 server that keeps
answering ``input_required`` gets at most ``max_input_rounds`` rounds from the client, which
then fails the request with -32600 naming the count, and the session serves the next call.
A request that needs fewer rounds than the limit is answered."""

from __future__ import annotations

import pytest

from mcpgen.generated.v2026_07_28 import client as c
from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.generated.v2026_07_28 import types as t
from mcpgen.runtime import INVALID_REQUEST, App, McpError
from mcpgen.runtime.client import CLIENT_LIMITS
from mcpgen.runtime.testing import connect
from support.app_scenarios import plain, run

asking = App("asking", binding=stubs)


def form(n: int) -> t.ElicitRequestFormParams:
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
    return t.ElicitRequestFormParams(
        message=f"question {n}?",
        requested_schema=t.convert(schema, t.ElicitRequestFormParamsRequestedSchema),
    )


@asking.tool
async def questions(count: int, ctx: stubs.Context) -> str:
    """Ask ``count`` questions, one per input round."""
    for n in range(count):
        await ctx.elicit(form(n), key=f"q{n}")
    return f"{count} answered"


class Answering(c.ClientHandlers):
    def __init__(self) -> None:
        self.asked = 0

    async def elicit(self, params: t.ElicitRequestParams, ctx: c.RequestContext) -> t.ElicitResult:
        self.asked += 1
        return t.ElicitResult(action="accept", content={"ok": True})


def test_a_server_asking_for_input_forever_is_given_max_input_rounds_then_refused() -> None:
    handlers = Answering()
    limits = CLIENT_LIMITS.replace(max_input_rounds=3)

    async def scenario() -> None:
        async with connect(asking, mode="modern", handlers=handlers, limits=limits) as client:
            with pytest.raises(McpError) as refused:
                await client.call_tool(name="questions", arguments={"count": 1000})
            assert refused.value.code == INVALID_REQUEST
            assert str(refused.value.message) == "tools/call still needs input after 3 rounds"
            assert handlers.asked == 3  # one question per round, then the client gave up
            answered = plain(await client.call_tool(name="questions", arguments={"count": 3}))
            assert answered["content"] == [{"type": "text", "text": "3 answered"}]

    run(scenario())


def test_the_default_client_limits_answer_eight_rounds_and_refuse_the_ninth() -> None:
    assert CLIENT_LIMITS.max_input_rounds == 8

    async def scenario() -> None:
        async with connect(asking, mode="modern", handlers=Answering()) as client:
            answered = plain(await client.call_tool(name="questions", arguments={"count": 8}))
            assert answered["content"] == [{"type": "text", "text": "8 answered"}]
            with pytest.raises(McpError, match="after 8 rounds"):
                await client.call_tool(name="questions", arguments={"count": 9})

    run(scenario())
