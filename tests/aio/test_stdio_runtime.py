"""The runtime over stdio, end to end: real subprocesses, real pipes, no mocks.

Two kinds of driver talk to the servers:

* ``LinePeer`` (``support.line_peer``) — a plain JSON-lines driver (``subprocess`` + a reader
  thread); it writes raw frames, so it can send anything, and reads with a timeout on every
  line.
* ``stdio_client`` / ``ClientSession`` — our own client, typed with the generated 2025-11-25
  ``Client``.

Servers: ``python -m examples.everything`` (the conformance fixture) and the purpose-built
peers of ``tests/peers`` (``slow_server``: slow, cancellable and failing tools;
``stubborn``: ignores end of input, optionally SIGTERM too).

Every read has a timeout, every coroutine runs under ``asyncio.wait_for`` and every process
started here is killed at teardown if it is still alive.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Coroutine, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

import pytest

from mcpgen.generated.v2025_11_25 import types as t
from mcpgen.generated.v2025_11_25.client import Client, ClientHandlers
from mcpgen.runtime import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    ConnectionClosed,
    McpError,
    NegotiationError,
)
from mcpgen.runtime.client import CLIENT_LIMITS, ClientSession, stdio_client
from mcpgen.runtime.aio.stdio import StdioProcess

from support.line_peer import (
    EVERYTHING,
    LATEST_LEGACY,
    READ_TIMEOUT,
    SIMPLE_TEXT,
    LinePeer,
    error_code,
    is_response,
    tool_text,
)
from support.wire_cases import BAD_FRAMES, INVALID_PARAMS_CASES, LEGACY_REQUESTS, MODERN_RESULT_KEYS

ROOT = Path(__file__).resolve().parents[2]
SLOW = ("-m", "tests.peers.slow_server")
STUBBORN = ("-m", "tests.peers.stubborn")
LEGACY = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
SECRET = "SECRET-7f3a"  # what tests/peers/slow_server.py's ``boom`` tool raises with

T = TypeVar("T")


# Slow: real subprocesses and pipes throughout (``make unit`` leaves this module out).
pytestmark = pytest.mark.slow


# -- servers started by a test -------------------------------------------------------------


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Callable[..., LinePeer]]:
    """Start a ``LinePeer`` (``spawn(*args)``); every one is killed at teardown."""
    peers: list[LinePeer] = []

    def start(*args: str) -> LinePeer:
        peer = LinePeer(args, tmp_path / f"stderr-{len(peers)}.log")
        peers.append(peer)
        return peer

    yield start
    for peer in peers:
        peer.kill()


@pytest.fixture(scope="module")
def everything(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LinePeer]:
    """One initialized (2025-11-25) everything server shared by the bad-input tests: it
    must survive all of them."""
    peer = LinePeer(EVERYTHING, tmp_path_factory.mktemp("everything") / "stderr.log")
    try:
        peer.initialize(LATEST_LEGACY)
        yield peer
    finally:
        peer.kill()


def run(coro: Coroutine[Any, Any, T], timeout: float = 20.0) -> T:
    """Run a coroutine to completion, bounded in time."""
    return asyncio.run(asyncio.wait_for(coro, timeout))


def gone(pid: int) -> bool:
    """Whether no process (not even a zombie) has ``pid`` any more."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def pid_from(log: Path) -> int:
    found = re.search(r"started pid=(\d+)", log.read_text())
    assert found, log.read_text()
    return int(found.group(1))


# -- 1. bad input ---------------------------------------------------------------------------


def follow_up(peer: LinePeer, frame: bytes) -> list[Any]:
    """Send a bad ``frame`` and then a valid request; assert the valid request is answered
    properly and return what the server sent before that answer."""
    peer.send_raw(frame)
    request_id = peer.start_request("tools/call", {"name": "test_simple_text"})
    before: list[Any] = []
    while True:
        message = peer.read()
        if is_response(message, request_id):
            assert tool_text(message) == SIMPLE_TEXT
            return before
        before.append(message)


@pytest.mark.parametrize(("frame", "code", "request_id"), BAD_FRAMES)
def test_bad_input_is_answered_with_an_error_and_the_server_keeps_serving(
    everything: LinePeer, frame: bytes, code: int, request_id: Any
) -> None:
    before = follow_up(everything, frame)
    assert len(before) == 1, before
    error = before[0]
    assert error["jsonrpc"] == "2.0"
    assert error["id"] == request_id  # "id": null when it could not be read
    assert "id" in error
    assert error_code(error) == code
    assert isinstance(error["error"]["message"], str)


@pytest.mark.parametrize(("method", "params", "path"), INVALID_PARAMS_CASES)
def test_invalid_params_name_the_json_path(
    everything: LinePeer, method: str, params: Any, path: str
) -> None:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": "bad-params", "method": method}
    if params is not None:
        message["params"] = params
    before = follow_up(everything, json.dumps(message).encode())
    assert len(before) == 1, before
    error = before[0]
    assert error["id"] == "bad-params"
    assert error_code(error) == INVALID_PARAMS
    assert error["error"]["data"]["path"].startswith(path), error


def test_unknown_tool_and_missing_resource_are_errors(everything: LinePeer) -> None:
    assert error_code(everything.call_tool("no_such_tool")) == INVALID_PARAMS
    missing = everything.request("resources/read", {"uri": "test://missing"})
    assert error_code(missing) == -32002  # legacy resource-not-found
    assert follow_up(everything, b'{"jsonrpc":"2.0","method":"notifications/x"}') == []


@pytest.mark.parametrize(
    "frame",
    [
        pytest.param(b'{"jsonrpc":"2.0","method":"notifications/whatever"}', id="unknown-notification"),
        pytest.param(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{}}}', id="malformed-cancel"),
        pytest.param(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"never-sent"}}', id="cancel-unknown-id"),
        pytest.param(b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":"x"}}', id="malformed-progress"),
        pytest.param(b'{"jsonrpc":"2.0","id":987654,"result":{}}', id="stray-response"),
        pytest.param(b'{"jsonrpc":"2.0","id":987655,"error":{"code":-1,"message":"no"}}', id="stray-error"),
        pytest.param(b"   ", id="blank-line"),
    ],
)  # fmt: skip
def test_notifications_and_stray_responses_get_no_answer(
    everything: LinePeer, frame: bytes
) -> None:
    assert follow_up(everything, frame) == []


def test_tool_failure_is_a_result_with_is_error(everything: LinePeer) -> None:
    answer = everything.call_tool("test_error_handling")
    assert "error" not in answer
    assert answer["result"]["isError"] is True
    assert "intentionally returns an error" in tool_text(answer)
    assert follow_up(everything, b'{"jsonrpc":"2.0","method":"notifications/x"}') == []


def test_handler_exception_is_an_internal_error_without_details(
    spawn: Callable[..., LinePeer],
) -> None:
    peer = spawn(*SLOW)
    peer.initialize()
    for _ in range(2):  # and again: one failure does not break the session
        answer = peer.call_tool("boom")
        assert error_code(answer) == INTERNAL_ERROR
        raw = json.dumps(answer)
        for leak in (SECRET, "Traceback", "RuntimeError", "blew up", ".py"):
            assert leak not in raw, raw
        assert tool_text(peer.call_tool("fail")) == "this tool failed on purpose"
        assert peer.request("ping")["result"] == {}
    assert peer.close() == 0
    # the details went to stderr, the log channel, and nowhere on stdout
    stderr = peer.stderr()
    assert SECRET in stderr and "Traceback" in stderr
    assert all(SECRET.encode() not in line for line in peer.lines)


# -- 2. negotiation, legacy era -------------------------------------------------------------

#: Requests every legacy version has, and the result key that proves a proper answer.
#: Keys only 2026-07-28 results have (the everything server is written against 2026).


#: The version the process-based negotiation tests use: the matrix of every version runs in
#: ``tests/core`` (sans-IO, and the everything server over in-memory transports), where
#: requests before ``initialize`` are checked too; a real pipe proves one version each.
OVER_THE_PIPE = [LATEST_LEGACY]


@pytest.mark.parametrize("version", OVER_THE_PIPE)
def test_initialize_echoes_each_handshake_version(
    spawn: Callable[..., LinePeer], version: str
) -> None:
    peer = spawn(*EVERYTHING)
    result = peer.initialize(version)
    assert result["protocolVersion"] == version
    assert result["serverInfo"]["name"] == "mcpgen-everything"
    capabilities = result["capabilities"]
    assert {"tools", "prompts", "resources", "logging"} <= capabilities.keys()
    # ``completions`` is a capability from 2025-03-26 on
    assert ("completions" in capabilities) == (version >= "2025-03-26")
    assert not set(MODERN_RESULT_KEYS) & result.keys()
    for method, params, key in LEGACY_REQUESTS:
        answer = peer.request(method, params)
        assert "result" in answer, (method, answer)
        assert key in answer["result"]
        for modern in MODERN_RESULT_KEYS:
            assert modern not in answer["result"], (method, answer)
    assert peer.request("logging/setLevel", {"level": "error"})["result"] == {}
    assert error_code(peer.request("server/discover", {})) == METHOD_NOT_FOUND
    assert peer.close() == 0


def test_log_level_filters_log_notifications(spawn: Callable[..., LinePeer]) -> None:
    peer = spawn(*EVERYTHING)
    peer.initialize("2025-06-18")

    def logged() -> list[str]:
        peer.backlog.clear()
        answer = peer.call_tool("test_tool_with_logging")
        assert "executed successfully" in tool_text(answer)
        return [
            m["params"]["data"] for m in peer.backlog if m.get("method") == "notifications/message"
        ]

    assert peer.request("logging/setLevel", {"level": "warning"})["result"] == {}
    assert logged() == []
    assert peer.request("logging/setLevel", {"level": "info"})["result"] == {}
    assert logged() == [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    assert peer.close() == 0


@pytest.mark.parametrize("version", OVER_THE_PIPE)
def test_server_requests_each_version_allows(spawn: Callable[..., LinePeer], version: str) -> None:
    """Sampling works in every legacy version; elicitation only from 2025-06-18 on."""
    peer = spawn(*EVERYTHING)
    peer.initialize(version, {"sampling": {}, "elicitation": {}})
    # sampling/createMessage: server -> client, answered by this driver
    call = peer.start_request("tools/call", {"name": "test_sampling", "arguments": {"prompt": "hi"}})  # fmt: skip
    sampling = peer.server_request("sampling/createMessage")
    assert sampling["params"]["messages"][0]["content"]["text"] == "hi"
    peer.send(
        {
            "jsonrpc": "2.0",
            "id": sampling["id"],
            "result": {
                "role": "assistant",
                "content": {"type": "text", "text": "sampled"},
                "model": "m",
            },
        }
    )
    assert tool_text(peer.response(call)) == "LLM response: sampled"
    # elicitation/create
    call = peer.start_request("tools/call", {"name": "test_elicitation", "arguments": {"message": "who?"}})  # fmt: skip
    if version >= "2025-06-18":
        elicit = peer.server_request("elicitation/create")
        assert elicit["params"]["message"] == "who?"
        assert "requestedSchema" in elicit["params"]
        peer.send(
            {
                "jsonrpc": "2.0",
                "id": elicit["id"],
                "result": {"action": "accept", "content": {"username": "ada"}},
            }
        )
        assert "action=accept" in tool_text(peer.response(call))
    else:
        answer = peer.response(call)
        failed = "error" in answer or answer["result"].get("isError") is True
        assert failed, answer
        assert not [m for m in peer.backlog if m.get("method") == "elicitation/create"]
    assert peer.close() == 0


def test_batch_in_2025_03_26_is_answered_with_a_batch(
    spawn: Callable[..., LinePeer],
) -> None:
    peer = spawn(*EVERYTHING)
    peer.initialize("2025-03-26")
    batch = [
        {"jsonrpc": "2.0", "id": "b1", "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/whatever"},
        {"jsonrpc": "2.0", "id": "b2", "method": "tools/call", "params": {"name": "test_simple_text"}},  # fmt: skip
        {"jsonrpc": "2.0", "id": "b3", "method": "no/such/method"},
        {"jsonrpc": "2.0", "id": "b4", "method": "resources/read", "params": {"uri": "test://static-text"}},  # fmt: skip
    ]
    peer.send(batch)
    answer = peer.read()
    assert isinstance(answer, list), answer
    by_id = {m["id"]: m for m in answer}
    assert sorted(by_id) == ["b1", "b2", "b3", "b4"]
    assert by_id["b1"]["result"] == {}
    assert tool_text(by_id["b2"]) == SIMPLE_TEXT
    assert error_code(by_id["b3"]) == METHOD_NOT_FOUND
    assert "contents" in by_id["b4"]["result"]
    assert tool_text(peer.call_tool("test_simple_text")) == SIMPLE_TEXT
    assert peer.close() == 0


@pytest.mark.parametrize("version", OVER_THE_PIPE)
def test_batch_is_rejected_where_the_version_has_none(
    spawn: Callable[..., LinePeer], version: str
) -> None:
    peer = spawn(*EVERYTHING)
    peer.initialize(version)
    before = follow_up(peer, b'[{"jsonrpc":"2.0","id":"b1","method":"ping"}]')
    assert len(before) == 1 and error_code(before[0]) == INVALID_REQUEST
    assert before[0]["id"] is None
    assert peer.close() == 0


@pytest.mark.parametrize(
    ("args", "requested", "answered"),
    [
        pytest.param(EVERYTHING, "1999-01-01", LATEST_LEGACY, id="unknown-version"),
        pytest.param((*SLOW, "--versions", "2024-11-05,2025-06-18"), "2025-11-25", "2025-06-18", id="configured-out-newer"),
    ],
)  # fmt: skip
def test_server_answers_a_version_it_speaks(
    spawn: Callable[..., LinePeer], args: Sequence[str], requested: str, answered: str
) -> None:
    peer = spawn(*args)
    assert peer.initialize(requested)["protocolVersion"] == answered
    assert peer.request("tools/list", {})["result"]["tools"]
    assert peer.close() == 0


# -- 3. concurrency, cancellation, progress, timeouts ---------------------------------------


def events_of(peer: LinePeer) -> list[str]:
    return json.loads(tool_text(peer.call_tool("events")))


def test_slow_calls_run_concurrently(spawn: Callable[..., LinePeer]) -> None:
    peer = spawn(*SLOW)
    peer.initialize()
    started = time.monotonic()
    first = peer.start_request("tools/call", {"name": "sleep", "arguments": {"seconds": 0.8, "label": "a"}})  # fmt: skip
    second = peer.start_request("tools/call", {"name": "sleep", "arguments": {"seconds": 0.8, "label": "b"}})  # fmt: skip
    # a quick request is not held up by the slow ones
    assert peer.request("ping", timeout=0.5)["result"] == {}
    assert tool_text(peer.response(first)) == "slept 0.8s (a)"
    assert tool_text(peer.response(second)) == "slept 0.8s (b)"
    elapsed = time.monotonic() - started
    assert elapsed < 1.4, f"two 0.8 s calls took {elapsed:.2f} s: not concurrent"
    assert peer.close() == 0


def test_cancelled_request_is_stopped_and_never_answered(
    spawn: Callable[..., LinePeer],
) -> None:
    peer = spawn(*SLOW)
    peer.initialize()
    doomed = peer.start_request("tools/call", {"name": "sleep", "arguments": {"seconds": 1.0, "label": "doomed"}})  # fmt: skip
    kept = peer.start_request("tools/call", {"name": "sleep", "arguments": {"seconds": 0.3, "label": "kept"}})  # fmt: skip
    time.sleep(0.15)  # both handlers are running
    sent_at = time.monotonic()
    peer.notify("notifications/cancelled", {"requestId": doomed, "reason": "test"})
    # later requests are answered
    assert tool_text(peer.call_tool("fail")) == "this tool failed on purpose"
    assert tool_text(peer.response(kept)) == "slept 0.3s (kept)"
    events = events_of(peer)
    assert "cancelled:doomed" in events, events
    assert "finished:doomed" not in events
    # past the time the handler would have finished: still no answer for it
    remaining = 1.5 - (time.monotonic() - sent_at)
    late = peer.collect(max(remaining, 0.0))
    assert not [m for m in late + peer.backlog if is_response(m, doomed)]
    assert "finished:doomed" not in events_of(peer)
    assert peer.close() == 0
    assert "event cancelled:doomed" in peer.stderr()
    assert not [line for line in peer.lines if f'"id":{doomed},'.encode() in line]


@pytest.mark.parametrize("token", ["tok-1", 7])
def test_progress_notifications_carry_the_request_token(
    spawn: Callable[..., LinePeer], token: str | int
) -> None:
    peer = spawn(*SLOW)
    peer.initialize()
    call = peer.start_request("tools/call", {"name": "progress", "arguments": {"steps": 3}, "_meta": {"progressToken": token}})  # fmt: skip
    assert tool_text(peer.response(call)) == "3 steps done"
    progress = [m for m in peer.backlog if m.get("method") == "notifications/progress"]
    assert [p["params"]["progressToken"] for p in progress] == [token] * 3
    assert [p["params"]["progress"] for p in progress] == [1, 2, 3]
    assert all(p["params"]["total"] == 3 for p in progress)
    # every notification came before the response
    assert all(b"notifications/progress" in line for line in peer.lines[-4:-1])
    # no token, no progress
    peer.backlog.clear()
    assert tool_text(peer.call_tool("progress", {"steps": 2})) == "2 steps done"
    assert not [m for m in peer.backlog if m.get("method") == "notifications/progress"]
    assert peer.close() == 0


def test_client_request_timeout_cancels_at_the_server() -> None:
    """A client's ``Limits.request_timeout``: TimeoutError, and the server's handler is
    cancelled by the ``notifications/cancelled`` the client sends."""

    async def scenario() -> None:
        process = await StdioProcess.spawn(sys.executable, SLOW, cwd=str(ROOT))
        session = ClientSession(
            Client.__binding__, limits=CLIENT_LIMITS.replace(request_timeout=0.4)
        )
        try:
            await session.connect(process, timeout=READ_TIMEOUT)
            client = Client(session)
            started = time.monotonic()
            with pytest.raises(TimeoutError):
                await client.call_tool(name="sleep", arguments={"seconds": 3, "label": "t1"})  # fmt: skip
            assert time.monotonic() - started < 1.5
            events: list[str] = []
            for _ in range(20):  # the cancel notification is on its way
                result = await client.call_tool(name="events")
                events = json.loads(text_of(result))
                if "cancelled:t1" in events:
                    break
                await asyncio.sleep(0.05)
            assert "cancelled:t1" in events
            assert "finished:t1" not in events
        finally:
            await session.close()
        assert process.process.returncode == 0

    run(scenario())


def test_session_request_timeout_and_progress_via_stdio_client() -> None:
    """``Session.request(..., timeout=...)`` through ``stdio_client``; progress callbacks."""

    async def scenario() -> None:
        async with stdio_client(Client, sys.executable, SLOW, cwd=str(ROOT)) as client:
            session = session_of(client)
            with pytest.raises(TimeoutError):
                await session.request(
                    "tools/call",
                    t.CallToolRequestParams(name="sleep", arguments={"seconds": 3, "label": "t2"}),  # fmt: skip
                    timeout=0.3,
                )
            seen: list[tuple[float, float | None, str | None]] = []

            def on_progress(progress: float, total: float | None, message: str | None) -> None:
                seen.append((progress, total, message))

            result = await session.request(
                "tools/call",
                t.CallToolRequestParams(name="progress", arguments={"steps": 3}),
                progress=on_progress,
                timeout=READ_TIMEOUT,
            )
            assert text_of(result) == "3 steps done"
            assert [p for p, _, _ in seen] == [1, 2, 3]
            assert seen[-1] == (3, 3, "step 3 of 3")
            events = json.loads(text_of(await client.call_tool(name="events")))
            assert "cancelled:t2" in events

    run(scenario())


# -- 4. our client against our server -------------------------------------------------------


class Handlers(ClientHandlers):
    """Answers the server's sampling, elicitation and roots requests."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    async def create_message(
        self, params: t.CreateMessageRequestParams, ctx: Any
    ) -> t.CreateMessageResult:
        self.calls.append("create_message")
        prompt = params.messages[0].content
        said = prompt.text if isinstance(prompt, t.TextContent) else "?"
        return t.CreateMessageResult(
            content=t.TextContent(text=f"echo {said}"), model="test-model", role="assistant"
        )

    async def elicit(self, params: t.ElicitRequestParams, ctx: Any) -> t.ElicitResult:
        self.calls.append("elicit")
        return t.ElicitResult(
            action="accept", content={"username": "ada", "email": "ada@example.com"}
        )

    async def list_roots(self, params: t.RequestParams, ctx: Any) -> t.ListRootsResult:
        self.calls.append("list_roots")
        return t.ListRootsResult(roots=[t.Root(uri="file:///work/project", name="project")])  # fmt: skip


def session_of(client: Client) -> Any:
    """The asyncio ``Session`` under a typed client made by ``stdio_client``."""
    client_session = cast(ClientSession, client.session)
    assert client_session.session is not None
    return client_session.session


def process_of(client: Client) -> asyncio.subprocess.Process:
    return cast(StdioProcess, session_of(client).transport).process


def text_of(result: t.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, t.TextContent), block
    return block.text


def test_typed_client_against_the_everything_server() -> None:
    handlers = Handlers()

    async def scenario() -> None:
        async with stdio_client(
            Client, sys.executable, EVERYTHING, cwd=str(ROOT), handlers=handlers
        ) as client:
            assert client.protocol_version == LATEST_LEGACY
            session = cast(ClientSession, client.session)
            assert session.server_info["name"] == "mcpgen-everything"
            assert "completions" in session.server_capabilities

            tools = await client.list_tools()
            names = {tool.name for tool in tools.tools}
            assert {"test_simple_text", "test_sampling", "test_elicitation"} <= names
            assert text_of(await client.call_tool(name="test_simple_text")) == SIMPLE_TEXT

            sampled = await client.call_tool(name="test_sampling", arguments={"prompt": "hello"})  # fmt: skip
            assert text_of(sampled) == "LLM response: echo hello"

            elicited = await client.call_tool(name="test_elicitation", arguments={"message": "who?"})  # fmt: skip
            assert "action=accept" in text_of(elicited)
            assert "ada@example.com" in text_of(elicited)

            failed = await client.call_tool(name="test_error_handling")
            assert failed.is_error is True

            read = await client.read_resource(uri="test://static-text")
            contents = read.contents[0]
            assert isinstance(contents, t.TextResourceContents)
            assert contents.text.startswith("This is the content")
            with pytest.raises(McpError) as missing:
                await client.read_resource(uri="test://missing")
            assert missing.value.code == -32002

            prompt = await client.get_prompt(
                name="test_prompt_with_arguments", arguments={"arg1": "x", "arg2": "y"}
            )
            first = prompt.messages[0].content
            assert isinstance(first, t.TextContent)
            assert "arg1='x'" in first.text and "arg2='y'" in first.text

            completion = await client.complete(
                ref=t.PromptReference(name="test_prompt_with_arguments"),
                argument=t.CompleteRequestParamsArgument(name="arg1", value="test"),
            )
            assert completion.completion.values == ["test-value-1", "test-value-2"]

            with pytest.raises(McpError) as unknown:
                await client.call_tool(name="no_such_tool")
            assert unknown.value.code == INVALID_PARAMS

    run(scenario())
    assert handlers.calls == ["create_message", "elicit"]


def whoami(result: t.CallToolResult) -> dict[str, Any]:
    return json.loads(text_of(result))


@pytest.mark.parametrize(
    ("versions", "expected"),
    [
        pytest.param(None, LATEST_LEGACY, id="default"),
        pytest.param(["2024-11-05", "2025-03-26"], "2025-03-26", id="offers-its-newest"),
        pytest.param(["2024-11-05"], "2024-11-05", id="only-2024"),
    ],
)
def test_client_offers_its_versions(versions: list[str] | None, expected: str) -> None:
    handlers = Handlers()

    async def scenario() -> None:
        async with stdio_client(
            Client,
            sys.executable,
            SLOW,
            cwd=str(ROOT),
            handlers=handlers,
            versions=versions,
        ) as client:
            assert client.protocol_version == expected
            seen = whoami(await client.call_tool(name="whoami"))
            assert seen["protocolVersion"] == expected
            assert seen["clientInfo"]["name"] == "mcpgen-client"
            capabilities = seen["clientCapabilities"]
            assert {"sampling", "roots"} <= capabilities.keys()
            # elicitation exists from 2025-06-18 on; a client offering less does not declare it
            assert ("elicitation" in capabilities) == (expected >= "2025-06-18")
            roots = await client.call_tool(name="roots")
            assert json.loads(text_of(roots)) == ["file:///work/project"]
            assert len((await client.list_tools()).tools) > 3

    run(scenario())
    assert handlers.calls == ["list_roots"]


def test_typed_client_negotiates_2024_11_05_with_everything() -> None:
    handlers = Handlers()

    async def scenario() -> None:
        async with stdio_client(
            Client,
            sys.executable,
            EVERYTHING,
            cwd=str(ROOT),
            handlers=handlers,
            versions=["2024-11-05"],
        ) as client:
            assert client.protocol_version == "2024-11-05"
            assert "completions" not in cast(ClientSession, client.session).server_capabilities  # fmt: skip
            tools = await client.list_tools()
            assert "test_sampling" in {tool.name for tool in tools.tools}
            sampled = await client.call_tool(name="test_sampling", arguments={"prompt": "old"})  # fmt: skip
            assert text_of(sampled) == "LLM response: echo old"
            read = await client.read_resource(uri="test://static-text")
            assert read.contents
            prompt = await client.get_prompt(name="test_simple_prompt")
            assert prompt.messages

    run(scenario())
    assert handlers.calls == ["create_message"]


# -- 5. refusing a version, shutdown --------------------------------------------------------


def test_client_refuses_a_version_it_cannot_speak(tmp_path: Path) -> None:
    log = tmp_path / "stderr.log"

    async def scenario() -> None:
        with open(log, "wb") as stderr:
            with pytest.raises(NegotiationError) as refused:
                async with stdio_client(
                    Client,
                    sys.executable,
                    (*SLOW, "--versions", "2024-11-05"),
                    cwd=str(ROOT),
                    versions=["2025-11-25"],
                    stderr=stderr.fileno(),
                ):
                    pytest.fail("connected although no version is shared")
        message = str(refused.value)
        assert "2024-11-05" in message and "2025-11-25" in message

    started = time.monotonic()
    run(scenario(), timeout=15)
    assert time.monotonic() - started < 5  # closed by end of input, no signals needed
    pid = pid_from(log)
    assert gone(pid)
    assert "stopped: end of input" in log.read_text()


def test_server_exits_cleanly_on_end_of_input_with_only_json_rpc_on_stdout(
    spawn: Callable[..., LinePeer],
) -> None:
    peer = spawn(*SLOW)
    peer.initialize()
    peer.send_raw(b"garbage")
    assert error_code(peer.call_tool("boom")) == INTERNAL_ERROR
    call = peer.start_request("tools/call", {"name": "progress", "arguments": {"steps": 2}, "_meta": {"progressToken": 1}})  # fmt: skip
    assert tool_text(peer.response(call)) == "2 steps done"
    started = time.monotonic()
    assert peer.close() == 0
    assert time.monotonic() - started < 3
    assert peer.lines
    for line in peer.lines:
        assert line.endswith(b"\n") and line.count(b"\n") == 1
        message = json.loads(line)
        assert isinstance(message, dict) and message["jsonrpc"] == "2.0", line
    stderr = peer.stderr()
    assert "slow_server started" in stderr and "stopped: end of input" in stderr
    assert "Traceback" in stderr  # the handler's failure is logged, on stderr


def test_stdio_client_exit_closes_stdin_of_a_well_behaved_server() -> None:
    async def scenario() -> tuple[asyncio.subprocess.Process, float]:
        async with stdio_client(Client, sys.executable, EVERYTHING, cwd=str(ROOT)) as client:  # fmt: skip
            await client.list_tools()
            process = process_of(client)
            started = time.monotonic()
        return process, time.monotonic() - started

    process, elapsed = run(scenario())
    assert process.returncode == 0  # exited by itself on end of input
    assert elapsed < 1.5  # before any SIGTERM
    assert gone(process.pid)


@pytest.mark.parametrize(
    ("args", "signal_number", "said"),
    [
        pytest.param((), signal.SIGTERM, ["eof"], id="ignores-eof"),
        pytest.param(("--ignore-sigterm",), signal.SIGKILL, ["eof", "sigterm ignored"], id="ignores-sigterm"),  # fmt: skip
    ],
)
def test_stdio_client_escalates_to_signals(
    tmp_path: Path, args: tuple[str, ...], signal_number: int, said: list[str]
) -> None:
    log = tmp_path / "stderr.log"

    async def scenario() -> asyncio.subprocess.Process:
        with open(log, "wb") as stderr:
            async with stdio_client(
                Client,
                sys.executable,
                (*STUBBORN, *args),
                cwd=str(ROOT),
                stderr=stderr.fileno(),
            ) as client:
                process = process_of(client)
        return process

    try:
        process = run(scenario(), timeout=15)
    finally:
        pid = pid_from(log)
        if not gone(pid):
            os.kill(pid, signal.SIGKILL)
    assert process.returncode == -signal_number
    assert gone(process.pid)
    lines = log.read_text().splitlines()
    assert [line for line in lines if line in ("eof", "sigterm ignored")] == said
    assert "lingered out" not in lines


# -- more robustness: crashes, framing, cancellation chains ---------------------------------


def test_server_crash_fails_pending_requests_promptly() -> None:
    """A server that dies fails every waiting request at once, saying how it died."""

    async def scenario() -> None:
        async with stdio_client(Client, sys.executable, SLOW, cwd=str(ROOT)) as client:
            process = process_of(client)
            slow = asyncio.ensure_future(client.call_tool(name="sleep", arguments={"seconds": 5}))
            await asyncio.sleep(0.1)
            started = time.monotonic()
            with pytest.raises(ConnectionClosed) as died:
                await client.call_tool(name="exit", arguments={"code": 3})
            said = "the server process exited with status 3 before answering"
            assert str(died.value) == said  # every waiting request says what happened
            with pytest.raises(ConnectionClosed, match=said):
                await slow
            assert time.monotonic() - started < 2
            with pytest.raises(ConnectionClosed):
                await client.list_tools()
        assert process.returncode == 3

    run(scenario())


def test_server_that_exits_before_the_handshake_is_connection_closed() -> None:
    """A "server" that reads nothing and exits before answering ``initialize``."""

    async def scenario() -> None:
        with pytest.raises(ConnectionClosed):
            async with stdio_client(
                Client,
                sys.executable,
                ["-c", "import time; time.sleep(0.3)"],
                cwd=str(ROOT),
            ):
                pytest.fail("connected to a process that is not a server")

    run(scenario(), timeout=10)


def test_large_and_non_ascii_messages_round_trip(spawn: Callable[..., LinePeer]) -> None:
    peer = spawn(*EVERYTHING)
    peer.initialize()
    big = 'é✓\u2028\n"{}' + "x" * 2_000_000
    answer = peer.request(
        "prompts/get",
        {"name": "test_prompt_with_arguments", "arguments": {"arg1": big, "arg2": "ü"}},
        timeout=10,
    )
    text = answer["result"]["messages"][0]["content"]["text"]
    assert f"arg1='{big}'" in text and "arg2='ü'" in text
    assert peer.close() == 0


def test_cancelling_a_tool_cancels_its_request_to_the_client(
    spawn: Callable[..., LinePeer],
) -> None:
    """A cancelled handler that was waiting for the client's answer cancels that request
    too (``notifications/cancelled`` from the server), and answers nothing."""
    peer = spawn(*EVERYTHING)
    peer.initialize(LATEST_LEGACY, {"sampling": {}})
    call = peer.start_request("tools/call", {"name": "test_sampling", "arguments": {"prompt": "hi"}})  # fmt: skip
    sampling = peer.server_request("sampling/createMessage")
    peer.notify("notifications/cancelled", {"requestId": call})
    cancelled = peer.expect(
        lambda m: isinstance(m, dict) and m.get("method") == "notifications/cancelled"
    )
    assert cancelled["params"]["requestId"] == sampling["id"]
    assert tool_text(peer.call_tool("test_simple_text")) == SIMPLE_TEXT
    assert not [m for m in peer.backlog + peer.collect(0.2) if is_response(m, call)]
    assert peer.close() == 0


# -- runtime bugs found by these tests (regression tests) ----------------------------------


def test_list_roots_with_default_params() -> None:
    async def scenario() -> None:
        async with stdio_client(
            Client, sys.executable, SLOW, cwd=str(ROOT), handlers=Handlers()
        ) as client:
            roots = await client.call_tool(name="roots_default")
            assert json.loads(text_of(roots)) == ["file:///work/project"]

    run(scenario())


def test_roots_list_changed_with_default_params() -> None:
    async def scenario() -> None:
        async with stdio_client(
            Client, sys.executable, SLOW, cwd=str(ROOT), handlers=Handlers()
        ) as client:
            await client.send_roots_list_changed()
            events: list[str] = []
            for _ in range(10):
                events = json.loads(text_of(await client.call_tool(name="events")))
                if "roots-changed" in events:
                    break
                await asyncio.sleep(0.05)
            assert "roots-changed" in events

    run(scenario())


def test_cancelling_one_request_of_a_batch_keeps_the_others(
    spawn: Callable[..., LinePeer],
) -> None:
    peer = spawn(*SLOW, "--versions", "2025-03-26")
    peer.initialize("2025-03-26")
    peer.send(
        [
            {"jsonrpc": "2.0", "id": "slow", "method": "tools/call", "params": {"name": "sleep", "arguments": {"seconds": 2}}},  # fmt: skip
            {"jsonrpc": "2.0", "id": "quick", "method": "ping"},
        ]
    )
    time.sleep(0.1)
    peer.notify("notifications/cancelled", {"requestId": "slow"})
    answer = peer.expect(lambda m: isinstance(m, list) or is_response(m, "quick"), timeout=1.0)
    answers = answer if isinstance(answer, list) else [answer]
    assert [m["id"] for m in answers] == ["quick"]


def test_server_that_exits_at_once_is_connection_closed() -> None:
    """``true`` exits before (most of the time) the client writes ``initialize``."""

    async def scenario() -> None:
        for _ in range(10):  # the race goes the buggy way ~9 times in 10
            with pytest.raises(ConnectionClosed):
                async with stdio_client(Client, "true"):
                    pytest.fail("connected to a process that is not a server")

    run(scenario(), timeout=15)


def test_server_exits_promptly_on_eof_while_waiting_for_the_client(
    spawn: Callable[..., LinePeer],
) -> None:
    peer = spawn(*EVERYTHING)
    peer.initialize(LATEST_LEGACY, {"sampling": {}})
    peer.start_request("tools/call", {"name": "test_sampling", "arguments": {"prompt": "hi"}})  # fmt: skip
    peer.server_request("sampling/createMessage")
    started = time.monotonic()
    try:
        code: int | None = peer.close(timeout=2.0)
    except subprocess.TimeoutExpired:
        code = None  # killed by close()
    assert code == 0, f"no exit {time.monotonic() - started:.1f} s after end of input"
