"""Stateless 2026-07-28 requests on a server connection: the spec's validation order (which
error wins when several things are wrong), the HTTP status each error takes, era detection
before any session, ``server/discover``, statelessness and ``subscriptions/listen``."""

from __future__ import annotations

from typing import Any

import pytest

from mcpgen.runtime import CacheHint, CachePolicy
from mcpgen.runtime.lowlevel import State
from mcpgen.runtime.core.errors import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
)
from mcpgen.runtime.core.events import IncomingRequest, Listen, Send
from mcpgen.runtime.core.modern import HttpHeaders
from support.sansio import (
    CAPABILITIES_KEY,
    CLIENT_INFO,
    LATEST_LEGACY,
    MODERN,
    SERVER_INFO_KEY,
    VERSION_KEY,
    answer,
    feed,
    handshake,
    modern,
    only,
    request,
    server,
)

CALL = {"name": "x", "arguments": {}}


def headers(method: str, version: str | None = MODERN, name: str | None = None) -> HttpHeaders:
    return HttpHeaders(protocol_version=version, method=method, name=name)


def refusal(events: list[Any]) -> tuple[int, int | None, dict[str, Any]]:
    """The JSON-RPC code, HTTP status and error of the one frame ``events`` send."""
    frame = only(events, Send)
    error = answer(events)["error"]
    return error["code"], frame.status, error


CASES = [
    # one thing wrong
    pytest.param(modern(1, "tools/list", version="2099-01-01"), None, UNSUPPORTED_PROTOCOL_VERSION, 400, id="version-unsupported"),
    pytest.param(modern(1, "tools/list", version=LATEST_LEGACY), None, UNSUPPORTED_PROTOCOL_VERSION, 400, id="version-of-the-handshake-era"),
    pytest.param(modern(1, "tools/list", capabilities=None), None, INVALID_PARAMS, 400, id="meta-lacks-capabilities"),
    pytest.param(modern(1, "tools/list", version=None), headers("tools/list"), INVALID_PARAMS, 400, id="meta-lacks-version"),
    pytest.param(request(1, "tools/list", {}), headers("tools/list"), INVALID_PARAMS, 400, id="meta-missing"),
    pytest.param(request(1, "tools/list", [1]), headers("tools/list"), INVALID_PARAMS, 400, id="params-not-an-object"),
    pytest.param(modern(1, "tools/unknown"), None, METHOD_NOT_FOUND, 404, id="method-unknown"),
    pytest.param(modern(1, "resources/subscribe", {"uri": "x"}), None, METHOD_NOT_FOUND, 404, id="method-legacy-only"),
    pytest.param(modern(1, "initialize"), None, METHOD_NOT_FOUND, 404, id="initialize-with-modern-meta"),
    pytest.param(modern(1, "prompts/list"), None, METHOD_NOT_FOUND, 404, id="capability-not-offered"),
    pytest.param(modern(1, "tools/call", {"name": 5}), None, INVALID_PARAMS, 400, id="params-invalid"),
    pytest.param(modern(1, "tools/list"), headers("tools/list", version=None), HEADER_MISMATCH, 400, id="version-header-missing"),
    pytest.param(modern(1, "tools/list"), headers("tools/list", version="2026-01-01"), HEADER_MISMATCH, 400, id="version-header-vs-meta"),
    pytest.param(modern(1, "tools/list"), headers("tools/call"), HEADER_MISMATCH, 400, id="method-header-vs-body"),
    pytest.param(modern(1, "tools/call", CALL), headers("tools/call"), HEADER_MISMATCH, 400, id="name-header-missing"),
    pytest.param(modern(1, "tools/call", CALL), headers("tools/call", name="y"), HEADER_MISMATCH, 400, id="name-header-vs-body"),
    pytest.param(modern(1, "resources/read", {"uri": "a://b"}), headers("resources/read", name="a://c"), HEADER_MISMATCH, 400, id="uri-header-vs-body"),
    pytest.param(modern(1, "tools/call", CALL), headers("tools/call", name="=?base64?!!?="), HEADER_MISMATCH, 400, id="name-header-bad-base64"),
    # several things wrong: _meta keys, then headers, then version, then method, then params
    pytest.param(modern(1, "tools/list", version="2099-01-01", capabilities=None), None, INVALID_PARAMS, 400, id="order-meta-before-version"),
    pytest.param(modern(1, "tools/list", capabilities=None), headers("tools/call"), INVALID_PARAMS, 400, id="order-meta-before-headers"),
    pytest.param(modern(1, "tools/unknown", version="2099-01-01"), headers("tools/list", version="2099-01-01"), HEADER_MISMATCH, 400, id="order-headers-before-version"),
    pytest.param(modern(1, "tools/unknown", version="2099-01-01"), headers("tools/unknown", version="2099-01-01"), UNSUPPORTED_PROTOCOL_VERSION, 400, id="order-version-before-method"),
    pytest.param(modern(1, "tools/unknown", version="2099-01-01"), None, UNSUPPORTED_PROTOCOL_VERSION, 400, id="order-version-before-method-stdio"),
    pytest.param(modern(1, "prompts/get", {"name": 5}), None, METHOD_NOT_FOUND, 404, id="order-method-before-params"),
]  # fmt: skip


@pytest.mark.parametrize(("message", "http", "code", "status"), CASES)
def test_each_fault_gets_its_code_and_status_and_the_first_in_spec_order_wins(
    message: dict[str, Any], http: HttpHeaders | None, code: int, status: int
) -> None:
    conn = server()
    got, got_status, error = refusal(feed(conn, message, http=http))
    assert (got, got_status) == (code, status), error
    assert answer(feed(conn, message, http=http))["id"] == 1
    if code == UNSUPPORTED_PROTOCOL_VERSION:
        requested = message["params"]["_meta"][VERSION_KEY]
        assert error["data"] == {"supported": [MODERN], "requested": requested}
    if code == INVALID_PARAMS:
        assert error["data"]["path"].startswith("$.params")
    assert conn.state is State.NEW and conn.version is None  # no session came of it


def test_a_missing_meta_key_is_named_in_the_error() -> None:
    _, _, error = refusal(feed(server(), modern(1, "tools/list", capabilities=None)))
    assert CAPABILITIES_KEY in error["message"]
    assert error["data"]["path"] == f"$.params._meta.{CAPABILITIES_KEY}"


def test_client_info_is_optional_and_base64_names_are_decoded() -> None:
    conn = server()
    assert isinstance(feed(conn, modern(1, "tools/list", info=None))[0], IncomingRequest)
    coded = "=?base64?eA==?="  # "x"
    call = feed(conn, modern(2, "tools/call", CALL), http=headers("tools/call", name=coded))
    assert (
        isinstance(call[0], IncomingRequest)
        and call[0].http is not None
        and call[0].http.params == {}
    )


# -- era detection before any session --------------------------------------------------------


def test_modern_requests_leave_the_connection_free_for_a_legacy_handshake() -> None:
    conn = server()
    assert isinstance(feed(conn, modern(1, "tools/list"))[0], IncomingRequest)
    assert handshake(conn)["protocolVersion"] == LATEST_LEGACY
    assert conn.state is State.READY


def test_a_legacy_request_without_a_session_is_not_taken_for_a_modern_one() -> None:
    """No modern ``_meta`` and a method of the handshake era: it came before
    ``initialize`` (over HTTP, a legacy version header says the same)."""
    conn = server()
    error = answer(feed(conn, request(1, "tools/list", {})))["error"]
    assert error["code"] == INVALID_REQUEST and "before initialization" in error["message"]
    legacy_header = headers("tools/list", version=LATEST_LEGACY)
    error = answer(feed(conn, modern(2, "tools/list"), http=legacy_header))["error"]
    assert error["code"] == INVALID_REQUEST


def test_a_server_of_the_handshake_era_alone_reads_modern_meta_as_plain_meta() -> None:
    conn = server(versions=[LATEST_LEGACY])
    error = answer(feed(conn, modern(1, "tools/list")))["error"]
    assert error["code"] == INVALID_REQUEST and "before initialization" in error["message"]


# -- what each request carries, and nothing more -----------------------------------------------


def test_each_request_speaks_for_itself_nothing_is_inferred_from_earlier_ones() -> None:
    conn = server()
    first = feed(conn, modern(1, "tools/list", capabilities={"sampling": {}}))[0]
    second = feed(conn, modern(2, "tools/list", info={"name": "other", "version": "2"}))[0]
    assert isinstance(first, IncomingRequest) and isinstance(second, IncomingRequest)
    assert first.peer is not None and second.peer is not None
    assert first.peer.version.version == MODERN
    assert dict(first.peer.capabilities) == {"sampling": {}}
    assert dict(first.peer.info) == CLIENT_INFO
    assert dict(second.peer.capabilities) == {} and second.peer.info["name"] == "other"
    assert first.peer.log_level is None
    leveled = modern(3, "tools/list")
    leveled["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = "warning"
    third = feed(conn, leveled)[0]
    assert isinstance(third, IncomingRequest) and third.peer is not None
    assert third.peer.log_level == "warning"
    assert conn.peer_capabilities == {} and conn.peer_info == {}  # no session state


def test_server_discover_lists_versions_capabilities_info_and_cache_hints() -> None:
    policy = CachePolicy(methods={"server/discover": CacheHint(60_000, "public")})
    conn = server(title="Sans IO", instructions="be brief", cache=policy, list_changed=["tools"])
    frame = only(feed(conn, modern(5, "server/discover")), Send)
    assert frame.status is None
    assert answer([frame]) == {
        "jsonrpc": "2.0",
        "id": 5,
        "result": {
            "resultType": "complete",
            "supportedVersions": [MODERN],
            "capabilities": {"tools": {"listChanged": True}, "logging": {}},
            "ttlMs": 60_000,
            "cacheScope": "public",
            "instructions": "be brief",
            "_meta": {SERVER_INFO_KEY: {"name": "sansio", "version": "0.1.0", "title": "Sans IO"}},
        },
    }


def test_listen_is_acknowledged_with_what_the_server_can_honour() -> None:
    conn = server(list_changed=["tools"])
    wanted = {"toolsListChanged": True, "promptsListChanged": True, "resourceSubscriptions": ["a://b"]}  # fmt: skip
    listen = only(feed(conn, modern(9, "subscriptions/listen", {"notifications": wanted})), Listen)
    assert listen.id == 9 and dict(listen.requested) == wanted
    honoured, frame = conn.acknowledge(listen)
    assert honoured == {"toolsListChanged": True}  # no prompts, no resource subscriptions
    assert answer([Send(frame)]) == {
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {
            "notifications": {"toolsListChanged": True},
            "_meta": {"io.modelcontextprotocol/subscriptionId": 9},
        },
    }
