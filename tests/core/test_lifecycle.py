"""The connection lifecycle as data (``runtime.core.lifecycle``), driven with bytes in and
events out: every transition the table allows, and what is refused outside them."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from mcpgen.generated.v2025_11_25 import server as legacy_stubs
from mcpgen.runtime import Server
from mcpgen.runtime.core.connection import Connection
from mcpgen.runtime.core.events import Send
from mcpgen.runtime.core.lifecycle import RUNTIME_METHODS, TRANSITIONS, State, next_state
from mcpgen.runtime.core.negotiation import VersionInfo


class Handlers(legacy_stubs.ServerHandlers):
    async def list_tools(self, params: Any, ctx: Any) -> Any:
        return {"tools": []}


def server() -> Connection:
    return Server(Handlers(), name="lifecycle").connection()


def frame(method: str, id: int | None = None, params: dict[str, Any] | None = None) -> str:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if id is not None:
        message["id"] = id
    if params is not None:
        message["params"] = params
    return json.dumps(message)


INITIALIZE = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "t", "version": "1"},
}


def sent(events: list[Any]) -> list[dict[str, Any]]:
    return [json.loads(e.data) for e in events if isinstance(e, Send)]


def test_a_server_walks_new_initializing_ready_and_closes() -> None:
    conn = server()
    assert conn.state is State.NEW
    answered = sent(conn.receive(frame("initialize", 1, INITIALIZE)))
    assert answered[0]["result"]["protocolVersion"] == "2025-11-25"
    assert conn.state is State.INITIALIZING
    conn.receive(frame("notifications/initialized"))
    assert conn.state is State.READY
    conn.close()
    assert conn.state is State.CLOSED


def test_requests_before_the_handshake_are_refused_but_ping_is_answered() -> None:
    conn = server()
    [refused] = sent(conn.receive(frame("tools/list", 1)))
    assert refused["error"]["code"] == -32600
    assert "before initialization" in refused["error"]["message"]
    [pong] = sent(conn.receive(frame("ping", 2)))
    assert pong == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert conn.state is State.NEW


def test_a_server_answers_between_initialize_and_initialized() -> None:
    conn = server()
    conn.receive(frame("initialize", 1, INITIALIZE))
    events = conn.receive(frame("tools/list", 2))
    assert not sent(events) and events, "the request goes to the handler"
    assert conn.state is State.INITIALIZING


def test_initialize_twice_is_refused_and_changes_nothing() -> None:
    conn = server()
    conn.receive(frame("initialize", 1, INITIALIZE))
    conn.receive(frame("notifications/initialized"))
    again = {**INITIALIZE, "protocolVersion": "2025-06-18"}
    [refused] = sent(conn.receive(frame("initialize", 2, again)))
    assert refused["error"]["code"] == -32600
    assert conn.state is State.READY and conn.version is not None
    assert conn.version.version == "2025-11-25"


def test_a_stray_initialized_leads_nowhere() -> None:
    conn = server()
    assert conn.receive(frame("notifications/initialized")) == []
    assert conn.state is State.NEW


def test_only_the_connection_writes_its_state() -> None:
    conn = server()
    with pytest.raises(AttributeError):
        conn.state = State.READY  # type: ignore[misc]


def test_a_client_walks_its_own_side_of_the_table() -> None:
    assert next_state("client", State.NEW, "initialize sent") is State.INITIALIZING
    assert next_state("client", State.INITIALIZING, "initialize answered") is State.READY
    assert next_state("client", State.NEW, "discovered") is State.READY
    assert next_state("server", State.NEW, "discovered") is None
    assert next_state("server", State.READY, "initialize received") is None


def test_every_state_can_close_and_closed_is_final() -> None:
    for role in ("server", "client"):
        for state in State:
            assert TRANSITIONS[(role, state, "closed")] is State.CLOSED
    assert [k for k in TRANSITIONS if k[1] is State.CLOSED and k[2] != "closed"] == []


def test_every_generated_runtime_method_is_served_by_the_runtime() -> None:
    from mcpgen import generated

    for version in generated.VERSIONS:
        methods = generated.load(version, "methods")
        assert methods.RUNTIME_METHODS <= RUNTIME_METHODS.keys(), version


def test_a_binding_naming_an_unserved_runtime_method_is_served_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from mcpgen.generated.v2025_11_25 import methods

    binding = methods.BINDING._replace(runtime_methods=methods.RUNTIME_METHODS | {"tasks/invented"})
    with caplog.at_level(logging.WARNING, logger="mcpgen.runtime"):
        info = VersionInfo.of(binding)
    assert info.version == "2025-11-25"
    assert any("tasks/invented" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_a_client_session_ends_ready_and_closes(mode: str) -> None:
    """The client side through its real handshake (legacy) or discovery (auto, against a
    2026-07-28 server), in memory."""
    import asyncio

    from mcpgen.generated.v2026_07_28 import server as modern_stubs
    from mcpgen.runtime.testing import connect

    class Modern(modern_stubs.ServerHandlers):
        async def list_tools(self, params: Any, ctx: Any) -> Any:
            return {"tools": []}

    async def scenario() -> tuple[State, State, str]:
        async with connect(Server(Modern(), name="m"), mode=mode) as client:  # type: ignore[arg-type]
            session = client.session
            ready = session.conn.state
            await client.list_tools()
        return ready, session.conn.state, session.conn.version.version

    ready, after, version = asyncio.run(scenario())
    assert ready is State.READY
    assert after is State.CLOSED
    assert version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
