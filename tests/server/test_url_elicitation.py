"""URL-mode elicitation and tool-enabled sampling as a server sends them, in both eras.

A raw JSON-RPC client over in-memory transports plays a 2025-11-25, 2025-06-18 or
2026-07-28 client, and every message the server sends it is checked against that version's
official schema (``support.wire_oracle``): ``ctx.elicit_url`` is a request naming the
elicitation (2025-11-25) or an input request without the name (2026-07-28);
``ctx.elicitation_complete`` notifies only a 2025-11-25 client; a handler's
``UrlElicitationRequired`` is -32042 for 2025-11-25, an input request for 2026-07-28 and a
refusal naming ``elicitation.url`` for a client that cannot be sent to a URL. What a client
did not declare (URL mode, form mode, sampling with tools) is refused before anything is
sent to it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.generated.v2026_07_28 import types as t
from mcpgen.runtime import App
from mcpgen.runtime.aio.memory import memory_pair
from mcpgen.runtime.core.errors import MISSING_CLIENT_CAPABILITY, UrlElicitationRequired
from support.checkout import ROOT
from support.messages import notification, request
from support.sansio import RawPeer, initialize, modern, run
from support.wire_oracle import Oracle, Wire

ORACLE = Oracle(ROOT / "schema")
URL = "https://auth.example.com/connect?session=abc"
URL_ONLY = {"elicitation": {"url": {}}}
BOTH_MODES = {"elicitation": {"form": {}, "url": {}}}
FORM = {"type": "object", "properties": {"name": {"type": "string"}}}

app = App("url-elicitation", binding=stubs)
#: What the handlers saw: elicitation answers and whether a completion was sent.
SEEN: list[Any] = []


@app.tool
async def connect_account(ctx: stubs.Context) -> str:
    """Send the user to the account page, then say that it is done."""
    answer = await ctx.elicit_url("Connect your account", URL, elicitation_id="acct-1")
    told = await ctx.elicitation_complete("acct-1")
    SEEN.append((answer.action, told))
    return f"{answer.action} told={told}"


@app.tool
async def needs_account() -> str:
    """Refuse to go on until the user visited the account page (-32042 in 2025-11-25)."""
    raise UrlElicitationRequired(
        [{"message": "Connect your account first", "url": URL, "elicitationId": "acct-2"}]
    )


@app.tool
async def ask_name(ctx: stubs.Context) -> str:
    """A form elicitation."""
    form = t.ElicitRequestFormParams(
        message="Name?", requested_schema=t.convert(FORM, t.ElicitRequestFormParamsRequestedSchema)
    )
    answer = await ctx.elicit(form)
    return str((answer.content or {}).get("name"))


@app.tool
async def sample_with_tools(ctx: stubs.Context) -> str:
    """Sampling that offers the model a tool."""
    question = t.SamplingMessage(role="user", content=t.TextContent(text="Weather?"))
    weather = t.Tool(name="weather", input_schema=t.ToolInputSchema(type="object"))
    params = t.CreateMessageRequestParams(
        messages=[question],
        max_tokens=10,
        tools=[weather],
        tool_choice=t.ToolChoice(mode="auto"),
    )
    said = await ctx.create_message(params)
    return str(said.model)


class Judged(RawPeer):
    """A raw client whose traffic goes through the wire oracle."""

    def __init__(self, end: Any, wire: Wire) -> None:
        super().__init__(end)
        self.wire = wire

    async def send(self, message: Any) -> None:
        self.wire.from_client(json.dumps(message).encode())
        await super().send(message)

    async def read(self, timeout: float = 2.0) -> Any:
        message = await super().read(timeout)
        self.wire.from_server(json.dumps(message).encode())
        return message


@asynccontextmanager
async def raw_client(
    version: str, capabilities: dict[str, Any] | None = None
) -> AsyncIterator[Judged]:
    """A raw client of ``app`` at ``version`` (a legacy one has done its handshake); on
    leaving, every message the server sent must have been valid at that version."""
    client_end, server_end = memory_pair()
    serving = asyncio.create_task(app.server.serve(server_end))
    wire = Wire(f"raw {version}", ORACLE)
    peer = Judged(client_end, wire)
    try:
        if version != "2026-07-28":
            await peer.send(initialize(0, version, capabilities))
            assert "result" in await peer.answer_to(0)
            await peer.send(notification("notifications/initialized"))
        yield peer
    finally:
        await client_end.close()
        await asyncio.wait_for(serving, 5.0)
    assert wire.sent, "the server sent nothing"
    invalid = [(s.method, s.error) for s in wire.sent if s.error is not None]
    assert invalid == []


def call(request_id: int, name: str) -> dict[str, Any]:
    return request(request_id, "tools/call", {"name": name, "arguments": {}})


def modern_call(request_id: int, name: str, capabilities: dict[str, Any], **extra: Any) -> Any:
    return modern(
        request_id,
        "tools/call",
        {"name": name, "arguments": {}, **extra},
        capabilities=capabilities,
    )


def text_of(answer: dict[str, Any]) -> str:
    return answer["result"]["content"][0]["text"]


def test_elicit_url_asks_a_2025_11_25_client_and_notifies_it_of_the_completion() -> None:
    """Legacy: ``elicitation/create`` in URL mode naming the elicitation, answered by the
    client; then ``notifications/elicitation/complete`` for that name; all schema-valid."""

    async def scenario() -> None:
        async with raw_client("2025-11-25", BOTH_MODES) as peer:
            await peer.send(call(1, "connect_account"))
            asked = await peer.read()
            assert asked["method"] == "elicitation/create"
            assert asked["params"] == {
                "mode": "url",
                "message": "Connect your account",
                "url": URL,
                "elicitationId": "acct-1",
            }
            await peer.send({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept"}})
            done = await peer.read()
            assert done == {
                "jsonrpc": "2.0",
                "method": "notifications/elicitation/complete",
                "params": {"elicitationId": "acct-1"},
            }
            assert text_of(await peer.answer_to(1)) == "accept told=True"

    run(scenario())


def test_elicit_url_without_a_name_gets_one_for_a_2025_11_25_client() -> None:
    """The 2025-11-25 schema requires ``elicitationId``: one is made when none was given."""

    no_name = App("unnamed", binding=stubs)

    @no_name.tool
    async def go(ctx: stubs.Context) -> str:
        return (await ctx.elicit_url("Go there", URL)).action

    async def scenario() -> None:
        client_end, server_end = memory_pair()
        serving = asyncio.create_task(no_name.server.serve(server_end))
        peer = RawPeer(client_end)
        await peer.send(initialize(0, "2025-11-25", URL_ONLY))
        await peer.answer_to(0)
        await peer.send(notification("notifications/initialized"))
        await peer.send(call(1, "go"))
        asked = await peer.read()
        name = asked["params"]["elicitationId"]
        assert isinstance(name, str) and len(name) >= 16
        await peer.send({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "decline"}})
        assert text_of(await peer.answer_to(1)) == "decline"
        await client_end.close()
        await asyncio.wait_for(serving, 5.0)

    run(scenario())


def test_elicit_url_is_an_input_request_without_a_name_for_a_2026_client() -> None:
    """Modern: ``input_required`` asking ``elicitation/create`` in URL mode, with no
    ``elicitationId`` (2026-07-28 has none); the retry with the answer completes the call,
    and no completion notification is sent (``elicitation_complete`` answers False)."""

    async def scenario() -> None:
        async with raw_client("2026-07-28") as peer:
            await peer.send(modern_call(1, "connect_account", URL_ONLY))
            first = (await peer.answer_to(1))["result"]
            assert first["resultType"] == "input_required"
            ((key, asked),) = first["inputRequests"].items()
            assert asked == {
                "method": "elicitation/create",
                "params": {"mode": "url", "message": "Connect your account", "url": URL},
            }
            retry = {"inputResponses": {key: {"action": "accept"}}}
            retry["requestState"] = first["requestState"]
            await peer.send(modern_call(2, "connect_account", URL_ONLY, **retry))
            assert text_of(await peer.answer_to(2)) == "accept told=False"
            assert await peer.quiet(0.05) == []

    run(scenario())


@pytest.mark.parametrize(
    "version,capabilities",
    [
        ("2025-11-25", {"elicitation": {}}),  # form only
        ("2025-11-25", {"elicitation": {"form": {}}}),
        ("2025-06-18", URL_ONLY),  # a version without URL mode
        ("2026-07-28", {"elicitation": {"form": {}}}),
    ],
)
def test_elicit_url_is_refused_unless_the_client_takes_url_mode(
    version: str, capabilities: dict[str, Any]
) -> None:
    """Nothing is sent to a client that did not declare ``elicitation.url`` (or whose
    version has no URL mode): the handler's call fails with MissingRequiredClientCapability
    naming what is required."""

    async def scenario() -> None:
        async with raw_client(version, capabilities) as peer:
            if version == "2026-07-28":
                await peer.send(modern_call(1, "connect_account", capabilities))
            else:
                await peer.send(call(1, "connect_account"))
            error = (await peer.answer_to(1))["error"]
            assert peer.backlog == []  # no elicitation/create reached the client
            assert error["code"] == MISSING_CLIENT_CAPABILITY
            assert error["data"] == {"requiredCapabilities": {"elicitation": {"url": {}}}}
            assert "elicitation.url" in error["message"]
            if version == "2025-06-18":
                assert "protocol 2025-06-18 does not have" in error["message"]

    run(scenario())


def test_a_form_is_refused_to_a_client_that_declared_url_mode_only() -> None:
    """``elicitation: {url: {}}`` takes no forms (2025-11-25: an empty object means form)."""

    async def scenario() -> None:
        async with raw_client("2025-11-25", URL_ONLY) as peer:
            await peer.send(call(1, "ask_name"))
            error = (await peer.answer_to(1))["error"]
            assert peer.backlog == []
            assert error["code"] == MISSING_CLIENT_CAPABILITY
            assert error["data"] == {"requiredCapabilities": {"elicitation": {"form": {}}}}

    run(scenario())


def test_url_elicitation_required_is_minus_32042_for_a_2025_11_25_client() -> None:
    """The error carries the elicitations in URL mode; it validates as the schema's
    ``URLElicitationRequiredError``."""

    async def scenario() -> None:
        async with raw_client("2025-11-25", BOTH_MODES) as peer:
            await peer.send(call(1, "needs_account"))
            error = (await peer.answer_to(1))["error"]
            assert error["code"] == -32042
            assert error["data"] == {
                "elicitations": [
                    {
                        "mode": "url",
                        "message": "Connect your account first",
                        "url": URL,
                        "elicitationId": "acct-2",
                    }
                ]
            }

    run(scenario())


def test_url_elicitation_required_is_an_input_request_for_a_2026_client() -> None:
    """2026-07-28 has no -32042: the same elicitations are asked as input, unnamed."""

    async def scenario() -> None:
        async with raw_client("2026-07-28") as peer:
            await peer.send(modern_call(1, "needs_account", URL_ONLY))
            result = (await peer.answer_to(1))["result"]
            assert result["resultType"] == "input_required"
            assert list(result["inputRequests"].values()) == [
                {
                    "method": "elicitation/create",
                    "params": {"mode": "url", "message": "Connect your account first", "url": URL},
                }
            ]

    run(scenario())


@pytest.mark.parametrize(
    "version,capabilities",
    [("2025-11-25", {"elicitation": {}}), ("2025-06-18", {}), ("2026-07-28", {})],
)
def test_url_elicitation_required_is_refused_for_a_client_without_url_mode(
    version: str, capabilities: dict[str, Any]
) -> None:
    """A client that cannot be sent to a URL gets MissingRequiredClientCapability naming
    ``elicitation.url``, never a -32042 it has no use for."""

    async def scenario() -> None:
        async with raw_client(version, capabilities) as peer:
            if version == "2026-07-28":
                await peer.send(modern_call(1, "needs_account", capabilities))
            else:
                await peer.send(call(1, "needs_account"))
            error = (await peer.answer_to(1))["error"]
            assert error["code"] == MISSING_CLIENT_CAPABILITY
            assert error["message"].startswith("URL elicitation required: ")
            assert error["data"] == {"requiredCapabilities": {"elicitation": {"url": {}}}}

    run(scenario())


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_sampling_with_tools_is_refused_before_sending_unless_declared(version: str) -> None:
    """A sampling request offering tools needs ``sampling.tools``: without it nothing is
    sent and the call fails naming it; with it the request (tools and toolChoice) goes
    out, valid at the client's version."""

    async def scenario() -> None:
        bare = {"sampling": {}}
        async with raw_client(version, bare) as peer:
            if version == "2026-07-28":
                await peer.send(modern_call(1, "sample_with_tools", bare))
            else:
                await peer.send(call(1, "sample_with_tools"))
            error = (await peer.answer_to(1))["error"]
            assert peer.backlog == []
            assert error["code"] == MISSING_CLIENT_CAPABILITY
            assert error["data"] == {"requiredCapabilities": {"sampling": {"tools": {}}}}
            assert "sampling.tools" in error["message"]
        with_tools = {"sampling": {"tools": {}}}
        async with raw_client(version, with_tools) as peer:
            if version == "2026-07-28":
                await peer.send(modern_call(1, "sample_with_tools", with_tools))
                result = (await peer.answer_to(1))["result"]
                (asked,) = result["inputRequests"].values()
                params = asked["params"]
            else:
                await peer.send(call(1, "sample_with_tools"))
                asked = await peer.read()
                params = asked["params"]
                answer = {"role": "assistant", "content": {"type": "text", "text": "Sunny"}}
                answer["model"] = "m"
                await peer.send({"jsonrpc": "2.0", "id": asked["id"], "result": answer})
                assert text_of(await peer.answer_to(1)) == "m"
            assert params["tools"][0]["name"] == "weather"
            assert params["toolChoice"] == {"mode": "auto"}

    run(scenario())
