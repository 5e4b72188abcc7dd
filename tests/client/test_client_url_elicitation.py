"""URL-mode elicitation as our client meets it, against a raw 2025-11-25 JSON-RPC server
over in-memory transports.

The client declares ``elicitation.url`` when told to, its ``elicit`` handler gets URL-mode
params (with their ``elicitationId``), ``on_elicitation_complete`` hears the completion,
and a -32042 answer raises ``UrlElicitationRequired`` with its elicitations; with
``url_elicitation_wait`` set, the URLs are shown through the handler and the request sent
once more after the completions (or the wait). What the client did not declare (URL mode,
forms, sampling with tools) is answered -32602 without reaching a handler. Every answer and
declaration is checked against the official 2025-11-25 schema. The raw server answers
only what each test asks of it, so the sessions check no tool outputs (which would list
the tools first: ``tests/client/test_client_outputs.py``).

Hostile input: garbage URL-mode params, bogus completions and a -32042 with garbage data
get clear answers (or are ignored), and the client's next request works."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import msgspec
import pytest

from mcpgen.generated.v2025_11_25 import client as client25
from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.runtime import App, McpError
from mcpgen.runtime.client import ClientSession
from mcpgen.runtime.core.errors import INVALID_PARAMS, UrlElicitationRequired
from support.checkout import ROOT
from support.messages import notification
from support.sansio import RawPeer, ask, legacy_client, run
from support.wire_oracle import Schema

t = client25.t
SCHEMA = Schema("2025-11-25", ROOT / "schema" / "2025-11-25" / "schema.json")
URL = "https://auth.example.com/connect"
BOTH_MODES = {"elicitation": {"form": {}, "url": {}}}
ELICIT_URL = {"mode": "url", "message": "Connect", "url": URL, "elicitationId": "e-1"}
REQUIRED = {
    "code": -32042,
    "message": "Connect your account first",
    "data": {"elicitations": [ELICIT_URL]},
}


def valid(definition: str, instance: Any) -> Any:
    problem = SCHEMA.error_of(definition, instance)
    assert problem is None, problem
    return instance


class Handlers(client25.ClientHandlers):
    """Records what it is asked and told; answers URL elicitations with ``action``."""

    def __init__(self, action: str = "accept") -> None:
        self.action = action
        self.asked: list[Any] = []
        self.completed: list[str] = []
        self.sampled = 0

    async def elicit(self, params: t.ElicitRequestParams, ctx: Any) -> t.ElicitResult:
        self.asked.append(params)
        if isinstance(params, t.ElicitRequestFormParams):
            return t.ElicitResult(action="accept", content={"name": "Ada"})
        return t.ElicitResult(action=self.action)  # type: ignore[arg-type]

    async def on_elicitation_complete(
        self, params: t.ElicitationCompleteNotificationParams
    ) -> None:
        self.completed.append(params.elicitation_id)

    async def create_message(self, params: Any, ctx: Any) -> t.CreateMessageResult:
        self.sampled += 1
        return t.CreateMessageResult(role="assistant", content=t.TextContent(text="x"), model="m")


def session_of(handlers: Any, wait: float | None = None) -> ClientSession:
    """A 2025-11-25 client declaring both elicitation modes (tool outputs unchecked: the
    raw server answers only what each test asks), retrying after URL visits when ``wait``."""
    return ClientSession(
        client25.BINDING,
        handlers,
        capabilities=BOTH_MODES,
        url_elicitation_wait=wait,
        output_validation="off",
    )


def answer(rid: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def failure(rid: Any, error: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "error": error}


TOOL_RESULT = {"content": [{"type": "text", "text": "done"}]}


async def still_usable(session: ClientSession, peer: RawPeer) -> None:
    """The client's next request is sent and its answer returned."""
    calling = asyncio.ensure_future(session.request("tools/list", {}))
    asked = await peer.read()
    assert asked["method"] == "tools/list"
    await peer.send(answer(asked["id"], {"tools": []}))
    assert msgspec.to_builtins(await calling) == {"tools": []}


def test_the_client_declares_url_mode_and_its_handler_gets_url_params() -> None:
    """``capabilities={"elicitation": {"form": {}, "url": {}}}`` is declared as given (valid
    ``ClientCapabilities``); a URL-mode request decodes to ``ElicitRequestURLParams`` with
    its name, and the answer is a valid ``ElicitResult``; the completion reaches
    ``on_elicitation_complete``."""

    async def scenario() -> None:
        handlers = Handlers()
        session = session_of(handlers)
        async with legacy_client(session, {"tools": {}}) as (peer, declared):
            assert valid("ClientCapabilities", declared)["elicitation"] == BOTH_MODES["elicitation"]
            result = (await ask(peer, 1, "elicitation/create", ELICIT_URL))["result"]
            assert valid("ElicitResult", result) == {"action": "accept"}
            (params,) = handlers.asked
            assert isinstance(params, t.ElicitRequestURLParams)
            assert (params.url, params.elicitation_id, params.message) == (URL, "e-1", "Connect")
            await peer.send(
                notification("notifications/elicitation/complete", {"elicitationId": "e-1"})
            )
            await still_usable(session, peer)
            assert handlers.completed == ["e-1"]

    run(scenario())


@pytest.mark.parametrize(
    "capabilities,method,params,undeclared",
    [
        ({"elicitation": {}}, "elicitation/create", ELICIT_URL, "elicitation.url"),
        ({"elicitation": {"form": {}}}, "elicitation/create", ELICIT_URL, "elicitation.url"),
        (
            {"elicitation": {"url": {}}},
            "elicitation/create",
            {"message": "Name?", "requestedSchema": {"type": "object", "properties": {}}},
            "elicitation.form",
        ),
        (
            {},
            "sampling/createMessage",
            {
                "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                "maxTokens": 5,
                "tools": [{"name": "weather", "inputSchema": {"type": "object"}}],
            },
            "sampling.tools",
        ),
        (
            {},
            "sampling/createMessage",
            {
                "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                "maxTokens": 5,
                "toolChoice": {"mode": "none"},
            },
            "sampling.tools",
        ),
    ],
)
def test_what_the_client_did_not_declare_is_answered_minus_32602(
    capabilities: dict[str, Any], method: str, params: Any, undeclared: str
) -> None:
    """An elicitation in a mode the client did not declare, or sampling offering tools
    without ``sampling.tools`` (the 2025-11-25 schema: the client MUST return an error),
    gets -32602 naming the capability; the handler is not called."""

    async def scenario() -> None:
        handlers = Handlers()
        session = ClientSession(
            client25.BINDING, handlers, capabilities=capabilities, output_validation="off"
        )
        async with legacy_client(session, {"tools": {}}) as (peer, _):
            error = valid("JSONRPCErrorResponse", await ask(peer, 1, method, params))["error"]
            assert error["code"] == INVALID_PARAMS
            assert f"capabilities.{undeclared}" in error["message"]
            assert handlers.asked == [] and handlers.sampled == 0
            await still_usable(session, peer)

    run(scenario())


def test_sampling_with_tools_reaches_the_handler_once_declared() -> None:
    async def scenario() -> None:
        handlers = Handlers()
        session = ClientSession(
            client25.BINDING,
            handlers,
            capabilities={"sampling": {"tools": {}}},
            output_validation="off",
        )
        async with legacy_client(session, {"tools": {}}) as (peer, declared):
            assert valid("ClientCapabilities", declared)["sampling"] == {"tools": {}}
            params = {
                "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                "maxTokens": 5,
                "tools": [{"name": "weather", "inputSchema": {"type": "object"}}],
                "toolChoice": {"mode": "auto"},
            }
            result = (await ask(peer, 1, "sampling/createMessage", params))["result"]
            assert valid("CreateMessageResult", result)["model"] == "m"
            assert handlers.sampled == 1

    run(scenario())


def test_minus_32042_raises_url_elicitation_required_with_its_elicitations() -> None:
    """Without ``url_elicitation_wait`` nothing is shown: the caller gets the typed error
    (an ``McpError``) and decides."""

    async def scenario() -> None:
        handlers = Handlers()
        session = session_of(handlers)
        async with legacy_client(session, {"tools": {}}) as (peer, _):
            calling = asyncio.ensure_future(session.request("tools/call", {"name": "x"}))
            asked = await peer.read()
            await peer.send(failure(asked["id"], REQUIRED))
            with pytest.raises(UrlElicitationRequired) as raised:
                await calling
            assert isinstance(raised.value, McpError) and raised.value.code == -32042
            assert raised.value.message == "Connect your account first"
            assert raised.value.elicitations == [ELICIT_URL]
            assert handlers.asked == []

    run(scenario())


def test_the_opt_in_shows_each_url_and_retries_once_the_completions_came() -> None:
    """With ``url_elicitation_wait``: every URL goes to the ``elicit`` handler, the
    request is sent again when the server said each one completed (not after the whole
    wait), and the caller gets the retry's answer."""

    async def scenario() -> None:
        handlers = Handlers()
        two = [ELICIT_URL, {**ELICIT_URL, "elicitationId": "e-2", "url": URL + "/2"}]
        session = session_of(handlers, wait=30.0)
        async with legacy_client(session, {"tools": {}}) as (peer, _):
            started = time.monotonic()
            calling = asyncio.ensure_future(session.request("tools/call", {"name": "x"}))
            first = await peer.read()
            await peer.send(failure(first["id"], {**REQUIRED, "data": {"elicitations": two}}))
            await asyncio.sleep(0.05)
            assert [p.elicitation_id for p in handlers.asked] == ["e-1", "e-2"]
            for name in ("e-2", "e-1"):
                await peer.send(
                    notification("notifications/elicitation/complete", {"elicitationId": name})
                )
            again = await peer.read()
            assert again["method"] == "tools/call" and again["id"] != first["id"]
            await peer.send(answer(again["id"], TOOL_RESULT))
            result = await calling
            assert msgspec.to_builtins(result)["content"][0]["text"] == "done"
            assert time.monotonic() - started < 5.0

    run(scenario())


def test_the_opt_in_retries_after_the_wait_when_no_completion_comes() -> None:
    """The completion notification is optional: after ``url_elicitation_wait`` seconds the
    request is sent again all the same, once; a second -32042 is raised."""

    async def scenario() -> None:
        handlers = Handlers()
        session = session_of(handlers, wait=0.2)
        async with legacy_client(session, {"tools": {}}) as (peer, _):
            calling = asyncio.ensure_future(session.request("tools/call", {"name": "x"}))
            first = await peer.read()
            await peer.send(failure(first["id"], REQUIRED))
            started = time.monotonic()
            again = await peer.read()
            assert time.monotonic() - started >= 0.15
            await peer.send(failure(again["id"], REQUIRED))
            with pytest.raises(UrlElicitationRequired):
                await calling
            assert await peer.quiet(0.3) == []  # no third attempt
            assert len(handlers.asked) == 1

    run(scenario())


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_the_opt_in_raises_when_the_user_does_not_accept(action: str) -> None:
    async def scenario() -> None:
        handlers = Handlers(action)
        session = session_of(handlers, wait=30.0)
        async with legacy_client(session, {"tools": {}}) as (peer, _):
            calling = asyncio.ensure_future(session.request("tools/call", {"name": "x"}))
            first = await peer.read()
            await peer.send(failure(first["id"], REQUIRED))
            with pytest.raises(UrlElicitationRequired) as raised:
                await asyncio.wait_for(calling, 5.0)
            assert raised.value.elicitations == [ELICIT_URL]
            assert await peer.quiet(0.1) == []  # not sent again

    run(scenario())


def test_url_elicitation_wait_must_be_positive() -> None:
    with pytest.raises(ValueError, match="url_elicitation_wait"):
        ClientSession(client25.BINDING, Handlers(), url_elicitation_wait=0, output_validation="off")


# -- hostile input -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "params",
    [
        {"mode": "url", "message": "Connect", "elicitationId": "e-1"},  # no url
        {"mode": "url", "message": "Connect", "url": 5, "elicitationId": "e-1"},
        {"mode": "url", "url": URL, "elicitationId": ["e"]},
        {"mode": "url"},
        {"mode": "carrier-pigeon", "message": "Hi", "url": URL},
        "not an object",
    ],
)
def test_garbage_url_elicitation_params_are_answered_with_an_error(params: Any) -> None:
    """Params that are no elicitation get an error answer (never the handler), and the
    client goes on working."""

    async def scenario() -> None:
        handlers = Handlers()
        session = session_of(handlers)
        async with legacy_client(session, {"tools": {}}) as (peer, _):
            reply = valid("JSONRPCErrorResponse", await ask(peer, 1, "elicitation/create", params))
            assert reply["error"]["code"] in (INVALID_PARAMS, -32600)
            assert handlers.asked == []
            await still_usable(session, peer)

    run(scenario())


@pytest.mark.parametrize(
    "params",
    [
        {"elicitationId": "never-asked"},
        {"elicitationId": 42},
        {},
        None,
        "garbage",
        {"elicitationId": "x" * 100_000},
    ],
)
def test_a_bogus_elicitation_complete_is_ignored(params: Any) -> None:
    """A completion of nothing the client waits on, or with garbage params, changes
    nothing: no retry starts, and the client goes on working."""

    async def scenario() -> None:
        handlers = Handlers()
        session = session_of(handlers, wait=30.0)
        async with legacy_client(session, {"tools": {}}) as (peer, _):
            await peer.send(notification("notifications/elicitation/complete", params))
            await still_usable(session, peer)
            assert await peer.quiet(0.05) == []

    run(scenario())


@pytest.mark.parametrize(
    "data",
    [
        None,
        "garbage",
        {"elicitations": "x"},
        {"elicitations": [1, None, {"mode": "url", "url": URL}]},
        {"elicitations": [{**ELICIT_URL, "mode": "form"}]},
    ],
)
def test_a_minus_32042_with_garbage_data_raises_with_no_elicitations(data: Any) -> None:
    """What is no URL-mode elicitation is left out of ``elicitations``; with none left the
    opt-in shows nothing and sends nothing again."""

    async def scenario() -> None:
        handlers = Handlers()
        session = session_of(handlers, wait=30.0)
        async with legacy_client(session, {"tools": {}}) as (peer, _):
            calling = asyncio.ensure_future(session.request("tools/call", {"name": "x"}))
            first = await peer.read()
            error: dict[str, Any] = {"code": -32042, "message": "visit"}
            if data is not None:
                error["data"] = data
            await peer.send(failure(first["id"], error))
            with pytest.raises(UrlElicitationRequired) as raised:
                await asyncio.wait_for(calling, 5.0)
            assert raised.value.elicitations == []
            assert handlers.asked == []
            await still_usable(session, peer)

    run(scenario())


def test_a_2025_11_25_typed_client_answers_a_2026_url_input_request() -> None:
    """2026-07-28 input requests name no URL elicitation; a handler typed against
    2025-11-25 (whose params require a name) still gets its ``ElicitRequestURLParams``."""
    app = App("modern-url", binding=stubs)

    @app.tool
    async def go(ctx: stubs.Context) -> str:
        return (await ctx.elicit_url("Go there", URL)).action

    async def scenario() -> None:
        handlers = Handlers()
        async with app.test_client(
            client_class=client25.Client, handlers=handlers, capabilities=BOTH_MODES
        ) as client:
            assert client.protocol_version == "2026-07-28"
            result = await client.call_tool(name="go")
            assert msgspec.to_builtins(result)["content"][0]["text"] == "accept"
        (params,) = handlers.asked
        assert isinstance(params, t.ElicitRequestURLParams) and params.url == URL

    run(scenario())
