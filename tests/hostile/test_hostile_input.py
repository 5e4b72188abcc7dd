"""Each input that used to stop or fool a server, fed to the sans-IO core, to a server over
in-memory transports and to the ASGI app in process, each followed by a valid request
that must still be answered. No subprocess, no socket: fast.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpgen.runtime.http.endpoint import McpHttpApp
from mcpgen.generated.v2026_07_28 import server as s
from mcpgen.generated.v2026_07_28 import types as t
from mcpgen.runtime.client import ClientSession
from mcpgen.runtime import McpError, Server
from mcpgen.runtime.core import jsonrpc
from mcpgen.runtime.core.errors import (
    INVALID_REQUEST,
    PARSE_ERROR,
    SERVER_BUSY,
    UNSUPPORTED_PROTOCOL_VERSION,
)
from mcpgen.runtime.core.limits import Limits
from mcpgen.runtime.aio.memory import MemoryTransport, memory_pair

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from examples.everything.__main__ import build_server  # noqa: E402
from support.asgi_driver import call, initialize, open_session, request  # noqa: E402
from support.memory_peer import serving  # noqa: E402
from support.sansio import run  # noqa: E402

DEEP = b'{"jsonrpc":"2.0","id":7,"method":"ping","params":{"a":' + b"[" * 983 + b"]" * 983 + b"}}"
BAD_UTF8_METHOD = b'{"jsonrpc":"2.0","id":8,"method":"pi\xc3"}'


# -- the frame decoder -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        pytest.param(BAD_UTF8_METHOD, PARSE_ERROR, id="invalid-utf8-method"),
        pytest.param(DEEP, INVALID_REQUEST, id="nested-983-deep"),
        pytest.param(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\xff"}}', PARSE_ERROR, id="invalid-utf8-in-params"),
        pytest.param(b"1 garbage", PARSE_ERROR, id="scalar-then-garbage"),
        pytest.param(b'"str" ]', PARSE_ERROR, id="string-then-bracket"),
        pytest.param(b"42", INVALID_REQUEST, id="valid-scalar"),
        pytest.param(b"[" * 100_000, PARSE_ERROR, id="100k-open-brackets"),
    ],
)  # fmt: skip
def test_frames_that_used_to_raise_are_answered_with_their_error(frame: bytes, code: int) -> None:
    messages, _ = jsonrpc.parse(frame)
    assert len(messages) == 1 and isinstance(messages[0], jsonrpc.Invalid)
    assert messages[0].code == code


def test_nesting_up_to_the_limit_is_accepted_and_one_more_level_is_not() -> None:
    def nested(levels: int) -> bytes:  # the envelope and params are two levels
        inner = b"[" * (levels - 2) + b"]" * (levels - 2)
        return b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":' + inner + b"}}"

    assert isinstance(jsonrpc.parse(nested(64), max_depth=64)[0][0], jsonrpc.Request)
    refused = jsonrpc.parse(nested(65), max_depth=64)[0][0]
    assert isinstance(refused, jsonrpc.Invalid) and "64" in refused.message
    # brackets inside strings do not count
    quoted = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":"' + b"[" * 500 + b'"}}'
    assert isinstance(jsonrpc.parse(quoted, max_depth=64)[0][0], jsonrpc.Request)


def test_a_batch_over_the_limit_is_refused_as_a_whole() -> None:
    """A 500,001-element batch drew one 49.5 MB line of errors (fuzz): now one error."""
    batch = b"[" + b",".join([b"0"] * 65) + b"]"
    messages, is_batch = jsonrpc.parse(batch, max_batch=64)
    assert not is_batch and len(messages) == 1 and isinstance(messages[0], jsonrpc.Invalid)
    assert "more than 64 messages" in messages[0].message
    assert len(jsonrpc.parse(b"[" + b",".join([b"0"] * 64) + b"]", max_batch=64)[0]) == 64


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=300))
def test_parse_never_raises(frame: bytes) -> None:
    messages, _ = jsonrpc.parse(frame)
    assert messages


# -- a server over in-memory transports ------------------------------------------------------


def test_inputs_that_killed_the_stdio_server_are_answered_and_it_keeps_serving(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def scenario() -> None:
        async with serving(build_server()) as peer:
            await peer.handshake()
            for frame, request_id, code in (
                (BAD_UTF8_METHOD, None, PARSE_ERROR),
                (DEEP, 7, INVALID_REQUEST),
            ):
                await peer.send(frame)
                answer = await peer.read()
                assert answer["id"] == request_id and answer["error"]["code"] == code
            # a request method sent as a notification: no answer, no traceback
            await peer.send({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "x"}})
            await peer.send(request(9, "ping"))
            assert (await peer.answer_to(9))["result"] == {}

    with caplog.at_level(logging.DEBUG, logger="mcpgen"):
        run(scenario())
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


class Gate(s.ServerHandlers):
    """A tool that waits until released, and one that asks the client (elicitation)."""

    def __init__(self) -> None:
        self.open = asyncio.Event()
        self.started = 0

    async def call_tool(
        self, params: t.CallToolRequestParams, ctx: s.Context
    ) -> t.InputRequiredResultOrCallToolResult:
        self.started += 1
        if params.name == "ask":
            form = t.ElicitRequestFormParams(
                message="ok?",
                requested_schema=t.convert(
                    {"type": "object", "properties": {"ok": {"type": "boolean"}}},
                    t.ElicitRequestFormParamsRequestedSchema,
                ),
            )
            answer = await ctx.elicit(form)
            return t.CallToolResult(content=[t.TextContent(text=str(answer.action))])
        await self.open.wait()
        return t.CallToolResult(content=[t.TextContent(text="done")])


def call_tool(request_id: int, name: str = "wait") -> bytes:
    return request(request_id, "tools/call", {"name": name, "arguments": {}})


def test_in_flight_requests_are_bounded_by_backpressure_on_the_reader() -> None:
    """Beyond ``max_in_flight`` running handlers the server reads nothing more: the rest
    of a flood stays in the peer's pipe (here: the in-memory queue), not in the server."""

    async def scenario() -> None:
        gate = Gate()
        server = Server(gate, name="gate", limits=Limits(max_in_flight=4))
        async with serving(server) as peer:
            await peer.handshake()
            for request_id in range(1, 201):
                await peer.send(call_tool(request_id))
            await asyncio.sleep(0.2)
            assert gate.started == 4
            unread = peer.end.outbox.qsize()
            assert unread >= 200 - 4 - 1  # one more may be held, waiting for room
            gate.open.set()
            answers = [await peer.answer_to(request_id) for request_id in range(1, 201)]
            assert all(a["result"]["content"][0]["text"] == "done" for a in answers)

    run(scenario())


def test_while_a_handler_waits_on_the_peer_excess_requests_are_refused_not_deadlocked() -> None:
    async def scenario() -> None:
        gate = Gate()
        server = Server(gate, name="gate", limits=Limits(max_in_flight=1))
        async with serving(server) as peer:
            await peer.handshake()
            await peer.send(call_tool(1, "ask"))
            asked = await peer.read()
            assert asked["method"] == "elicitation/create"
            await peer.send(call_tool(2))
            refused = await peer.answer_to(2)
            assert refused["error"]["code"] == SERVER_BUSY
            await peer.send({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "decline"}})
            assert (await peer.answer_to(1))["result"]["content"][0]["text"] == "decline"

    run(scenario())


def test_a_request_reusing_an_id_in_flight_is_refused_and_the_first_still_answered() -> None:
    async def scenario() -> None:
        gate = Gate()
        async with serving(Server(gate, name="gate")) as peer:
            await peer.handshake()
            await peer.send(call_tool(5))
            await peer.send(call_tool(5))
            refused = await peer.answer_to(5)
            assert refused["error"]["code"] == INVALID_REQUEST
            assert "already used" in refused["error"]["message"]
            gate.open.set()
            assert (await peer.answer_to(5))["result"]["content"][0]["text"] == "done"

    run(scenario())


# -- a client whose initialize is refused ------------------------------------------------------


def test_an_initialize_error_reaches_the_client_at_once() -> None:
    async def refusing_server(end: MemoryTransport) -> None:
        frame = await end.receive()
        assert frame is not None
        message = json.loads(frame)
        error = {"code": UNSUPPORTED_PROTOCOL_VERSION, "message": "modern only"}
        await end.send(json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}).encode())

    async def scenario() -> float:
        client_end, server_end = memory_pair()
        peer = asyncio.create_task(refusing_server(server_end))
        session = ClientSession(_binding())
        loop = asyncio.get_running_loop()
        started = loop.time()
        with pytest.raises(McpError) as raised:
            await session.connect(client_end, mode="legacy", timeout=30.0)
        await peer
        assert raised.value.code == UNSUPPORTED_PROTOCOL_VERSION
        assert raised.value.message == "modern only"
        return loop.time() - started

    assert run(scenario()) < 2.0


def _binding() -> Any:
    from mcpgen.generated.v2025_11_25 import methods

    return methods.BINDING


def test_an_http_404_at_a_wrong_path_fails_the_handshake_at_once() -> None:
    import httpx

    from mcpgen.runtime.client.http import HttpClientTransport

    async def scenario() -> None:
        app = McpHttpApp(build_server())
        http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app))
        transport = HttpClientTransport("http://127.0.0.1:3001/wrong", client=http)
        session = ClientSession(_binding())
        with pytest.raises(McpError) as raised:
            await session.connect(transport, mode="legacy", timeout=30.0)
        await http.aclose()
        assert "Not found" in raised.value.message

    run(scenario(), timeout=5.0)


# -- the HTTP app in process -------------------------------------------------------------------


@pytest.mark.parametrize(
    "host",
    ["[::1].evil.com", "[::1]evil", "localhost:evil", "localhost.evil.com", "evil.com",
     "user@localhost", "localhost/mcp", "127.0.0.1:99999", "::1", ""],
)  # fmt: skip
def test_hosts_that_are_not_exactly_local_are_refused(host: str) -> None:
    async def scenario() -> None:
        app = McpHttpApp(build_server())
        refused = await call(app, body=initialize("2025-11-25"), headers={"host": host})
        assert refused.status == 403 and refused.json()["error"]["code"] == INVALID_REQUEST
        accepted = await call(app, body=initialize("2025-11-25"), headers={"host": "[::1]:3001"})
        assert accepted.status == 200

    run(scenario())


@pytest.mark.parametrize(
    "origin", ["http://[::1].evil.com", "http://localhost:evil", "null", "http://user@localhost"]
)
def test_origins_that_are_not_exactly_local_are_refused(origin: str) -> None:
    async def scenario() -> None:
        app = McpHttpApp(build_server())
        refused = await call(app, body=initialize("2025-11-25"), headers={"origin": origin})
        assert refused.status == 403

    run(scenario())


def test_a_batch_gets_400_where_the_version_has_no_batches_and_an_array_where_it_has() -> None:
    batch = b"[" + request(1, "ping") + b"," + request(2, "ping") + b"]"

    async def scenario() -> None:
        app = McpHttpApp(build_server())
        modern_legacy = await open_session(app, "2025-11-25")
        refused = await call(app, body=batch, headers=modern_legacy)
        assert refused.status == 400 and refused.json()["error"]["code"] == INVALID_REQUEST
        old = await open_session(app, "2025-03-26")
        answered = await call(app, body=batch, headers=old)
        assert answered.status == 200 and sorted(m["id"] for m in answered.json()) == [1, 2]
        many = b"[" + b",".join(request(i, "ping") for i in range(65)) + b"]"
        too_long = await call(app, body=many, headers=old)
        assert too_long.status == 400 and "than 64" in too_long.json()["error"]["message"]
        assert (await call(app, body=request(3, "ping"), headers=modern_legacy)).status == 200

    run(scenario())


def test_two_posts_with_one_id_in_a_session_lose_neither() -> None:
    async def scenario() -> None:
        gate = Gate()
        app = McpHttpApp(Server(gate, name="gate"))
        headers = await open_session(app)
        first = asyncio.create_task(call(app, body=call_tool(1), headers=headers))
        await asyncio.sleep(0.05)
        second = await call(app, body=call_tool(1), headers=headers)
        assert second.status == 400 and second.json()["error"]["code"] == INVALID_REQUEST
        gate.open.set()
        answered = await first
        assert answered.messages()[-1]["result"]["content"][0]["text"] == "done"

    run(scenario())


@pytest.mark.parametrize(
    ("body", "code"),
    [(DEEP, INVALID_REQUEST), (BAD_UTF8_METHOD, PARSE_ERROR), (b"1 x", PARSE_ERROR)],
)
def test_undecodable_bodies_get_400_with_a_json_rpc_error(body: bytes, code: int) -> None:
    async def scenario() -> None:
        app = McpHttpApp(build_server())
        modern = {
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "ping",
        }
        for headers in ({}, modern, await open_session(app)):
            refused = await call(app, body=body, headers=headers)
            assert refused.status == 400 and refused.json()["error"]["code"] == code
        assert (await call(app, body=initialize("2025-11-25"))).status == 200

    run(scenario())


def test_a_slow_body_gets_408() -> None:
    async def scenario() -> None:
        app = McpHttpApp(build_server(), limits=Limits(body_timeout=0.1))
        chunks = [b'{"jsonrpc":"2.0",', b'"id":1,"method":"ping"}']
        slow = await call(app, body=chunks, chunk_delay=0.5)
        assert slow.status == 408 and slow.json()["error"]["code"] == INVALID_REQUEST
        quick = await call(app, body=chunks)  # the same body, in time: a ping needs no session
        assert quick.status == 200 and quick.json()["result"] == {}

    run(scenario())


def test_sessions_beyond_the_cap_evict_the_idle_longest_and_it_gets_404() -> None:
    async def scenario() -> None:
        app = McpHttpApp(build_server(), limits=Limits(max_sessions=3))
        sessions = [await open_session(app) for _ in range(5)]
        assert len(app.sessions) == 3
        for gone in sessions[:2]:
            assert (await call(app, body=request(1, "ping"), headers=gone)).status == 404
        for kept in sessions[2:]:
            assert (await call(app, body=request(1, "ping"), headers=kept)).status == 200

    run(scenario())


def test_when_every_session_is_busy_initialize_gets_503() -> None:
    async def scenario() -> None:
        gate = Gate()
        app = McpHttpApp(Server(gate, name="gate", limits=Limits(max_sessions=1)))
        headers = await open_session(app)
        busy = asyncio.create_task(call(app, body=call_tool(1), headers=headers))
        await asyncio.sleep(0.05)
        refused = await call(app, body=initialize("2025-11-25"))
        assert refused.status == 503 and refused.json()["error"]["code"] == INVALID_REQUEST
        gate.open.set()
        await busy
        assert (await call(app, body=initialize("2025-11-25"))).status == 200

    run(scenario())


def test_idle_sessions_end_and_then_get_404() -> None:
    async def scenario() -> None:
        app = McpHttpApp(build_server(), limits=Limits(session_idle_timeout=0.05))
        idle = await open_session(app)
        await asyncio.sleep(0.1)
        fresh = await open_session(app)
        assert (await call(app, body=request(1, "ping"), headers=idle)).status == 404
        assert (await call(app, body=request(1, "ping"), headers=fresh)).status == 200

    run(scenario())


def test_abandoned_get_streams_are_released_and_a_new_one_replaces_the_old() -> None:
    async def scenario() -> None:
        app = McpHttpApp(build_server(), limits=Limits(finished_streams=4))
        headers = await open_session(app)
        legacy = app.sessions.get(headers["mcp-session-id"])
        assert legacy is not None
        get = {**headers, "accept": "text/event-stream"}
        for _ in range(50):  # open, then leave
            leave = asyncio.Event()
            opened = asyncio.create_task(call(app, "GET", headers=get, leave=leave))
            await asyncio.sleep(0)
            leave.set()
            await opened
        assert len(legacy.streams) <= 4 and not legacy.gets
        first = asyncio.create_task(call(app, "GET", headers=get, leave=asyncio.Event()))
        await asyncio.sleep(0.01)
        second_leave = asyncio.Event()
        second = asyncio.create_task(call(app, "GET", headers=get, leave=second_leave))
        ended = await asyncio.wait_for(first, 2.0)  # the older stream was ended for it
        assert ended.complete and len(legacy.gets) == 1
        second_leave.set()
        await second
        assert (await call(app, body=request(2, "ping"), headers=headers)).status == 200

    run(scenario())
