"""Params and results between versions: what a newer result looks like answered to an older
peer, and an older one to a newer peer; params of one version handed to handlers typed
against another; error codes renamed by era. ``tests/core/test_wire.py`` holds content a version
cannot express and the schema check of what goes out; here is the shape of each answer."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from mcpgen.generated.v2025_11_25 import server as s25
from mcpgen.generated.v2025_11_25 import types as t25
from mcpgen.generated.v2026_07_28 import types as t
from mcpgen.runtime.core.errors import INVALID_PARAMS, RESOURCE_NOT_FOUND, resource_not_found
from mcpgen.runtime.core.events import Answer, IncomingRequest
from support.sansio import (
    CAPABILITIES_KEY,
    CLIENT_INFO,
    INFO_KEY,
    LEGACY,
    MODERN,
    VERSION_KEY,
    client,
    feed,
    handshake,
    modern,
    only,
    request,
    server,
    settle,
)

TOOL = t.Tool(
    name="a",
    title="A",
    icons=[t.Icon(src="https://example.com/a.png")],
    input_schema=t.convert({"type": "object"}, t.ToolInputSchema),
    output_schema=t.convert({"type": "object"}, t.ToolOutputSchema),
    annotations=t.ToolAnnotations(read_only_hint=True),
)
LISTED = t.ListToolsResult(tools=[TOOL], next_cursor="n", ttl_ms=5, cache_scope="public")
#: The keys of ``TOOL`` each legacy version has (``title`` and ``outputSchema`` from
#: 2025-06-18, ``icons`` from 2025-11-25, annotations from 2025-03-26).
TOOL_KEYS = {
    "2024-11-05": {"name", "inputSchema"},
    "2025-03-26": {"name", "inputSchema", "annotations"},
    "2025-06-18": {"name", "inputSchema", "annotations", "title", "outputSchema"},
    "2025-11-25": {"name", "inputSchema", "annotations", "title", "outputSchema", "icons"},
}


def result_of(frame: bytes) -> Any:
    return json.loads(frame)["result"]


@pytest.mark.parametrize("version", LEGACY)
def test_a_newer_result_reaches_an_older_peer_with_only_what_its_version_has(
    version: str,
) -> None:
    conn = server()
    handshake(conn, version)
    listed = result_of(conn.result(1, LISTED, "tools/list"))
    assert listed.keys() == {"tools", "nextCursor"}  # no resultType, ttlMs, cacheScope
    assert listed["tools"][0].keys() == TOOL_KEYS[version]
    assert listed["tools"][0]["name"] == "a"


def test_the_same_result_reaches_a_modern_peer_whole() -> None:
    conn = server()
    event = only(feed(conn, modern(1, "tools/list")), IncomingRequest)
    assert event.peer is not None
    listed = result_of(conn.result(1, LISTED, "tools/list", event.peer.version))
    assert (listed["resultType"], listed["ttlMs"], listed["cacheScope"]) == (
        "complete",
        5,
        "public",
    )
    assert listed["tools"][0].keys() == TOOL_KEYS["2025-11-25"]


class Older(s25.ServerHandlers):
    """A server written against 2025-11-25, serving modern peers too."""

    async def call_tool(
        self, params: t25.CallToolRequestParams, ctx: s25.Context
    ) -> t25.CallToolResult:
        return t25.CallToolResult(content=[])


def test_an_older_servers_answer_reaches_a_modern_peer_with_what_that_version_requires() -> None:
    conn = server(Older())
    params = {"name": "x", "arguments": {"a": 1}}
    call = modern(1, "tools/call", params, capabilities={"sampling": {}})
    event = only(feed(conn, call), IncomingRequest)
    # the handler gets its own version's params, the modern _meta kept in them
    assert isinstance(event.params, t25.CallToolRequestParams)
    assert (event.params.name, event.params.arguments) == ("x", {"a": 1})
    assert dict(event.meta)[VERSION_KEY] == MODERN
    assert event.peer is not None and dict(event.peer.capabilities) == {"sampling": {}}
    answer = t25.CallToolResult(content=[t25.TextContent(text="hi")])
    called = result_of(conn.result(1, answer, "tools/call", event.peer.version))
    assert called == {"content": [{"type": "text", "text": "hi"}], "resultType": "complete"}
    listed = only(feed(conn, modern(2, "tools/list")), IncomingRequest)
    assert listed.peer is not None
    none = t25.ListToolsResult(tools=[])
    tools = result_of(conn.result(2, none, "tools/list", listed.peer.version))
    assert tools == {"tools": [], "resultType": "complete", "ttlMs": 0, "cacheScope": "private"}


def test_a_legacy_sessions_state_reaches_a_modern_handler_as_per_request_meta() -> None:
    conn = server()
    handshake(conn, "2025-06-18", {"sampling": {}})
    call = request(1, "tools/call", {"name": "x", "_meta": {"progressToken": "p"}})
    event = only(feed(conn, call), IncomingRequest)
    assert event.peer is None  # still a session's request
    meta = json.loads(t.encode(event.params))["_meta"]
    assert meta == {
        VERSION_KEY: "2025-06-18",
        CAPABILITIES_KEY: {"sampling": {}},
        INFO_KEY: CLIENT_INFO,
        "progressToken": "p",  # the client's own _meta is kept
    }


@pytest.mark.parametrize(
    ("version", "code"), [*((v, RESOURCE_NOT_FOUND) for v in LEGACY), (MODERN, INVALID_PARAMS)]
)
def test_resource_not_found_is_32002_for_legacy_peers_and_32602_for_modern_ones(
    version: str, code: int
) -> None:
    conn = server()
    error = json.loads(conn.error(1, resource_not_found("a://b"), conn.versions[version]))["error"]
    assert error == {"code": code, "message": "Resource not found: a://b", "data": {"uri": "a://b"}}


# -- the client's side -------------------------------------------------------------------------


def settled(local: str, version: str, capabilities: dict[str, Any] | None = None) -> Any:
    conn = client(local, capabilities=capabilities)
    return settle(conn, version, {"tools": {}})


def test_a_newer_servers_answer_reaches_an_older_client_with_its_extra_keys_kept() -> None:
    conn = settled("2025-11-25", MODERN)
    request_id, _ = conn.request("tools/list")
    tool = {"name": "a", "inputSchema": {"type": "object"}}
    reply = {"tools": [tool], "resultType": "complete", "ttlMs": 5, "cacheScope": "public"}
    answered = only(feed(conn, {"jsonrpc": "2.0", "id": request_id, "result": reply}), Answer)
    assert isinstance(answered.result, t25.ListToolsResult)
    assert answered.result.tools[0].name == "a"
    assert json.loads(t25.encode(answered.result)) == reply  # nothing is lost on the way


def test_an_older_servers_request_reaches_a_modern_client_and_is_answered_in_its_form() -> None:
    conn = settled(MODERN, "2024-11-05", {"sampling": {}})
    message = {"role": "user", "content": {"type": "text", "text": "hi"}}
    ask = request(3, "sampling/createMessage", {"messages": [message], "maxTokens": 5})
    event = only(feed(conn, ask), IncomingRequest)
    assert isinstance(event.params, t.CreateMessageRequestParams)
    assert event.params.messages[0].content == t.TextContent(text="hi")
    audio = t.AudioContent(data="AAAA", mime_type="audio/wav")  # 2024-11-05 has no audio
    answer = t.CreateMessageResult(role="assistant", content=audio, model="m")
    sampled = result_of(conn.result(3, answer, "sampling/createMessage"))
    assert sampled["content"]["type"] == "text" and "audio/wav" in sampled["content"]["text"]
    assert (sampled["role"], sampled["model"]) == ("assistant", "m")


RESULTS_BY_PLAN = [
    ("tools/call", t.CallToolResult(content=[t.TextContent(text="x")])),
    ("tools/call", t.CallToolResult(content=[t.TextContent(text="x")], is_error=True)),
    ("tools/call", t.CallToolResult(content=[], structured_content={"a": 1})),
    (
        "tools/call",
        t.CallToolResult(
            content=[t.ImageContent(data="AA==", mime_type="image/png"), t.TextContent(text="y")],
            meta=t.convert({"k": 1}, t.ResultMetaObject),
        ),
    ),
    (
        "tools/call",
        t.CallToolResult(
            content=[
                t.EmbeddedResource(
                    resource=t.convert(
                        {"uri": "file:///a", "text": "a"},
                        t.TextResourceContentsOrBlobResourceContents,
                    )
                )
            ]
        ),
    ),
    ("prompts/list", t.ListPromptsResult(prompts=[t.Prompt(name="p")], ttl_ms=5)),
    ("tools/list", t.ListToolsResult(tools=[TOOL])),
]


@pytest.mark.parametrize("version", LEGACY)
@pytest.mark.parametrize("method,result", RESULTS_BY_PLAN)
def test_a_result_sent_as_it_is_by_its_types_plan_is_the_one_converting_it_gives(
    version: str, method: str, result: Any
) -> None:
    """A result whose types agree with the peer's version (but for fields it lacks, left
    out) goes out without being converted: the very bytes converting it gives."""
    conn = server()
    handshake(conn, version)
    assert conn.version is not None
    spec = conn.version.spec(conn.peer, method)
    assert spec is not None
    converted = conn.wire.reshape(result, spec.result, conn.version, method)
    expected = conn.result(1, conn.wire.fill(converted, method))
    assert conn.result(1, result, method) == expected


PARAMS_READ_DIRECTLY = [
    {"name": "a", "arguments": {"x": [1, {"y": None}]}},
    {"name": "a"},
    {"name": "a", "arguments": {}, "_meta": {"progressToken": 7}},
    {"name": "a", "task": {"ttl": 1000}},
    {"name": "a", "requestState": "s"},
]


@pytest.mark.parametrize("params", PARAMS_READ_DIRECTLY)
def test_a_legacy_sessions_params_read_directly_are_those_converting_them_gives(
    params: dict[str, Any],
) -> None:
    """Params whose type agrees with the application's (``_meta`` aside) are read as the
    application's type at once: the same value as reading them at the session's version
    and converting them gives, the session's ``_meta`` in it."""
    from mcpgen.runtime.core import params as p
    from mcpgen.runtime.core.capabilities import session_meta

    conn = server()
    handshake(conn, "2025-11-25")
    version = conn.version
    assert version is not None
    spec, local = conn.route(version, "tools/call")
    raw = msgspec.Raw(json.dumps(params).encode())

    def settled() -> dict[str, Any]:
        return session_meta(version, conn.peer_capabilities, conn.peer_info)

    converted = p.incoming_params(raw, spec, version, local, conn.local, settled)
    assert conn.incoming(raw, spec, local, version) == converted
