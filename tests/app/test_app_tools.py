"""``App`` tools through a real client over in-memory transports, in both eras: schemas
derived from signatures, arguments validated, every kind of return value, errors, paging
and tools added while serving. No subprocess, no socket."""

from __future__ import annotations

import asyncio
import enum
import json
import logging
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypedDict

import msgspec
import pytest

from mcpgen.generated.v2025_11_25 import server as stubs_2025
from mcpgen.generated.v2026_07_28 import client as c
from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.generated.v2026_07_28 import types as t
from mcpgen.runtime import App, Audio, File, Image, McpError, ToolError, header
from mcpgen.runtime.core.errors import INVALID_PARAMS
from support.app_scenarios import MODES, Answering, plain, run


def listed(app: App, name: str, mode: str = "auto") -> dict[str, Any]:
    async def scenario() -> dict[str, Any]:
        async with app.test_client(mode=mode) as client:
            result = await client.list_tools()
        return next(plain(tool) for tool in result.tools if tool.name == name)

    return run(scenario())


def called(app: App, name: str, arguments: Any, mode: str = "auto", **options: Any) -> Any:
    async def scenario() -> Any:
        async with app.test_client(mode=mode, **options) as client:
            return plain(await client.call_tool(name=name, arguments=arguments))

    return run(scenario())


# -- the 4-line tool -------------------------------------------------------------------------

app = App("calculator", binding=stubs)


@app.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@pytest.mark.parametrize("mode", MODES)
def test_add_has_its_schemas_its_structured_result_and_refuses_bad_arguments(mode: str) -> None:
    tool = listed(app, "add", mode)
    assert tool["description"] == "Add two integers."
    assert tool["inputSchema"] == {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    }
    assert tool["outputSchema"]["properties"] == {"result": {"type": "integer"}}
    result = called(app, "add", {"a": 2, "b": 3}, mode)
    assert result["structuredContent"] == {"result": 5}
    assert json.loads(result["content"][0]["text"]) == {"result": 5}
    for bad, field in (({"a": 2}, "b"), ({"a": "x", "b": 1}, "$.a")):
        refused = called(app, "add", bad, mode)
        assert refused["isError"] is True and field in refused["content"][0]["text"]
    assert called(app, "add", {"a": 1, "b": 1}, mode)["structuredContent"] == {"result": 2}


def test_before_2025_11_25_bad_arguments_are_a_json_rpc_error() -> None:
    async def scenario() -> None:
        async with app.test_client(mode="legacy", versions=["2025-06-18"]) as client:
            with pytest.raises(McpError) as refused:
                await client.call_tool(name="add", arguments={"a": "x", "b": 1})
            assert refused.value.code == INVALID_PARAMS and "$.a" in refused.value.message
            assert (await client.call_tool(name="add", arguments={"a": 1, "b": 2})).content

    run(scenario())


def test_an_unknown_tool_is_invalid_params_and_the_next_call_works() -> None:
    async def scenario() -> None:
        async with app.test_client() as client:
            with pytest.raises(McpError) as refused:
                await client.call_tool(name="subtract", arguments={})
            assert refused.value.code == INVALID_PARAMS
            result = await client.call_tool(name="add", arguments={"a": 1, "b": 2})
            assert plain(result)["structuredContent"] == {"result": 3}

    run(scenario())


# -- parameters ---------------------------------------------------------------------------


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Point(msgspec.Struct):
    x: float
    y: float


typed = App("typed", binding=stubs)


@typed.tool(title="Paint", annotations={"readOnlyHint": True}, icons=[{"src": "https://x/i.png"}])
async def paint(
    where: Point,
    color: Color,
    size: Annotated[int, msgspec.Meta(ge=1, le=10)] = 1,
    style: Literal["flat", "shiny"] = "flat",
    label: str | None = None,
    region: Annotated[str, header("Region")] = "eu",
    ctx: stubs.Context | None = None,
) -> str:
    """Paint a point.

    Args:
        where: The point to paint.
        color: Its color.
    """
    assert ctx is not None
    return (
        f"{where.x},{where.y} {color.value} {size} {style} {label} {region} {ctx.protocol_version}"
    )


def test_parameters_become_a_2020_12_schema_with_defs_and_descriptions() -> None:
    tool = listed(typed, "paint")
    schema = tool["inputSchema"]
    assert schema["required"] == ["where", "color"]
    props = schema["properties"]
    assert props["where"]["$ref"] == "#/$defs/Point" and "Point" in schema["$defs"]
    assert props["where"]["description"] == "The point to paint."
    assert props["size"]["minimum"] == 1 and props["size"]["maximum"] == 10
    assert props["style"]["enum"] == ["flat", "shiny"]
    assert props["region"]["x-mcp-header"] == "Region"
    assert "ctx" not in props
    assert tool["title"] == "Paint" and tool["annotations"] == {"readOnlyHint": True}
    assert tool["icons"] == [{"src": "https://x/i.png"}] and "outputSchema" not in tool


@pytest.mark.parametrize("mode", MODES)
def test_arguments_are_converted_and_the_context_is_given(mode: str) -> None:
    result = called(typed, "paint", {"where": {"x": 1, "y": 2.5}, "color": "red", "size": 3}, mode)
    text = result["content"][0]["text"]
    assert text.startswith("1.0,2.5 red 3 flat None eu 20")
    for bad in (
        {"where": {"x": 1}, "color": "red"},
        {"where": {"x": 1, "y": 1}, "color": "green"},
        {"where": {"x": 1, "y": 1}, "color": "red", "size": 11},
    ):
        assert called(typed, "paint", bad, mode)["isError"] is True
    with pytest.raises(McpError):  # not a call at all: refused by our client or the server
        called(typed, "paint", "not an object", mode)


# -- results --------------------------------------------------------------------------------


@dataclass
class Weather:
    city: str
    degrees: float


class Stats(TypedDict):
    count: int


results = App("results", binding=stubs)
PNG = b"\x89PNG\r\n"


@results.tool
def weather(city: str) -> Weather:
    return Weather(city, 21.5)


@results.tool
def stats() -> Stats:
    return {"count": 3}


@results.tool
def numbers() -> list[int]:
    return [1, 2]


@results.tool
def point() -> Point:
    return Point(x=1, y=2)


@results.tool
def picture() -> Image:
    return Image(PNG)


@results.tool
def mixed() -> list[t.ContentBlock | Audio | File | str]:  # type: ignore[valid-type]
    return ["hi", Audio(b"RIFF"), File("doc", mime_type="text/plain", uri="file:///d.txt")]


@results.tool
def whole() -> t.CallToolResult:
    return t.CallToolResult(content=[t.TextContent(text="as is")], is_error=True)


@results.tool
def nothing() -> None:
    return None


@results.tool
def untyped():  # type: ignore[no-untyped-def]
    return {"free": True}


@results.tool
def liar() -> int:
    return "not an int"  # type: ignore[return-value]


@results.tool
def refuses() -> str:
    raise ToolError("no such city")


@results.tool
def crashes() -> str:
    raise RuntimeError("secret internals")


@results.tool
def mcp_error() -> str:
    raise McpError(-32001, "custom")


@pytest.mark.parametrize(
    ("name", "structured", "texts"),
    [
        ("weather", {"city": "Paris", "degrees": 21.5}, None),
        ("stats", {"count": 3}, None),
        ("numbers", {"result": [1, 2]}, None),
        ("point", {"x": 1.0, "y": 2.0}, None),
        ("whole", None, ["as is"]),
        ("nothing", None, []),
        ("untyped", None, ['{"free":true}']),
    ],
)
def test_return_values_become_results(
    name: str, structured: dict[str, Any] | None, texts: list[str] | None
) -> None:
    arguments = {"city": "Paris"} if name == "weather" else {}
    result = called(results, name, arguments)
    assert result.get("structuredContent") == structured
    if structured is not None:
        assert json.loads(result["content"][0]["text"]) == structured
        assert listed(results, name)["outputSchema"]["type"] == "object"
    if texts is not None:
        assert [block["text"] for block in result["content"]] == texts


def test_content_returns_are_sent_as_content() -> None:
    image = called(results, "picture", {})["content"]
    assert image == [{"type": "image", "data": "iVBORw0K", "mimeType": "image/png"}]
    blocks = called(results, "mixed", {})["content"]
    assert [b["type"] for b in blocks] == ["text", "audio", "resource"]
    assert blocks[2]["resource"] == {
        "uri": "file:///d.txt",
        "mimeType": "text/plain",
        "text": "doc",
    }


def test_errors_are_tool_errors_without_internals_and_the_next_call_works(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.ERROR, logger="mcpgen"):
        assert called(results, "refuses", {})["content"][0]["text"] == "no such city"
        crashed = called(results, "crashes", {})
        invalid = called(results, "liar", {})
    assert crashed["isError"] is True and "secret" not in crashed["content"][0]["text"]
    assert invalid["isError"] is True and "invalid output" in invalid["content"][0]["text"]
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert "crashes" in logged and "liar" in logged
    assert called(results, "stats", {})["structuredContent"] == {"count": 3}

    async def raw_error() -> None:
        async with results.test_client() as client:
            with pytest.raises(McpError) as raised:
                await client.call_tool(name="mcp_error", arguments={})
            assert raised.value.code == -32001

    run(raw_error())


# -- paging and changes while serving --------------------------------------------------------


def test_lists_are_paged_and_a_bad_cursor_is_invalid_params() -> None:
    paged = App("paged", binding=stubs, page_size=2)
    for index in range(5):
        paged.add_tool(lambda: "x", name=f"t{index}")

    async def scenario() -> None:
        async with paged.test_client() as client:
            names: list[str] = []
            cursor = None
            while True:
                result = (
                    await client.list_tools(cursor=cursor) if cursor else await client.list_tools()
                )
                names += [tool.name for tool in result.tools]
                if result.next_cursor is t.UNSET:
                    break
                cursor = result.next_cursor
            assert names == [f"t{i}" for i in range(5)]
            for bad in ("nonsense", "bWNwZ2VuLXBhZ2U6OTk="):  # garbage; a page past the end
                with pytest.raises(McpError) as refused:
                    await client.list_tools(cursor=bad)
                assert refused.value.code == INVALID_PARAMS
            assert len((await client.list_tools()).tools) == 2

    run(scenario())


def test_tools_added_and_removed_while_serving_are_announced() -> None:
    live = App("live", binding=stubs)
    live.add_tool(lambda: "one", name="one")
    heard = asyncio.Event()

    class Listener(c.ClientHandlers):
        async def on_tool_list_changed(self, params: t.NotificationParams) -> None:
            heard.set()

    async def scenario() -> None:
        async with live.test_client(mode="legacy", handlers=Listener()) as client:
            live.add_tool(lambda: "two", name="two")
            await asyncio.wait_for(heard.wait(), 5.0)
            assert [tool.name for tool in (await client.list_tools()).tools] == ["one", "two"]
            heard.clear()
            live.remove_tool("one")
            await asyncio.wait_for(heard.wait(), 5.0)
            assert [tool.name for tool in (await client.list_tools()).tools] == ["two"]

    run(scenario())


def test_a_2025_11_25_app_lists_execution_and_duplicates_are_refused() -> None:
    older = App("older", binding=stubs_2025)
    older.add_tool(lambda: "x", name="slow", execution={"taskSupport": "optional"})
    # execution is a 2025-11-25 field: a modern client's listing (re-shaped) has none
    assert listed(older, "slow", "legacy")["execution"] == {"taskSupport": "optional"}
    assert "execution" not in listed(older, "slow", "auto")
    with pytest.raises(ValueError):
        older.add_tool(lambda: "y", name="slow")
    with pytest.raises(TypeError):
        older.add_tool(lambda *args: "z", name="variadic")


# -- open-ended arguments ----------------------------------------------------------------------

opened = App("opened", binding=stubs)
CONDITIONAL = {
    "type": "object",
    "properties": {"phone": {"type": "string"}, "email": {"type": "string"}},
    "if": {"required": ["phone"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
}


@opened.tool(input_schema=CONDITIONAL)
def contact(**arguments: Any) -> str:
    """Echo whatever arrives (the schema says more than annotations can)."""
    return json.dumps(arguments, sort_keys=True)


@opened.tool
def totals(**counts: int) -> int:
    return sum(counts.values())


@pytest.mark.parametrize("mode", MODES)
def test_keyword_arguments_take_every_argument_and_a_given_schema_is_listed(mode: str) -> None:
    assert listed(opened, "contact", mode)["inputSchema"] == CONDITIONAL
    assert listed(opened, "totals", mode)["inputSchema"] == {
        "type": "object",
        "additionalProperties": {"type": "integer"},
    }
    given = {"email": "a@b", "nested": {"x": [1, 2]}}
    assert called(opened, "contact", given, mode)["content"][0]["text"] == json.dumps(
        given, sort_keys=True
    )
    assert called(opened, "totals", {"a": 2, "b": 3}, mode)["structuredContent"] == {"result": 5}
    if mode == "auto":  # 2026-07-28: a tool execution error naming the argument
        refused = called(opened, "totals", {"a": 2, "b": "x"}, mode)
        assert refused["isError"] is True and "$.b" in refused["content"][0]["text"]
    else:  # the SDK-less legacy client negotiates 2025-11-25 too: also a result
        refused = called(opened, "totals", {"a": "x"}, mode)
        assert refused["isError"] is True and "$.a" in refused["content"][0]["text"]
    assert called(opened, "totals", {}, mode)["structuredContent"] == {"result": 0}
    with pytest.raises(TypeError):
        opened.add_tool(lambda a, **rest: a, name="mixed")


# -- tools that ask the client -------------------------------------------------------------

asking = App("asking", binding=stubs)


@asking.tool
async def greet(ctx: stubs.Context) -> str:
    """Ask the user's name, then the model for a greeting (two rounds in 2026-07-28)."""
    form = t.ElicitRequestFormParams(
        message="Name?",
        requested_schema=t.convert(
            {"type": "object", "properties": {"name": {"type": "string"}}},
            t.ElicitRequestFormParamsRequestedSchema,
        ),
    )
    answer = await ctx.elicit(form, key="name")
    name = (answer.content or {}).get("name")
    question = t.SamplingMessage(role="user", content=t.TextContent(text=f"Greet {name}"))
    said = await ctx.create_message(
        t.CreateMessageRequestParams(messages=[question], max_tokens=10), key="greeting"
    )
    assert isinstance(said.content, t.TextContent)
    return said.content.text


@pytest.mark.parametrize("mode", MODES)
def test_a_tool_asks_the_client_in_either_era(mode: str) -> None:
    """Input requests are the protocol's business, not a tool error: in 2026-07-28 they
    become input-required rounds, in the legacy era requests to the client."""
    assert listed(asking, "greet", mode)["inputSchema"] == {"type": "object", "properties": {}}
    result = called(asking, "greet", {}, mode, handlers=Answering())
    assert result["content"] == [{"type": "text", "text": "Greet Ada!"}]
    assert "isError" not in result


@pytest.mark.parametrize("mode", MODES)
def test_a_call_without_arguments_is_a_call_with_none(mode: str) -> None:
    """``arguments`` is optional on the wire: leaving it out is an empty object."""

    async def scenario() -> None:
        async with opened.test_client(mode=mode) as client:
            result = plain(await client.call_tool(name="totals"))
            assert result["structuredContent"] == {"result": 0}
            result = plain(await client.call_tool(name="contact"))
            assert result["content"][0]["text"] == "{}"

    run(scenario())


# -- plain functions are called at once ------------------------------------------------------

immediate = App("immediate", binding=stubs)


@immediate.tool
def plain_tool(text: str) -> str:
    return text


@immediate.tool
async def async_tool(text: str) -> str:
    await asyncio.sleep(0)
    return text


async def _later(text: str) -> str:
    await asyncio.sleep(0)
    return f"later {text}"


@immediate.tool
def returns_awaitable(text: str) -> str:  # an async function under a sync decorator
    return _later(text)  # type: ignore[return-value]


@immediate.tool
def fails(text: str) -> str:
    raise ToolError(f"no {text}")


def test_a_plain_tool_is_called_at_once_and_its_answer_needs_no_waiting() -> None:
    from mcpgen.runtime.aio.at_once import never_waits

    ctx: Any = None
    plain_call = immediate.tools["plain_tool"].call({"text": "a"}, ctx)
    async_call = immediate.tools["async_tool"].call({"text": "a"}, ctx)
    assert never_waits(plain_call) and not never_waits(async_call)
    for pending in (plain_call, async_call):
        pending.close()  # type: ignore[attr-defined]


@pytest.mark.parametrize("mode", MODES)
def test_plain_async_and_awaitable_returning_tools_all_answer(mode: str) -> None:
    assert called(immediate, "plain_tool", {"text": "a"}, mode)["content"][0]["text"] == "a"
    assert called(immediate, "async_tool", {"text": "b"}, mode)["content"][0]["text"] == "b"
    later = called(immediate, "returns_awaitable", {"text": "c"}, mode)
    assert later["content"][0]["text"] == "later c"
    failed = called(immediate, "fails", {"text": "d"}, mode)
    assert failed["isError"] is True and failed["content"][0]["text"] == "no d"
