"""Typed tool results: a ``tools/call`` result's ``structuredContent`` is checked against
the ``outputSchema`` its server listed (``runtime/client/outputs.py``), and
``call_tool_as`` returns it as the caller's type.

Against an honest ``App`` (typed return annotations make it declare output schemas) and
against a lying server in memory (raw JSON-RPC: results that break their schema, schemas
that are no schema, reach outside themselves, recurse or are huge), after each of which
the same session still calls the next tool."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypedDict

import msgspec
import pytest

from mcpgen.generated.v2025_11_25 import methods
from mcpgen.runtime import App, ToolError
from mcpgen.runtime.aio.memory import MemoryTransport, memory_pair
from mcpgen.runtime.client import ClientSession
from mcpgen.runtime.client import outputs
from mcpgen.runtime.client.outputs import OutputValidationError, ToolCallFailed
from mcpgen.runtime.core.limits import CLIENT

# -- an honest server: an App whose typed tools declare output schemas ---------------------


class Item(msgspec.Struct):
    name: str
    price: float


class Basket(msgspec.Struct):
    items: list[Item]


@dataclasses.dataclass
class BasketRecord:
    items: list[dict[str, Any]]


class BasketDict(TypedDict):
    items: list[Item]


def shop() -> App:
    app = App("shop", shared=None, telemetry=False, page_size=1)  # a page per tool

    @app.tool
    def basket(n: int) -> Basket:
        """A basket of ``n`` items."""
        return Basket([Item(f"item{k}", k * 1.5) for k in range(n)])

    @app.tool
    def count(n: int) -> int:
        """``n`` itself (a scalar: wrapped as {"result": n})."""
        return n

    @app.tool
    def refuse() -> Basket:
        """Always a tool execution error."""
        raise ToolError("no basket today")

    return app


def run(scenario: Callable[[], Awaitable[Any]], timeout: float = 20.0) -> Any:
    return asyncio.run(asyncio.wait_for(scenario(), timeout))


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_a_typed_call_returns_the_structured_content_as_the_callers_type(mode: str) -> None:
    """A Struct, a dataclass, a TypedDict, and a scalar the server wrapped as
    ``{"result": ...}``, in both eras."""

    async def scenario() -> None:
        async with shop().test_client(mode=mode) as client:
            session: ClientSession = client.session
            basket = await session.call_tool_as(Basket, "basket", {"n": 2})
            assert basket == Basket([Item("item0", 0.0), Item("item1", 1.5)])
            record = await session.call_tool_as(BasketRecord, "basket", {"n": 1})
            assert record == BasketRecord([{"name": "item0", "price": 0.0}])
            typed_dict = await session.call_tool_as(BasketDict, "basket", {"n": 1})
            assert typed_dict == {"items": [Item("item0", 0.0)]}
            assert await session.call_tool_as(int, "count", {"n": 7}) == 7

    run(scenario)


def test_a_call_of_a_tool_never_listed_lists_every_page_once_to_learn_its_schema() -> None:
    async def scenario() -> None:
        async with shop().test_client() as client:
            session: ClientSession = client.session
            assert session.outputs.schemas == {}
            await client.call_tool(name="count", arguments={"n": 1})
            # Three tools, one a page: all learned.
            assert set(session.outputs.schemas) == {"basket", "count", "refuse"}
            assert session.outputs.complete

    run(scenario)


def test_a_result_that_does_not_convert_names_the_tool_the_type_and_the_path() -> None:
    class Priced(msgspec.Struct):
        items: list[dict[str, int]]

    async def scenario() -> None:
        async with shop().test_client() as client:
            with pytest.raises(OutputValidationError) as caught:
                await client.session.call_tool_as(Priced, "basket", {"n": 3})
            error = caught.value
            assert error.tool == "basket" and error.path.startswith("$.items[0]")
            assert "Priced" in str(error) and "Expected `int`, got `str`" in str(error)
            with pytest.raises(OutputValidationError) as caught:
                await client.session.call_tool_as(str, "count", {"n": 3})
            assert caught.value.path == "$.result"  # inside the server's wrapping
            assert caught.value.result.structured_content == {"result": 3}

    run(scenario)


def test_an_error_result_is_not_validated_and_the_typed_call_raises_with_its_text() -> None:
    async def scenario() -> None:
        async with shop().test_client() as client:
            result = await client.call_tool(name="refuse")  # no structuredContent: fine
            assert result.is_error
            with pytest.raises(ToolCallFailed, match="no basket today") as caught:
                await client.session.call_tool_as(Basket, "refuse")
            assert caught.value.tool == "refuse" and caught.value.result.is_error

    run(scenario)


# -- a lying server: raw JSON-RPC over in-memory transports ---------------------------------

VERSION = "2025-11-25"
PRICED: dict[str, Any] = {
    "type": "object",
    "properties": {
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "price": {"type": "number"}},
                "required": ["name", "price"],
            },
        }
    },
    "required": ["items"],
}
GOOD_ITEMS = {"items": [{"name": "a", "price": 1.0}]}
BAD_ITEMS = {
    "items": [{"name": f"i{k}", "price": k} for k in range(2)] + [{"name": "c", "price": "x"}]
}


def deep_schema(levels: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


def structured(value: Any) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": json.dumps(value)}], "structuredContent": value}


class Liar:
    """A server that lists ``tools`` (``page`` a page) and answers each call with
    ``answers[name]``; the tool ``change`` announces a changed list before answering."""

    def __init__(self, tools: dict[str, Any], answers: dict[str, Any], page: int = 10) -> None:
        self.tools = tools
        self.answers = answers
        self.page = page
        self.requests: list[str] = []
        self.list_error = False

    def listing(self) -> list[dict[str, Any]]:
        empty = {"type": "object"}
        listed = [{"name": name, "inputSchema": empty} for name in self.tools]
        for tool, (name, schema) in zip(listed, self.tools.items()):
            if schema is not None:
                tool["outputSchema"] = schema
        return listed

    async def serve(self, end: MemoryTransport) -> None:
        while (frame := await end.receive()) is not None:
            message = json.loads(frame)
            method, request_id = message.get("method"), message.get("id")
            if request_id is None or method is None:  # notifications, and our answers
                continue
            self.requests.append(method)
            params = message.get("params") or {}
            reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
            if method == "initialize":
                reply["result"] = {
                    "protocolVersion": VERSION,
                    "capabilities": {"tools": {"listChanged": True}},
                    "serverInfo": {"name": "liar", "version": "0"},
                }
            elif method == "tools/list" and self.list_error:
                reply["error"] = {"code": -32603, "message": "listing is broken"}
            elif method == "tools/list":
                start = int(params.get("cursor") or 0)
                tools = self.listing()
                page: dict[str, Any] = {"tools": tools[start : start + self.page]}
                if start + self.page < len(tools):
                    page["nextCursor"] = str(start + self.page)
                reply["result"] = page
            elif method == "tools/call":
                name = params["name"]
                if name == "change":
                    changed = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
                    await end.send(json.dumps(changed).encode())
                reply["result"] = self.answers[name]
            else:
                reply["error"] = {"code": -32601, "message": f"Method not found: {method}"}
            await end.send(json.dumps(reply).encode())

    def lists(self) -> int:
        return self.requests.count("tools/list")


@asynccontextmanager
async def lying(liar: Liar, **options: Any) -> AsyncIterator[ClientSession]:
    client_end, server_end = memory_pair()
    serving = asyncio.create_task(liar.serve(server_end))
    session = ClientSession(methods.BINDING, **options)
    try:
        await session.connect(client_end, mode="legacy", timeout=5.0)
        yield session
    finally:
        await session.close()
        await client_end.close()
        await asyncio.wait_for(serving, 5.0)


def call(session: ClientSession, name: str) -> Awaitable[Any]:
    return session.request("tools/call", {"name": name, "arguments": {}})


#: A tool whose result the honest schema refuses, a result with none, and schemas a hostile
#: server may list: (its schema, its result, what the error says).
HOSTILE: dict[str, tuple[Any, Any, str]] = {
    "mismatch": (PRICED, structured(BAD_ITEMS), "'x' is not of type 'number'"),
    "missing": (PRICED, {"content": []}, "has no structuredContent"),
    "not-a-schema": (
        {"type": "object", "properties": {"a": {"type": 5}}},
        structured({"a": 1}),
        "not a valid JSON Schema",
    ),
    "remote-ref": (
        {"type": "object", "properties": {"a": {"$ref": "https://schemas.invalid/a.json"}}},
        structured({"a": 1}),
        "does not resolve within it",
    ),
    "ref-cycle": (
        {"type": "object", "properties": {"a": {"$ref": "#/properties/a"}}},
        structured({"a": 1}),
        "recurses without end",
    ),
    "deep": (deep_schema(200), structured({}), "nested too deep"),
    "huge": (
        {"type": "object", "properties": {f"p{k}": {"type": "string"} for k in range(6000)}},
        structured({}),
        "too large",
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_lying_server_gets_a_clear_error_naming_the_tool_and_the_client_goes_on(
    case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each lie fails its call at once with an OutputValidationError naming the tool and
    the problem; nothing is fetched (a remote ``$ref`` included); the next call works."""
    fetched: list[Any] = []
    monkeypatch.setattr("urllib.request.urlopen", lambda *a, **k: fetched.append(a))
    schema, result, says = HOSTILE[case]
    liar = Liar(
        {case: schema, "good": PRICED},
        {case: result, "good": structured(GOOD_ITEMS)},
    )
    # Deeper than the client's default max_depth lets a message be: let it through.
    limits = CLIENT.replace(max_depth=1000)

    async def scenario() -> float:
        async with lying(liar, limits=limits) as session:
            started = time.monotonic()
            with pytest.raises(OutputValidationError) as caught:
                await call(session, case)
            took = time.monotonic() - started
            assert caught.value.tool == case and f"tool {case!r}" in str(caught.value)
            assert says in str(caught.value)
            good = await session.call_tool_as(Basket, "good")
            assert good == Basket([Item("a", 1.0)])
            with pytest.raises(OutputValidationError):  # the same lie, the same error
                await call(session, case)
            return took

    assert run(scenario) < 2.0
    assert fetched == []
    assert liar.lists() == 1  # learned once, for both tools


def test_a_mismatch_names_the_json_path_of_the_value_the_schema_refuses() -> None:
    liar = Liar({"prices": PRICED}, {"prices": structured(BAD_ITEMS)})

    async def scenario() -> None:
        async with lying(liar) as session:
            with pytest.raises(OutputValidationError) as caught:
                await call(session, "prices")
            assert caught.value.path == "$.items[2].price"
            assert "at $.items[2].price" in str(caught.value)
            assert caught.value.result.structured_content == BAD_ITEMS

    run(scenario)


def test_warn_logs_the_mismatch_and_returns_the_result_and_off_checks_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    liar = Liar({"prices": PRICED}, {"prices": structured(BAD_ITEMS)})

    async def scenario() -> None:
        async with lying(liar, output_validation="warn") as session:
            with caplog.at_level(logging.WARNING, "mcpgen.runtime.client.outputs"):
                result = await call(session, "prices")
            assert result.structured_content == BAD_ITEMS
            assert "tool 'prices'" in caplog.text and "$.items[2].price" in caplog.text
        assert liar.lists() == 1
        async with lying(liar, output_validation="off") as session:
            result = await call(session, "prices")
            assert result.structured_content == BAD_ITEMS
        assert liar.lists() == 1  # off: not even listed

    run(scenario)


def test_an_error_result_of_a_tool_with_a_schema_is_not_checked() -> None:
    failed = {"content": [{"type": "text", "text": "boom"}], "isError": True}
    liar = Liar({"prices": PRICED}, {"prices": failed})

    async def scenario() -> None:
        async with lying(liar) as session:
            assert (await call(session, "prices")).is_error
            with pytest.raises(ToolCallFailed, match="boom"):
                await session.call_tool_as(Basket, "prices")

    run(scenario)


def test_a_tool_the_list_does_not_name_is_not_checked_and_not_listed_for_again() -> None:
    liar = Liar({"prices": PRICED}, {"hidden": structured({"anything": True})})

    async def scenario() -> None:
        async with lying(liar) as session:
            for _ in range(3):
                assert (await call(session, "hidden")).structured_content == {"anything": True}
        assert liar.lists() == 1

    run(scenario)


def test_the_schemas_are_learned_from_every_page_of_a_paginated_list() -> None:
    tools = {f"t{k}": None for k in range(5)} | {"prices": PRICED}
    liar = Liar(tools, {"prices": structured(BAD_ITEMS)}, page=2)

    async def scenario() -> None:
        async with lying(liar) as session:
            with pytest.raises(OutputValidationError):
                await call(session, "prices")  # on the third page
        assert liar.lists() == 3

    run(scenario)


def test_a_changed_tool_list_makes_the_next_call_learn_the_new_schema() -> None:
    liar = Liar(
        {"prices": PRICED, "change": None},
        {"prices": structured({"result": 1}), "change": {"content": []}},
    )

    async def scenario() -> None:
        async with lying(liar) as session:
            with pytest.raises(OutputValidationError):
                await call(session, "prices")
            liar.tools["prices"] = {"type": "object", "properties": {"result": {"type": "integer"}}}
            await call(session, "change")  # the server announces its tools changed
            assert (await call(session, "prices")).structured_content == {"result": 1}
        assert liar.lists() == 2

    run(scenario)


def test_a_failed_listing_leaves_results_unchecked_says_so_and_is_not_made_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A server whose tools/list fails is not asked again on every call (the list is
    asked for again once it changes), and its calls succeed."""
    liar = Liar(
        {"prices": PRICED, "change": None},
        {"prices": structured(BAD_ITEMS), "change": {"content": []}},
    )
    liar.list_error = True

    async def scenario() -> None:
        async with lying(liar) as session:
            with caplog.at_level(logging.WARNING, "mcpgen.runtime.client.outputs"):
                for _ in range(2):
                    assert (await call(session, "prices")).structured_content == BAD_ITEMS
            assert "tool 'prices' are not checked" in caplog.text
            assert "listing is broken" in caplog.text
            assert liar.lists() == 1
            liar.list_error = False
            await call(session, "change")  # the server announces its tools changed
            with pytest.raises(OutputValidationError):
                await call(session, "prices")
        assert liar.lists() == 2

    run(scenario)


def test_a_validator_is_compiled_once_per_schema_and_again_when_the_listing_changes_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    compiled: list[str] = []
    compile_schema = outputs._compile  # pyright: ignore[reportPrivateUsage]

    def counting(tool: str, listed: Any, kit: Any) -> Any:
        compiled.append(tool)
        return compile_schema(tool, listed, kit)

    monkeypatch.setattr(outputs, "_compile", counting)
    other = {"type": "object", "properties": {"items": {"type": "array"}}}
    liar = Liar({"a": PRICED, "b": PRICED, "c": PRICED}, {n: structured(GOOD_ITEMS) for n in "abc"})

    async def scenario() -> None:
        async with lying(liar) as session:
            session.outputs.max_validators = 2
            for name in "aaab":
                await call(session, name)
            assert compiled == ["a", "b"]
            await session.request("tools/list")  # the same schemas again: kept
            await call(session, "a")
            assert compiled == ["a", "b"]
            liar.tools["a"] = other
            await session.request("tools/list")  # a's changed: compiled anew
            await call(session, "a")
            await call(session, "c")  # b, least recently used, is dropped for c
            await call(session, "b")
            assert compiled == ["a", "b", "a", "c", "b"]

    run(scenario)


def test_without_jsonschema_calls_succeed_and_one_warning_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(sys.modules, "jsonschema.validators", None)  # import fails
    monkeypatch.setattr(outputs, "_kit", None)
    monkeypatch.setattr(outputs, "_missing_told", False)
    liar = Liar({"prices": PRICED}, {"prices": structured(BAD_ITEMS)})

    async def scenario() -> None:
        async with lying(liar) as session:
            with caplog.at_level(logging.WARNING, "mcpgen.runtime.client.outputs"):
                for _ in range(2):
                    assert (await call(session, "prices")).structured_content == BAD_ITEMS

    run(scenario)
    told = [r for r in caplog.records if "mcpgen[validate]" in r.getMessage()]
    assert len(told) == 1
    assert liar.lists() == 0  # nothing to check with: nothing learned


def test_an_unknown_setting_is_refused_when_the_session_is_made() -> None:
    with pytest.raises(ValueError, match="output_validation must be one of"):
        ClientSession(methods.BINDING, output_validation="strict")  # type: ignore[arg-type]
