"""What a process sharing legacy sessions decides alone (no Redis): a connection taking up
a session another process began, the ids of what it asks (its tag first), and which frames
of a POST go to another process: answers to its requests, cancellations to all; anything
else, garbage included, is this process's to feed (and to refuse)."""

from __future__ import annotations

import msgspec
import pytest

from mcpgen.runtime.core import jsonrpc
from mcpgen.runtime.core.events import IncomingRequest
from mcpgen.runtime.core.lifecycle import State
from mcpgen.runtime.http.shared_sessions import TAG_END
from mcpgen.runtime.http.shared_sessions import owner_tag, split_routed
from support.sansio import feed, only, server

TAG = "p0123456789" + TAG_END
OTHER, THIRD = "pabcdefabcd" + TAG_END, "p9999999999" + TAG_END


def test_a_connection_takes_up_a_session_in_its_ready_state() -> None:
    conn = server()
    conn.take_up("2025-11-25", {"name": "c", "version": "1"}, {"sampling": {}}, "error", TAG)
    assert conn.state is State.READY and conn.version is not None
    assert conn.version.version == "2025-11-25" and conn.log_level == "error"
    assert conn.peer_capabilities == {"sampling": {}}
    assert conn.next_id == f"{TAG}1"
    ping = b'{"jsonrpc":"2.0","id":5,"method":"tools/list"}'
    assert isinstance(only(feed(conn, ping), IncomingRequest), IncomingRequest)
    stray = feed(conn, b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    assert conn.state is State.READY and not [e for e in stray if isinstance(e, IncomingRequest)]
    with pytest.raises(ValueError):  # once only
        conn.take_up("2025-11-25", {}, {}, None, TAG)
    with pytest.raises(KeyError):
        server().take_up("1999-01-01", {}, {}, None, TAG)


def test_answers_to_another_processs_requests_are_routed_to_it() -> None:
    body = [
        {"jsonrpc": "2.0", "id": f"{OTHER}3", "result": {"ok": True}},
        {"jsonrpc": "2.0", "id": f"{TAG}4", "result": {}},
        {"jsonrpc": "2.0", "id": 7, "error": {"code": -1, "message": "no"}},
        {"jsonrpc": "2.0", "id": f"{THIRD}1", "error": {"code": -32601, "message": "no"}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}},
        {"jsonrpc": "2.0", "id": 8, "method": "tools/list"},
    ]
    parsed = jsonrpc.parse(msgspec.json.encode(body))
    (kept, batch), routed = split_routed(parsed, TAG)
    assert batch
    assert [owner for _, owner in routed] == [OTHER, THIRD, None]
    assert msgspec.json.decode(routed[0][0]) == body[0]
    assert msgspec.json.decode(routed[1][0])["error"]["code"] == -32601
    assert msgspec.json.decode(routed[2][0])["params"] == {"requestId": 9}
    kept_ids = [getattr(m, "id", None) for m in kept]
    assert kept_ids == [f"{TAG}4", 7, None, 8]  # the cancellation is fed here too


@pytest.mark.parametrize(
    "frame",
    [
        b"garbage",
        b"[]",
        b'{"jsonrpc":"2.0","id":"~","result":1}',
        b'{"jsonrpc":"2.0","id":"p0123~1","result":1}',
        b'{"jsonrpc":"2.0","id":"pabcdefabcd~1x","result":1}',
        b'{"jsonrpc":"2.0","id":"pabcdefabcd~99999999999999999999","result":1}',
        b'{"id":"x~"}',
        b"[1,2,3]",
    ],
)
def test_garbage_is_never_routed_and_is_left_to_this_process(frame: bytes) -> None:
    parsed = jsonrpc.parse(frame)
    (kept, _), routed = split_routed(parsed, TAG)
    assert routed == []
    assert len(kept) == len(parsed[0])


def test_an_id_names_its_process_only_in_the_tagged_form() -> None:
    assert owner_tag(f"{OTHER}12") == OTHER
    assert owner_tag(12) is None and owner_tag("plain") is None and owner_tag(None) is None
    assert owner_tag("pabc~12") is None and owner_tag(f"{OTHER}") is None
