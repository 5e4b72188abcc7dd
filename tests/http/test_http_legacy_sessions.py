"""Legacy Streamable HTTP (2025-03-26 … 2025-11-25) over real HTTP on 127.0.0.1, against
the everything server in process under uvicorn (``served``): session ids issued at
``initialize`` and required after it, notifications and responses answered 202, progress
and server requests on the POST's SSE stream, resumption with ``Last-Event-ID``, the GET
stream, DELETE ending a session, batches in 2025-03-26, a client going away without
cancelling, and a long session keeping bounded state."""

from __future__ import annotations

import re

import httpx
import pytest

from mcpgen.runtime import PARSE_ERROR

from support.http_endpoint import (
    SIMPLE_TEXT,
    TIMEOUT,
    Endpoint,
    Event,
    next_id,
    open_session,
    result_of,
    rpc_error,
    sse,
    text_of,
    until_response,
)
from support.http_servers import HANG, Served
from support.messages import request

VISIBLE_ASCII = re.compile(r"[\x21-\x7e]+")

# Slow: real HTTP on 127.0.0.1 throughout (``make unit`` leaves this module out).
pytestmark = pytest.mark.slow


@pytest.mark.parametrize("version", ["2025-03-26", "2025-06-18", "2025-11-25"])
def test_initialize_issues_an_unguessable_visible_ascii_session_id(
    endpoint: Endpoint, version: str
) -> None:
    first, second = open_session(endpoint, version), open_session(endpoint, version)
    for legacy in (first, second):
        assert VISIBLE_ASCII.fullmatch(legacy.session_id), legacy.session_id
        assert len(legacy.session_id) >= 16
    assert first.session_id != second.session_id
    assert text_of(first.call("test_simple_text")) == SIMPLE_TEXT
    # later requests need the session id: without it, a legacy request is not served
    call = request("no-session", "tools/call", {"name": "test_simple_text", "arguments": {}})
    headers = {k: v for k, v in first.headers.items() if k != "mcp-session-id"}
    answer = endpoint.post(call, headers).json()
    assert answer["id"] == "no-session" and "error" in answer and "result" not in answer
    # modern requests never mint or echo a session
    request_id, response = endpoint.modern("tools/list")
    assert "mcp-session-id" not in response.headers
    assert result_of(response, request_id)["tools"]


def test_notifications_and_responses_get_202_and_requests_are_answered(
    endpoint: Endpoint,
) -> None:
    legacy = open_session(endpoint)
    for message in (
        {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 999}},
        {"jsonrpc": "2.0", "id": 12345, "result": {}},  # an answer to nothing
        {"jsonrpc": "2.0", "id": 12346, "error": {"code": -1, "message": "no"}},
    ):
        response = legacy.post(message)
        assert response.status_code == 202 and response.content == b"", (message, response)
    request_id = next_id()
    assert result_of(legacy.post(request(request_id, "ping")), request_id) == {}
    # a malformed body inside a session: 400 with a parse error, and the session lives on
    rpc_error(legacy.endpoint.send("POST", legacy.headers, b"{oops"), 400, PARSE_ERROR)
    assert text_of(legacy.call("test_simple_text")) == SIMPLE_TEXT


def test_legacy_request_without_a_session_is_400(endpoint: Endpoint) -> None:
    rpc_error(endpoint.post(request("ns", "tools/list")), 400, None, "ns")


@pytest.mark.parametrize("value", ["2099-01-01", "banana"])
def test_unsupported_protocol_version_header_in_a_session_is_400(
    endpoint: Endpoint, value: str
) -> None:
    legacy = open_session(endpoint, "2025-06-18")
    response = legacy.post(request("pv", "ping"), **{"mcp-protocol-version": value})
    assert response.status_code == 400, (response.status_code, response.text)


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_progress_tool_answers_with_sse_progress_then_result(
    endpoint: Endpoint, version: str
) -> None:
    legacy = open_session(endpoint, version)
    request_id = next_id()
    params = {"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": "pt"}}
    with legacy.stream(request(request_id, "tools/call", params)) as response:
        assert response.headers.get("x-accel-buffering") == "no"
        events = list(sse(response))  # the stream ends after the result
    if version >= "2025-11-25":  # a priming event: an id, a retry delay, empty data
        primer = events.pop(0)
        assert primer.id and primer.retry is not None and primer.data == ""
    messages = [event.message() for event in events]
    progress, answer = messages[:-1], messages[-1]
    assert [m["method"] for m in progress] == ["notifications/progress"] * 3
    assert [m["params"]["progress"] for m in progress] == [0, 50, 100]
    assert {m["params"]["progressToken"] for m in progress} == {"pt"}
    assert answer["id"] == request_id
    assert text_of(answer["result"]) == "Tool with progress executed successfully"
    ids = [event.id for event in events]
    assert all(ids) and len(set(ids)) == len(ids)  # legacy events are resumable


def test_resumption_replays_the_rest_of_a_stream(endpoint: Endpoint) -> None:
    legacy = open_session(endpoint)
    request_id = next_id()
    params = {"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": 5}}
    with legacy.stream(request(request_id, "tools/call", params)) as response:
        events = [event for event in sse(response) if event.data]
    resume_after = events[0]
    with legacy.stream(None, "GET", **{"last-event-id": str(resume_after.id)}) as response:
        replayed: list[Event] = []
        for event in sse(response):
            replayed.append(event)
            if event.data and event.message().get("id") == request_id:
                break
    assert [(e.id, e.data) for e in replayed] == [(e.id, e.data) for e in events[1:]]


def test_sampling_request_travels_on_the_post_stream_and_its_answer_gets_202(
    endpoint: Endpoint,
) -> None:
    legacy = open_session(endpoint, capabilities={"sampling": {}})
    request_id = next_id()
    call = request(
        request_id, "tools/call", {"name": "test_sampling", "arguments": {"prompt": "Capital?"}}
    )
    with legacy.stream(call) as response:
        events = (event for event in sse(response) if event.data)
        asked = next(events).message()
        assert asked["method"] == "sampling/createMessage" and "id" in asked, asked
        assert asked["params"]["messages"][0]["content"]["text"] == "Capital?"
        answer = {
            "jsonrpc": "2.0",
            "id": asked["id"],
            "result": {
                "role": "assistant",
                "content": {"type": "text", "text": "Paris"},
                "model": "test-model",
            },
        }
        accepted = legacy.post(answer)
        assert accepted.status_code == 202 and accepted.content == b""
        before, final = until_response(events, request_id)
    assert before == []
    assert text_of(final["result"]) == "LLM response: Paris"


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25"])
def test_get_opens_a_stream_for_unsolicited_messages(endpoint: Endpoint, version: str) -> None:
    legacy = open_session(endpoint, version)
    with legacy.stream(None, "GET") as response:
        events = sse(response)
        if version >= "2025-11-25":
            primer = next(events)
            assert primer.id and primer.retry is not None and primer.data == ""
        # nothing to say yet; a change announced elsewhere arrives on this stream
        assert text_of(legacy.call("test_trigger_tool_change")) == "Announced a tool list change."
        event = next(events)
        assert event.message() == {
            "jsonrpc": "2.0",
            "method": "notifications/tools/list_changed",
            "params": {},
        }
        assert event.id
    assert text_of(legacy.call("test_simple_text")) == SIMPLE_TEXT


def test_delete_ends_the_session(endpoint: Endpoint) -> None:
    legacy = open_session(endpoint)
    other = open_session(endpoint)
    deleted = endpoint.send("DELETE", {"mcp-session-id": legacy.session_id})
    assert 200 <= deleted.status_code < 300, deleted
    rpc_error(legacy.post(request("after", "ping")), 404, None, "after")
    rpc_error(legacy.post({"jsonrpc": "2.0", "method": "notifications/initialized"}), 404, None)
    rpc_error(endpoint.send("DELETE", {"mcp-session-id": legacy.session_id}), 404, None)
    # other sessions are untouched, and a new one can be opened
    assert text_of(other.call("test_simple_text")) == SIMPLE_TEXT
    assert text_of(open_session(endpoint).call("test_simple_text")) == SIMPLE_TEXT


def test_get_with_an_ended_session_is_404(endpoint: Endpoint) -> None:
    legacy = open_session(endpoint)
    endpoint.send("DELETE", {"mcp-session-id": legacy.session_id})
    response = endpoint.send(
        "GET", {"mcp-session-id": legacy.session_id, "accept": "text/event-stream"}
    )
    rpc_error(response, 404, None)


def test_batch_in_2025_03_26_is_answered_with_a_batch(endpoint: Endpoint) -> None:
    legacy = open_session(endpoint, "2025-03-26")
    batch = [
        request("b1", "ping"),
        {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
        request("b2", "tools/call", {"name": "test_simple_text", "arguments": {}}),
    ]
    response = legacy.post(batch)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    answers = {answer["id"]: answer for answer in response.json()}
    assert set(answers) == {"b1", "b2"}
    assert answers["b1"]["result"] == {}
    assert text_of(answers["b2"]["result"]) == SIMPLE_TEXT
    only_notifications = legacy.post([{"jsonrpc": "2.0", "method": "notifications/x"}])
    assert only_notifications.status_code == 202 and only_notifications.content == b""
    assert text_of(legacy.call("test_simple_text")) == SIMPLE_TEXT


def test_legacy_disconnect_is_not_a_cancellation(served: Served) -> None:
    endpoint, probe = served.endpoint, served.probe
    probe.started.clear()
    probe.cancelled.clear()
    legacy = open_session(endpoint)
    request_id = next_id()
    params = {"name": HANG, "arguments": {"seconds": 0.3}, "_meta": {"progressToken": 1}}
    with legacy.stream(request(request_id, "tools/call", params)) as response:
        first = next(event for event in sse(response) if event.data)
        assert first.message()["method"] == "notifications/progress"
    assert not probe.cancelled.wait(1.0), "closing the stream cancelled the handler"
    # the rest of the stream, result included, is still there to resume
    headers = {**legacy.headers, "accept": "text/event-stream", "last-event-id": str(first.id)}
    with httpx.Client(timeout=TIMEOUT) as client:
        with client.stream("GET", endpoint.url, headers=headers) as resumed:
            _, final = until_response(sse(resumed), request_id)
    assert text_of(final["result"]) == "not cancelled"


def test_a_long_legacy_session_keeps_bounded_state(served: Served) -> None:
    """JSON answers leave nothing behind; SSE streams stay resumable, the oldest forgotten
    beyond ``Limits.finished_streams`` (lowered here: the progress tool takes a while); no
    request stays routed once answered."""
    legacy = open_session(served.endpoint)
    state = served.app.sessions.get(legacy.session_id)
    assert state is not None
    keep = 3
    state.limits = state.limits.replace(finished_streams=keep)
    for _ in range(200):
        assert text_of(legacy.call("test_simple_text")) == SIMPLE_TEXT
    assert state.streams == {} and state.router.by_request == {}
    first_sse: str | None = None
    first_id = 0
    for index in range(keep + 2):
        request_id = next_id()
        params = {"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": 1}}
        with legacy.stream(request(request_id, "tools/call", params)) as response:
            events = [event for event in sse(response) if event.data]
        if index == 0:
            first_sse, first_id = events[0].id, request_id
    assert len(state.streams) == keep
    assert state.router.by_request == {}
    # the first stream is forgotten: resuming it says, for its request, the answer is lost
    with legacy.stream(None, "GET", **{"last-event-id": str(first_sse)}) as response:
        assert response.status_code == 200
        lost = [event.message() for event in sse(response) if event.data]
    assert [m["id"] for m in lost] == [first_id]
    assert "Limits.finished_streams" in lost[0]["error"]["message"]
    assert text_of(legacy.call("test_simple_text")) == SIMPLE_TEXT
