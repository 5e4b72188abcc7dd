"""A client connection, sans-IO: the ``initialize`` it sends and how it takes the answer,
what its requests carry in each era, and how answers come back to it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcpgen.generated.v2026_07_28 import types as t
from mcpgen.runtime import McpError, NegotiationError
from mcpgen.runtime.lowlevel import State
from mcpgen.runtime.core.errors import INTERNAL_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND
from mcpgen.runtime.core.events import Answer, Failure, Negotiated, Refused, Send
from mcpgen.runtime.core.events import InputRequiredAnswer
from support.sansio import (
    CAPABILITIES_KEY,
    CLIENT_INFO,
    INFO_KEY,
    LEGACY,
    MODERN,
    VERSION_KEY,
    client,
    feed,
    only,
    settle,
)

LEGACY_RESULT = {"capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}


def initialized(versions: list[str] | None = None, **options: Any) -> tuple[Any, dict[str, Any]]:
    """A client that sent ``initialize`` offering its handshake versions: it, and the frame."""
    conn = client(versions=versions, **options)
    frame = json.loads(conn.initialize(tuple(conn.versions.of_era("legacy"))))
    return conn, frame


def result(request_id: Any, value: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


def test_initialize_offers_the_newest_handshake_version_with_capabilities_and_info() -> None:
    conn, frame = initialized(capabilities={"sampling": {}})
    assert frame["method"] == "initialize" and conn.state is State.INITIALIZING
    assert frame["params"] == {
        "protocolVersion": LEGACY[-1],
        "capabilities": {"sampling": {}},
        "clientInfo": CLIENT_INFO,
    }
    _, older = initialized(versions=["2024-11-05", "2025-03-26"])
    assert older["params"]["protocolVersion"] == "2025-03-26"


@pytest.mark.parametrize("answered", LEGACY)
def test_an_answer_with_any_offered_version_settles_the_session(answered: str) -> None:
    conn, frame = initialized()
    events = feed(conn, result(frame["id"], {"protocolVersion": answered, **LEGACY_RESULT}))
    assert isinstance(events[0], Answer) and events[2] == Negotiated(answered)
    notified = events[1]
    assert isinstance(notified, Send) and not notified.final
    assert json.loads(notified.data) == {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert conn.state is State.READY and conn.version is not None
    assert conn.version.version == answered
    assert conn.peer_capabilities == {"tools": {}} and conn.peer_info["name"] == "s"


@pytest.mark.parametrize("answered", ["2099-01-01", MODERN, "2025-06-18"])
def test_an_answer_with_a_version_not_offered_is_refused(answered: str) -> None:
    conn, frame = initialized(versions=["2024-11-05", "2025-03-26"])
    reply = result(frame["id"], {"protocolVersion": answered, **LEGACY_RESULT})
    refused = only(feed(conn, reply), Refused)
    assert isinstance(refused.error, NegotiationError) and answered in str(refused.error)
    assert conn.state is not State.READY


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param({"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "modern only"}}, id="error"),
        pytest.param({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "unreadable"}}, id="error-without-id"),
        pytest.param(result(1, {"protocolVersion": LEGACY[-1]}), id="result-missing-fields"),
    ],
)  # fmt: skip
def test_a_refused_or_invalid_initialize_is_reported_at_once(reply: dict[str, Any]) -> None:
    conn, frame = initialized()
    assert frame["id"] == 1
    refused = only(feed(conn, reply), Refused)
    if "error" in reply:
        assert isinstance(refused.error, McpError)
        assert refused.error.code == reply["error"]["code"]
    else:
        assert isinstance(refused.error, NegotiationError)
    assert conn.pending() == []  # nothing waits for the answer any more


# -- requests ------------------------------------------------------------------------------


def ready(version: str, capabilities: dict[str, Any] | None = None) -> Any:
    """A client settled on ``version`` with a server that offers tools."""
    conn = client(capabilities=capabilities)
    return settle(conn, version, {"tools": {}})


def params_of(frame: bytes) -> dict[str, Any]:
    return json.loads(frame)["params"]


def test_a_modern_request_carries_version_capabilities_info_and_log_level_in_meta() -> None:
    conn = ready(MODERN, capabilities={"sampling": {}, "notInThisVersion": {}})
    conn.log_level = "info"
    _, frame = conn.request("tools/list", t.PaginatedRequestParams(cursor="c"), progress_token=5)
    params = params_of(frame)
    assert params["cursor"] == "c"
    assert params["_meta"] == {
        VERSION_KEY: MODERN,
        CAPABILITIES_KEY: {"sampling": {}},  # only what the version knows
        INFO_KEY: CLIENT_INFO,
        "io.modelcontextprotocol/logLevel": "info",
        "progressToken": 5,
    }
    _, bare = conn.request("tools/list")
    assert params_of(bare)["_meta"][VERSION_KEY] == MODERN  # params made just for _meta


def test_a_legacy_request_carries_only_its_params() -> None:
    conn = ready("2024-11-05")
    _, frame = conn.request("tools/list", t.PaginatedRequestParams(cursor="c"))
    assert params_of(frame) == {"cursor": "c"}
    _, tokened = conn.request("tools/list", progress_token="p")
    assert params_of(tokened) == {"_meta": {"progressToken": "p"}}


def test_ids_count_up_and_requests_the_version_or_the_server_lacks_are_not_sent() -> None:
    conn = ready(MODERN)
    assert conn.next_id == 1
    assert [conn.request("tools/list")[0] for _ in range(3)] == [1, 2, 3]
    with pytest.raises(McpError) as absent:
        conn.request("initialize", {})
    assert absent.value.code == METHOD_NOT_FOUND and MODERN in absent.value.message
    conn.peer_capabilities = {}
    with pytest.raises(McpError) as ungated:
        conn.request("tools/call", t.CallToolRequestParams(name="x"))
    assert ungated.value.code == METHOD_NOT_FOUND and "tools capability" in ungated.value.message
    with pytest.raises(McpError) as early:
        client().request("tools/list")
    assert early.value.code == INVALID_REQUEST and "not initialized" in early.value.message


# -- answers -------------------------------------------------------------------------------


def test_an_older_servers_answer_is_typed_as_the_application_expects() -> None:
    conn = ready("2024-11-05")
    request_id, _ = conn.request("tools/call", t.CallToolRequestParams(name="x"))
    content = [{"type": "text", "text": "hi"}]
    answered = only(feed(conn, result(request_id, {"content": content})), Answer)
    assert isinstance(answered.result, t.CallToolResult)
    assert answered.result.result_type == "complete"  # absent from legacy: complete
    assert answered.result.content == [t.TextContent(text="hi")]


def test_an_invalid_answer_fails_that_request_naming_the_path() -> None:
    conn = ready(MODERN)
    request_id, _ = conn.request("tools/call", t.CallToolRequestParams(name="x"))
    failed = only(feed(conn, result(request_id, {"content": 5})), Failure)
    assert failed.error.code == INTERNAL_ERROR and "$.result.content" in failed.error.message


def test_an_input_required_answer_hands_back_the_requests_and_state() -> None:
    conn = ready(MODERN)
    request_id, _ = conn.request("tools/call", t.CallToolRequestParams(name="x"))
    asked = {"roots": {"method": "roots/list", "params": {}}}
    reply = result(request_id, {"resultType": "input_required", "inputRequests": asked, "requestState": "s1"})  # fmt: skip
    answered = only(feed(conn, reply), Answer)
    assert answered.result == InputRequiredAnswer(asked, "s1")


def test_errors_fail_their_request_and_late_or_stray_answers_are_dropped() -> None:
    conn = ready(MODERN)
    first, _ = conn.request("tools/list")
    second, _ = conn.request("tools/list")
    error = {"jsonrpc": "2.0", "id": first, "error": {"code": -32602, "message": "no", "data": 1}}
    failed = only(feed(conn, error), Failure)
    assert (failed.id, failed.error.code, failed.error.data) == (first, -32602, 1)
    assert feed(conn, error) == []  # answered already
    assert conn.forget(second) and not conn.forget(second)
    assert feed(conn, result(second, {"tools": []})) == []  # timed out, then answered
    assert feed(conn, result(99, {})) == [] and conn.pending() == []
