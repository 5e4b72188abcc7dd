"""Interoperability with the official MCP Python SDK (``mcp`` 2.3) over real Streamable HTTP
on 127.0.0.1, in both protocol eras, plus era detection over stdio:

1. the SDK ``Client`` against our HTTP server (``python -m examples.everything --transport
   http``), with ``mode="auto"`` (which must land on 2026-07-28) and ``mode="legacy"``
   (2025-11-25, with an ``Mcp-Session-Id``). Sampling and elicitation travel as server →
   client JSON-RPC requests on the call's SSE stream in the legacy era, and as
   ``input_required`` results that the SDK fulfils and retries in the modern era: a recording
   ``httpx2`` client checks which one went over the wire;
2. our ``http_client`` with the generated 2026-07-28 ``Client`` against an SDK low-level
   HTTP server (``tests/peers/sdk_http_server.py``), with ``mode="auto"`` (detects the modern
   era) and ``mode="legacy"`` (negotiates 2025-11-25);
3. era detection of our ``stdio_client(..., mode="auto")`` against the SDK stdio server, our
   own everything server, and a legacy-only server (``tests.peers.slow_server --versions``
   limited to the handshake versions), which must fall back to ``initialize`` within the
   probe timeout;
4. the 2024-11-05 HTTP+SSE transport both ways: the SDK's ``sse_client`` against our HTTP
   server's ``/sse`` stream (lists, calls, reads, prompts, and the server's own requests
   answered over it), our ``http_client`` against the SDK's SSE server, and our automatic
   mode choosing the transport a Streamable-HTTP-only, an SSE-only and a dual server speak.

Each HTTP server is started once per module (a subprocess on a free port) and stopped at the
end; every test is bounded in time.
"""

from __future__ import annotations

import base64
import inspect
import json
import socket
import struct
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import anyio
import httpx2
import pytest

import mcp
import mcp.types as sdk
from mcp import Client as SdkClient
from mcp import MCPError
from mcp.client.session import ClientRequestContext
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

from mcpgen.generated._support import RequestContext
from mcpgen.generated.v2026_07_28 import types as t
from mcpgen.generated.v2026_07_28.client import Client, ClientHandlers
from mcpgen.runtime.client import ClientSession, http_client, stdio_client
from mcpgen.runtime import McpError
from mcpgen.runtime.client.http import HttpClientTransport
from support.processes import free_port, stop

ROOT = Path(__file__).resolve().parents[2]
SDK_HTTP_PEER = ROOT / "tests" / "peers" / "sdk_http_server.py"
SDK_STDIO_PEER = ROOT / "tests" / "peers" / "sdk_stdio_server.py"
MODERN, LEGACY = "2026-07-28", "2025-11-25"
HANDSHAKE_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]

#: Wall-clock bound of one test: connecting, the body and the shutdown.
TEST_TIMEOUT = 30.0
#: Bound of a test's body once connected.
BODY_TIMEOUT = 15.0
#: How long a server subprocess may take to accept connections.
START_TIMEOUT = 20.0

#: The probe timeout ``ClientSession.connect`` uses (``stdio_client`` keeps the default).
PROBE_TIMEOUT: float = inspect.signature(ClientSession.connect).parameters["probe_timeout"].default

pytestmark = [
    pytest.mark.anyio,
    # The SDK marks logging, sampling and elicitation as deprecated (2026-07-28, SEP-2577).
    pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning"),
]

SdkMode = Literal["auto", "legacy"]
ERA_OF_MODE = {"auto": MODERN, "legacy": LEGACY}
MODES = pytest.mark.parametrize("mode", ["auto", "legacy"])


# -- HTTP server subprocesses ------------------------------------------------------------


@dataclass
class HttpServer:
    process: subprocess.Popen[bytes]
    url: str


def wait_until_listening(process: subprocess.Popen[bytes], port: int, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"server exited with {process.returncode}: {log.read_text()[-2000:]}")
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.settimeout(0.5)
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    pytest.fail(f"server did not listen on {port} within {START_TIMEOUT}s: {log.read_text()}")


def run_http_server(args: list[str], log: Path) -> Iterator[HttpServer]:
    port = free_port()
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, *args, "--port", str(port)],
            cwd=str(ROOT),
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until_listening(process, port, log)
        yield HttpServer(process, f"http://127.0.0.1:{port}/mcp")
    finally:
        stop(process)
    assert process.returncode is not None


@pytest.fixture(scope="module")
def everything_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """Our conformance server over Streamable HTTP."""
    log = tmp_path_factory.mktemp("everything") / "server.log"
    yield from run_http_server(
        ["-m", "examples.everything", "--transport", "http", "--host", "127.0.0.1"], log
    )


@pytest.fixture(scope="module")
def sdk_sse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """The SDK low-level server over HTTP+SSE alone (its ``url`` is the SSE endpoint)."""
    log = tmp_path_factory.mktemp("sdk-sse") / "server.log"
    for served in run_http_server([str(SDK_HTTP_PEER), "--transport", "sse"], log):
        yield HttpServer(served.process, served.url.removesuffix("/mcp") + "/sse")


@pytest.fixture(scope="module")
def sdk_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """The SDK low-level server over Streamable HTTP."""
    log = tmp_path_factory.mktemp("sdk-http") / "server.log"
    yield from run_http_server([str(SDK_HTTP_PEER)], log)


# -- 1. SDK client → our HTTP server -----------------------------------------------------


@dataclass
class Post:
    """One POST the SDK client sent, with what came back."""

    body: dict[str, Any]
    mcp_method: str | None
    session_id: str | None
    protocol_header: str | None
    status: int = 0
    content_type: str = ""

    @property
    def is_response(self) -> bool:
        """A JSON-RPC response (the client answering a server → client request)."""
        return "method" not in self.body and ("result" in self.body or "error" in self.body)

    def calls(self, tool: str) -> bool:
        return self.body.get("method") == "tools/call" and self.body["params"]["name"] == tool


class Wire:
    """``httpx2`` event hooks that record every POST and its response's status and type."""

    def __init__(self) -> None:
        self.posts: list[Post] = []
        self._pending: dict[int, Post] = {}

    async def on_request(self, request: httpx2.Request) -> None:
        if request.method != "POST":
            return
        post = Post(
            body=json.loads(request.content),
            mcp_method=request.headers.get("mcp-method"),
            session_id=request.headers.get("mcp-session-id"),
            protocol_header=request.headers.get("mcp-protocol-version"),
        )
        self.posts.append(post)
        self._pending[id(request)] = post

    async def on_response(self, response: httpx2.Response) -> None:
        post = self._pending.pop(id(response.request), None)
        if post is not None:
            post.status = response.status_code
            post.content_type = response.headers.get("content-type", "").split(";")[0]

    def tool_calls(self, tool: str) -> list[Post]:
        return [post for post in self.posts if post.calls(tool)]


class Recorder:
    """The SDK client's callbacks; records what our server sent."""

    def __init__(self) -> None:
        self.logs: list[sdk.LoggingMessageNotificationParams] = []
        self.progress: list[tuple[float, float | None, str | None]] = []
        self.sampling: list[tuple[Any, sdk.CreateMessageRequestParams]] = []
        self.elicitations: list[tuple[Any, sdk.ElicitRequestFormParams]] = []
        self.roots_asked = 0

    async def on_log(self, params: sdk.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)

    async def on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.progress.append((progress, total, message))

    async def on_sampling(
        self, context: ClientRequestContext, params: sdk.CreateMessageRequestParams
    ) -> sdk.CreateMessageResult:
        self.sampling.append((context.request_id, params))
        return sdk.CreateMessageResult(
            role="assistant",
            content=sdk.TextContent(type="text", text="Paris"),
            model="fake-llm",
            stop_reason="endTurn",
        )

    async def on_elicit(
        self, context: ClientRequestContext, params: sdk.ElicitRequestParams
    ) -> sdk.ElicitResult:
        assert isinstance(params, sdk.ElicitRequestFormParams), params
        self.elicitations.append((context.request_id, params))
        if params.message == "decline me":
            return sdk.ElicitResult(action="decline")
        properties = set(params.requested_schema["properties"])
        if properties == {"username", "email"}:
            return sdk.ElicitResult(
                action="accept", content={"username": "bob", "email": "bob@example.com"}
            )
        answers: dict[str, str | int | float | bool | list[str] | None] = {
            "name": "Ann",
            "color": "teal",
            "context": "the docs",
        }
        return sdk.ElicitResult(
            action="accept", content={k: v for k, v in answers.items() if k in properties}
        )

    async def on_roots(self, context: ClientRequestContext) -> sdk.ListRootsResult:
        self.roots_asked += 1
        return sdk.ListRootsResult(
            roots=[sdk.Root.model_validate({"uri": "file:///work/project", "name": "project"})]
        )


@asynccontextmanager
async def sdk_client(
    url: str, mode: SdkMode, wire: Wire | None = None, **options: Any
) -> AsyncIterator[SdkClient]:
    """An SDK ``Client`` over Streamable HTTP, through a recording ``httpx2`` client."""
    hooks = {"request": [wire.on_request], "response": [wire.on_response]} if wire else {}
    async with httpx2.AsyncClient(
        timeout=httpx2.Timeout(30.0, read=300.0), event_hooks=hooks
    ) as http:
        async with SdkClient(
            streamable_http_client(url, http_client=http), mode=mode, **options
        ) as client:
            yield client


def assert_png(data: str) -> None:
    """A base64 1×1 PNG (what examples/everything/fixtures.py serves)."""
    raw = base64.b64decode(data, validate=True)
    assert raw.startswith(b"\x89PNG\r\n\x1a\n") and raw[12:16] == b"IHDR"
    assert struct.unpack(">II", raw[16:24]) == (1, 1)


def only_text(result: sdk.CallToolResult) -> str:
    assert not result.is_error, result
    assert len(result.content) == 1, result.content
    block = result.content[0]
    assert isinstance(block, sdk.TextContent), block
    return block.text


def assert_era_on_the_wire(wire: Wire, mode: SdkMode) -> None:
    """Every POST of the connection belongs to the era the mode must end up in."""
    first = wire.posts[0]
    if mode == "auto":
        assert first.body["method"] == "server/discover" and first.status == 200
        for post in wire.posts:
            assert post.session_id is None, post
            assert post.protocol_header == MODERN, post
            assert post.mcp_method == post.body.get("method"), post
    else:
        assert first.body["method"] == "initialize"
        assert first.body["params"]["protocolVersion"] == LEGACY
        for post in wire.posts[1:]:
            assert post.session_id, post  # the session the server opened
            assert post.mcp_method is None, post
        assert {post.session_id for post in wire.posts[1:]} == {wire.posts[1].session_id}


@MODES
async def test_sdk_client_over_http_tools_resources_prompts(
    everything_http: HttpServer, mode: SdkMode
) -> None:
    wire = Wire()
    with anyio.fail_after(TEST_TIMEOUT):
        async with sdk_client(everything_http.url, mode, wire) as c:
            with anyio.fail_after(BODY_TIMEOUT):
                assert c.protocol_version == ERA_OF_MODE[mode]
                assert c.server_info is not None
                assert (c.server_info.name, c.server_info.version) == (
                    "mcpgen-everything",
                    "0.1.0",
                )
                caps = c.server_capabilities
                assert caps.tools is not None and caps.resources is not None
                assert caps.prompts is not None and caps.completions is not None

                tools = {tool.name: tool for tool in (await c.list_tools()).tools}
                assert {
                    "test_simple_text",
                    "test_image_content",
                    "test_sampling",
                    "test_elicitation",
                    "test_tool_with_progress",
                    "test_input_required_result_multiple_inputs",
                } <= set(tools)
                assert tools["test_sampling"].input_schema["required"] == ["prompt"]
                assert (
                    tools["json_schema_2020_12_tool"].input_schema["$schema"]
                    == "https://json-schema.org/draft/2020-12/schema"
                )

                assert (
                    only_text(await c.call_tool("test_simple_text", {}))
                    == "This is a simple text response for testing."
                )
                image = (await c.call_tool("test_image_content", {})).content
                assert len(image) == 1 and isinstance(image[0], sdk.ImageContent)
                assert image[0].mime_type == "image/png"
                assert_png(image[0].data)
                mixed = (await c.call_tool("test_multiple_content_types", {})).content
                assert [block.type for block in mixed] == ["text", "image", "resource"]
                assert isinstance(mixed[2], sdk.EmbeddedResource)
                assert isinstance(mixed[2].resource, sdk.TextResourceContents)
                assert json.loads(mixed[2].resource.text) == {"test": "data", "value": 123}
                failed = await c.call_tool("test_error_handling", {})
                assert failed.is_error is True
                assert isinstance(failed.content[0], sdk.TextContent)
                assert failed.content[0].text == (
                    "This tool intentionally returns an error for testing"
                )
                with pytest.raises(MCPError) as unknown:  # caught inside the ``async with``
                    await c.call_tool("no_such_tool", {})
                assert unknown.value.error.code == -32602
                assert "no_such_tool" in unknown.value.error.message

                listed = {str(r.uri) for r in (await c.list_resources()).resources}
                assert listed == {
                    "test://static-text",
                    "test://static-binary",
                    "test://watched-resource",
                }
                text = (await c.read_resource("test://static-text")).contents
                assert len(text) == 1 and isinstance(text[0], sdk.TextResourceContents)
                assert text[0].text == "This is the content of the static text resource."
                binary = (await c.read_resource("test://static-binary")).contents
                assert isinstance(binary[0], sdk.BlobResourceContents)
                assert binary[0].mime_type == "image/png"
                assert_png(binary[0].blob)
                templates = (await c.list_resource_templates()).resource_templates
                assert [tpl.uri_template for tpl in templates] == ["test://template/{id}/data"]
                data = (await c.read_resource("test://template/42/data")).contents
                assert isinstance(data[0], sdk.TextResourceContents)
                assert json.loads(data[0].text) == {
                    "id": "42",
                    "templateTest": True,
                    "data": "Data for ID: 42",
                }
                with pytest.raises(MCPError) as missing:
                    await c.read_resource("test://nowhere")
                # Resource not found: -32002 in the legacy era, INVALID_PARAMS in the modern.
                assert missing.value.error.code == (-32602 if mode == "auto" else -32002)

                prompts = {p.name: p for p in (await c.list_prompts()).prompts}
                assert [
                    (a.name, a.required)
                    for a in prompts["test_prompt_with_arguments"].arguments or []
                ] == [("arg1", True), ("arg2", True)]
                with_args = await c.get_prompt(
                    "test_prompt_with_arguments", {"arg1": "alpha", "arg2": "beta"}
                )
                assert isinstance(with_args.messages[0].content, sdk.TextContent)
                assert (
                    with_args.messages[0].content.text
                    == "Prompt with arguments: arg1='alpha', arg2='beta'"
                )
                image_prompt = (await c.get_prompt("test_prompt_with_image")).messages
                assert isinstance(image_prompt[0].content, sdk.ImageContent)
                assert_png(image_prompt[0].content.data)

                ref = sdk.PromptReference(type="ref/prompt", name="test_prompt_with_arguments")
                completed = await c.complete(ref, {"name": "arg1", "value": "test"})
                assert completed.completion.values == ["test-value-1", "test-value-2"]
                assert completed.completion.total == 2
                assert completed.completion.has_more is False
    assert_era_on_the_wire(wire, mode)
    if mode == "auto":  # stateless modern requests answer with plain JSON
        assert all(post.content_type == "application/json" for post in wire.posts)


@MODES
async def test_sdk_client_over_http_progress_and_logging(
    everything_http: HttpServer, mode: SdkMode
) -> None:
    seen = Recorder()
    # Modern: log messages come only to requests stamped with a log level (``log_level=``).
    options: dict[str, Any] = {"log_level": "debug"} if mode == "auto" else {}
    wire = Wire()
    with anyio.fail_after(TEST_TIMEOUT):
        async with sdk_client(
            everything_http.url, mode, wire, logging_callback=seen.on_log, **options
        ) as c:
            with anyio.fail_after(BODY_TIMEOUT):
                assert c.protocol_version == ERA_OF_MODE[mode]
                result = await c.call_tool(
                    "test_tool_with_progress", {}, progress_callback=seen.on_progress
                )
                assert only_text(result) == "Tool with progress executed successfully"
                assert seen.progress == [
                    (0, 100, "Completed step 0 of 100"),
                    (50, 100, "Completed step 50 of 100"),
                    (100, 100, "Completed step 100 of 100"),
                ]

                if mode == "legacy":
                    await c.set_logging_level("debug")
                result = await c.call_tool("test_tool_with_logging", {})
                assert only_text(result) == "Tool with logging executed successfully"
                with anyio.fail_after(5):  # legacy notifications may trail the result
                    while len(seen.logs) < 3:
                        await anyio.sleep(0.01)
                assert [(log.level, log.data) for log in seen.logs] == [
                    ("info", "Tool execution started"),
                    ("info", "Tool processing data"),
                    ("info", "Tool execution completed"),
                ]

                if mode == "legacy":
                    # Above the tool's level: the server must drop its messages.
                    await c.set_logging_level("error")
                    await c.call_tool("test_tool_with_logging", {})
                    await anyio.sleep(0.2)
                    assert len(seen.logs) == 3
                else:
                    # logging/setLevel does not exist in the modern era.
                    with pytest.raises(MCPError) as refused:
                        await c.set_logging_level("debug")
                    assert refused.value.error.code == -32601
    assert_era_on_the_wire(wire, mode)
    # The progress and logging calls streamed their notifications (SSE) in both eras.
    for tool in ("test_tool_with_progress", "test_tool_with_logging"):
        assert wire.tool_calls(tool)[0].content_type == "text/event-stream"
    if mode == "auto":
        stamped = wire.tool_calls("test_tool_with_logging")[0].body["params"]["_meta"]
        assert stamped["io.modelcontextprotocol/logLevel"] == "debug"


async def test_sdk_client_over_http_modern_logs_need_opt_in(everything_http: HttpServer) -> None:
    """Modern era: a logging callback alone does not ask for log messages."""
    seen = Recorder()
    with anyio.fail_after(TEST_TIMEOUT):
        async with sdk_client(everything_http.url, "auto", logging_callback=seen.on_log) as c:
            with anyio.fail_after(BODY_TIMEOUT):
                assert c.protocol_version == MODERN
                result = await c.call_tool("test_tool_with_logging", {})
                assert only_text(result) == "Tool with logging executed successfully"
                await anyio.sleep(0.2)
                assert seen.logs == []


@MODES
async def test_sdk_client_over_http_sampling_and_elicitation(
    everything_http: HttpServer, mode: SdkMode
) -> None:
    seen = Recorder()
    wire = Wire()
    with anyio.fail_after(TEST_TIMEOUT):
        async with sdk_client(
            everything_http.url,
            mode,
            wire,
            sampling_callback=seen.on_sampling,
            elicitation_callback=seen.on_elicit,
            list_roots_callback=seen.on_roots,
        ) as c:
            with anyio.fail_after(BODY_TIMEOUT):
                assert c.protocol_version == ERA_OF_MODE[mode]
                await c.list_tools()  # so call_tool sends no tools/list of its own

                sampled = await c.call_tool("test_sampling", {"prompt": "Capital of France?"})
                assert only_text(sampled) == "LLM response: Paris"
                ((_, request),) = seen.sampling
                assert request.max_tokens == 100
                (message,) = request.messages
                assert message.role == "user"
                assert isinstance(message.content, sdk.TextContent)
                assert message.content.text == "Capital of France?"

                elicited = await c.call_tool("test_elicitation", {"message": "Who are you?"})
                assert only_text(elicited) == (
                    "User response: action=accept, "
                    'content={"username": "bob", "email": "bob@example.com"}'
                )
                _, form = seen.elicitations[-1]
                assert form.message == "Who are you?"
                assert form.requested_schema["required"] == ["username", "email"]
                declined = await c.call_tool("test_elicitation", {"message": "decline me"})
                assert only_text(declined) == "User response: action=decline, content={}"

                # Three inputs at once (elicitation, sampling, roots), then two rounds.
                several = await c.call_tool("test_input_required_result_multiple_inputs", {})
                assert only_text(several) == "Paris Ann (roots: file:///work/project)"
                assert seen.roots_asked == 1
                rounds = await c.call_tool("test_input_required_result_multi_round", {})
                assert only_text(rounds) == "Ann likes teal"
                assert [f.message for _, f in seen.elicitations[-2:]] == [
                    "Step 1: What is your name?",
                    "Step 2: What is your favorite color?",
                ]

                # A prompt that asks for input before it answers.
                prompt = await c.get_prompt("test_input_required_result_prompt")
                (prompt_message,) = prompt.messages
                assert isinstance(prompt_message.content, sdk.TextContent)
                assert prompt_message.content.text == "Context: the docs"
    assert_era_on_the_wire(wire, mode)

    answers = [post for post in wire.posts if post.is_response]
    retries = [post for post in wire.posts if "inputResponses" in post.body.get("params", {})]
    sampling_calls = wire.tool_calls("test_sampling")
    inputs = len(seen.sampling) + len(seen.elicitations) + seen.roots_asked
    # Sampling 1, elicitation 1 + 1, three at once, two rounds, and the prompt's 1.
    assert inputs == 1 + 2 + 3 + 2 + 1
    if mode == "legacy":
        # Server → client requests on the call's SSE stream, each answered by a POST.
        assert retries == []
        assert len(answers) == inputs
        assert all(post.status == 202 for post in answers)
        assert [post.body["result"]["model"] for post in answers[:1]] == ["fake-llm"]
        (call,) = sampling_calls
        assert call.content_type == "text/event-stream"
        assert all(isinstance(request_id, int) for request_id, _ in seen.sampling)
    else:
        # input_required results (plain JSON), fulfilled and retried under a new id.
        assert answers == []
        first, retry = sampling_calls
        assert first.content_type == retry.content_type == "application/json"
        assert first.body["id"] != retry.body["id"]
        assert "inputResponses" not in first.body["params"]
        (key,) = retry.body["params"]["inputResponses"]
        assert retry.body["params"]["inputResponses"][key]["model"] == "fake-llm"
        assert isinstance(retry.body["params"]["requestState"], str)
        assert seen.sampling[0][0] == key  # the SDK hands the input's key as request id
        # One retry per round: 1 + (1 + 1) + 1 + 2 + 1 (the prompt).
        assert len(retries) == 7
        assert [post.mcp_method for post in retries].count("prompts/get") == 1


# -- 2. our client → SDK HTTP server ------------------------------------------------------

SDK_README_URI = "sdk://http-peer/readme"
SDK_README_TEXT = "Served over Streamable HTTP by the official MCP Python SDK."
SDK_TOOLS = ["echo", "ask", "progress", "log", "whoami"]


class PeerHandlers(ClientHandlers):
    """Our side of the SDK server's input requests: a fake LLM, a form filler, a log sink."""

    def __init__(self) -> None:
        self.sampling: list[tuple[str | int, str, t.CreateMessageRequestParams]] = []
        self.elicitations: list[tuple[str | int, str, t.ElicitRequestParams]] = []
        self.logs: list[t.LoggingMessageNotificationParams] = []

    async def create_message(
        self, params: t.CreateMessageRequestParams, ctx: RequestContext
    ) -> t.CreateMessageResult:
        self.sampling.append((ctx.request_id, ctx.protocol_version, params))
        return t.CreateMessageResult(
            role="assistant", content=t.TextContent(text="four"), model="fake-llm"
        )

    async def elicit(self, params: t.ElicitRequestParams, ctx: RequestContext) -> t.ElicitResult:
        self.elicitations.append((ctx.request_id, ctx.protocol_version, params))
        return t.ElicitResult(action="accept", content={"name": "Ann"})

    async def on_logging_message(self, params: t.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)


def runtime_session(client: Client) -> ClientSession:
    """The runtime's session under a typed client (typed there as ``Requester``)."""
    session = client.session
    assert isinstance(session, ClientSession)
    return session


def http_transport(client: Client) -> HttpClientTransport:
    transport = runtime_session(client).transport
    assert isinstance(transport, HttpClientTransport)
    return transport


def text_of(result: t.InputRequiredResultOrCallToolResult) -> str:
    assert isinstance(result, t.CallToolResult), result
    assert result.is_error in (False, t.UNSET), result
    (block,) = result.content
    assert isinstance(block, t.TextContent), block
    return block.text


OurMode = Literal["auto", "legacy"]


@MODES
async def test_our_client_over_http(sdk_http: HttpServer, mode: OurMode) -> None:
    with anyio.fail_after(TEST_TIMEOUT):
        async with http_client(Client, sdk_http.url, mode=mode) as client:
            with anyio.fail_after(BODY_TIMEOUT):
                session = runtime_session(client)
                assert client.protocol_version == ERA_OF_MODE[mode]
                assert session.era == ("modern" if mode == "auto" else "legacy")
                assert session.server_info == {"name": "sdk-http-peer", "version": "1.0.0"}
                assert {"tools", "resources", "prompts"} <= set(session.server_capabilities)
                # Legacy: a session id from initialize; modern: stateless requests.
                assert (http_transport(client).session_id is None) == (mode == "auto")

                tools = (await client.list_tools()).tools
                assert all(isinstance(tool, t.Tool) for tool in tools)
                assert [tool.name for tool in tools] == SDK_TOOLS
                assert tools[0].input_schema["required"] == ["text"]

                echoed = await client.call_tool(name="echo", arguments={"text": "hé ✓"})
                assert isinstance(echoed, t.CallToolResult)
                assert echoed.result_type == "complete"
                assert text_of(echoed) == "hé ✓"
                # The SDK served the request in the era we settled on.
                assert text_of(await client.call_tool(name="whoami")) == ERA_OF_MODE[mode]

                with pytest.raises(McpError) as unknown:
                    await client.call_tool(name="nope")
                assert unknown.value.code == -32602
                assert unknown.value.message == "Unknown tool: nope"

                resources = (await client.list_resources()).resources
                assert [(r.uri, r.mime_type) for r in resources] == [(SDK_README_URI, "text/plain")]
                readme = await client.read_resource(uri=SDK_README_URI)
                assert isinstance(readme, t.ReadResourceResult)
                (contents,) = readme.contents
                assert isinstance(contents, t.TextResourceContents)
                assert (contents.text, contents.mime_type) == (SDK_README_TEXT, "text/plain")
                (template,) = (await client.list_resource_templates()).resource_templates
                assert isinstance(template, t.ResourceTemplate)
                assert template.uri_template == "sdk://http-peer/items/{id}"
                item = await client.read_resource(uri="sdk://http-peer/items/7")
                assert isinstance(item, t.ReadResourceResult)
                assert isinstance(item.contents[0], t.TextResourceContents)
                assert json.loads(item.contents[0].text) == {"id": "7"}

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


@MODES
async def test_our_client_over_http_round_trips(sdk_http: HttpServer, mode: OurMode) -> None:
    handlers = PeerHandlers()
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    version = ERA_OF_MODE[mode]
    with anyio.fail_after(TEST_TIMEOUT):
        async with http_client(Client, sdk_http.url, handlers=handlers, mode=mode) as client:
            with anyio.fail_after(BODY_TIMEOUT):
                session = runtime_session(client)
                assert client.protocol_version == version
                # Our handlers declare sampling and elicitation: the server sees them.
                assert {"sampling", "elicitation"} <= set(session.conn.capabilities)

                # Legacy: the SDK server sends sampling/createMessage then elicitation/create
                # mid-call; modern: it answers input_required, and the runtime retries.
                asked = await client.call_tool(name="ask", arguments={"prompt": "2+2?"})
                assert json.loads(text_of(asked)) == {
                    "era": "modern" if mode == "auto" else "legacy",
                    "model": "fake-llm",
                    "said": "four",
                    "action": "accept",
                    "content": {"name": "Ann"},
                }
                ((sample_id, sample_version, sample),) = handlers.sampling
                assert isinstance(sample, t.CreateMessageRequestParams)
                assert sample_version == version
                assert sample.max_tokens == 16
                assert sample.system_prompt == "Answer briefly."
                (question,) = sample.messages
                assert question.role == "user"
                assert isinstance(question.content, t.TextContent)
                assert question.content.text == "2+2?"
                ((elicit_id, elicit_version, form),) = handlers.elicitations
                assert isinstance(form, t.ElicitRequestFormParams)
                assert elicit_version == version
                assert form.message == "Who asks '2+2?'?"
                assert form.requested_schema.required == ["name"]
                assert list(form.requested_schema.properties) == ["name"]
                if mode == "auto":  # input requests, keyed by the server
                    assert (sample_id, elicit_id) == ("llm", "form")
                else:  # JSON-RPC requests from the server
                    assert isinstance(sample_id, int) and isinstance(elicit_id, int)

                # Progress: our token goes out in _meta, the SDK reports against it.
                result = await client.call_tool(
                    name="progress", arguments={"steps": 3}, progress=on_progress
                )
                assert text_of(result) == "done after 3 steps"
                assert progress == [
                    (1, 3, "step 1/3"),
                    (2, 3, "step 2/3"),
                    (3, 3, "step 3/3"),
                ]

                # Logging: logging/setLevel (legacy), or a per-request log level (modern).
                if mode == "legacy":
                    await session.request("logging/setLevel", {"level": "debug"}, t.EmptyResult)
                else:
                    session.set_log_level("debug")
                assert text_of(await client.call_tool(name="log")) == "logged"
                with anyio.fail_after(5):
                    while len(handlers.logs) < 2:
                        await anyio.sleep(0.01)
                assert [(m.level, m.data, m.logger) for m in handlers.logs] == [
                    ("debug", "starting", "sdk-http-peer"),
                    ("info", "working", "sdk-http-peer"),
                ]


async def test_our_client_legacy_notification_meta(sdk_http: HttpServer) -> None:
    """A legacy notification carries no ``_meta``; typed for 2026 it must not gain a
    per-request client envelope naming the server as the client."""
    handlers = PeerHandlers()
    with anyio.fail_after(TEST_TIMEOUT):
        async with http_client(Client, sdk_http.url, handlers=handlers, mode="legacy") as client:
            with anyio.fail_after(BODY_TIMEOUT):
                await runtime_session(client).request(
                    "logging/setLevel", {"level": "debug"}, t.EmptyResult
                )
                await client.call_tool(name="log")
                with anyio.fail_after(5):
                    while len(handlers.logs) < 2:
                        await anyio.sleep(0.01)
    meta = handlers.logs[0].meta
    stamped = dict(meta) if isinstance(meta, dict) else {}
    assert "io.modelcontextprotocol/clientInfo" not in stamped, stamped
    assert "io.modelcontextprotocol/clientCapabilities" not in stamped, stamped


# -- 3. era detection over stdio ------------------------------------------------------------


async def detect_over_stdio(args: list[str]) -> tuple[str, str, dict[str, Any], str, float]:
    """Connect with ``mode="auto"``; the version, era, server info, one tool's text and
    how long connecting took."""
    with anyio.fail_after(TEST_TIMEOUT):
        started = time.monotonic()
        async with stdio_client(
            Client,
            sys.executable,
            args,
            mode="auto",
            cwd=str(ROOT),
            stderr=subprocess.DEVNULL,
        ) as client:
            elapsed = time.monotonic() - started
            with anyio.fail_after(BODY_TIMEOUT):
                session = runtime_session(client)
                names = [tool.name for tool in (await client.list_tools()).tools]
                tool = next(n for n in ("echo", "test_simple_text", "whoami") if n in names)
                arguments = {"text": "probe"} if tool == "echo" else {}
                text = text_of(await client.call_tool(name=tool, arguments=arguments))
                return client.protocol_version, session.era, session.server_info, text, elapsed
    raise AssertionError("unreachable")  # pragma: no cover


async def test_stdio_auto_detects_modern_sdk_server() -> None:
    version, era, info, text, _ = await detect_over_stdio([str(SDK_STDIO_PEER)])
    assert (version, era) == (MODERN, "modern")
    assert info == {"name": "sdk-peer", "version": "1.0.0"}
    assert text == "probe"


async def test_stdio_auto_detects_modern_everything_server() -> None:
    version, era, info, text, _ = await detect_over_stdio(
        ["-m", "examples.everything", "--transport", "stdio"]
    )
    assert (version, era) == (MODERN, "modern")
    assert info == {"name": "mcpgen-everything", "version": "0.1.0"}
    assert text == "This is a simple text response for testing."


async def test_stdio_auto_slow_server_serves_modern_by_default() -> None:
    """Why the legacy-only case below limits ``--versions``: by default the peer (typed for
    2025-11-25) accepts every generated version, the modern one included."""
    version, era, _, text, _ = await detect_over_stdio(["-m", "tests.peers.slow_server"])
    assert (version, era) == (MODERN, "modern")
    assert json.loads(text)["protocolVersion"] == MODERN


async def test_stdio_auto_falls_back_to_initialize_on_legacy_only_server() -> None:
    version, era, info, text, elapsed = await detect_over_stdio(
        ["-m", "tests.peers.slow_server", "--versions", ",".join(HANDSHAKE_VERSIONS)]
    )
    assert (version, era) == (LEGACY, "legacy")
    assert info == {"name": "slow-server", "version": "0.1.0"}
    whoami = json.loads(text)
    assert whoami["protocolVersion"] == LEGACY
    assert whoami["clientInfo"]["name"] == "mcpgen-client"
    # The server refused the probe at once: no wait for the probe timeout.
    assert elapsed < PROBE_TIMEOUT, elapsed


async def test_the_era_found_is_remembered_per_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """A second auto connection to a server known to be legacy skips the probe; a
    failure forgets what was known."""
    from mcpgen.runtime.client import session as runtime_client

    args = ["-m", "tests.peers.slow_server", "--versions", ",".join(HANDSHAKE_VERSIONS)]
    key = " ".join([sys.executable, *args])
    from mcpgen.runtime.client.eras import Known, MemoryEras

    eras = MemoryEras()
    monkeypatch.setattr(runtime_client, "ERAS", eras)
    probes: list[str] = []
    real = runtime_client.ClientSession._discover

    async def counting(self: Any, *a: Any, **k: Any) -> Any:
        probes.append("discover")
        return await real(self, *a, **k)

    monkeypatch.setattr(runtime_client.ClientSession, "_discover", counting)
    first = await detect_over_stdio(args)
    assert first[1] == "legacy" and probes == ["discover"]
    known = eras.get(key)
    assert known is not None and known.era == "legacy" and len(eras) == 1
    second = await detect_over_stdio(args)
    assert second[1] == "legacy" and probes == ["discover"], "no second probe"
    with pytest.raises(Exception):
        with anyio.fail_after(TEST_TIMEOUT):
            async with stdio_client(Client, sys.executable, ["-c", "pass"], mode="auto"):
                pass
    eras.remember(
        f"{sys.executable} -c pass", Known(era="legacy", version=LEGACY, until=time.time() + 60)
    )
    with pytest.raises(Exception):
        with anyio.fail_after(TEST_TIMEOUT):
            async with stdio_client(Client, sys.executable, ["-c", "pass"], mode="auto"):
                pass
    assert eras.get(f"{sys.executable} -c pass") is None


# -- 4. the SDK's HTTP+SSE client → our server -----------------------------------------------


@asynccontextmanager
async def sdk_over_sse(url: str, **callbacks: Any) -> AsyncIterator[mcp.ClientSession]:
    async with sse_client(url.removesuffix("/mcp") + "/sse") as (read, write):
        async with mcp.ClientSession(read, write, **callbacks) as session:
            await session.initialize()
            yield session


async def test_sdk_sse_client_lists_calls_reads_and_gets_prompts(
    everything_http: HttpServer,
) -> None:
    with anyio.fail_after(TEST_TIMEOUT):
        async with sdk_over_sse(everything_http.url) as session:
            tools = {tool.name for tool in (await session.list_tools()).tools}
            assert {"test_simple_text", "test_sampling", "test_elicitation"} <= tools
            called = await session.call_tool("test_simple_text", {})
            assert only_text(called) == "This is a simple text response for testing."
            failed = await session.call_tool("test_error_handling", {})
            assert failed.is_error
            read = await session.read_resource("test://static-text")
            (contents,) = read.contents
            assert isinstance(contents, sdk.TextResourceContents) and contents.text
            templates = (await session.list_resource_templates()).resource_templates
            assert [t.uri_template for t in templates] == ["test://template/{id}/data"]
            prompt = await session.get_prompt(
                "test_prompt_with_arguments", {"arg1": "a", "arg2": "b"}
            )
            assert prompt.messages and prompt.messages[0].role == "user"


async def test_sdk_sse_client_answers_sampling_and_elicitation_over_the_stream(
    everything_http: HttpServer,
) -> None:
    seen = Recorder()
    with anyio.fail_after(TEST_TIMEOUT):
        async with sdk_over_sse(
            everything_http.url,
            sampling_callback=seen.on_sampling,
            elicitation_callback=seen.on_elicit,
        ) as session:
            sampled = await session.call_tool("test_sampling", {"prompt": "Capital of France?"})
            assert only_text(sampled) == "LLM response: Paris"
            elicited = await session.call_tool("test_elicitation", {"message": "Who are you?"})
            assert only_text(elicited) == (
                "User response: action=accept, "
                'content={"username": "bob", "email": "bob@example.com"}'
            )
            assert len(seen.sampling) == 1 and len(seen.elicitations) == 1


@MODES
async def test_our_client_over_sse_calls_an_sdk_sse_server(
    sdk_sse: HttpServer, mode: OurMode
) -> None:
    """Over the stream the SDK serves either era, as over stdio: ``auto`` lands on 2026-07-28."""
    handlers = PeerHandlers()
    with anyio.fail_after(TEST_TIMEOUT):
        async with http_client(
            Client, sdk_sse.url, handlers=handlers, transport="sse", mode=mode
        ) as client:
            with anyio.fail_after(BODY_TIMEOUT):
                assert client.protocol_version == ERA_OF_MODE[mode]
                assert text_of(await client.call_tool(name="whoami")) == ERA_OF_MODE[mode]
                assert runtime_session(client).server_info["name"] == "sdk-http-peer"
                assert [tool.name for tool in (await client.list_tools()).tools] == SDK_TOOLS
                assert (
                    text_of(await client.call_tool(name="echo", arguments={"text": "hé"})) == "hé"
                )
                with pytest.raises(McpError) as unknown:
                    await client.call_tool(name="nope")
                assert unknown.value.code == -32602
                readme = await client.read_resource(uri=SDK_README_URI)
                (contents,) = readme.contents
                assert isinstance(contents, t.TextResourceContents)
                assert contents.text == SDK_README_TEXT
                asked = await client.call_tool(name="ask", arguments={"prompt": "2+2?"})
                assert json.loads(text_of(asked))["said"] == "four"
                assert len(handlers.sampling) == 1 and len(handlers.elicitations) == 1


@pytest.mark.parametrize(
    ("server", "path", "expected"),
    [
        ("sdk_http", "", "HttpClientTransport"),  # Streamable HTTP alone
        ("sdk_sse", "", "SseClientTransport"),  # HTTP+SSE alone: the first POST gets 405
        ("everything_http", "", "HttpClientTransport"),  # ours serves both: /mcp
        ("everything_http", "/sse", "SseClientTransport"),  # and /sse
    ],
)
async def test_automatic_mode_reaches_each_kind_of_http_server(
    request: pytest.FixtureRequest, server: str, path: str, expected: str
) -> None:
    served: HttpServer = request.getfixturevalue(server)
    url = served.url.removesuffix("/mcp") + path if path else served.url
    with anyio.fail_after(TEST_TIMEOUT):
        async with http_client(Client, url) as client:
            assert type(runtime_session(client).transport).__name__ == expected
            assert (await client.list_tools()).tools


async def test_a_url_that_is_neither_transport_fails_with_the_first_error(
    everything_http: HttpServer,
) -> None:
    url = everything_http.url.removesuffix("/mcp") + "/nothing-here"
    with anyio.fail_after(TEST_TIMEOUT):
        with pytest.raises(McpError) as refused:
            async with http_client(Client, url, mode="legacy"):
                pass
    assert "Not found: /nothing-here" in refused.value.message
