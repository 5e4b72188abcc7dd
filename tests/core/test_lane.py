"""The lane (``runtime/core/lane.py``): a plain request of a ready legacy session becomes
exactly the event the general path makes of it; anything else is left to the general
path (None), which answers or refuses it."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from mcpgen.generated.v2025_11_25 import server as stubs_2025
from mcpgen.generated.v2025_11_25 import types as types_2025
from mcpgen.runtime import Limits
from mcpgen.runtime.core import jsonrpc
from mcpgen.runtime.core.events import IncomingRequest
from mcpgen.runtime.core.lane import Lane
from support.sansio import LEGACY, handshake, request, server

CALL = {"name": "echo", "arguments": {"text": "hi"}}
TAKEN = [
    pytest.param(request(1, "tools/call", CALL), id="tools/call"),
    pytest.param(request("s", "tools/list"), id="string id, no params"),
    pytest.param(request(2, "tools/list", {"cursor": "c", "_meta": {"k": 1}}), id="with _meta"),
]
LEFT = [
    pytest.param(request(1, "ping"), id="ping"),
    pytest.param(request(1, "initialize", {}), id="initialize"),
    pytest.param(request(1, "logging/setLevel", {"level": "info"}), id="logging/setLevel"),
    pytest.param(request(1, "prompts/list"), id="a capability not offered"),
    pytest.param(request(1, "no/such"), id="unknown method"),
    pytest.param(request(1, "tools/call", {"name": 3}), id="invalid params"),
    pytest.param(request(1, "tools/call", "x"), id="params not an object"),
    pytest.param(request(True, "tools/list"), id="bool id"),
    pytest.param({"jsonrpc": "1.0", "id": 1, "method": "tools/list"}, id="jsonrpc 1.0"),
    pytest.param({"jsonrpc": "2.0", "method": "tools/list"}, id="a notification"),
    pytest.param({"jsonrpc": "2.0", "id": 1, "result": {}}, id="a response"),
    pytest.param([request(1, "tools/list")], id="a batch"),
    pytest.param(request(1, "tools/call", {"name": "é", "arguments": {}}), id="not ASCII"),
    pytest.param(
        request(1, "tools/call", {"name": "x", "arguments": {"a": [[[[[]]]]]}}), id="deep"
    ),
]


def frame(message: Any) -> bytes:
    return json.dumps(message, ensure_ascii=False).encode()


@pytest.mark.parametrize("version", [LEGACY[0], LEGACY[-1]])
@pytest.mark.parametrize("message", TAKEN)
def test_a_plain_request_becomes_the_event_the_general_path_makes(
    message: Any, version: str
) -> None:
    conn = server()
    handshake(conn, version)
    lane = Lane(conn)
    for _ in range(2):  # the route found, then remembered
        event = lane.request(frame(message) + b"\n")
        assert isinstance(event, IncomingRequest)
        assert event == conn.receive(frame(message) + b"\n")[0]


class Legacy(stubs_2025.ServerHandlers):
    """A server typed against 2025-11-25: a peer of that version is decoded directly."""

    async def list_tools(self, params: Any, ctx: Any) -> Any:
        return types_2025.ListToolsResult(tools=[])

    async def call_tool(self, params: Any, ctx: Any) -> Any:
        return types_2025.CallToolResult(content=[])


@pytest.mark.parametrize("message", TAKEN)
def test_a_plain_request_in_the_applications_own_version_is_decoded_in_one_pass(
    message: Any,
) -> None:
    """The envelope and params decoded at once: the general path's event, without the raw
    params (typed in the peer's own version, the params hold all the peer sent)."""
    conn = server(Legacy())
    handshake(conn, LEGACY[-1])
    lane = Lane(conn)
    event = lane.request(frame(message))
    assert isinstance(event, IncomingRequest)
    general = conn.receive(frame(message))[0]
    assert isinstance(general, IncomingRequest)
    assert event == msgspec.structs.replace(general, raw_params=None)
    invalid = request(1, "tools/call", {"name": 3})
    assert lane.request(frame(invalid)) is None  # the general path answers it


TWO_STEPS = [
    pytest.param(
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"c","extra":1}}',
        id="undeclared key",
    ),
    pytest.param(
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call",'
        b'"params":{"name":"echo","arguments":{}},"method":"tools/list"}',
        id="method said twice",
    ),
]


@pytest.mark.parametrize("data", TWO_STEPS)
def test_what_one_pass_cannot_read_is_read_in_two_as_the_general_path_reads_it(
    data: bytes,
) -> None:
    """A frame the one-pass union refuses (a key its params type does not declare; the
    method given twice, the last one counting) is read envelope first, then params, and
    still becomes the general path's event, the undeclared keys kept."""
    conn = server(Legacy())
    handshake(conn, LEGACY[-1])
    event = Lane(conn).request(data)
    assert isinstance(event, IncomingRequest)
    assert event.spec.name == "tools/list" and event.raw_params is not None
    assert event == conn.receive(data)[0]


@pytest.mark.parametrize("message", LEFT)
def test_anything_else_is_left_to_the_general_path(message: Any) -> None:
    conn = server(limits=Limits(max_depth=5))
    handshake(conn)
    assert Lane(conn).request(frame(message)) is None


def test_no_request_takes_the_lane_before_the_session_is_ready() -> None:
    conn = server()
    assert Lane(conn).request(frame(request(1, "tools/list"))) is None
    handshake(conn)
    assert Lane(conn).request(frame(request(1, "tools/list"))) is not None


def test_plain_request_reads_what_parse_reads_in_one_typed_decode() -> None:
    data = frame(request(7, "tools/call", CALL))
    plain = jsonrpc.plain_request(data)
    (general,), _ = jsonrpc.parse(data)
    assert plain is not None and isinstance(general, jsonrpc.Request)
    assert (plain.id, plain.method, plain.params) == (general.id, general.method, general.params)
    assert not jsonrpc.plain_request(frame(request(7, "tools/list"))).params  # type: ignore[union-attr]
    extra = {**request(7, "tools/list"), "extra": 1}  # parse() reads it; the lane leaves it
    assert jsonrpc.plain_request(frame(extra)) is None
    assert jsonrpc.plain_request(b"\xff") is None and jsonrpc.plain_request(b"[]") is None
