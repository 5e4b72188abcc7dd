"""Interoperability with the official MCP Python SDK (``mcp`` 2.3), over stdio, with real
subprocesses on both sides:

1. the SDK ``Client`` (``mode="legacy"``, 2025-11-25) drives our conformance server
   ``python -m examples.everything`` through every fixture, including the server → client
   round trips (sampling, elicitation) and notifications (progress, logging);
2. the same client pinned to each older handshake version (the documented
   ``LATEST_HANDSHAKE_VERSION`` patch) negotiates that version with our server;
3. our runtime's ``stdio_client`` with the generated 2025-11-25 ``Client`` drives an SDK
   low-level server (``tests/peers/sdk_stdio_server.py``).

Our server has no tool that asks for roots, so ``roots/list`` is not exercised here.
"""

from __future__ import annotations

import base64
import json
import struct
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

import mcp.client.session as sdk_session
import mcp.types as sdk
from mcp import Client as SdkClient
from mcp import MCPError, StdioServerParameters
from mcp.client.session import ClientRequestContext

from mcpgen.generated.v2025_11_25 import types as t
from mcpgen.generated.v2025_11_25.client import Client, ClientHandlers
from mcpgen.generated._support import RequestContext
from mcpgen.runtime.client import ClientSession, stdio_client
from mcpgen.runtime import McpError
from mcpgen.runtime.aio.stdio import StdioProcess

ROOT = Path(__file__).resolve().parents[2]
#: The SDK server (run as a script; its data is repeated below).
PEER = ROOT / "tests" / "peers" / "sdk_stdio_server.py"
README_URI, BLOB_URI = "sdk://peer/readme", "sdk://peer/blob"
README_TEXT = "Served by the official MCP Python SDK."

#: Wall-clock bound of one test: spawn, handshake, body and shutdown.
TEST_TIMEOUT = 30.0
#: Bound of a test's body once connected (shorter, so shutdown still runs unhurried).
BODY_TIMEOUT = 15.0

EVERYTHING_TOOLS = {
    "test_simple_text",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_tool_with_logging",
    "test_tool_with_progress",
    "test_error_handling",
    "test_sampling",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
    "json_schema_2020_12_tool",
}

pytestmark = [
    pytest.mark.anyio,
    # The SDK marks logging, sampling and elicitation as deprecated (2026-07-28, SEP-2577).
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]


def everything_server() -> StdioServerParameters:
    # The SDK gives the child a minimal environment: run the venv's interpreter from the
    # repository root so ``examples`` and ``mcpgen`` import.
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "examples.everything", "--transport", "stdio"],
        cwd=str(ROOT),
    )


class Recorder:
    """The SDK client's callbacks; records what our server sent."""

    def __init__(self) -> None:
        self.logs: list[sdk.LoggingMessageNotificationParams] = []
        self.progress: list[tuple[float, float | None, str | None]] = []
        self.sampling: list[sdk.CreateMessageRequestParams] = []
        self.elicitations: list[sdk.ElicitRequestFormParams] = []

    async def on_log(self, params: sdk.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)

    async def on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.progress.append((progress, total, message))

    async def on_sampling(
        self, context: ClientRequestContext, params: sdk.CreateMessageRequestParams
    ) -> sdk.CreateMessageResult:
        self.sampling.append(params)
        return sdk.CreateMessageResult(
            role="assistant",
            content=sdk.TextContent(type="text", text="4"),
            model="fake-llm",
            stop_reason="endTurn",
        )

    async def on_elicit(
        self, context: ClientRequestContext, params: sdk.ElicitRequestParams
    ) -> sdk.ElicitResult:
        assert isinstance(params, sdk.ElicitRequestFormParams), params
        self.elicitations.append(params)
        schema = params.requested_schema
        if params.message == "decline me":
            return sdk.ElicitResult(action="decline")
        if "username" in schema["properties"]:
            return sdk.ElicitResult(
                action="accept", content={"username": "bob", "email": "bob@example.com"}
            )
        # SEP-1034: accept the defaults the server sent, as a form would prefill them.
        content = {
            name: prop["default"]
            for name, prop in schema["properties"].items()
            if "default" in prop
        }
        return sdk.ElicitResult(action="accept", content=content)


def assert_png(data: str) -> None:
    """A base64 1×1 PNG (what examples/everything/fixtures.py serves)."""
    raw = base64.b64decode(data, validate=True)
    assert raw.startswith(b"\x89PNG\r\n\x1a\n") and raw[12:16] == b"IHDR"
    assert struct.unpack(">II", raw[16:24]) == (1, 1)


def assert_wav(data: str) -> None:
    """A base64 PCM WAV clip."""
    raw = base64.b64decode(data, validate=True)
    assert raw[:4] == b"RIFF" and raw[8:16] == b"WAVEfmt "
    assert struct.unpack("<I", raw[4:8])[0] == len(raw) - 8


def only_text(result: sdk.CallToolResult) -> str:
    assert not result.is_error, result
    assert len(result.content) == 1, result.content
    block = result.content[0]
    assert isinstance(block, sdk.TextContent), block
    return block.text


# -- 1. SDK client → our server (2025-11-25) ---------------------------------------------


async def test_sdk_client_tools() -> None:
    with anyio.fail_after(TEST_TIMEOUT):
        async with SdkClient(everything_server(), mode="legacy") as c:
            with anyio.fail_after(BODY_TIMEOUT):
                assert c.protocol_version == "2025-11-25"
                assert c.server_info is not None
                assert (c.server_info.name, c.server_info.version) == (
                    "mcpgen-everything",
                    "0.1.0",
                )
                assert c.instructions == "Conformance fixtures for mcpgen."
                caps = c.server_capabilities
                assert caps.tools is not None and caps.tools.list_changed is True
                assert caps.resources is not None and caps.prompts is not None
                assert caps.logging is not None and caps.completions is not None

                tools = {tool.name: tool for tool in (await c.list_tools()).tools}
                assert set(tools) >= EVERYTHING_TOOLS  # plus the 2026-only fixtures
                assert tools["test_sampling"].input_schema["required"] == ["prompt"]
                schema_2020 = tools["json_schema_2020_12_tool"].input_schema
                assert schema_2020["$schema"] == "https://json-schema.org/draft/2020-12/schema"
                assert schema_2020["$defs"]["address"]["$anchor"] == "addressDef"
                assert schema_2020["additionalProperties"] is False

                assert (
                    only_text(await c.call_tool("test_simple_text", {}))
                    == "This is a simple text response for testing."
                )

                image = (await c.call_tool("test_image_content", {})).content
                assert len(image) == 1 and isinstance(image[0], sdk.ImageContent)
                assert image[0].mime_type == "image/png"
                assert_png(image[0].data)

                audio = (await c.call_tool("test_audio_content", {})).content
                assert len(audio) == 1 and isinstance(audio[0], sdk.AudioContent)
                assert audio[0].mime_type == "audio/wav"
                assert_wav(audio[0].data)

                embedded = (await c.call_tool("test_embedded_resource", {})).content
                assert len(embedded) == 1
                assert isinstance(embedded[0], sdk.EmbeddedResource)
                resource = embedded[0].resource
                assert isinstance(resource, sdk.TextResourceContents)
                assert str(resource.uri) == "test://embedded-resource"
                assert resource.mime_type == "text/plain"
                assert resource.text == "This is an embedded resource content."

                mixed = (await c.call_tool("test_multiple_content_types", {})).content
                assert [block.type for block in mixed] == ["text", "image", "resource"]
                assert isinstance(mixed[0], sdk.TextContent)
                assert mixed[0].text == "Multiple content types test:"
                assert isinstance(mixed[2], sdk.EmbeddedResource)
                assert isinstance(mixed[2].resource, sdk.TextResourceContents)
                assert json.loads(mixed[2].resource.text) == {
                    "test": "data",
                    "value": 123,
                }

                failed = await c.call_tool("test_error_handling", {})
                assert failed.is_error is True
                assert isinstance(failed.content[0], sdk.TextContent)
                assert (
                    failed.content[0].text == "This tool intentionally returns an error for testing"
                )

                arguments = {"name": "Ann", "email": "ann@example.com"}
                assert only_text(
                    await c.call_tool("json_schema_2020_12_tool", arguments)
                ) == "Received: " + json.dumps(arguments, sort_keys=True)

                # Errors must be caught inside the ``async with`` (SDK gotcha).
                with pytest.raises(MCPError) as unknown:
                    await c.call_tool("no_such_tool", {})
                assert unknown.value.error.code == -32602
                assert "no_such_tool" in unknown.value.error.message


async def test_sdk_client_resources_prompts_completion() -> None:
    with anyio.fail_after(TEST_TIMEOUT):
        async with SdkClient(everything_server(), mode="legacy") as c:
            with anyio.fail_after(BODY_TIMEOUT):
                listed = (await c.list_resources()).resources
                assert {str(r.uri) for r in listed} == {
                    "test://static-text",
                    "test://static-binary",
                    "test://watched-resource",
                }

                text = (await c.read_resource("test://static-text")).contents
                assert len(text) == 1 and isinstance(text[0], sdk.TextResourceContents)
                assert text[0].text == "This is the content of the static text resource."
                assert text[0].mime_type == "text/plain"

                binary = (await c.read_resource("test://static-binary")).contents
                assert len(binary) == 1
                assert isinstance(binary[0], sdk.BlobResourceContents)
                assert binary[0].mime_type == "image/png"
                assert_png(binary[0].blob)

                templates = (await c.list_resource_templates()).resource_templates
                assert [tpl.uri_template for tpl in templates] == ["test://template/{id}/data"]
                assert templates[0].mime_type == "application/json"

                data = (await c.read_resource("test://template/42/data")).contents
                assert isinstance(data[0], sdk.TextResourceContents)
                assert str(data[0].uri) == "test://template/42/data"
                assert json.loads(data[0].text) == {
                    "id": "42",
                    "templateTest": True,
                    "data": "Data for ID: 42",
                }

                with pytest.raises(MCPError) as missing:
                    await c.read_resource("test://nowhere")
                assert missing.value.error.code == -32002  # legacy resource-not-found

                prompts = {p.name: p for p in (await c.list_prompts()).prompts}
                assert set(prompts) >= {
                    "test_simple_prompt",
                    "test_prompt_with_arguments",
                    "test_prompt_with_embedded_resource",
                    "test_prompt_with_image",
                }
                assert [
                    (a.name, a.required)
                    for a in prompts["test_prompt_with_arguments"].arguments or []
                ] == [("arg1", True), ("arg2", True)]

                simple = (await c.get_prompt("test_simple_prompt")).messages
                assert len(simple) == 1 and simple[0].role == "user"
                assert isinstance(simple[0].content, sdk.TextContent)
                assert simple[0].content.text == "This is a simple prompt for testing."

                with_args = await c.get_prompt(
                    "test_prompt_with_arguments", {"arg1": "alpha", "arg2": "beta"}
                )
                assert isinstance(with_args.messages[0].content, sdk.TextContent)
                assert (
                    with_args.messages[0].content.text
                    == "Prompt with arguments: arg1='alpha', arg2='beta'"
                )

                embedded = await c.get_prompt(
                    "test_prompt_with_embedded_resource",
                    {"resourceUri": "test://my-resource"},
                )
                first, second = embedded.messages
                assert isinstance(first.content, sdk.EmbeddedResource)
                assert isinstance(first.content.resource, sdk.TextResourceContents)
                assert str(first.content.resource.uri) == "test://my-resource"
                assert first.content.resource.text == "Embedded resource content for testing."
                assert isinstance(second.content, sdk.TextContent)

                image = (await c.get_prompt("test_prompt_with_image")).messages
                assert isinstance(image[0].content, sdk.ImageContent)
                assert_png(image[0].content.data)
                assert image[0].content.mime_type == "image/png"
                assert isinstance(image[1].content, sdk.TextContent)
                assert image[1].content.text == "Please analyze the image above."

                ref = sdk.PromptReference(type="ref/prompt", name="test_prompt_with_arguments")
                completed = await c.complete(ref, {"name": "arg1", "value": "test"})
                assert completed.completion.values == ["test-value-1", "test-value-2"]
                assert completed.completion.total == 2
                assert completed.completion.has_more is False
                nothing = await c.complete(ref, {"name": "arg1", "value": "zzz"})
                assert nothing.completion.values == []


async def test_sdk_client_progress_and_logging() -> None:
    seen = Recorder()
    with anyio.fail_after(TEST_TIMEOUT):
        async with SdkClient(everything_server(), mode="legacy", logging_callback=seen.on_log) as c:
            with anyio.fail_after(BODY_TIMEOUT):
                result = await c.call_tool(
                    "test_tool_with_progress", {}, progress_callback=seen.on_progress
                )
                assert only_text(result) == "Tool with progress executed successfully"
                assert [p for p, _, _ in seen.progress] == [0, 50, 100]
                assert all(total == 100 for _, total, _ in seen.progress)
                assert seen.progress[-1][2] == "Completed step 100 of 100"

                await c.set_logging_level("debug")
                result = await c.call_tool("test_tool_with_logging", {})
                assert only_text(result) == "Tool with logging executed successfully"
                with anyio.fail_after(5):  # notifications may trail the result
                    while len(seen.logs) < 3:
                        await anyio.sleep(0.01)
                assert [log.data for log in seen.logs] == [
                    "Tool execution started",
                    "Tool processing data",
                    "Tool execution completed",
                ]
                assert {log.level for log in seen.logs} == {"info"}

                # Above the tool's level: the server must drop its messages.
                await c.set_logging_level("error")
                await c.call_tool("test_tool_with_logging", {})
                await anyio.sleep(0.1)
                assert len(seen.logs) == 3


async def test_sdk_client_sampling_and_elicitation() -> None:
    seen = Recorder()
    with anyio.fail_after(TEST_TIMEOUT):
        async with SdkClient(
            everything_server(),
            mode="legacy",
            sampling_callback=seen.on_sampling,
            elicitation_callback=seen.on_elicit,
        ) as c:
            with anyio.fail_after(BODY_TIMEOUT):
                sampled = await c.call_tool("test_sampling", {"prompt": "What is 2+2?"})
                assert only_text(sampled) == "LLM response: 4"
                (request,) = seen.sampling
                assert request.max_tokens == 100
                (message,) = request.messages
                assert message.role == "user"
                assert isinstance(message.content, sdk.TextContent)
                assert message.content.text == "What is 2+2?"

                elicited = await c.call_tool("test_elicitation", {"message": "Who are you?"})
                assert only_text(elicited) == (
                    "User response: action=accept, "
                    'content={"username": "bob", "email": "bob@example.com"}'
                )
                form = seen.elicitations[-1]
                assert form.message == "Who are you?"
                assert set(form.requested_schema["properties"]) == {"username", "email"}
                assert form.requested_schema["required"] == ["username", "email"]

                declined = await c.call_tool("test_elicitation", {"message": "decline me"})
                assert only_text(declined) == "User response: action=decline, content={}"

                defaults = await c.call_tool("test_elicitation_sep1034_defaults", {})
                text = only_text(defaults)
                assert text.startswith("Elicitation completed: action=accept, content=")
                assert json.loads(text.split("content=", 1)[1]) == {
                    "name": "John Doe",
                    "age": 30,
                    "score": 95.5,
                    "status": "active",
                    "verified": True,
                }
                props = seen.elicitations[-1].requested_schema["properties"]
                assert props["status"]["enum"] == ["active", "inactive", "pending"]
                assert props["age"]["type"] == "integer"

                enums = await c.call_tool("test_elicitation_sep1330_enums", {})
                assert only_text(enums) == ("Elicitation completed: action=accept, content={}")
                props = seen.elicitations[-1].requested_schema["properties"]
                assert props["titledSingle"]["oneOf"][0] == {
                    "const": "value1",
                    "title": "First Option",
                }
                assert props["legacyEnum"]["enumNames"] == [
                    "Option One",
                    "Option Two",
                    "Option Three",
                ]
                assert props["titledMulti"]["items"]["anyOf"][2]["const"] == "value3"


# -- 2. SDK client pinned to older handshake versions → our server ------------------------


@pytest.fixture(params=["2024-11-05", "2025-03-26", "2025-06-18"])
def pinned_handshake(request: pytest.FixtureRequest) -> Iterator[str]:
    """The SDK client offers ``request.param`` in ``initialize``: the documented patch of
    the module global ``ClientSession.initialize`` reads at call time, undone afterwards.
    """
    version: str = request.param
    original = getattr(sdk_session, "LATEST_HANDSHAKE_VERSION")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sdk_session, "LATEST_HANDSHAKE_VERSION", version)
        yield version
    assert getattr(sdk_session, "LATEST_HANDSHAKE_VERSION") == original


async def test_sdk_client_older_handshake(pinned_handshake: str) -> None:
    seen = Recorder()
    with anyio.fail_after(TEST_TIMEOUT):
        async with SdkClient(
            everything_server(), mode="legacy", sampling_callback=seen.on_sampling
        ) as c:
            with anyio.fail_after(BODY_TIMEOUT):
                assert c.protocol_version == pinned_handshake
                # ``completions`` arrived in 2025-03-26: not advertised to older clients.
                has_completions = c.server_capabilities.completions is not None
                assert has_completions == (pinned_handshake != "2024-11-05")
                await c.send_ping()

                tools = {tool.name for tool in (await c.list_tools()).tools}
                assert tools >= EVERYTHING_TOOLS
                assert (
                    only_text(await c.call_tool("test_simple_text", {}))
                    == "This is a simple text response for testing."
                )
                failed = await c.call_tool("test_error_handling", {})
                assert failed.is_error is True

                # A server → client request, re-shaped for the older version.
                sampled = await c.call_tool("test_sampling", {"prompt": "2+2?"})
                assert only_text(sampled) == "LLM response: 4"
                assert seen.sampling[0].messages[0].content == sdk.TextContent(
                    type="text", text="2+2?"
                )


# -- 3. our client → SDK server ----------------------------------------------------------


class PeerHandlers(ClientHandlers):
    """Our side of the SDK server's requests: a fake LLM, and a log sink."""

    def __init__(self) -> None:
        self.sampling: list[t.CreateMessageRequestParams] = []
        self.logs: list[t.LoggingMessageNotificationParams] = []

    async def create_message(
        self, params: t.CreateMessageRequestParams, ctx: RequestContext
    ) -> t.CreateMessageResult:
        self.sampling.append(params)
        return t.CreateMessageResult(
            role="assistant", content=t.TextContent(text="four"), model="fake-llm"
        )

    async def on_logging_message(self, params: t.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)


def runtime_session(client: Client) -> ClientSession:
    """The runtime's session under a typed client (typed there as ``Requester``)."""
    session = client.session
    assert isinstance(session, ClientSession)
    return session


def child_of(client: Client) -> StdioProcess:
    """The spawned server process."""
    session = runtime_session(client).session
    assert session is not None and isinstance(session.transport, StdioProcess)
    return session.transport


async def test_our_client_against_sdk_server() -> None:
    with anyio.fail_after(TEST_TIMEOUT):
        async with stdio_client(Client, sys.executable, [str(PEER)], cwd=str(ROOT)) as client:
            child = child_of(client)
            with anyio.fail_after(BODY_TIMEOUT):
                assert client.protocol_version == "2025-11-25"
                session = runtime_session(client)
                assert session.server_info == {"name": "sdk-peer", "version": "1.0.0"}
                assert {"tools", "resources", "prompts", "logging"} <= set(
                    session.server_capabilities
                )

                tools = (await client.list_tools()).tools
                assert isinstance(tools[0], t.Tool)
                assert [tool.name for tool in tools] == [
                    "echo",
                    "sample",
                    "progress",
                    "log",
                ]
                assert tools[0].input_schema["required"] == ["text"]

                echoed = await client.call_tool(name="echo", arguments={"text": "hé!"})
                assert isinstance(echoed, t.CallToolResult)
                assert echoed.is_error is False
                assert len(echoed.content) == 1
                block = echoed.content[0]
                assert isinstance(block, t.TextContent) and block.text == "hé!"

                with pytest.raises(McpError) as unknown:
                    await client.call_tool(name="nope")
                assert unknown.value.code == -32602
                assert unknown.value.message == "Unknown tool: nope"

                resources = (await client.list_resources()).resources
                assert [(r.uri, r.mime_type) for r in resources] == [
                    (README_URI, "text/plain"),
                    (BLOB_URI, "application/octet-stream"),
                ]
                readme = (await client.read_resource(uri=README_URI)).contents
                assert len(readme) == 1
                assert isinstance(readme[0], t.TextResourceContents)
                assert readme[0].text == README_TEXT
                assert readme[0].mime_type == "text/plain"
                blob = (await client.read_resource(uri=BLOB_URI)).contents
                assert isinstance(blob[0], t.BlobResourceContents)
                assert base64.b64decode(blob[0].blob) == bytes(range(5))

                (prompt,) = (await client.list_prompts()).prompts
                assert prompt.name == "greet"
                assert [(a.name, a.required) for a in prompt.arguments or []] == [("who", True)]
                greeting = await client.get_prompt(name="greet", arguments={"who": "Ann"})
                assert isinstance(greeting, t.GetPromptResult)
                assert greeting.description == "A greeting"
                (message,) = greeting.messages
                assert message.role == "user"
                assert isinstance(message.content, t.TextContent)
                assert message.content.text == "Hello, Ann!"
        assert child.process.returncode is not None  # the SDK server was stopped


async def test_our_client_sdk_server_round_trips() -> None:
    handlers = PeerHandlers()
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    with anyio.fail_after(TEST_TIMEOUT):
        async with stdio_client(
            Client, sys.executable, [str(PEER)], handlers=handlers, cwd=str(ROOT)
        ) as client:
            child = child_of(client)
            with anyio.fail_after(BODY_TIMEOUT):
                # Sampling: the SDK server asks us (sampling/createMessage) mid-call.
                sampled = await client.call_tool(
                    name="sample", arguments={"prompt": "What is 2+2?"}
                )
                assert isinstance(sampled.content[0], t.TextContent)
                assert sampled.content[0].text == "model=fake-llm role=assistant said=four"
                (request,) = handlers.sampling
                assert isinstance(request, t.CreateMessageRequestParams)
                assert request.max_tokens == 32
                assert request.system_prompt == "Answer briefly."
                (asked,) = request.messages
                assert asked.role == "user"
                assert isinstance(asked.content, t.TextContent)
                assert asked.content.text == "What is 2+2?"

                # Progress: our token goes out in _meta, the SDK reports against it.
                result = await runtime_session(client).request(
                    "tools/call",
                    t.CallToolRequestParams(name="progress", arguments={"steps": 3}),
                    t.CallToolResult,
                    progress=on_progress,
                )
                assert isinstance(result, t.CallToolResult)
                assert isinstance(result.content[0], t.TextContent)
                assert result.content[0].text == "done after 3 steps"
                assert progress == [
                    (1, 3, "step 1/3"),
                    (2, 3, "step 2/3"),
                    (3, 3, "step 3/3"),
                ]

                # Logging: logging/setLevel, then typed notifications/message.
                await runtime_session(client).request(
                    "logging/setLevel", t.SetLevelRequestParams(level="debug")
                )
                logged = await client.call_tool(name="log")
                assert isinstance(logged.content[0], t.TextContent)
                assert logged.content[0].text == "logged"
                with anyio.fail_after(5):
                    while len(handlers.logs) < 2:
                        await anyio.sleep(0.01)
                assert [(m.level, m.data, m.logger) for m in handlers.logs] == [
                    ("debug", "starting", "sdk-peer"),
                    ("info", "working", "sdk-peer"),
                ]
        assert child.process.returncode is not None


async def test_our_client_offering_2024_11_05() -> None:
    """Our 2025-11-25-typed client offering only 2024-11-05: the SDK server answers in
    that version, and the runtime converts both ways (results up, sampling params up and
    our answer down)."""
    handlers = PeerHandlers()
    with anyio.fail_after(TEST_TIMEOUT):
        async with stdio_client(
            Client,
            sys.executable,
            [str(PEER)],
            handlers=handlers,
            cwd=str(ROOT),
            versions=["2024-11-05"],
        ) as client:
            child = child_of(client)
            with anyio.fail_after(BODY_TIMEOUT):
                assert client.protocol_version == "2024-11-05"
                tools = (await client.list_tools()).tools
                assert isinstance(tools[0], t.Tool) and tools[0].name == "echo"
                echoed = await client.call_tool(name="echo", arguments={"text": "old"})
                assert isinstance(echoed, t.CallToolResult)
                assert echoed.content == [t.TextContent(text="old")]
                sampled = await client.call_tool(name="sample", arguments={"prompt": "2+2?"})
                assert sampled.content == [
                    t.TextContent(text="model=fake-llm role=assistant said=four")
                ]
                assert isinstance(handlers.sampling[0], t.CreateMessageRequestParams)
                blob = (await client.read_resource(uri=BLOB_URI)).contents
                assert blob == [
                    t.BlobResourceContents(
                        uri=BLOB_URI,
                        mime_type="application/octet-stream",
                        blob="AAECAwQ=",
                    )
                ]
        assert child.process.returncode is not None
