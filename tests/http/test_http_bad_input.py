"""The Streamable HTTP server over real HTTP on 127.0.0.1 (``served``: the everything
server in process under each ASGI server) against bad requests: each gets its status and a
JSON-RPC error, and the server goes on serving. Wrong or missing headers, methods, media
types, origins and hosts, bodies over the limit or too slow to come, ``Mcp-Name`` and ``Mcp-Param-*`` headers that
do not match what the body says (decoded from base64 first), and a server that never
listed its tools still checking them. The client side is plain ``httpx``: every request
is written by hand (``support.http_endpoint``)."""

from __future__ import annotations

import asyncio
import json
import select
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec
import pytest

from mcpgen.runtime import INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, Server
from mcpgen.runtime.core.errors import HEADER_MISMATCH, UNSUPPORTED_PROTOCOL_VERSION

from support.http_endpoint import (
    MODERN,
    PING,
    PLAIN,
    XMCP,
    SIMPLE_TEXT,
    Endpoint,
    b64_header,
    meta,
    modern_headers,
    next_id,
    open_session,
    param_headers,
    result_of,
    rpc_error,
    text_of,
)
from support.http_servers import BODY_TIMEOUT, SMALL_BODY, Served
from support.raw_http import Reader, connect
from support.messages import request

# Slow: real HTTP on 127.0.0.1 throughout (``make unit`` leaves this module out).
pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Bad:
    """A bad HTTP request and the answer it must get."""

    status: int
    #: The JSON-RPC code of the error body (None: any code).
    code: int | None
    #: The id the error must echo (None where no id was readable).
    request_id: Any = None
    method: str = "POST"
    headers: Mapping[str, str | None] = field(default_factory=dict)
    body: bytes | None = None
    url: str | None = None


def modern_bad(
    status: int,
    code: int,
    method: str = "tools/call",
    params: dict[str, Any] | None = None,
    headers: Mapping[str, str | None] | None = None,
    request_id: Any = "bad",
    **meta_changes: Any,
) -> Bad:
    """A modern request made bad by ``headers`` and ``meta_changes`` (``_meta=None`` drops
    ``_meta`` altogether)."""
    if params is None:
        params = {"name": "test_simple_text", "arguments": {}} if method == "tools/call" else {}
    body_params = dict(params)
    if meta_changes.pop("_meta", True) is not None:
        body_params["_meta"] = meta(**meta_changes)
    all_headers: dict[str, str | None] = {
        **modern_headers(method, params),
        **param_headers(params),
        **(headers or {}),
    }
    body = json.dumps(request(request_id, method, body_params)).encode()
    return Bad(status, code, request_id, headers=all_headers, body=body)


BAD_REQUESTS = [
    # media types
    pytest.param(Bad(415, None, headers={**PLAIN, "content-type": "text/plain"}, body=PING), id="content-type-text"),
    pytest.param(Bad(415, None, headers={**PLAIN, "content-type": None}, body=PING), id="content-type-missing"),
    pytest.param(Bad(415, None, headers={**PLAIN, "content-type": "application/jsonx"}, body=PING), id="content-type-jsonx"),
    pytest.param(Bad(406, None, headers={**PLAIN, "accept": None}, body=PING), id="accept-missing"),
    pytest.param(Bad(406, None, headers={**PLAIN, "accept": "application/json"}, body=PING), id="accept-json-only"),
    pytest.param(Bad(406, None, headers={**PLAIN, "accept": "text/event-stream"}, body=PING), id="accept-sse-only"),
    pytest.param(Bad(406, None, headers={**PLAIN, "accept": "text/html"}, body=PING), id="accept-html"),
    # malformed JSON (no id can be read)
    pytest.param(Bad(400, PARSE_ERROR, headers=PLAIN, body=b'{"jsonrpc": "2.0", "id": 1,'), id="json-truncated"),
    pytest.param(Bad(400, PARSE_ERROR, headers=PLAIN, body=b"not json at all"), id="json-garbage"),
    pytest.param(Bad(400, PARSE_ERROR, headers=PLAIN, body=b"\xff\xfe{}"), id="json-not-utf8"),
    pytest.param(Bad(400, PARSE_ERROR, headers=PLAIN, body=b""), id="json-empty-body"),
    # an invalid envelope whose id is readable
    pytest.param(Bad(400, INVALID_REQUEST, "x1", headers=PLAIN, body=b'{"jsonrpc":"2.0","id":"x1","method":5}'), id="method-not-a-string"),
    # sessions
    pytest.param(Bad(404, None, "p1", headers={**PLAIN, "mcp-session-id": "no-such-session"}, body=PING), id="unknown-session-request"),
    pytest.param(Bad(404, None, None, headers={**PLAIN, "mcp-session-id": "no-such-session"}, body=b'{"jsonrpc":"2.0","method":"notifications/initialized"}'), id="unknown-session-notification"),
    pytest.param(Bad(404, None, headers={"mcp-session-id": "no-such-session"}, method="DELETE"), id="unknown-session-delete"),
    # body size (limit + 1; the limit itself is accepted, see below)
    pytest.param(Bad(413, None, headers=PLAIN, body=b" " * (SMALL_BODY + 1)), id="body-over-limit"),
    pytest.param(Bad(413, None, headers=PLAIN, body=PING + b" " * (4 * SMALL_BODY)), id="body-far-over-limit"),
    # DNS rebinding defence
    pytest.param(Bad(403, None, headers={**PLAIN, "origin": "http://evil.example"}, body=PING), id="origin-foreign"),
    pytest.param(Bad(403, None, headers={**PLAIN, "origin": "http://localhost.evil.example"}, body=PING), id="origin-localhost-prefix"),
    pytest.param(Bad(403, None, headers={**PLAIN, "origin": "http://localhost@evil.example"}, body=PING), id="origin-userinfo"),
    pytest.param(Bad(403, None, headers={**PLAIN, "origin": "null"}, body=PING), id="origin-null"),
    pytest.param(Bad(403, None, headers={"origin": "http://evil.example", "accept": "text/event-stream"}, method="GET"), id="origin-foreign-get"),
    pytest.param(Bad(403, None, headers={**PLAIN, "host": "evil.example"}, body=PING), id="host-foreign"),
    pytest.param(Bad(403, None, headers={**PLAIN, "host": "localhost.evil.example"}, body=PING), id="host-localhost-prefix"),
    pytest.param(Bad(403, None, headers={**PLAIN, "host": "127.0.0.1.nip.io:80"}, body=PING), id="host-ip-prefix"),
    # modern header/body agreement (-32020)
    pytest.param(modern_bad(400, HEADER_MISMATCH, headers={"mcp-protocol-version": "2026-01-01"}), id="version-header-vs-meta"),
    pytest.param(modern_bad(400, HEADER_MISMATCH, headers={"mcp-protocol-version": None}), id="version-header-missing"),
    pytest.param(modern_bad(400, HEADER_MISMATCH, headers={"mcp-method": "tools/list"}), id="method-header-vs-body"),
    pytest.param(modern_bad(400, HEADER_MISMATCH, headers={"mcp-method": None}), id="method-header-missing"),
    pytest.param(modern_bad(400, HEADER_MISMATCH, headers={"mcp-name": "test_image_content"}), id="name-header-vs-body"),
    pytest.param(modern_bad(400, HEADER_MISMATCH, headers={"mcp-name": b64_header("test_image_content")}), id="name-header-base64-vs-body"),
    pytest.param(modern_bad(400, HEADER_MISMATCH, headers={"mcp-name": "=?base64?not base64!?="}), id="name-header-invalid-base64"),
    pytest.param(modern_bad(400, HEADER_MISMATCH, headers={"mcp-name": None}), id="name-header-missing"),
    pytest.param(modern_bad(400, HEADER_MISMATCH, headers={"mcp-name": b64_header("test_simple_text").lower()}), id="name-header-base64-lowercased-payload"),
    pytest.param(modern_bad(400, HEADER_MISMATCH, "resources/read", {"uri": "test://static-text"}, {"mcp-name": "test://static-binary"}), id="uri-header-vs-body"),
    pytest.param(modern_bad(400, HEADER_MISMATCH, "prompts/get", {"name": "test_simple_prompt"}, {"mcp-name": b64_header("test_prompt_with_image")}), id="prompt-name-header-base64-vs-body"),
    # x-mcp-header arguments and their Mcp-Param-* headers (-32020)
    pytest.param(modern_bad(400, HEADER_MISMATCH, params=XMCP, headers={"mcp-param-region": None}), id="param-header-missing"),
    pytest.param(modern_bad(400, HEADER_MISMATCH, params=XMCP, headers={"mcp-param-region": "us-east1"}), id="param-header-vs-body"),
    pytest.param(modern_bad(400, HEADER_MISMATCH, params=XMCP, headers={"mcp-param-region": "=?base64?ZXUtd2VzdDE?="}), id="param-header-base64-padding"),
    pytest.param(modern_bad(400, HEADER_MISMATCH, params=XMCP, headers={"mcp-param-region": "=?base64?ZXUt!!d2VzdDE=?="}), id="param-header-base64-alphabet"),
    pytest.param(modern_bad(400, HEADER_MISMATCH, params=XMCP, headers={"mcp-param-priority": "7"}), id="param-header-without-argument"),
    pytest.param(modern_bad(400, HEADER_MISMATCH, params={**XMCP, "arguments": {"region": "eu-west1", "priority": 42}}, headers={"mcp-param-priority": "43"}), id="param-header-integer-vs-body"),
    pytest.param(modern_bad(400, HEADER_MISMATCH, params={**XMCP, "arguments": {"region": "eu-west1", "verbose": True}}, headers={"mcp-param-verbose": "True"}), id="param-header-boolean-case"),
    pytest.param(modern_bad(400, HEADER_MISMATCH, params={**XMCP, "arguments": {"region": "eu-west1", "priority": 42}}, headers={"mcp-param-priority": "4_2"}), id="param-header-integer-not-decimal"),
    # unsupported version (-32022; data checked below)
    pytest.param(modern_bad(400, UNSUPPORTED_PROTOCOL_VERSION, headers={"mcp-protocol-version": "2099-01-01"}, protocolVersion="2099-01-01"), id="version-unsupported"),
    # missing _meta keys (-32602)
    pytest.param(modern_bad(400, INVALID_PARAMS, "tools/list", _meta=None), id="meta-missing"),
    pytest.param(modern_bad(400, INVALID_PARAMS, "tools/list", clientCapabilities=None), id="meta-lacks-capabilities"),
    pytest.param(modern_bad(400, INVALID_PARAMS, "tools/list", protocolVersion=None), id="meta-lacks-version"),
    # unknown method (-32601)
    pytest.param(modern_bad(404, METHOD_NOT_FOUND, "tools/unknown", request_id=77), id="method-unknown"),
    pytest.param(modern_bad(404, METHOD_NOT_FOUND, "resources/subscribe", {"uri": "test://watched-resource"}), id="method-legacy-only"),
    # validation order: _meta keys, then headers, then version, then method
    pytest.param(modern_bad(400, INVALID_PARAMS, "tools/list", headers={"mcp-method": "tools/call"}, clientCapabilities=None), id="order-meta-before-headers"),
    pytest.param(modern_bad(400, HEADER_MISMATCH, "tools/unknown", headers={"mcp-method": "tools/list", "mcp-protocol-version": "2099-01-01"}, protocolVersion="2099-01-01"), id="order-headers-before-version"),
    pytest.param(modern_bad(400, UNSUPPORTED_PROTOCOL_VERSION, "tools/unknown", headers={"mcp-protocol-version": "2099-01-01"}, protocolVersion="2099-01-01"), id="order-version-before-method"),
    # HTTP methods and paths
    pytest.param(Bad(405, None, headers={"accept": "text/event-stream"}, method="GET"), id="get-without-session"),
    pytest.param(Bad(405, None, method="DELETE"), id="delete-without-session"),
    pytest.param(Bad(405, None, headers=PLAIN, body=PING, method="PUT"), id="put"),
    pytest.param(Bad(404, None, headers=PLAIN, body=PING, url="/elsewhere"), id="wrong-path"),
]  # fmt: skip


@pytest.mark.parametrize("bad", BAD_REQUESTS)
def test_bad_request_gets_its_status_and_a_json_rpc_error_and_the_server_keeps_serving(
    endpoint: Endpoint, bad: Bad
) -> None:
    url = f"http://127.0.0.1:{endpoint.port}{bad.url}" if bad.url else None
    response = endpoint.send(bad.method, bad.headers, bad.body, url)
    error = rpc_error(response, bad.status, bad.code, bad.request_id)
    if bad.status == 405:
        assert set(response.headers["allow"].replace(" ", "").split(",")) >= {"POST"}
    if bad.code == UNSUPPORTED_PROTOCOL_VERSION:
        assert error["data"] == {"supported": [MODERN], "requested": "2099-01-01"}
    if bad.code == INVALID_PARAMS:
        assert error["data"]["path"].startswith("$.params")
    assert "mcp-session-id" not in response.headers
    endpoint.assert_serving()


def test_a_body_at_the_limit_is_accepted(endpoint: Endpoint) -> None:
    body = json.dumps(request("edge", "ping")).encode()
    response = endpoint.send("POST", PLAIN, body + b" " * (SMALL_BODY - len(body)))
    assert result_of(response, "edge") == {}


@pytest.mark.parametrize("length_known", [True, False], ids=["content-length", "chunked"])
def test_a_body_over_the_limit_is_read_before_its_413_so_the_connection_lives_on(
    endpoint: Endpoint, length_known: bool
) -> None:
    """A body four times the limit, its first part sent, then (after a pause) the rest:
    whatever ASGI server serves, nothing is answered before the whole body has come and
    been dropped, so no server closes the connection with unread data in it (a reset,
    which can destroy the answer), and the same connection answers the next request."""
    ping = json.dumps(request("after", "ping")).encode()
    body = ping + b" " * (4 * SMALL_BODY)
    common = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{endpoint.port}\r\n"
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
    )
    cut = SMALL_BODY + SMALL_BODY // 2  # over the limit already: refused from here on
    if length_known:
        head = f"{common}Content-Length: {len(body)}\r\n\r\n".encode()
        first, rest = head + body[:cut], body[cut:]
    else:
        head = f"{common}Transfer-Encoding: chunked\r\n\r\n".encode()
        first = head + b"%x\r\n%s\r\n" % (cut, body[:cut])
        rest = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body) - cut, body[cut:])
    with connect(endpoint.port) as sock:
        sock.sendall(first)
        ready, _, _ = select.select([sock], [], [], 0.3)
        assert not ready, "answered before the body had come"
        sock.sendall(rest)
        reader = Reader(sock)
        refused = reader.response()
        assert refused.status == 413, refused
        assert "Payload Too Large" in refused.json()["error"]["message"]
        assert refused.headers.get("connection") != "close", refused.headers
        sock.sendall(f"{common}Content-Length: {len(ping)}\r\n\r\n".encode() + ping)
        answered = reader.response()
        assert answered.status == 200, answered
        assert answered.json() == {"jsonrpc": "2.0", "id": "after", "result": {}}


def test_a_body_that_stops_coming_gets_408_and_the_server_keeps_serving(
    endpoint: Endpoint,
) -> None:
    """Headers claiming 100 bytes, 10 of them sent, then nothing: 408 once the body
    deadline has passed, whatever ASGI server serves; the next request is answered."""
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{endpoint.port}\r\n"
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        "Content-Length: 100\r\n\r\n"
    )
    with connect(endpoint.port) as sock:
        sock.sendall(head.encode() + b'{"jsonrpc"')
        response = Reader(sock).response()
    assert response.status == 408, response
    assert f"{BODY_TIMEOUT:g} s" in response.json()["error"]["message"]
    endpoint.assert_serving()


@pytest.mark.parametrize(
    "headers",
    [
        {"origin": "http://localhost:5173"},
        {"origin": "http://127.0.0.1:8080"},
        {"origin": "https://127.0.0.1"},
        {"origin": "http://[::1]:3000"},
        {"host": "localhost"},
        {"host": "localhost:3001"},
        {"host": "[::1]:3001"},
        {"content-type": "application/json; charset=utf-8"},
        {"accept": "*/*"},
        {"accept": "text/event-stream;q=0.9, application/json"},
    ],
    ids=lambda h: f"{next(iter(h))}={next(iter(h.values()))}",
)
def test_local_origins_hosts_and_media_type_variants_are_accepted(
    endpoint: Endpoint, headers: dict[str, str]
) -> None:
    response = endpoint.send("POST", {**PLAIN, **headers}, PING)
    assert result_of(response, "p1") == {}


def test_foreign_origin_is_refused_even_with_a_valid_session(endpoint: Endpoint) -> None:
    legacy = open_session(endpoint)
    rpc_error(legacy.post(request(1, "ping"), origin="http://evil.example"), 403, None)
    assert legacy.post(request(2, "ping")).json()["result"] == {}


def test_mcp_name_in_base64_is_decoded_before_comparing(endpoint: Endpoint) -> None:
    request_id, response = endpoint.modern(
        "tools/call",
        {"name": "test_simple_text", "arguments": {}},
        headers={"mcp-name": b64_header("test_simple_text")},
    )
    assert text_of(result_of(response, request_id)) == SIMPLE_TEXT
    # a non-ASCII name travels only in base64: the header check passes, the prompt is unknown
    request_id, response = endpoint.modern(
        "prompts/get", {"name": "café"}, headers={"mcp-name": b64_header("café")}
    )
    error = response.json()["error"]
    assert response.json()["id"] == request_id
    assert error["code"] != HEADER_MISMATCH and "Unknown prompt" in error["message"], error
    # the same name sent raw (UTF-8 bytes in a header) is not what the body says
    bad_id = next_id()
    body = request(bad_id, "prompts/get", {"name": "café", "_meta": meta()})
    headers = [(k.encode(), v.encode()) for k, v in modern_headers("prompts/get").items()]
    raw = endpoint.client.build_request(
        "POST",
        endpoint.url,
        headers=[*headers, (b"mcp-name", "café".encode())],
        content=json.dumps(body).encode(),
    )
    rpc_error(endpoint.client.send(raw), 400, HEADER_MISMATCH, bad_id)
    endpoint.assert_serving()


def test_mcp_param_headers_are_decoded_and_compared_with_the_arguments(
    endpoint: Endpoint,
) -> None:
    """Header names in any case; base64 values decoded; integers compared as numbers;
    text that merely looks like base64 is literal; null or absent arguments need no header
    (a null the tool's schema refuses then reaches the tool, which says so)."""
    matched = "headers matched: "
    cases = [
        ({"region": "Zürich"}, {"Mcp-Param-REGION": b64_header("Zürich")}, matched),
        (
            {"region": "eu", "priority": 42, "verbose": False},
            {"mcp-param-region": "eu", "mcp-param-priority": "042", "mcp-param-verbose": "false"},
            matched,
        ),
        ({"region": "=?base64?ZXU="}, {"mcp-param-region": "=?base64?ZXU="}, matched),
        ({"region": "eu"}, {"mcp-param-region": "eu"}, matched),
        (
            {"region": "eu", "priority": None},
            {"mcp-param-region": "eu"},
            "Invalid arguments for tool 'test_x_mcp_header': Expected `int`, got `null`",
        ),
    ]
    for arguments, headers, answer in cases:
        request_id, response = endpoint.modern(
            "tools/call", {"name": "test_x_mcp_header", "arguments": arguments}, headers=headers
        )
        assert text_of(result_of(response, request_id)).startswith(answer), arguments


def test_a_server_that_never_listed_its_tools_still_checks_mcp_param_headers(
    served: Served,
) -> None:
    """A fresh worker, or one whose tools changed, learns its tools' annotations by listing
    them itself before the first call it checks."""
    served.app.server.tool_headers.forget()
    endpoint = served.endpoint
    request_id, response = endpoint.modern("tools/call", XMCP)
    rpc_error(response, 400, HEADER_MISMATCH, request_id)
    request_id, response = endpoint.modern("tools/call", XMCP, headers=param_headers(XMCP))
    assert text_of(result_of(response, request_id)) == "headers matched: region='eu-west1'"


def test_on_suspend_awaits_like_await_and_tells_when_the_coroutine_first_waits() -> None:
    """The stateless path's disconnect watcher starts only when a handler waits."""
    from mcpgen.runtime.http.asgi import OnSuspend

    calls: list[str] = []
    hook = lambda: calls.append("suspended")  # noqa: E731

    async def quick() -> None:
        calls.append("ran")

    async def waits(fail: bool) -> None:
        try:
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            if fail:
                raise ValueError("after waiting")
            calls.append("finished")
        finally:
            calls.append("cleaned up")

    async def scenario() -> None:
        await OnSuspend(quick(), hook)
        assert calls == ["ran"]
        calls.clear()
        await OnSuspend(waits(False), hook)
        assert calls == ["suspended", "finished", "cleaned up"]
        calls.clear()
        with pytest.raises(ValueError, match="after waiting"):
            await OnSuspend(waits(True), hook)
        assert calls == ["suspended", "cleaned up"]
        calls.clear()

        # a cancellation of the awaiting task reaches the coroutine
        async def waits_long() -> None:
            try:
                await asyncio.sleep(30)
            finally:
                calls.append("cleaned up")

        async def awaiting() -> None:
            await OnSuspend(waits_long(), hook)

        task = asyncio.ensure_future(awaiting())
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert calls == ["suspended", "cleaned up"]

    asyncio.run(scenario())


def test_runtime_client_names_stay_functions_once_the_transports_are_loaded() -> None:
    """No runtime submodule shadows a public name of ``mcpgen.runtime`` (importing a
    submodule sets a package attribute of the same name)."""
    import importlib

    import mcpgen.runtime as runtime

    for module in (
        "core",
        "aio",
        "tasks",
        "server",
        "http",
        "http.endpoint",
        "client",
        "client.http",
        "app",
        "testing",
        "lowlevel",
    ):
        importlib.import_module(f"mcpgen.runtime.{module}")
    for name in runtime.__all__:
        assert not isinstance(getattr(runtime, name), type(runtime)), name


def test_a_failing_tool_list_leaves_calls_unchecked_not_failed(
    served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    """Learning the annotations is the server's own business: if its tools/list handler
    fails then, the call is served (unchecked) and the failure is logged; the next
    tools/list it answers teaches it the annotations again."""
    server = served.app.server
    assert isinstance(server, Server)
    endpoint = served.endpoint
    listed = server.implemented["list_tools"]

    async def broken(params: Any, ctx: Any) -> Any:
        raise RuntimeError("tool list unavailable")

    server.tool_headers.forget()
    server.implemented["list_tools"] = broken
    try:
        with caplog.at_level("ERROR", logger="mcpgen.runtime"):
            request_id, response = endpoint.modern("tools/call", XMCP)
        assert text_of(result_of(response, request_id)) == "headers matched: region='eu-west1'"
        assert "x-mcp-header annotations failed" in caplog.text
    finally:
        server.implemented["list_tools"] = listed
    request_id, response = endpoint.modern("tools/list")
    result_of(response, request_id)
    request_id, response = endpoint.modern("tools/call", XMCP)
    rpc_error(response, 400, HEADER_MISMATCH, request_id)


def test_our_client_relists_the_tools_once_when_a_call_lacks_its_param_headers(
    served: Served,
) -> None:
    """A client that never listed the tools sends no Mcp-Param-* headers; on the server's
    -32020 it lists them (learning the annotations) and retries once, as the spec advises."""
    from mcpgen.generated.v2026_07_28.client import Client
    from mcpgen.runtime.client import http_client

    async def call() -> list[str]:
        async with http_client(Client, served.endpoint.url) as client:
            answer = await client.call_tool(
                name="test_x_mcp_header", arguments={"region": "Zürich", "priority": 3}
            )
            second = await client.call_tool(name="test_x_mcp_header", arguments={"region": "eu"})
            return [text_of(msgspec.to_builtins(r)) for r in (answer, second)]

    assert asyncio.run(asyncio.wait_for(call(), 30)) == [
        "headers matched: region='Zürich', priority=3",
        "headers matched: region='eu'",
    ]


def test_accept_media_types_are_case_insensitive(endpoint: Endpoint) -> None:
    response = endpoint.send(
        "POST", {**PLAIN, "accept": "Application/JSON, Text/Event-Stream"}, PING
    )
    assert result_of(response, "p1") == {}
