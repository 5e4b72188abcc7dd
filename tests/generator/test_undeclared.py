"""Keys no definition declares are kept: decode → encode is lossless wherever the schema
leaves an object open (everywhere in MCP), at every depth and through every kind of
container; values stay instances of their classes; hostile amounts are refused clearly
and the bindings keep working; re-shaping for another version drops them on purpose."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from mcpgen.generated import _support, _undeclared
from mcpgen.generated.v2025_11_25 import server as legacy_server
from mcpgen.generated.v2025_11_25 import types as legacy
from mcpgen.generated.v2026_07_28 import types as t
from mcpgen.runtime import Server
from mcpgen.runtime.core.errors import INVALID_PARAMS
from support.memory_peer import serving
from support.sansio import run


def round_trip(types: Any, value: Any, tp: Any) -> Any:
    data = json.dumps(value).encode()
    decoded = types.decode(data, tp)
    assert json.loads(types.encode(decoded)) == value
    assert json.loads(types.encode(types.convert(value, tp))) == value  # from builtins too
    return decoded


def test_a_struct_keeps_undeclared_keys_and_stays_its_class() -> None:
    value = {"content": [], "resultType": "complete", "com.example/trace": {"span": 7}}
    result = round_trip(t, value, t.CallToolResult)
    assert isinstance(result, t.CallToolResult) and result.content == []
    assert t.undeclared(result) == {"com.example/trace": {"span": 7}}
    assert t.undeclared(t.CallToolResult(content=[])) == {}


def test_undeclared_keys_are_kept_at_every_depth_and_in_every_container() -> None:
    value = {
        "message": "Who are you?",
        "requestedSchema": {
            "type": "object",
            "properties": {  # a map of a union of Structs
                "name": {"type": "string", "x-widget": "textbox"},
                "age": {"type": "integer", "minimum": 0, "x-unit": "years"},
            },
            "x-form": 1,
        },
        "x-top": [1, {"nested": True}],
    }
    params = round_trip(legacy, value, legacy.ElicitRequestFormParams)
    fields = params.requested_schema.properties
    assert legacy.undeclared(fields["name"]) == {"x-widget": "textbox"}
    assert legacy.undeclared(fields["age"]) == {"x-unit": "years"}
    assert legacy.undeclared(params.requested_schema) == {"x-form": 1}


def test_keys_inside_open_objects_and_tagged_unions_are_kept() -> None:
    value = {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"roots": {}, "x-cap": {}},
            "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1", "x-build": 9},
        },
        "name": "add",
        "arguments": {"a": 1},
    }
    params = round_trip(t, value, t.CallToolRequestParams)
    info = params.meta["io.modelcontextprotocol/clientInfo"]
    assert isinstance(info, t.Implementation) and t.undeclared(info) == {"x-build": 9}
    blocks = {"content": [{"type": "text", "text": "hi", "x-lang": "en"}], "resultType": "complete"}
    result = round_trip(t, blocks, t.CallToolResult)
    assert isinstance(result.content[0], t.TextContent)
    assert t.undeclared(result.content[0]) == {"x-lang": "en"}


def test_a_key_a_struct_declares_with_a_wrong_value_is_an_error_not_an_undeclared_key() -> None:
    with pytest.raises(msgspec.ValidationError, match=r"\$\.content"):
        t.decode(b'{"content": 5, "x": 1}', t.CallToolResult)
    with pytest.raises(msgspec.ValidationError, match="text"):
        t.decode(b'{"content": [{"type": "text", "x": 1}]}', t.CallToolResult)
    assert t.decode(b'{"content": []}', t.CallToolResult).content == []  # still works


def test_with_undeclared_adds_keys_that_encoding_writes() -> None:
    block = t.with_undeclared(t.TextContent(text="hi"), {"x-lang": "en"})
    assert isinstance(block, t.TextContent)
    assert json.loads(t.encode(block)) == {"type": "text", "text": "hi", "x-lang": "en"}
    more = t.with_undeclared(block, {"x-more": 2})
    assert t.undeclared(more) == {"x-lang": "en", "x-more": 2}
    with pytest.raises(msgspec.ValidationError, match="text"):
        t.with_undeclared(t.TextContent(text="hi"), {"text": "declared"})


def test_reshape_drops_what_the_target_does_not_declare() -> None:
    plain = {"content": [{"type": "text", "text": "a", "x-lang": "en"}], "x": 1}
    result = t.reshape(plain, t.CallToolResult)
    assert json.loads(t.encode(result)) == {
        "content": [{"type": "text", "text": "a"}],
        "resultType": "complete",
    }


def test_more_undeclared_keys_than_the_limit_are_refused_and_the_limit_is_a_setting() -> None:
    many = {"content": [], **{f"x-{i}": i for i in range(10_000)}}
    with pytest.raises(msgspec.ValidationError, match="more than 256 keys"):
        t.convert(many, t.CallToolResult)
    spread = {"content": [{"type": "text", "text": "", f"x{i}": i} for i in range(300)]}
    with pytest.raises(msgspec.ValidationError, match="more than 256 keys"):
        t.convert(spread, t.CallToolResult)
    try:
        _support.configure(max_undeclared_keys=20_000)
        assert len(t.undeclared(t.convert(many, t.CallToolResult))) == 10_000
    finally:
        _support.configure(max_undeclared_keys=256)
    with pytest.raises(ValueError):
        _support.configure(max_undeclared_keys=-1)
    assert t.convert({"content": [], "x": 1}, t.CallToolResult).content == []  # still works


def test_the_classes_made_for_key_sets_are_bounded() -> None:
    for i in range(_undeclared.MAX_CLASSES + 50):
        block = t.decode(
            json.dumps({"type": "text", "text": "", f"k{i}": i}).encode(), t.TextContent
        )
        assert t.undeclared(block) == {f"k{i}": i}
        assert _undeclared.class_count() <= _undeclared.MAX_CLASSES


@pytest.mark.parametrize(
    "garbage",
    [
        b'{"content": [], "x": 1',
        b"[1, 2]",
        b'{"content": [{"type": "nope", "x": 1}]}',
        b"\xff",
        # keys msgspec cannot name a field after: refused, not dropped
        b'{"content": [], "\\u0000": 1}',
        b'{"content": [], "a\\"b": 1}',
        b'{"content": [], "a\\\\b": 1}',
    ],
)
def test_garbage_with_undeclared_keys_is_a_clear_error(garbage: bytes) -> None:
    with pytest.raises((msgspec.ValidationError, msgspec.DecodeError)):
        t.decode(garbage, t.CallToolResult)
    assert t.undeclared(t.decode(b'{"content": [], "x": 1}', t.CallToolResult)) == {"x": 1}


class Echo(legacy_server.ServerHandlers):
    """Answers a tool call with the keys its params did not declare."""

    async def call_tool(
        self, params: legacy.CallToolRequestParams, ctx: legacy_server.Context
    ) -> legacy.CallToolResult:
        text = json.dumps(legacy.undeclared(params), sort_keys=True)
        return legacy.CallToolResult(content=[legacy.TextContent(text=text)])


def test_a_server_hands_undeclared_params_keys_to_its_handler_and_refuses_floods() -> None:
    def call(request_id: int, extra: dict[str, Any]) -> dict[str, Any]:
        params = {"name": "echo", "arguments": {}, **extra}
        return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}

    async def scenario() -> None:
        async with serving(Server(Echo(), name="echo", version="1")) as peer:
            await peer.handshake()
            await peer.send(call(1, {"x-trace": {"span": 1}}))
            answer = await peer.answer_to(1)
            assert answer["result"]["content"][0]["text"] == '{"x-trace": {"span": 1}}'
            await peer.send(call(2, {f"x-{i}": i for i in range(300)}))
            assert (await peer.answer_to(2))["error"]["code"] == INVALID_PARAMS
            await peer.send(call(3, {}))
            assert (await peer.answer_to(3))["result"]["content"][0]["text"] == "{}"

    run(scenario())
