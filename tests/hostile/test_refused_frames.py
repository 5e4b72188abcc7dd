"""Frames refused unread still get what JSON-RPC owes them: a request nested deeper than the
limit, or holding a value the decoder cannot hold, is answered with its own id; a
notification is never answered, whatever is wrong with it; what is not JSON at all gets
-32700 however deep it goes.

Each frame goes to the sans-IO parser, to a server over in-memory transports (as over
stdio, nothing is written for a notification), to the ASGI app in process (a refused
notification's POST gets 400 and an error with no id, as the transport requires) and to a
real stdio server process; after them, a good request is answered.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.memory_peer import serving
from support.sansio import run
from support.line_peer import EVERYTHING, LinePeer, error_code

from mcpgen.runtime.http.endpoint import McpHttpApp
from mcpgen.runtime.core import jsonrpc
from mcpgen.runtime.core.errors import INVALID_REQUEST, PARSE_ERROR

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from examples.everything.__main__ import build_server  # noqa: E402
from support.asgi_driver import call, open_session, request  # noqa: E402

#: 100 levels: the envelope, params, and 98 arrays (the limit is 64).
NESTED = b'{"a":' + b"[" * 98 + b"]" * 98 + b"}"
DEEP_REQUEST = b'{"jsonrpc":"2.0","id":7,"method":"tools/list","params":' + NESTED + b"}"
#: The id after the deep params, as the TypeScript SDK orders a request's members.
DEEP_ID_LAST = b'{"method":"tools/list","params":' + NESTED + b',"jsonrpc":"2.0","id":"late"}'
DEEP_NOTIFICATION = b'{"jsonrpc":"2.0","method":"notifications/roots/list_changed","params":'
DEEP_NOTIFICATION += NESTED + b"}"
DEEP_AND_MALFORMED = b'{"id":3, "method": ' + b"[" * 100
OUT_OF_RANGE = b'{"jsonrpc":1e400,"id":"range","method":"ping"}'
UNPAIRED_SURROGATE = b'{"jsonrpc":"2.0","id":12,"method":"\\ud800"}'
BAD_NOTIFICATION = b'{"jsonrpc":"1.0","method":"notifications/roots/list_changed"}'
#: JSON-RPC 2.0's own example of an invalid request: a method that names nothing.
NO_METHOD_NAMED = b'{"jsonrpc":"2.0","method":1,"params":"bar"}'
DEEP_NO_METHOD_NAMED = b'{"jsonrpc":"2.0","method":1,"params":' + NESTED + b"}"

#: (frame, the id its answer carries, its code); None for a notification (no answer).
FRAMES: list[Any] = [
    pytest.param(DEEP_REQUEST, (7, INVALID_REQUEST), id="deep-request"),
    pytest.param(DEEP_ID_LAST, ("late", INVALID_REQUEST), id="deep-request-id-last"),
    pytest.param(DEEP_NOTIFICATION, None, id="deep-notification"),
    pytest.param(DEEP_AND_MALFORMED, (None, PARSE_ERROR), id="deep-and-not-json"),
    pytest.param(OUT_OF_RANGE, ("range", INVALID_REQUEST), id="number-out-of-range"),
    pytest.param(UNPAIRED_SURROGATE, (12, INVALID_REQUEST), id="unpaired-surrogate"),
    pytest.param(BAD_NOTIFICATION, None, id="invalid-notification"),
    pytest.param(NO_METHOD_NAMED, (None, INVALID_REQUEST), id="method-not-a-string"),
    pytest.param(DEEP_NO_METHOD_NAMED, (None, INVALID_REQUEST), id="deep-method-not-a-string"),
]


@pytest.mark.parametrize(("frame", "answer"), FRAMES)
def test_parse_keeps_the_id_and_puts_syntax_first(frame: bytes, answer: Any) -> None:
    (refused,), is_batch = jsonrpc.parse(frame)
    assert isinstance(refused, jsonrpc.Invalid) and not is_batch
    if answer is None:
        assert refused.notification and not jsonrpc.answered(refused)
    else:
        assert (refused.id, refused.code) == answer and not refused.notification


def test_a_server_answers_refused_requests_with_their_ids_and_notifications_not_at_all() -> None:
    """Every frame in a row, then a ping: the answers come in order, one per request."""

    async def scenario() -> None:
        async with serving(build_server()) as peer:
            await peer.handshake()
            for param in FRAMES:
                await peer.send(param.values[0])
            await peer.send({"jsonrpc": "2.0", "id": "after", "method": "ping"})
            expected = [p.values[1] for p in FRAMES if p.values[1] is not None]
            got = [await peer.read() for _ in expected]
            assert [(a["id"], a["error"]["code"]) for a in got] == expected
            assert await peer.read() == {"jsonrpc": "2.0", "id": "after", "result": {}}

    run(scenario())


@pytest.mark.parametrize(("frame", "answer"), FRAMES)
def test_the_http_app_answers_refused_requests_with_their_ids(frame: bytes, answer: Any) -> None:
    """A stateless modern POST and a legacy session's: 400 with the request's id; a
    notification's POST is refused too (400, an error with a null id: no answer to any
    request), as the transport says of a notification the server cannot accept."""

    async def scenario() -> None:
        app = McpHttpApp(build_server())
        modern = {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list"}
        for headers in (modern, await open_session(app)):
            refused = await call(app, body=frame, headers=headers)
            request_id, code = answer or (None, INVALID_REQUEST)
            assert refused.status == 400, refused
            assert refused.json()["id"] == request_id and refused.json()["error"]["code"] == code
        session = await open_session(app)
        good = await call(app, body=request(9, "ping"), headers=session)
        assert good.status == 200 and good.json() == {"jsonrpc": "2.0", "id": 9, "result": {}}

    run(scenario())


@pytest.fixture
def peer(tmp_path: Path) -> Iterator[LinePeer]:
    started = LinePeer(EVERYTHING, tmp_path / "stderr.log")
    try:
        yield started
    finally:
        started.kill()


@pytest.mark.slow
def test_a_stdio_server_answers_refused_requests_with_their_ids(peer: LinePeer) -> None:
    """The real process: every frame in a row, then a ping; one answer per request, in
    order, with its id; nothing for the notifications."""
    peer.initialize()
    for param in FRAMES:
        peer.send_raw(param.values[0])
    peer.send({"jsonrpc": "2.0", "id": "after", "method": "ping"})
    expected = [p.values[1] for p in FRAMES if p.values[1] is not None]
    got = [peer.read() for _ in expected]
    assert [(a["id"], error_code(a)) for a in got] == expected, got
    assert peer.read() == {"jsonrpc": "2.0", "id": "after", "result": {}}
    assert peer.close() == 0


def test_a_batch_element_that_is_an_array_is_refused_as_no_message() -> None:
    """Each element of a batch is told what is wrong with it: an array is no message, a
    method that is no string names nothing (both -32600, id null, answered)."""
    messages, is_batch = jsonrpc.parse(
        b'[[1],{"jsonrpc":"2.0","method":1},{"id":2,"jsonrpc":1e400}]'
    )
    assert is_batch
    assert [(m.id, m.code, m.message) for m in messages if isinstance(m, jsonrpc.Invalid)] == [
        (None, INVALID_REQUEST, "Invalid request: not a JSON object"),
        (None, INVALID_REQUEST, "Invalid request: method must be a string"),
        (
            2,
            INVALID_REQUEST,
            "Invalid request: a value out of range (a number, an unpaired surrogate)",
        ),
    ]
    assert all(jsonrpc.answered(m) for m in messages)
