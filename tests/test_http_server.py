"""The Streamable HTTP server, end to end: real HTTP on 127.0.0.1, no mocks.

Two kinds of server:

* ``served`` — the everything server's ASGI app (``Server.http_app``) run in-process by
  uvicorn in a background thread, on a socket bound here (so ``max_body`` can be small and
  one test-only tool can report when it is cancelled);
* ``cluster`` — ``uvicorn examples.everything.asgi:app --workers 2`` as a subprocess with a
  shared ``MCPGEN_STATE_KEY``, plus a single-process server with a different key.

The client side is plain ``httpx``: every request is written by hand, so anything can be
sent. Every request has a timeout, SSE streams are read line by line under the same read
timeout, and every server started here is stopped at teardown (subprocesses by pid).
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
import uvicorn

from mcpgen.generated.v2026_07_28 import server as s
from mcpgen.runtime import (
    INVALID_PARAMS,
    App,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    Server,
)
from mcpgen.runtime.core.errors import HEADER_MISMATCH, UNSUPPORTED_PROTOCOL_VERSION
from mcpgen.runtime.http.endpoint import McpHttpApp

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # examples/ is not an installed package
    sys.path.append(str(ROOT))

from examples.everything.server import build_app  # noqa: E402

MODERN = "2026-07-28"
LATEST_LEGACY = "2025-11-25"
#: The in-process server's body limit (the default, 4 MiB, is checked on the subprocess).
SMALL_BODY = 64 * 1024
DEFAULT_BODY = 4 * 1024 * 1024
TIMEOUT = httpx.Timeout(5.0, connect=2.0)
BOTH = "application/json, text/event-stream"
SIMPLE_TEXT = "This is a simple text response for testing."
#: The test-only tool of ``Probe``: reports progress, then sleeps (``seconds``, default 30)
#: and records whether it was cancelled.
HANG = "test_http_hang_until_cancelled"
VISIBLE_ASCII = re.compile(r"[\x21-\x7e]+")

_ids = itertools.count(1)


def next_id() -> int:
    return next(_ids)


# -- JSON-RPC and SSE helpers ------------------------------------------------------------


def meta(**changes: Any) -> dict[str, Any]:
    """The per-request ``_meta`` of a modern request; ``None`` values drop a key."""
    value: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "sampling": {}},
        "io.modelcontextprotocol/clientInfo": {"name": "http-test", "version": "1.0"},
    }
    for key, item in changes.items():
        name = key if key.startswith(("io.", "progress")) else f"io.modelcontextprotocol/{key}"
        if item is None:
            value.pop(name, None)
        else:
            value[name] = item
    return value


def request(request_id: Any, method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def modern_headers(method: str, params: Mapping[str, Any] | None = None) -> dict[str, str]:
    """The headers a modern client sends with ``method`` (``Mcp-Name`` where required)."""
    headers = {
        "content-type": "application/json",
        "accept": BOTH,
        "mcp-protocol-version": MODERN,
        "mcp-method": method,
    }
    params = params or {}
    if method in ("tools/call", "prompts/get") and "name" in params:
        headers["mcp-name"] = str(params["name"])
    if method == "resources/read" and "uri" in params:
        headers["mcp-name"] = str(params["uri"])
    return headers


def param_headers(params: Mapping[str, Any]) -> dict[str, str]:
    """The Mcp-Param-* headers a conforming client sends for a call of ``test_x_mcp_header``
    (the fixture mirrors ``region``, ``priority`` and ``verbose``)."""
    if params.get("name") != "test_x_mcp_header":
        return {}
    names = {"region": "Region", "priority": "Priority", "verbose": "Verbose"}
    out: dict[str, str] = {}
    for key, value in params.get("arguments", {}).items():
        if key in names and value is not None:
            text = ("true" if value else "false") if isinstance(value, bool) else str(value)
            out[f"mcp-param-{names[key].lower()}"] = text
    return out


def b64_header(value: str) -> str:
    return "=?base64?" + base64.b64encode(value.encode()).decode() + "?="


def rpc_error(
    response: httpx.Response,
    status: int,
    code: int | None,
    request_id: Any = None,
) -> dict[str, Any]:
    """Assert ``response`` is ``status`` with a JSON-RPC error body (``code``, echoing
    ``request_id``); returns the error object."""
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers.get("content-type", "").startswith("application/json")
    body = response.json()
    assert body.get("jsonrpc") == "2.0" and "result" not in body, body
    assert body.get("id") == request_id, body
    error = body["error"]
    assert isinstance(error.get("code"), int) and isinstance(error.get("message"), str), body
    if code is not None:
        assert error["code"] == code, body
    return error


def result_of(response: httpx.Response, request_id: Any) -> Any:
    assert response.status_code == 200, (response.status_code, response.text)
    assert response.headers["content-type"].startswith("application/json"), response.headers
    body = response.json()
    assert body.get("id") == request_id and "result" in body, body
    return body["result"]


def text_of(result: Any) -> str:
    return result["content"][0]["text"]


@dataclass
class Event:
    """One server-sent event."""

    data: str
    id: str | None = None
    event: str | None = None
    retry: int | None = None

    def message(self) -> Any:
        return json.loads(self.data)


def sse(response: httpx.Response) -> Iterator[Event]:
    """The events of an SSE response as they arrive (each read bounded by the client's
    read timeout)."""
    assert response.status_code == 200, response.status_code
    assert response.headers["content-type"].startswith("text/event-stream"), response.headers
    fields: dict[str, str] = {}
    data: list[str] = []
    for line in response.iter_lines():
        if line == "":
            if fields or data:
                retry = fields.get("retry")
                yield Event(
                    "\n".join(data),
                    fields.get("id"),
                    fields.get("event"),
                    int(retry) if retry is not None else None,
                )
            fields, data = {}, []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            data.append(value)
        else:
            fields[name] = value


def until_response(events: Iterator[Event], request_id: Any) -> tuple[list[Any], Any]:
    """Read ``events`` up to the response to ``request_id``: (messages before, response)."""
    before: list[Any] = []
    for event in events:
        if not event.data:
            continue
        message = event.message()
        if message.get("id") == request_id and "method" not in message:
            return before, message
        before.append(message)
    raise AssertionError(f"the stream ended without answering {request_id}: {before}")


# -- an HTTP endpoint --------------------------------------------------------------------


class Endpoint:
    """The MCP endpoint of one server, spoken to with hand-written requests."""

    def __init__(self, port: int, path: str = "/mcp") -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}{path}"
        self.client = httpx.Client(timeout=TIMEOUT)

    def close(self) -> None:
        self.client.close()

    def send(
        self,
        method: str = "POST",
        headers: Mapping[str, str | None] | None = None,
        content: bytes | None = None,
        url: str | None = None,
    ) -> httpx.Response:
        """A raw request; a ``None`` header value removes that header (httpx's defaults
        included, e.g. ``Accept: */*``)."""
        built = self.client.build_request(method, url or self.url, content=content)
        for name, value in (headers or {}).items():
            if value is None:
                if name in built.headers:
                    del built.headers[name]
            else:
                built.headers[name] = value
        return self.client.send(built)

    def post(self, message: Any, headers: Mapping[str, str | None] | None = None) -> httpx.Response:
        base: dict[str, str | None] = {"content-type": "application/json", "accept": BOTH}
        return self.send("POST", {**base, **(headers or {})}, json.dumps(message).encode())

    @contextmanager
    def stream(
        self, message: Any, headers: Mapping[str, str], method: str = "POST"
    ) -> Iterator[httpx.Response]:
        """A streamed response on a connection of its own (closed on exit)."""
        with httpx.Client(timeout=TIMEOUT) as client:
            content = json.dumps(message).encode() if message is not None else None
            with client.stream(method, self.url, headers=headers, content=content) as response:
                yield response

    # modern requests

    def modern(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        request_id: Any = None,
        headers: Mapping[str, str | None] | None = None,
        **meta_changes: Any,
    ) -> tuple[Any, httpx.Response]:
        """A modern request (``_meta`` and headers as a conforming client sends them);
        returns (its id, the response)."""
        request_id = next_id() if request_id is None else request_id
        body_params = {**(params or {}), "_meta": meta(**meta_changes)}
        all_headers: dict[str, str | None] = {**modern_headers(method, params), **(headers or {})}
        return request_id, self.post(request(request_id, method, body_params), all_headers)

    def call(self, name: str, arguments: dict[str, Any] | None = None, **extra: Any) -> Any:
        """A modern ``tools/call``; returns its result."""
        request_id, response = self.modern(
            "tools/call", {"name": name, "arguments": arguments or {}, **extra}
        )
        return result_of(response, request_id)

    def assert_serving(self) -> None:
        """A valid request right after a bad one is answered properly."""
        assert text_of(self.call("test_simple_text")) == SIMPLE_TEXT


@dataclass
class Legacy:
    """A legacy (Streamable HTTP, session-based) client of one endpoint."""

    endpoint: Endpoint
    version: str
    session_id: str
    initialize_result: Any

    @property
    def headers(self) -> dict[str, str]:
        return {
            "content-type": "application/json",
            "accept": BOTH,
            "mcp-session-id": self.session_id,
            "mcp-protocol-version": self.version,
        }

    def post(self, message: Any, **extra: str | None) -> httpx.Response:
        return self.endpoint.post(message, {**self.headers, **extra})

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        request_id = next_id()
        response = self.post(
            request(request_id, "tools/call", {"name": name, "arguments": arguments or {}})
        )
        return result_of(response, request_id)

    @contextmanager
    def stream(self, message: Any, method: str = "POST", **extra: str) -> Iterator[httpx.Response]:
        headers = {**self.headers, **extra}
        if method == "GET":
            headers = {k: v for k, v in headers.items() if k != "content-type"}
            headers["accept"] = "text/event-stream"
        with self.endpoint.stream(message, headers, method) as response:
            yield response


def open_session(
    endpoint: Endpoint,
    version: str = LATEST_LEGACY,
    capabilities: dict[str, Any] | None = None,
) -> Legacy:
    """``initialize`` + ``notifications/initialized``: a ready legacy session."""
    response = endpoint.post(
        request(
            0,
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": capabilities or {},
                "clientInfo": {"name": "http-test", "version": "1.0"},
            },
        )
    )
    result = result_of(response, 0)
    assert result["protocolVersion"] == version
    session_id = response.headers.get("mcp-session-id")
    assert session_id is not None, response.headers
    legacy = Legacy(endpoint, version, session_id, result)
    accepted = legacy.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert accepted.status_code == 202 and accepted.content == b"", accepted
    return legacy


# -- the in-process server ---------------------------------------------------------------


class Probe:
    """``HANG`` on an everything app: a tool that reports progress and then waits until it
    is cancelled (which it records)."""

    def __init__(self, app: App) -> None:
        self.started = threading.Event()
        self.cancelled = threading.Event()
        app.add_tool(self.hang, name=HANG)

    async def hang(self, ctx: s.Context, seconds: float = 30) -> str:
        self.started.set()
        await ctx.report_progress(1, 2, "waiting to be cancelled")
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return "not cancelled"


@dataclass
class Served:
    endpoint: Endpoint
    probe: Probe
    app: McpHttpApp


class ThreadedUvicorn:
    """uvicorn serving ``app`` in a daemon thread on a socket bound here (127.0.0.1)."""

    def __init__(self, app: Any) -> None:
        # proto=IPPROTO_TCP: asyncio sets TCP_NODELAY only on sockets that name it, and
        # without it every request waits out a delayed ACK (~40 ms).
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.port: int = self.sock.getsockname()[1]
        config = uvicorn.Config(
            app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )

    def start(self, timeout: float = 10.0) -> None:
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            assert self.thread.is_alive(), "uvicorn stopped while starting"
            assert time.monotonic() < deadline, "uvicorn did not start in time"
            time.sleep(0.02)

    def stop(self, timeout: float = 10.0) -> None:
        self.server.should_exit = True
        if self.thread.ident is not None:  # started
            self.thread.join(timeout)
        self.sock.close()
        assert not self.thread.is_alive(), "uvicorn did not stop in time"


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    """The everything server as ``build_app`` makes it, plus ``Probe``'s tool."""
    app = build_app()
    probe = Probe(app)
    http_app = McpHttpApp(app.server, max_body=SMALL_BODY)
    runner = ThreadedUvicorn(http_app)
    endpoint = Endpoint(runner.port)
    try:
        runner.start()
        yield Served(endpoint, probe, http_app)
    finally:
        endpoint.close()
        runner.stop()


@pytest.fixture
def endpoint(served: Served) -> Endpoint:
    return served.endpoint


# -- 1. bad input --------------------------------------------------------------------------


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


PLAIN = {"content-type": "application/json", "accept": BOTH}
#: A call of the fixture tool whose arguments are mirrored into Mcp-Param-* headers.
XMCP: dict[str, Any] = {"name": "test_x_mcp_header", "arguments": {"region": "eu-west1"}}

PING = json.dumps(request("p1", "ping")).encode()


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


# -- 2. legacy Streamable HTTP ---------------------------------------------------------------


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


# -- 3. the modern era -------------------------------------------------------------------------


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
    """``state`` with one character of its payload (0) or signature (1) changed."""
    pieces = state.split(".")
    piece = pieces[part]
    index = len(piece) // 2
    pieces[part] = piece[:index] + ("A" if piece[index] != "A" else "B") + piece[index + 1 :]
    return ".".join(pieces)


@pytest.mark.parametrize(
    "forge",
    [
        pytest.param(lambda state: tamper(state, 0), id="payload-changed"),
        pytest.param(lambda state: tamper(state, 1), id="signature-changed"),
        pytest.param(lambda state: state.split(".")[0], id="signature-dropped"),
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


# -- 4. scale-out: uvicorn --workers 2 with a shared requestState key ----------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def children_of(pid: int) -> list[int]:
    """Every live descendant of ``pid`` (from /proc)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        kids = [child for child, ppid in parents.items() if ppid == parent]
        found += kids
        frontier += kids
    return found


def running(pid: int) -> bool:
    """Whether ``pid`` is a live process (zombies count as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


class UvicornProcess:
    """``uvicorn examples.everything.asgi:app`` as a subprocess (cwd = repo root)."""

    def __init__(self, key: str, log: Path, workers: int = 1) -> None:
        self.port = free_port()
        self.log = log
        args = ["examples.everything.asgi:app", "--host", "127.0.0.1", "--port", str(self.port)]
        if workers > 1:
            args += ["--workers", str(workers)]
        with open(log, "wb") as out:  # the child keeps its own descriptor
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "uvicorn", *args, "--log-level", "warning"],
                cwd=ROOT,
                env={**os.environ, "MCPGEN_STATE_KEY": key},
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        self.endpoint = Endpoint(self.port)
        self.descendants: list[int] = []

    def wait_ready(self, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            assert self.proc.poll() is None, f"uvicorn exited: {self.log.read_text()}"
            try:
                response = httpx.post(
                    self.endpoint.url,
                    headers=PLAIN,
                    content=PING,
                    timeout=httpx.Timeout(1.0),
                )
                if response.status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, f"uvicorn not ready: {self.log.read_text()}"
            time.sleep(0.05)
        self.descendants = children_of(self.proc.pid)

    @property
    def workers(self) -> list[int]:
        return [pid for pid in self.descendants if "spawn_main" in cmdline(pid)]

    def stop(self, timeout: float = 10.0) -> list[int]:
        """SIGTERM to the supervisor; returns the processes still running afterwards."""
        self.endpoint.close()
        self.descendants = sorted(set(self.descendants) | set(children_of(self.proc.pid)))
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            pass
        deadline = time.monotonic() + timeout
        while any(map(running, self.descendants)) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = [pid for pid in [self.proc.pid, *self.descendants] if running(pid)]
        return left

    def kill(self) -> None:
        """Teardown: whatever is still running is killed, each by its pid."""
        for pid in [*self.descendants, self.proc.pid]:
            if running(pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        if self.proc.poll() is None:
            self.proc.wait(5)


def worker_of(response: httpx.Response, server_port: int, workers: list[int]) -> int | None:
    """Which worker holds the server end of ``response``'s (still open) connection."""
    sock = response.extensions["network_stream"].get_extra_info("socket")
    if sock is None:
        return None
    local_port = sock.getsockname()[1]
    inode = None
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            here, there = int(parts[1].split(":")[1], 16), int(parts[2].split(":")[1], 16)
            if here == server_port and there == local_port:
                inode = parts[9]
    if inode is None:
        return None
    for pid in workers:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") == f"socket:[{inode}]":
                    return pid
            except OSError:
                continue
    return None


@dataclass
class Cluster:
    shared: UvicornProcess  # two workers sharing KEY
    other: UvicornProcess  # one process with another key


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    logs = tmp_path_factory.mktemp("uvicorn")
    started: list[UvicornProcess] = []
    try:
        started.append(UvicornProcess(secrets.token_hex(32), logs / "workers.log", workers=2))
        started.append(UvicornProcess(secrets.token_hex(32), logs / "other.log"))
        for server in started:
            server.wait_ready()
        yield Cluster(*started)
    finally:
        for server in started:
            server.stop()
            server.kill()


def posted_round(
    server: UvicornProcess, params: dict[str, Any], **changes: Any
) -> tuple[Any, int | None]:
    """One POST on a new connection: (its result, the worker that answered)."""
    request_id = next_id()
    body = request(request_id, "tools/call", {**params, **changes, "_meta": meta()})
    with httpx.Client(timeout=TIMEOUT) as client:
        response = client.post(
            server.endpoint.url, headers=modern_headers("tools/call", params), json=body
        )
        worker = worker_of(response, server.port, server.workers)
    return result_of(response, request_id), worker


def test_multi_round_trips_complete_across_workers_sharing_a_key(cluster: Cluster) -> None:
    server = cluster.shared
    assert len(server.workers) == 2, [cmdline(pid) for pid in server.descendants]
    params: dict[str, Any] = {"name": "test_input_required_result_multi_round", "arguments": {}}
    served_by: list[list[int | None]] = []
    for round_trip in range(30):
        first, w1 = posted_round(server, params)
        second, w2 = posted_round(
            server,
            params,
            inputResponses={"step1": {"action": "accept", "content": {"name": f"n{round_trip}"}}},
            requestState=first["requestState"],
        )
        final, w3 = posted_round(
            server,
            params,
            inputResponses={"step2": {"action": "accept", "content": {"color": "red"}}},
            requestState=second["requestState"],
        )
        assert text_of(final) == f"n{round_trip} likes red"
        served_by.append([w1, w2, w3])
    seen = {worker for trip in served_by for worker in trip}
    if None in seen:
        pytest.skip("cannot tell which worker answered (no /proc socket tables)")
    assert seen == set(server.workers), served_by
    crossed = sum(len(set(trip)) > 1 for trip in served_by)
    assert crossed > 0, "no round trip changed workers: the shared key was not exercised"


def test_a_server_with_another_key_rejects_the_request_state(cluster: Cluster) -> None:
    params: dict[str, Any] = {"name": "test_input_required_result_request_state", "arguments": {}}
    first, _ = posted_round(cluster.shared, params)
    answers = {"confirm": {"action": "accept", "content": {"ok": True}}}
    request_id = next_id()
    body = request(
        request_id,
        "tools/call",
        {
            **params,
            "inputResponses": answers,
            "requestState": first["requestState"],
            "_meta": meta(),
        },
    )
    response = cluster.other.endpoint.post(body, modern_headers("tools/call", params))
    error = rpc_error(response, 400, INVALID_PARAMS, request_id)
    assert "bad signature" in error["message"]
    assert error["data"]["path"] == "$.params.requestState"
    # the issuing key accepts it; the other server completes its own round trips
    final, _ = posted_round(
        cluster.shared, params, inputResponses=answers, requestState=first["requestState"]
    )
    assert text_of(final) == "state-ok: confirmed=True"
    own, _ = posted_round(cluster.other, params)
    final, _ = posted_round(
        cluster.other, params, inputResponses=answers, requestState=own["requestState"]
    )
    assert text_of(final) == "state-ok: confirmed=True"


def test_every_worker_checks_mcp_param_headers_from_its_first_call(cluster: Cluster) -> None:
    """No worker has answered tools/list here; whichever answers learns its tools'
    annotations itself."""
    for _ in range(12):
        request_id = next_id()
        body = request(request_id, "tools/call", {**XMCP, "_meta": meta()})
        with httpx.Client(timeout=TIMEOUT) as client:
            response = client.post(
                cluster.shared.endpoint.url, headers=modern_headers("tools/call", XMCP), json=body
            )
        rpc_error(response, 400, HEADER_MISMATCH, request_id)
    request_id = next_id()
    body = request(request_id, "tools/call", {**XMCP, "_meta": meta()})
    headers = {**modern_headers("tools/call", XMCP), **param_headers(XMCP)}
    response = cluster.shared.endpoint.post(body, headers)
    assert text_of(result_of(response, request_id)) == "headers matched: region='eu-west1'"


def test_default_body_limit_is_4_mib(cluster: Cluster) -> None:
    endpoint = cluster.other.endpoint
    padded = PING + b" " * (DEFAULT_BODY - len(PING))
    assert result_of(endpoint.send("POST", PLAIN, padded), "p1") == {}
    rpc_error(endpoint.send("POST", PLAIN, padded + b" "), 413, None)
    endpoint.assert_serving()


def test_sigterm_stops_the_supervisor_and_every_worker(cluster: Cluster) -> None:
    for server in (cluster.shared, cluster.other):
        pids = [server.proc.pid, *server.descendants]
        left = server.stop()
        assert left == [], {pid: cmdline(pid) for pid in left}
        assert server.proc.returncode is not None
        assert not any(map(running, pids))
