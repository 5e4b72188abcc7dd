"""The stateless 2026-07-28 era over real HTTP on 127.0.0.1, against the everything server
in process under uvicorn (``served``): ``server/discover``, notifications answered 202,
progress and logs streamed without event ids, multi-round-trip tools across POSTs with
signed ``requestState`` (tampered or replayed state refused), ``subscriptions/listen``
and its bounds, and a handler cancelled when its client closes the stream or leaves."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from mcpgen.runtime import INVALID_PARAMS

from support.http_endpoint import (
    MODERN,
    Endpoint,
    meta,
    modern_headers,
    next_id,
    result_of,
    rpc_error,
    sse,
    text_of,
    until_response,
)
from support.http_servers import HANG, Served
from support.messages import request

# Slow: real HTTP on 127.0.0.1 throughout (``make unit`` leaves this module out).
pytestmark = pytest.mark.slow


def test_server_discover(endpoint: Endpoint) -> None:
    request_id, response = endpoint.modern("server/discover")
    result = result_of(response, request_id)
    assert result["resultType"] == "complete"
    assert result["supportedVersions"] == [MODERN]
    assert result["capabilities"]["tools"] == {"listChanged": True}
    assert isinstance(result["ttlMs"], int) and result["ttlMs"] >= 0
    assert result["cacheScope"] in ("public", "private")
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == {
        "name": "mcpgen-everything",
        "version": "0.1.0",
    }
    assert "mcp-session-id" not in response.headers


def test_modern_notification_gets_202(endpoint: Endpoint) -> None:
    headers = {**modern_headers("notifications/cancelled"), "mcp-method": None}
    message = {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": 424242, "_meta": meta()},
    }
    response = endpoint.post(message, headers)
    assert response.status_code == 202 and response.content == b"", response
    endpoint.assert_serving()


def test_modern_progress_and_logs_stream_without_event_ids(endpoint: Endpoint) -> None:
    request_id = next_id()
    params = {"name": "test_tool_with_logging", "arguments": {}}
    body = request(
        request_id, "tools/call", {**params, "_meta": meta(logLevel="info", progressToken=3)}
    )
    with endpoint.stream(body, modern_headers("tools/call", params)) as response:
        events = list(sse(response))
    assert all(event.id is None for event in events)  # no resumption in the modern era
    before, final = until_response(iter(events), request_id)
    assert [m["params"]["data"] for m in before] == [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    assert final["result"]["resultType"] == "complete"


def multi_round(endpoint: Endpoint, tool: str = "test_input_required_result_multi_round") -> str:
    """The two-round tool over three POSTs (a new id each); returns its text."""
    params: dict[str, Any] = {"name": tool, "arguments": {}}
    request_id, response = endpoint.modern("tools/call", params)
    first = result_of(response, request_id)
    assert first["resultType"] == "input_required"
    assert set(first["inputRequests"]) == {"step1"}
    assert first["inputRequests"]["step1"]["method"] == "elicitation/create"
    retry = {
        **params,
        "inputResponses": {"step1": {"action": "accept", "content": {"name": "Ada"}}},
        "requestState": first["requestState"],
    }
    request_id, response = endpoint.modern("tools/call", retry)
    second = result_of(response, request_id)
    assert second["resultType"] == "input_required" and set(second["inputRequests"]) == {"step2"}
    retry = {
        **params,
        "inputResponses": {"step2": {"action": "accept", "content": {"color": "teal"}}},
        "requestState": second["requestState"],
    }
    request_id, response = endpoint.modern("tools/call", retry)
    final = result_of(response, request_id)
    assert final["resultType"] == "complete"
    return text_of(final)


def test_multi_round_tool_completes_over_three_posts(endpoint: Endpoint) -> None:
    assert multi_round(endpoint) == "Ada likes teal"


def tamper(state: str, part: int) -> str:
    """``state`` with one character of its key id (0), payload (1) or signature (2) changed."""
    pieces = state.split(".")
    piece = pieces[part]
    index = len(piece) // 2
    pieces[part] = piece[:index] + ("A" if piece[index] != "A" else "B") + piece[index + 1 :]
    return ".".join(pieces)


@pytest.mark.parametrize(
    "forge",
    [
        pytest.param(lambda state: tamper(state, 0), id="key-id-changed"),
        pytest.param(lambda state: tamper(state, 1), id="payload-changed"),
        pytest.param(lambda state: tamper(state, 2), id="signature-changed"),
        pytest.param(lambda state: state.rsplit(".", 1)[0], id="signature-dropped"),
        pytest.param(lambda state: "", id="empty"),
    ],
)
def test_tampered_request_state_is_rejected(endpoint: Endpoint, forge: Any) -> None:
    params: dict[str, Any] = {"name": "test_input_required_result_tampered_state", "arguments": {}}
    request_id, response = endpoint.modern("tools/call", params)
    state = result_of(response, request_id)["requestState"]
    retry = {
        **params,
        "inputResponses": {"confirm": {"action": "accept", "content": {"ok": True}}},
        "requestState": forge(state),
    }
    request_id, response = endpoint.modern("tools/call", retry)
    error = rpc_error(response, 400, INVALID_PARAMS, request_id)
    assert error["data"]["path"] == "$.params.requestState"
    # the untouched state still works
    retry["requestState"] = state
    request_id, response = endpoint.modern("tools/call", retry)
    assert text_of(result_of(response, request_id)) == "state-ok: confirmed=True"


def test_request_state_is_bound_to_its_request(endpoint: Endpoint) -> None:
    issued_for = {"name": "test_input_required_result_request_state", "arguments": {}}
    request_id, response = endpoint.modern("tools/call", issued_for)
    state = result_of(response, request_id)["requestState"]
    replay = {
        "name": "test_input_required_result_tampered_state",
        "arguments": {},
        "inputResponses": {"confirm": {"action": "accept", "content": {"ok": True}}},
        "requestState": state,
    }
    request_id, response = endpoint.modern("tools/call", replay)
    error = rpc_error(response, 400, INVALID_PARAMS, request_id)
    assert "another request" in error["message"]


def listen(endpoint: Endpoint, request_id: Any, notifications: dict[str, Any]) -> Any:
    params = {"notifications": notifications}
    body = request(request_id, "subscriptions/listen", {**params, "_meta": meta()})
    return endpoint.stream(body, modern_headers("subscriptions/listen", params))


def test_listen_acknowledges_then_delivers_tagged_list_changes(endpoint: Endpoint) -> None:
    with listen(endpoint, "sub-1", {"toolsListChanged": True}) as response:
        assert response.headers.get("x-accel-buffering") == "no"
        events = sse(response)
        ack = next(events).message()
        assert ack["method"] == "notifications/subscriptions/acknowledged"
        assert ack["params"]["notifications"] == {"toolsListChanged": True}
        assert ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "sub-1"
        # a prompt change was not asked for; the tool change that follows is
        endpoint.call("test_trigger_prompt_change")
        endpoint.call("test_trigger_tool_change")
        changed = next(events).message()
        assert changed["method"] == "notifications/tools/list_changed"
        assert changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "sub-1"
        assert "id" not in changed
    # the listener is gone with its stream: changes still work and are sent nowhere
    assert endpoint.call("test_trigger_tool_change")["resultType"] == "complete"
    endpoint.assert_serving()


def test_a_listen_naming_too_many_or_too_long_uris_is_refused_with_400(endpoint: Endpoint) -> None:
    """``Limits.max_subscriptions`` URIs per listen filter, each at most
    ``Limits.max_uri_length`` characters: beyond either, -32602 naming the limit (HTTP
    400), and no stream is opened."""
    many = [f"test://template/{n}/data" for n in range(1001)]
    long = ["test://static-text", "test://template/" + "x" * 3000 + "/data"]
    for uris, limit in ((many, "max_subscriptions"), (long, "max_uri_length")):
        notifications = {"resourceSubscriptions": uris}
        request_id, response = endpoint.modern(
            "subscriptions/listen", {"notifications": notifications}
        )
        error = rpc_error(response, 400, INVALID_PARAMS, request_id)
        assert error["data"]["limit"] == limit and f"Limits.{limit}" in error["message"]
    endpoint.assert_serving()


def test_closing_a_modern_stream_cancels_the_handler(served: Served) -> None:
    endpoint, probe = served.endpoint, served.probe
    probe.started.clear()
    probe.cancelled.clear()
    request_id = next_id()
    params = {"name": HANG, "arguments": {}}
    body = request(request_id, "tools/call", {**params, "_meta": meta(progressToken="hang")})
    with endpoint.stream(body, modern_headers("tools/call", params)) as response:
        progress = next(sse(response)).message()
        assert progress["method"] == "notifications/progress"
        assert probe.started.is_set()
    # the client went away: that is a cancellation
    assert probe.cancelled.wait(5), "the handler was not cancelled"
    endpoint.assert_serving()
    assert multi_round(endpoint) == "Ada likes teal"


def test_leaving_before_any_answer_cancels_the_handler(served: Served) -> None:
    """No progress token: nothing is written before the answer, so the server learns of
    the disconnect only by watching for it while the handler waits."""
    endpoint, probe = served.endpoint, served.probe
    probe.started.clear()
    probe.cancelled.clear()
    params = {"name": HANG, "arguments": {}}
    body = json.dumps(request(next_id(), "tools/call", {**params, "_meta": meta()})).encode()
    with httpx.Client(timeout=httpx.Timeout(5.0, read=0.5)) as client:
        with pytest.raises(httpx.ReadTimeout):
            client.post(endpoint.url, headers=modern_headers("tools/call", params), content=body)
        assert probe.started.is_set()
    assert probe.cancelled.wait(5), "the handler was not cancelled"
    endpoint.assert_serving()
