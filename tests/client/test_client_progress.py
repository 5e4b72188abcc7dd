"""A caller hears a long call's progress through ``progress=``, in either era: the request
carries a progress token in its ``_meta`` only when a callback is given, each report
reaches the callback (plain or async) in the order the server sent it and before the
result, and a callback that fails loses the caller nothing."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import pytest

from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.runtime import App
from mcpgen.runtime.client import Mode
from support.app_scenarios import run
from support.recorded import recorded

MODES: list[Mode] = ["legacy", "auto"]
Report = tuple[float, "float | None", "str | None"]


def worker() -> App:
    """An app whose ``crunch`` reports each of its steps, and ``echo`` answers at once."""
    app = App("worker", binding=stubs, shared=None, telemetry=False)

    @app.tool
    async def crunch(steps: int, ctx: stubs.Context) -> str:
        """Work in steps, reporting each."""
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step} of {steps}")
        await ctx.report_progress(steps + 0.5)  # no total, no message
        return f"crunched {steps}"

    @app.tool
    def echo(text: str) -> str:
        """The text back."""
        return text

    return app


def text_of(result: Any) -> str:
    return str(msgspec.to_builtins(result)["content"][0]["text"])


EXPECTED: list[Report] = [
    (1, 3, "step 1 of 3"),
    (2, 3, "step 2 of 3"),
    (3, 3, "step 3 of 3"),
    (3.5, None, None),
]


@pytest.mark.parametrize("mode", MODES)
def test_a_progress_callback_hears_each_report_in_order_before_the_result(mode: Mode) -> None:
    async def scenario() -> None:
        heard: list[Report] = []
        async with recorded(worker(), mode) as (client, wire):
            result = await client.call_tool(
                name="crunch",
                arguments={"steps": 3},
                progress=lambda done, total, message: heard.append((done, total, message)),
            )
            assert text_of(result) == "crunched 3"
            assert heard == EXPECTED  # all of them, before the call returned
            (call,) = wire.sent("tools/call")
            token = call["params"]["_meta"]["progressToken"]
            reports = [m for m in wire.to_client if m.get("method") == "notifications/progress"]
            assert [m["params"]["progressToken"] for m in reports] == [token] * 4
            assert client.session.era == ("legacy" if mode == "legacy" else "modern")

    run(scenario())


@pytest.mark.parametrize("mode", MODES)
def test_an_async_progress_callback_is_awaited_report_by_report(mode: Mode) -> None:
    async def scenario() -> None:
        heard: list[Report] = []

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            await asyncio.sleep(0)  # lets anything else run: the next report still waits
            heard.append((done, total, message))

        async with recorded(worker(), mode) as (client, _):
            result = await client.call_tool(
                name="crunch", arguments={"steps": 3}, progress=on_progress
            )
            assert text_of(result) == "crunched 3"
            assert heard == EXPECTED

    run(scenario())


@pytest.mark.parametrize("mode", MODES)
def test_a_call_without_a_callback_asks_for_no_progress(mode: Mode) -> None:
    async def scenario() -> None:
        async with recorded(worker(), mode) as (client, wire):
            assert text_of(await client.call_tool(name="crunch", arguments={"steps": 2}))
            (call,) = wire.sent("tools/call")
            assert "progressToken" not in call["params"].get("_meta", {})
            assert not [m for m in wire.to_client if m.get("method") == "notifications/progress"]

    run(scenario())


@pytest.mark.parametrize("mode", MODES)
def test_a_progress_callback_that_fails_loses_the_caller_nothing(mode: Mode) -> None:
    async def scenario() -> None:
        def broken(done: float, total: float | None, message: str | None) -> None:
            raise RuntimeError("the progress bar fell over")

        async with recorded(worker(), mode) as (client, _):
            failed = await client.call_tool(name="crunch", arguments={"steps": 3}, progress=broken)
            assert text_of(failed) == "crunched 3"
            heard: list[Report] = []
            result = await client.call_tool(
                name="crunch",
                arguments={"steps": 3},
                progress=lambda *report: heard.append(report),
            )
            assert text_of(result) == "crunched 3" and heard == EXPECTED

    run(scenario())
