"""Cancellation and progress: the events ``notifications/cancelled`` and
``notifications/progress`` become (sans-IO), then what a running session does with them
(in memory): a cancelled handler is stopped and never answered, progress carries the
request's token and comes before the answer, a client that gives up cancels at the server.
The stdio suite proves the same over a real pipe."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcpgen.generated.v2026_07_28 import server as s
from mcpgen.generated.v2026_07_28 import types as t
from mcpgen.runtime import Server
from mcpgen.runtime.client import CLIENT_LIMITS
from mcpgen.runtime.testing import connect
from mcpgen.runtime.core.events import Cancel, Progress
from support.sansio import client, feed, handshake, notification, request, run, server, serving

CANCELS = [
    pytest.param({"requestId": 5, "reason": "user"}, [Cancel(5, "user")], id="integer-id"),
    pytest.param({"requestId": "abc"}, [Cancel("abc", None)], id="string-id-no-reason"),
    pytest.param({"reason": "no id"}, [], id="no-id"),  # optional in the 2025-11-25 schema
    pytest.param({"requestId": {}}, [], id="malformed-id"),
    pytest.param({"requestId": 1.5}, [], id="float-id"),
    pytest.param(None, [], id="no-params"),
]  # fmt: skip


@pytest.mark.parametrize(("params", "events"), CANCELS)
def test_a_cancel_names_the_request_or_is_dropped(params: Any, events: list[Any]) -> None:
    for conn in (server(), client()):  # either side; with or without a session
        assert feed(conn, notification("notifications/cancelled", params)) == events
    conn = server()
    handshake(conn)
    assert feed(conn, notification("notifications/cancelled", params)) == events


PROGRESS = [
    pytest.param({"progressToken": "t", "progress": 1}, [Progress("t", 1, None, None)], id="minimal"),
    pytest.param({"progressToken": 7, "progress": 0.5, "total": 2.5, "message": "half"}, [Progress(7, 0.5, 2.5, "half")], id="all-fields"),
    pytest.param({"progressToken": "t"}, [], id="no-progress"),
    pytest.param({"progressToken": "t", "progress": "x"}, [], id="progress-not-a-number"),
    pytest.param({"progress": 1}, [], id="no-token"),
]  # fmt: skip


@pytest.mark.parametrize(("params", "events"), PROGRESS)
def test_progress_carries_token_amount_total_and_message_or_is_dropped(
    params: Any, events: list[Any]
) -> None:
    for conn in (server(), client()):
        assert feed(conn, notification("notifications/progress", params)) == events


# -- in a running session --------------------------------------------------------------------


class Slow(s.ServerHandlers):
    """``wait`` runs until cancelled (recording it), ``steps`` reports progress."""

    def __init__(self) -> None:
        self.events: list[str] = []

    async def call_tool(
        self, params: t.CallToolRequestParams, ctx: s.Context
    ) -> t.InputRequiredResultOrCallToolResult:
        if params.name == "wait":
            self.events.append("started")
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                self.events.append(f"cancelled:{ctx.cancelled}")
                raise
        steps = 3 if params.name == "steps" else 0
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step}")
        return t.CallToolResult(content=[t.TextContent(text=params.name)])


def call(request_id: Any, name: str, token: Any = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name}
    if token is not None:
        params["_meta"] = {"progressToken": token}
    return request(request_id, "tools/call", params)


def test_a_cancelled_request_is_stopped_and_never_answered() -> None:
    slow = Slow()

    async def scenario() -> list[Any]:
        async with serving(slow) as peer:
            await peer.handshake()
            await peer.send(call("doomed", "wait"))
            await asyncio.sleep(0.01)
            await peer.send(notification("notifications/cancelled", {"requestId": "doomed"}))
            await peer.send(call("after", "quick"))
            assert (await peer.answer_to("after"))["result"]["content"][0]["text"] == "quick"
            return peer.backlog + await peer.quiet(0.1)

    late = run(scenario())
    assert slow.events == ["started", "cancelled:True"]
    assert not [m for m in late if m.get("id") == "doomed"]


@pytest.mark.parametrize("token", ["tok-1", 7])
def test_progress_carries_the_request_token_and_comes_before_the_answer(token: Any) -> None:
    async def scenario() -> tuple[list[Any], list[Any]]:
        async with serving(Slow()) as peer:
            await peer.handshake()
            await peer.send(call(1, "steps", token))
            answered = await peer.answer_to(1)
            assert answered["result"]["content"][0]["text"] == "steps"
            with_token, peer.backlog = peer.backlog, []
            await peer.send(call(2, "steps"))  # no token: no progress
            await peer.answer_to(2)
            return with_token, peer.backlog

    with_token, without = run(scenario())
    assert [m["method"] for m in with_token] == ["notifications/progress"] * 3
    assert [m["params"] for m in with_token] == [
        {"progressToken": token, "progress": n, "total": 3, "message": f"step {n}"}
        for n in (1, 2, 3)
    ]
    assert without == []


def test_cancelling_one_request_of_a_batch_sends_the_others_alone() -> None:
    async def scenario() -> Any:
        async with serving(Slow(), versions=["2025-03-26"]) as peer:
            await peer.handshake("2025-03-26")
            await peer.send([call("slow", "wait"), request("quick", "ping")])
            await asyncio.sleep(0.01)
            await peer.send(notification("notifications/cancelled", {"requestId": "slow"}))
            return await peer.read()

    assert run(scenario()) == [{"jsonrpc": "2.0", "id": "quick", "result": {}}]


def test_a_client_that_gives_up_cancels_the_request_at_the_server() -> None:
    slow = Slow()

    async def scenario() -> None:
        async with connect(
            Server(slow, name="slow"), limits=CLIENT_LIMITS.replace(request_timeout=0.05)
        ) as client:
            with pytest.raises((TimeoutError, asyncio.TimeoutError)):
                await client.call_tool(name="wait")
            for _ in range(100):  # the cancel reaches the handler a moment later
                if len(slow.events) > 1:
                    break
                await asyncio.sleep(0.01)

    run(scenario())
    assert slow.events == ["started", "cancelled:True"]
