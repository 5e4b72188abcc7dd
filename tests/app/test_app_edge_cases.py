"""The ``App`` registry API at its edges, each through a real client over in-memory
transports (no subprocess, no socket): async functions under sync decorators,
recursive and optional structured outputs, values with no JSON, positional-only
parameters, completions of things that are not offered, templates sharing a function
name, blocking sync functions, and kinds added after the server was made."""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable
from typing import Any

import jsonschema
import msgspec
import pytest

from mcpgen.generated.v2026_07_28 import server as stubs
from mcpgen.generated.v2026_07_28 import types as t
from mcpgen.runtime import App, McpError
from mcpgen.runtime.core.errors import INVALID_PARAMS
from support.app_scenarios import MODES, plain, run


def logged(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A decorator as authors write them: a sync wrapper handing back what ``fn`` returns
    (for an async ``fn``, a coroutine), so the wrapper is no coroutine function."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return wrapper


# -- async functions under a sync decorator ---------------------------------------------------

wrapped = App("wrapped", binding=stubs)


@wrapped.tool
@logged
async def hello(name: str) -> str:
    return f"hi {name}"


@wrapped.prompt
@logged
async def greeting(name: str) -> str:
    return f"Greet {name}."


@wrapped.resource("notes://{name}")
@logged
async def note(name: str) -> str:
    return f"note {name}"


@pytest.mark.parametrize("mode", MODES)
def test_an_async_function_under_a_sync_decorator_is_awaited(mode: str) -> None:
    """It used to answer ``<coroutine object hello at 0x...>`` (never running the tool),
    and -32603 for the prompt and the resource."""

    async def scenario() -> None:
        async with wrapped.test_client(mode=mode) as client:
            called = plain(await client.call_tool(name="hello", arguments={"name": "Ada"}))
            assert called["content"] == [{"type": "text", "text": "hi Ada"}]
            got = plain(await client.get_prompt(name="greeting", arguments={"name": "Ada"}))
            assert got["messages"][0]["content"]["text"] == "Greet Ada."
            read = plain(await client.read_resource(uri="notes://a"))
            assert read["contents"][0]["text"] == "note a"

    run(scenario())


# -- structured outputs ---------------------------------------------------------------------


class Node(msgspec.Struct):
    name: str
    children: list[Node] = []


outputs = App("outputs", binding=stubs)


@outputs.tool
def tree() -> Node:
    return Node("root", [Node("leaf")])


@outputs.tool
def maybe() -> int | None:
    return None


class Opaque:
    """A value msgspec has no JSON for."""


@outputs.tool
def untyped():  # type: ignore[no-untyped-def]
    return Opaque()


@outputs.tool
def loose() -> dict[str, Any]:
    return {"thing": Opaque()}


def _listed_and_called(name: str, mode: str) -> tuple[dict[str, Any], dict[str, Any]]:
    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        async with outputs.test_client(mode=mode) as client:
            tools = {tool.name: plain(tool) for tool in (await client.list_tools()).tools}
            result = plain(await client.call_tool(name=name, arguments={}))
            return tools[name], result

    return run(scenario())


@pytest.mark.parametrize("mode", MODES)
def test_a_recursive_output_type_keeps_the_definition_its_references_name(mode: str) -> None:
    """The root's definition was moved out of ``$defs`` though it refers to itself, leaving
    ``#/$defs/Node`` dangling: the outputSchema could not be resolved."""
    tool, result = _listed_and_called("tree", mode)
    schema = tool["outputSchema"]
    assert "Node" in schema.get("$defs", {})
    jsonschema.Draft202012Validator(schema).validate(result["structuredContent"])


@pytest.mark.parametrize("mode", MODES)
def test_an_optional_output_of_none_is_still_structured_content(mode: str) -> None:
    """With an outputSchema the server MUST send conforming ``structuredContent``; a
    ``-> int | None`` tool returning None used to send none at all."""
    tool, result = _listed_and_called("maybe", mode)
    assert result.get("structuredContent") == {"result": None}
    jsonschema.Draft202012Validator(tool["outputSchema"]).validate(result["structuredContent"])


@pytest.mark.parametrize("name", ["untyped", "loose"])
def test_a_value_with_no_json_is_a_tool_error_not_an_internal_error(name: str) -> None:
    """Like a tool that raises or returns what its outputSchema refuses: a tool execution
    error without internals, not a JSON-RPC -32603 (and the next call works)."""

    async def scenario() -> None:
        async with outputs.test_client() as client:
            result = plain(await client.call_tool(name=name, arguments={}))
            assert result["isError"] is True
            assert "Opaque" not in result["content"][0]["text"]
            assert plain(await client.call_tool(name="tree", arguments={}))["structuredContent"]

    run(scenario())


# -- registration -------------------------------------------------------------------------


def test_positional_only_parameters_are_refused_at_registration() -> None:
    """Arguments are passed by name, so such a tool failed on every call."""
    strict = App("strict", binding=stubs)

    def add(a: int, b: int, /) -> int:
        return a + b

    with pytest.raises(TypeError, match="positional-only"):
        strict.add_tool(add)
    with pytest.raises(TypeError, match="positional-only"):
        strict.add_prompt(lambda topic, /: topic, name="p")
    assert not strict.tools and not strict.prompts


def test_templates_sharing_a_function_name_are_told_apart_by_their_template() -> None:
    """Two templates whose functions are both ``read`` used to be refused as duplicates
    (though two resources may share a name), while the same template twice was taken."""
    shelves = App("shelves", binding=stubs)
    shelves.add_resource("books://{isbn}", lambda isbn: f"book {isbn}", name="read")
    shelves.add_resource("films://{title}", lambda title: f"film {title}", name="read")
    with pytest.raises(ValueError):
        shelves.add_resource("books://{isbn}", lambda isbn: isbn, name="other")

    async def scenario() -> None:
        async with shelves.test_client() as client:
            templates = (await client.list_resource_templates()).resource_templates
            assert [x.uri_template for x in templates] == ["books://{isbn}", "films://{title}"]
            for uri, text in (("books://1", "book 1"), ("films://up", "film up")):
                read = plain(await client.read_resource(uri=uri))
                assert read["contents"][0]["text"] == text
            shelves.remove_resource("films://{title}")
            shelves.remove_resource("read")  # by name too
            assert not shelves.templates

    run(scenario())


# -- completions ----------------------------------------------------------------------------

completing = App("completing", binding=stubs)


@completing.prompt
def summarize(topic: str) -> str:
    return f"Summarize {topic}."


@completing.resource("docs://{path}")
def doc(path: str) -> str:
    return path


@completing.completion(prompt="summarize", argument="topic")
def topics(value: str, given: dict[str, str]) -> list[str]:
    return ["history", "math"]


@pytest.mark.parametrize("mode", MODES)
def test_completing_an_unknown_prompt_or_template_is_invalid_params(mode: str) -> None:
    """completion/complete: an invalid prompt name is -32602 (the spec's error list); it
    used to be an empty completion, as if the prompt existed."""

    async def scenario() -> None:
        async with completing.test_client(mode=mode) as client:
            argument = t.CompleteRequestParamsArgument(name="topic", value="")
            for ref in (
                t.PromptReference(name="nope"),
                t.ResourceTemplateReference(uri="nowhere://{x}"),
            ):
                with pytest.raises(McpError) as refused:
                    await client.complete(ref=ref, argument=argument)
                assert refused.value.code == INVALID_PARAMS
            known = t.PromptReference(name="summarize")
            done = plain(await client.complete(ref=known, argument=argument))
            assert done["completion"]["values"] == ["history", "math"]
            template = t.ResourceTemplateReference(uri="docs://{path}")
            path = t.CompleteRequestParamsArgument(name="path", value="")
            assert plain(await client.complete(ref=template, argument=path))["completion"] == {
                "values": [],
                "total": 0,
                "hasMore": False,
            }

    run(scenario())


# -- sync functions ---------------------------------------------------------------------------

blocking = App("blocking", binding=stubs)


@blocking.tool(blocking=True)
def slow() -> str:
    time.sleep(0.4)  # a blocking call, as sync tools make (files, HTTP clients, databases)
    return "slow"


@blocking.resource("files://slow", blocking=True)
def slow_file() -> str:
    time.sleep(0.4)
    return "contents"


@blocking.tool
def quick() -> str:
    return "quick"


@pytest.mark.parametrize("slow_one", ["tool", "resource"])
def test_a_blocking_sync_function_runs_in_a_thread_and_holds_up_nothing(slow_one: str) -> None:
    """``blocking=True``: while the sync function waits, other requests are answered."""

    async def scenario() -> None:
        async with blocking.test_client() as client:
            finished: list[str] = []

            async def call_slow() -> None:
                if slow_one == "tool":
                    assert (await client.call_tool(name="slow")).content[0].text == "slow"
                else:
                    assert (await client.read_resource(uri="files://slow")).contents
                finished.append("slow")

            slow_call = asyncio.create_task(call_slow())
            await asyncio.sleep(0.05)
            await client.call_tool(name="quick", arguments={})
            finished.append("quick")
            await slow_call
            assert finished == ["quick", "slow"]

    run(scenario())


def test_a_first_kind_added_after_the_server_exists_is_refused_with_a_reason() -> None:
    """The server's capabilities and handlers follow what was registered when it was made:
    a first prompt added later could never be listed, so it is refused, loudly."""
    only_tools = App("only-tools", binding=stubs)
    only_tools.add_tool(lambda: "x", name="x")
    assert only_tools.server.capabilities.get("prompts") is None
    with pytest.raises(RuntimeError, match="no prompts"):
        only_tools.add_prompt(lambda: "p", name="p")
    with pytest.raises(RuntimeError, match="no completions"):
        only_tools.completion(prompt="p", argument="a")
    only_tools.add_tool(lambda: "y", name="y")  # more of a kind it has: fine
    assert "p" not in only_tools.prompts


def test_run_refuses_an_unknown_transport_and_http_options_for_stdio() -> None:
    """``run`` says what is wrong with its arguments before serving anything."""
    from mcpgen.runtime import App, run

    app = App("args")
    with pytest.raises(ValueError, match="'stdio', 'http' or 'websocket', not 'carrier-pigeon'"):
        run(app, "carrier-pigeon")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="allowed_hosts"):
        app.run("stdio", allowed_hosts=["example.com"])


def test_a_question_to_the_client_is_not_an_error_a_handler_catches() -> None:
    """The modern era's ``InputRequired`` is a signal the session answers, not one of
    the runtime's errors: ``except McpgenError`` in a handler leaves it alone."""
    from mcpgen.runtime import McpgenError
    from mcpgen.runtime.core.modern import InputRequired

    assert not issubclass(InputRequired, McpgenError)
