"""JSON-RPC framing (``runtime/core/jsonrpc.py``): what a frame decodes to, what is refused before
any decoder sees it, and the error a server connection answers each refusal with.

``test_hostile_input.py`` holds the inputs that once broke a server (983-deep nesting, a
500,001-element batch, arbitrary bytes); here is every envelope rule, one frame each.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpgen.runtime import Limits
from mcpgen.runtime.core import jsonrpc
from mcpgen.runtime.core.errors import INVALID_REQUEST, PARSE_ERROR
from support.sansio import answer, feed, handshake, request, server

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from support.wire_cases import BAD_FRAMES  # noqa: E402

ENVELOPES = [
    # ids: a string or an integer, never anything else; unreadable ids answer as null
    pytest.param(b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', None, "id must be a string or integer", id="id-float"),
    pytest.param(b'{"jsonrpc":"2.0","id":true,"method":"ping"}', None, "id must be a string or integer", id="id-bool"),
    pytest.param(b'{"jsonrpc":"2.0","id":null,"method":"ping"}', None, "id must be a string or integer", id="id-null"),
    pytest.param(b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', None, "id must be a string or integer", id="id-object"),
    pytest.param(b'{"jsonrpc":"2.0","id":[1],"method":"ping"}', None, "id must be a string or integer", id="id-array"),
    # the envelope itself; the id is echoed wherever it could be read
    pytest.param(b'{"jsonrpc":"1.0","id":"v1","method":"ping"}', "v1", 'jsonrpc must be "2.0"', id="jsonrpc-1.0"),
    pytest.param(b'{"id":"v2","method":"ping"}', "v2", 'jsonrpc must be "2.0"', id="jsonrpc-missing"),
    pytest.param(b'{"jsonrpc":"2.0","id":"m","method":42}', "m", "method must be a string", id="method-number"),
    pytest.param(b'{"jsonrpc":"2.0","id":"p","method":"ping","params":"x"}', "p", "params must be an object", id="params-string"),
    pytest.param(b'{"jsonrpc":"2.0","id":"q","method":"ping","params":7}', "q", "params must be an object", id="params-number"),
    pytest.param(b'{"jsonrpc":"2.0","id":"n","method":"ping","params":null}', "n", "params must be an object", id="params-null"),
    pytest.param(b'{"jsonrpc":"2.0","id":"r","method":"ping","result":{}}', "r", "method with result or error", id="method-and-result"),
    pytest.param(b'{"jsonrpc":"2.0","id":"e"}', "e", "not a request, notification or response", id="nothing-but-an-id"),
    pytest.param(b'{"jsonrpc":"2.0","id":"b","result":{},"error":{"code":1,"message":"x"}}', "b", "not a request", id="result-and-error"),
    pytest.param(b'{"jsonrpc":"2.0","id":3,"error":{"code":"x","message":"x"}}', 3, "not a request", id="error-code-not-int"),
    pytest.param(b'{"jsonrpc":"2.0","result":{}}', None, "not a request", id="result-without-id"),
]  # fmt: skip


@pytest.mark.parametrize(("frame", "request_id", "why"), ENVELOPES)
def test_an_invalid_envelope_is_one_invalid_message_with_the_id_it_could_read(
    frame: bytes, request_id: Any, why: str
) -> None:
    messages, is_batch = jsonrpc.parse(frame)
    assert not is_batch and len(messages) == 1
    invalid = messages[0]
    assert isinstance(invalid, jsonrpc.Invalid)
    assert (invalid.id, invalid.code) == (request_id, INVALID_REQUEST) and why in invalid.message


@pytest.mark.parametrize(
    ("frame", "kind"),
    [
        (b'{"jsonrpc":"2.0","id":"s","method":"ping"}', jsonrpc.Request),
        (b'{"jsonrpc":"2.0","id":-7,"method":"ping","params":[1]}', jsonrpc.Request),
        (b'{"jsonrpc":"2.0","method":"notifications/x"}', jsonrpc.Notification),
        (b'{"jsonrpc":"2.0","id":1,"result":{"a":1}}', jsonrpc.Response),
        (b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}', jsonrpc.ErrorResponse),
    ],
)  # fmt: skip
def test_valid_messages_are_classified_by_their_keys(frame: bytes, kind: type) -> None:
    (message,), is_batch = jsonrpc.parse(frame)
    assert isinstance(message, kind) and not is_batch


def test_a_notification_is_a_request_without_an_id_key_not_one_with_a_null_id() -> None:
    (notified,), _ = jsonrpc.parse(b'{"jsonrpc":"2.0","method":"x","params":{"a":1}}')
    assert isinstance(notified, jsonrpc.Notification)
    assert bytes(notified.params or b"") == b'{"a":1}'
    (nulled,), _ = jsonrpc.parse(b'{"jsonrpc":"2.0","id":null,"method":"x"}')
    assert isinstance(nulled, jsonrpc.Invalid)


def test_an_error_response_keeps_its_data_and_may_lack_an_id() -> None:
    frame = b'{"jsonrpc":"2.0","error":{"code":-32602,"message":"bad","data":{"path":"$"}}}'
    (error,), _ = jsonrpc.parse(frame)
    assert isinstance(error, jsonrpc.ErrorResponse)
    assert (error.id, error.code, error.message, error.data) == (None, -32602, "bad", {"path": "$"})


@pytest.mark.parametrize(
    ("frame", "code", "why"),
    [
        (b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":"\xe9"}}', PARSE_ERROR, "invalid UTF-8 at byte 55"),
        (b"\xff\xfe{}", PARSE_ERROR, "invalid UTF-8 at byte 0"),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "ping"', PARSE_ERROR, "invalid JSON"),
        (b"", PARSE_ERROR, "invalid JSON"),
        (b"42", INVALID_REQUEST, "not a JSON object"),
        (b'"text"', INVALID_REQUEST, "not a JSON object"),
        (b"null", INVALID_REQUEST, "not a JSON object"),
        (b"[]", INVALID_REQUEST, "empty batch"),
    ],
)  # fmt: skip
def test_undecodable_frames_are_refused_whole_with_no_id(frame: bytes, code: int, why: str) -> None:
    (refused,), is_batch = jsonrpc.parse(frame)
    assert isinstance(refused, jsonrpc.Invalid) and not is_batch
    assert (refused.id, refused.code) == (None, code) and why in refused.message


def test_non_ascii_utf8_is_accepted_wherever_it_stands() -> None:
    (message,), _ = jsonrpc.parse('{"jsonrpc":"2.0","id":"é","method":"ping"}'.encode())
    assert isinstance(message, jsonrpc.Request) and message.id == "é"


def test_depth_counts_brackets_outside_strings_only() -> None:
    assert jsonrpc.depth(b'{"a":[{"b":[]}]}') == 4
    assert jsonrpc.depth(b'{"a":"[[[[{{{{"}') == 1
    assert jsonrpc.depth(b'{"a":"\\"[[["}') == 1  # an escaped quote does not end the string
    assert jsonrpc.refusal(b'{"a":' + b"[" * 9 + b"]" * 9 + b"}", max_depth=10) is None
    deep = jsonrpc.refusal(b'{"a":' + b"[" * 10 + b"]" * 10 + b"}", max_depth=10)
    assert deep is not None and deep.code == INVALID_REQUEST and "deeper than 10" in deep.message


def test_batch_elements_are_judged_one_by_one() -> None:
    frame = b' [1, {"jsonrpc":"2.0","method":"x"}, {"jsonrpc":"2.0","id":true,"method":"y"}]'
    messages, is_batch = jsonrpc.parse(frame)
    assert is_batch and [type(m) for m in messages] == [
        jsonrpc.Invalid,
        jsonrpc.Notification,
        jsonrpc.Invalid,
    ]
    assert "not a JSON object" in messages[0].message  # type: ignore[union-attr]


def test_a_batch_at_the_limit_is_read_and_one_over_it_is_refused_before_decoding() -> None:
    def batch(n: int) -> bytes:
        return b"[" + b",".join([b'{"jsonrpc":"2.0","method":"x"}'] * n) + b"]"

    messages, is_batch = jsonrpc.parse(batch(3), max_batch=3)
    assert is_batch and len(messages) == 3
    (refused,), is_batch = jsonrpc.parse(batch(4), max_batch=3)
    assert not is_batch and isinstance(refused, jsonrpc.Invalid)
    assert "a batch of more than 3 messages (the limit is 3)" in refused.message
    assert jsonrpc.elements(batch(10), 3) == 4  # counting stops past the limit


def test_encoders_leave_out_absent_params_and_data() -> None:
    assert jsonrpc.encode_request(1, "ping") == b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
    assert jsonrpc.encode_request(1, "ping", None) == jsonrpc.encode_request(1, "ping")
    assert (
        jsonrpc.encode_notification("n", {"a": 1})
        == b'{"jsonrpc":"2.0","method":"n","params":{"a":1}}'
    )
    assert (
        jsonrpc.encode_error(None, -1, "no")
        == b'{"jsonrpc":"2.0","id":null,"error":{"code":-1,"message":"no"}}'
    )
    assert b'"data":{"k":1}' in jsonrpc.encode_error("x", -1, "no", {"k": 1})


# -- what a server answers: the stdio suite's bad frames, without the process -----------


@pytest.mark.parametrize(("frame", "code", "request_id"), BAD_FRAMES)
def test_a_session_answers_each_bad_frame_with_its_error_and_goes_on(
    frame: bytes, code: int, request_id: Any
) -> None:
    conn = server()
    handshake(conn)
    refused = answer(conn.receive(frame))
    assert refused["jsonrpc"] == "2.0" and "id" in refused and refused["id"] == request_id
    assert refused["error"]["code"] == code and isinstance(refused["error"]["message"], str)
    assert answer(feed(conn, request(9, "ping"))) == {"jsonrpc": "2.0", "id": 9, "result": {}}


@pytest.mark.parametrize(
    "frame",
    [
        pytest.param(b'{"jsonrpc":"2.0","method":"notifications/whatever"}', id="unknown-notification"),
        pytest.param(b'{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x"}}', id="request-as-notification"),
        pytest.param(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{}}}', id="malformed-cancel"),
        pytest.param(b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":"x"}}', id="malformed-progress"),
        pytest.param(b'{"jsonrpc":"2.0","id":987654,"result":{}}', id="stray-response"),
        pytest.param(b'{"jsonrpc":"2.0","id":987655,"error":{"code":-1,"message":"no"}}', id="stray-error"),
    ],
)  # fmt: skip
def test_notifications_and_stray_responses_get_no_answer(frame: bytes) -> None:
    conn = server()
    handshake(conn)
    assert conn.receive(frame) == []


def test_limits_of_the_connection_apply_to_what_it_receives() -> None:
    conn = server(limits=Limits(max_depth=8, max_batch=2))
    handshake(conn, "2025-03-26")
    deep = conn.receive(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":[[[[[[[]]]]]]]}}')
    assert answer(deep)["error"]["code"] == INVALID_REQUEST
    pings = b",".join(jsonrpc.encode_request(i, "ping") for i in range(3))
    refused = answer(conn.receive(b"[" + pings + b"]"))
    assert refused["id"] is None and "the limit is 2" in refused["error"]["message"]


def _deepest(value: Any) -> int:
    """How deeply arrays and objects nest in a JSON value, walked without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (list, dict)):
            level += 1
            deepest = max(deepest, level)
            children = item.values() if isinstance(item, dict) else item
            stack += [(child, level) for child in children]
    return deepest


@settings(max_examples=300, deadline=None)
@given(
    st.recursive(
        st.none() | st.integers() | st.text(alphabet='[]{}"\\a,:'),
        lambda inner: st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=3), inner, max_size=4),
        max_leaves=60,
    ),
    st.integers(min_value=0, max_value=200),
)
def test_depth_is_the_nesting_of_the_json_whatever_its_shape(value: Any, wrap: int) -> None:
    """Wrapped ``wrap`` arrays deep, so shallow and deep shapes alike (the depth check
    takes innermost pairs away in passes, then counts runs)."""
    frame = "[" * wrap + json.dumps(value) + "]" * wrap
    assert jsonrpc.depth(frame.encode()) == _deepest(value) + wrap
