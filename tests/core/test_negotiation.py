"""The legacy handshake on a server connection (2024-11-05 … 2025-11-25): the version it
answers ``initialize`` with, what the result carries at that version, what comes before
and after it, and batches. The stdio suite proves the same over a real pipe, once."""

from __future__ import annotations

from typing import Any

import pytest

from mcpgen.runtime.lowlevel import State
from mcpgen.runtime.core.errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
)
from mcpgen.runtime.core.events import BatchOpened, IncomingRequest, Negotiated, Send
from support.sansio import (
    Completing,
    CLIENT_INFO,
    LATEST_LEGACY,
    LEGACY,
    MODERN,
    answer,
    error,
    everything,
    feed,
    handshake,
    initialize,
    modern,
    notification,
    request,
    sent,
    server,
)


@pytest.mark.parametrize("version", LEGACY)
def test_initialize_echoes_each_handshake_version_with_what_that_version_knows(
    version: str,
) -> None:
    conn = server(Completing(), title="Sans IO", instructions="be brief")
    events = feed(conn, initialize(7, version))
    assert events[1:] == [Negotiated(version)]
    result = answer(events[:1])["result"]
    assert result["protocolVersion"] == version and result["instructions"] == "be brief"
    assert ("completions" in result["capabilities"]) == (version >= "2025-03-26")
    assert {"tools", "logging"} <= result["capabilities"].keys()
    assert ("title" in result["serverInfo"]) == (version >= "2025-06-18")  # Implementation.title
    assert not {"resultType", "ttlMs", "cacheScope"} & result.keys()
    assert conn.state is State.INITIALIZING and conn.version is not None
    assert conn.version.version == version


@pytest.mark.parametrize(
    ("versions", "requested", "answered"),
    [
        pytest.param(None, "1999-01-01", LATEST_LEGACY, id="unknown-older"),
        pytest.param(None, "2099-01-01", LATEST_LEGACY, id="unknown-newer"),
        pytest.param(None, MODERN, LATEST_LEGACY, id="modern-in-initialize"),
        pytest.param(["2024-11-05", "2025-06-18"], "2025-11-25", "2025-06-18", id="configured-out-newer"),
        pytest.param(["2024-11-05", "2025-06-18"], "2025-03-26", "2025-06-18", id="configured-out-between"),
        pytest.param(["2024-11-05", "2025-06-18"], "2024-11-05", "2024-11-05", id="configured-in"),
        pytest.param(["2024-11-05"], "1999-01-01", "2024-11-05", id="only-2024"),
        pytest.param(["2025-03-26", MODERN], "2025-11-25", "2025-03-26", id="dual-era"),
    ],
)  # fmt: skip
def test_a_version_the_server_lacks_is_answered_with_its_newest_handshake_version(
    versions: list[str] | None, requested: str, answered: str
) -> None:
    conn = server(versions=versions)
    result = handshake(conn, requested)
    assert result["protocolVersion"] == answered
    assert sent(feed(conn, request(1, "ping"))) == [{"jsonrpc": "2.0", "id": 1, "result": {}}]


def test_a_modern_only_server_refuses_initialize_listing_what_it_speaks() -> None:
    conn = server(versions=[MODERN])
    refused = error(feed(conn, initialize(0, "2025-06-18")))
    assert refused["code"] == UNSUPPORTED_PROTOCOL_VERSION
    assert refused["data"] == {"supported": [MODERN], "requested": "2025-06-18"}
    assert conn.state is State.NEW and conn.version is None


@pytest.mark.parametrize(
    ("params", "path"),
    [
        ({"protocolVersion": LATEST_LEGACY, "capabilities": {}}, "$.params"),
        ({"protocolVersion": 2025, "capabilities": {}, "clientInfo": {}}, "$.params.protocolVersion"),
        ({"protocolVersion": LATEST_LEGACY, "capabilities": [], "clientInfo": {}}, "$.params.capabilities"),
        (None, "$.params"),
    ],
)  # fmt: skip
def test_invalid_initialize_params_are_32602_naming_the_path_and_no_session_starts(
    params: Any, path: str
) -> None:
    conn = server()
    refused = error(feed(conn, request(0, "initialize", params)))
    assert refused["code"] == INVALID_PARAMS and refused["data"]["path"] == path
    assert conn.state is State.NEW
    assert handshake(conn)["protocolVersion"] == LATEST_LEGACY  # a good one still works


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tools/list", {}),
        ("tools/call", {"name": "x"}),
        ("resources/read", {"uri": "a://b"}),
        ("logging/setLevel", {"level": "debug"}),
    ],
)
def test_before_initialize_only_ping_is_answered(method: str, params: Any) -> None:
    conn = everything().connection()
    refused = error(feed(conn, request(1, method, params)))
    assert refused["code"] == INVALID_REQUEST and "before initialization" in refused["message"]
    assert answer(feed(conn, request(2, "ping"))) == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert conn.state is State.NEW
    assert handshake(conn)["protocolVersion"] == LATEST_LEGACY  # then the session starts
    served = feed(conn, request(3, method, params))[0]
    assert isinstance(served, IncomingRequest) or "result" in answer([served])


def test_before_a_session_a_method_no_handshake_version_has_is_read_as_modern() -> None:
    """A dual-era server reads it as a modern request (which lacks its ``_meta``); a
    server of the handshake era alone refuses it as coming before ``initialize``."""
    for method in ("no/such/method", "server/discover"):
        dual = error(feed(server(), request(1, method)))
        assert dual["code"] == INVALID_PARAMS and dual["data"]["path"] == "$.params._meta"
        legacy = error(feed(server(versions=list(LEGACY)), request(1, method)))
        assert legacy["code"] == INVALID_REQUEST and "before initialization" in legacy["message"]


def test_the_session_is_ready_once_initialized_arrives_and_initialize_is_not_taken_twice() -> None:
    conn = server()
    feed(conn, initialize(0))
    # between the result and notifications/initialized, requests are served (being
    # liberal costs nothing: the client has the version it needs)
    assert isinstance(feed(conn, request(1, "tools/list"))[0], IncomingRequest)
    assert feed(conn, notification("notifications/initialized")) == []
    assert conn.state is State.READY
    again = error(feed(conn, initialize(2, "2024-11-05")))
    assert again["code"] == INVALID_REQUEST and "already" in again["message"]
    assert conn.version is not None and conn.version.version == LATEST_LEGACY  # unchanged
    assert isinstance(feed(conn, request(3, "tools/list"))[0], IncomingRequest)  # it goes on


def test_a_legacy_session_has_no_modern_methods_and_ignores_modern_meta() -> None:
    conn = server()
    handshake(conn, "2025-06-18")
    assert error(feed(conn, request(1, "server/discover", {})))["code"] == METHOD_NOT_FOUND
    # a modern _meta inside a session is just _meta: the session's version still rules
    event = feed(conn, modern(2, "tools/list", version=MODERN))[0]
    assert isinstance(event, IncomingRequest) and event.peer is None


def test_log_level_is_validated_and_kept_for_the_session() -> None:
    conn = server()
    handshake(conn)
    bad = error(feed(conn, request(1, "logging/setLevel", {"level": "loud"})))
    assert bad["code"] == INVALID_PARAMS and bad["data"]["path"] == "$.params.level"
    assert conn.log_level is None
    assert answer(feed(conn, request(2, "logging/setLevel", {"level": "warning"})))["result"] == {}
    assert conn.log_level == "warning"
    assert [conn.log_allowed(x) for x in ("info", "warning", "emergency")] == [False, True, True]


# -- batches: 2025-03-26 only ----------------------------------------------------------------

BATCH = [
    request("b1", "ping"),
    notification("notifications/whatever"),
    request("b2", "tools/list"),
    request("b3", "no/such/method"),
]


def test_a_batch_in_2025_03_26_opens_with_its_count_and_tags_each_answer() -> None:
    conn = server()
    handshake(conn, "2025-03-26")
    events = feed(conn, BATCH)
    assert events[0] == BatchOpened(1, 3)  # three requests: three answers to collect
    pinged, listed, unknown = events[1:]
    assert isinstance(pinged, Send) and pinged.batch == 1 and pinged.related == "b1"
    assert isinstance(listed, IncomingRequest) and listed.batch == 1 and listed.id == "b2"
    assert isinstance(unknown, Send) and unknown.batch == 1
    assert answer([unknown])["error"]["code"] == METHOD_NOT_FOUND
    assert feed(conn, BATCH)[0] == BatchOpened(2, 3)  # each batch has its own number


@pytest.mark.parametrize("version", [v for v in LEGACY if v != "2025-03-26"])
def test_a_batch_is_refused_whole_where_the_version_has_none(version: str) -> None:
    conn = server()
    handshake(conn, version)
    (refused,) = feed(conn, BATCH)
    assert isinstance(refused, Send) and refused.status == 400
    assert answer([refused])["id"] is None
    assert answer([refused])["error"]["code"] == INVALID_REQUEST


def test_a_batch_before_any_session_and_initialize_in_a_batch_are_refused() -> None:
    conn = server()
    assert "not supported" in error(feed(conn, [request(1, "ping")]))["message"]
    handshake(conn, "2025-03-26")
    mixed = [request(1, "ping"), initialize(2, "2025-03-26")]
    assert "initialize must not be part of a batch" in error(feed(conn, mixed))["message"]


def test_each_request_of_a_legacy_session_gets_its_own_copy_of_the_session_as_meta() -> None:
    """What the session settled (version, client capabilities and info) is the ``_meta`` of
    every request that sends none, typed as converting it anew would, and a copy each
    time: a handler writing into one leaves the next unchanged. A request's own ``_meta``
    is merged over it."""
    conn = server()
    handshake(conn, capabilities={"sampling": {}})
    call = {"name": "echo", "arguments": {}}
    first = feed(conn, request(1, "tools/call", call))[0]
    assert isinstance(first, IncomingRequest)
    meta = first.params.meta
    assert meta["io.modelcontextprotocol/protocolVersion"] == LATEST_LEGACY
    assert meta["io.modelcontextprotocol/clientInfo"].name == CLIENT_INFO["name"]
    assert meta["io.modelcontextprotocol/clientCapabilities"].sampling is not None
    meta["io.modelcontextprotocol/protocolVersion"] = "scribbled"
    second = feed(conn, request(2, "tools/call", call))[0]
    assert isinstance(second, IncomingRequest) and second.params.meta is not meta
    assert second.params.meta["io.modelcontextprotocol/protocolVersion"] == LATEST_LEGACY
    own = feed(conn, request(3, "tools/call", {**call, "_meta": {"progressToken": "t"}}))[0]
    assert isinstance(own, IncomingRequest)
    assert own.params.meta.progress_token == "t"
    assert own.params.meta["io.modelcontextprotocol/protocolVersion"] == LATEST_LEGACY
