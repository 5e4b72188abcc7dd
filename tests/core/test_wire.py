"""What a connection puts on the wire is valid at the peer's version (``runtime/core/outgoing.py``),
checked sans-IO with the official schemas through ``jsonschema`` as the judge."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

import pytest

from mcpgen.generated.v2026_07_28 import types as t
from mcpgen.runtime import McpError, Server
from mcpgen.runtime.core.connection import Connection, State
from mcpgen.runtime.core.events import Answer
from mcpgen.runtime.core.outgoing import CacheHint, CachePolicy

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from support.sansio import Tools  # noqa: E402
from support.wire_oracle import Schema  # noqa: E402


def schema(version: str) -> Schema:
    return Schema(version, ROOT / "schema" / version / "schema.json")


def connection(cache: CachePolicy | None = None) -> Connection:
    return Server(Tools(), name="wire", cache=cache).connection()


def answer(conn: Connection, result: Any, method: str, version: str) -> dict[str, Any]:
    frame = conn.result(1, result, method, conn.versions[version])
    return json.loads(frame)["result"]


TOOLS = t.ListToolsResult(
    tools=[t.Tool(name="x", input_schema=t.convert({"type": "object"}, t.ToolInputSchema))]
)


def test_caching_hints_the_handler_left_out_come_from_the_policy() -> None:
    plain = answer(connection(), TOOLS, "tools/list", "2026-07-28")
    assert (plain["ttlMs"], plain["cacheScope"]) == (0, "private")
    assert schema("2026-07-28").error_of("ListToolsResult", plain) is None
    assert TOOLS.ttl_ms is t.UNSET  # a shared result object is not changed

    policy = CachePolicy(methods={"tools/list": CacheHint(60_000, "public")})
    plain = answer(connection(policy), TOOLS, "tools/list", "2026-07-28")
    assert (plain["ttlMs"], plain["cacheScope"]) == (60_000, "public")

    own = t.ListToolsResult(tools=[], ttl_ms=5, cache_scope="public")
    plain = answer(connection(policy), own, "tools/list", "2026-07-28")
    assert (plain["ttlMs"], plain["cacheScope"]) == (5, "public")
    # legacy versions have no such fields, and get none
    assert "ttlMs" not in answer(connection(), TOOLS, "tools/list", "2025-11-25")


def test_a_dict_result_is_validated_and_filled_like_a_typed_one() -> None:
    plain = answer(connection(), {"tools": []}, "tools/list", "2026-07-28")
    assert schema("2026-07-28").error_of("ListToolsResult", plain) is None
    with pytest.raises(McpError) as refused:
        answer(connection(), {"tools": "not a list"}, "tools/list", "2026-07-28")
    assert refused.value.code == -32603 and "2026-07-28" in refused.value.message


AUDIO = t.AudioContent(data="UklGRg==", mime_type="audio/wav")
LINK = t.ResourceLink(uri="file:///a.txt", name="a")
EMBEDDED = t.EmbeddedResource(resource=t.TextResourceContents(uri="file:///b", text="hello"))


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
def test_content_a_version_cannot_express_is_converted_and_valid(version: str) -> None:
    result = t.CallToolResult(content=[t.TextContent(text="hi"), AUDIO, LINK, EMBEDDED])
    plain = answer(connection(), result, "tools/call", version)
    assert schema(version).error_of("CallToolResult", plain) is None
    kinds = [block["type"] for block in plain["content"]]
    if version == "2024-11-05":
        assert kinds == ["text", "resource", "text", "resource"]
        assert plain["content"][1]["resource"]["blob"] == AUDIO.data  # the bytes are kept
        assert "file:///a.txt" in plain["content"][2]["text"]
    elif version == "2025-03-26":
        assert kinds == ["text", "audio", "text", "resource"]
    else:
        assert kinds == ["text", "audio", "resource_link", "resource"]


def test_what_cannot_be_made_valid_is_refused_not_sent(caplog: pytest.LogCaptureFixture) -> None:
    bad = {"content": [{"type": "image", "mimeType": "image/png"}]}  # no data: no repair
    with caplog.at_level(logging.ERROR, logger="mcpgen"):
        with pytest.raises(McpError) as refused:
            answer(connection(), bad, "tools/call", "2024-11-05")
    assert refused.value.code == -32603
    assert any("cannot send tools/call result" in r.getMessage() for r in caplog.records)


ENUMS = {
    "type": "object",
    "properties": {
        "plain": {"type": "string", "enum": ["a", "b"]},
        "titled": {"type": "string", "oneOf": [{"const": "a", "title": "A"}]},
        "multi": {"type": "array", "items": {"type": "string", "enum": ["x", "y", "z"]}},
        "titledMulti": {"type": "array", "items": {"anyOf": [{"const": "p", "title": "P"}]}},
        "one": {"type": "array", "maxItems": 1, "items": {"type": "string", "enum": ["m", "n"]}},
    },
}


def legacy_session(conn: Connection, version: str) -> None:
    """Take ``conn`` through a real handshake with a client that can elicit."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "wire-test", "version": "1"},
        },
    }
    conn.receive(json.dumps(initialize))
    conn.receive(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    assert conn.state is State.READY and conn.version is conn.versions[version]


def ask_2025_06_18() -> tuple[Connection, int | str, Any]:
    """A connection of a 2025-06-18 session that has asked the ENUMS form: the request's
    id and what went on the wire."""
    conn = connection()
    legacy_session(conn, "2025-06-18")
    form = t.ElicitRequestFormParams(
        message="Pick", requested_schema=t.convert(ENUMS, t.ElicitRequestFormParamsRequestedSchema)
    )
    request_id, frame = conn.request("elicitation/create", form)
    return conn, request_id, json.loads(frame)


def test_an_elicitation_form_is_sent_in_the_forms_2025_06_18_has_and_answered_back() -> None:
    conn, request_id, sent = ask_2025_06_18()
    assert schema("2025-06-18").error_of("ElicitRequest", sent) is None
    fields = sent["params"]["requestedSchema"]["properties"]
    assert fields["titled"] == {"type": "string", "enum": ["a"], "enumNames": ["A"]}
    assert fields["multi"]["type"] == "string" and "x, y, z" in fields["multi"]["description"]
    assert fields["one"] == {"type": "string", "enum": ["m", "n"]}
    content = {"plain": "a", "titled": "a", "multi": "x, z", "titledMulti": "p", "one": "n"}
    reply = {"jsonrpc": "2.0", "id": request_id, "result": {"action": "accept", "content": content}}
    events = conn.receive(json.dumps(reply).encode())
    assert len(events) == 1 and isinstance(events[0], Answer)
    got = events[0].result.content
    assert got == {
        "plain": "a",
        "titled": "a",
        "multi": ["x", "z"],
        "titledMulti": ["p"],
        "one": ["n"],
    }


def test_an_answer_in_a_form_only_newer_versions_allow_is_accepted() -> None:
    """A 2025-06-18 client answering a multi-select with a list (as 2025-11-25 would)."""
    conn, request_id, _ = ask_2025_06_18()
    content = {"multi": ["x", "y"]}
    reply = {"jsonrpc": "2.0", "id": request_id, "result": {"action": "accept", "content": content}}
    (event,) = conn.receive(json.dumps(reply).encode())
    assert isinstance(event, Answer) and event.result.content == {"multi": ["x", "y"]}
