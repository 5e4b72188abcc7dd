"""Multi-round-trip requests (2026-07-28 MRTR), sans-IO: the ``input_required`` answer a
server hands out, the answers its signed ``requestState`` carries into the retry, and every
way a state that was not issued for this very request is refused. The HTTP suite proves
the same across POSTs and workers."""

from __future__ import annotations

from typing import Any

import pytest

from mcpgen.runtime.core.errors import INVALID_PARAMS
from mcpgen.runtime.core.events import IncomingRequest
from support.sansio import answer, feed, modern, only, server

CALL = {"name": "x", "arguments": {"a": 1}}
ROOTS = {"method": "roots/list", "params": {}}


def first_round(conn: Any, asked: dict[str, Any]) -> str:
    """Call the tool, answer ``input_required`` asking ``asked``: the state handed out."""
    event = only(feed(conn, modern(1, "tools/call", CALL)), IncomingRequest)
    assert event.inputs is not None and event.inputs.answers == {}
    result = conn.input_required(event, asked)
    assert result["resultType"] == "input_required" and result["inputRequests"] == asked
    assert isinstance(result["requestState"], str)
    return result["requestState"]


def retry(conn: Any, request_id: int, **extra: Any) -> list[Any]:
    return feed(conn, modern(request_id, "tools/call", {**CALL, **extra}))


def test_a_retry_carries_the_answers_of_every_round_so_far() -> None:
    conn = server()
    state = first_round(conn, {"roots": ROOTS})
    second = only(retry(conn, 2, inputResponses={"roots": {"roots": []}}, requestState=state), IncomingRequest)  # fmt: skip
    assert second.inputs is not None and second.inputs.answers == {"roots": {"roots": []}}
    # the next round's state carries the first round's answer: the client sends only new ones
    more = conn.input_required(second, {"again": ROOTS})["requestState"]
    third = only(retry(conn, 3, inputResponses={"again": {"roots": []}}, requestState=more), IncomingRequest)  # fmt: skip
    assert third.inputs is not None
    assert third.inputs.answers == {"roots": {"roots": []}, "again": {"roots": []}}


def test_only_tools_prompts_and_resources_reads_keep_round_trip_inputs() -> None:
    conn = server()
    listed = only(feed(conn, modern(1, "tools/list")), IncomingRequest)
    assert listed.inputs is None


def test_workers_that_share_a_key_take_each_others_state() -> None:
    key = b"k" * 32
    state = first_round(server(state_key=key), {"roots": ROOTS})
    taken = only(retry(server(state_key=key), 2, requestState=state), IncomingRequest)
    assert taken.inputs is not None and taken.inputs.answers == {}


def forged(state: str) -> str:
    kid, payload, mac = state.split(".")
    return f"{kid}.{payload}." + ("A" if mac[0] != "A" else "B") + mac[1:]


REFUSALS = [
    pytest.param(lambda s: {"requestState": forged(s)}, "bad signature", id="tampered"),
    pytest.param(lambda s: {"requestState": "garbage"}, "malformed", id="malformed"),
    pytest.param(lambda s: {"requestState": s, "arguments": {"a": 2}}, "issued for another request", id="other-arguments"),
    pytest.param(lambda s: {"requestState": s, "name": "y"}, "issued for another request", id="other-tool"),
    pytest.param(lambda s: {"requestState": 5}, "Expected `str`", id="not-a-string"),
    pytest.param(lambda s: {"inputResponses": [1]}, "Expected `object`", id="responses-not-an-object"),
]  # fmt: skip


@pytest.mark.parametrize(("change", "why"), REFUSALS)
def test_a_state_not_issued_for_this_request_is_refused(change: Any, why: str) -> None:
    conn = server()
    state = first_round(conn, {"roots": ROOTS})
    frame = answer(retry(conn, 2, **change(state)))
    error = frame["error"]
    assert frame["id"] == 2 and error["code"] == INVALID_PARAMS and why in error["message"]
    assert error["data"]["path"].startswith("$.params.")


def test_another_servers_state_is_refused() -> None:
    state = first_round(server(state_key=b"a" * 32), {"roots": ROOTS})
    error = answer(retry(server(state_key=b"b" * 32), 2, requestState=state))["error"]
    assert error["code"] == INVALID_PARAMS and "does not hold" in error["message"]
