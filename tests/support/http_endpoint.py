"""A client of the Streamable HTTP endpoint that writes every request by hand (plain
``httpx``), so that anything can be sent: ``Endpoint`` for modern requests and raw ones,
``Legacy`` for a session opened by ``open_session``; JSON-RPC, ``_meta`` and header
builders, and an SSE reader. Every request has a timeout and SSE streams are read line by
line under the same read timeout."""

from __future__ import annotations

import base64
import itertools
import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx

from support.messages import request

MODERN = "2026-07-28"


LATEST_LEGACY = "2025-11-25"


TIMEOUT = httpx.Timeout(5.0, connect=2.0)


BOTH = "application/json, text/event-stream"


SIMPLE_TEXT = "This is a simple text response for testing."


_ids = itertools.count(1)


def next_id() -> int:
    return next(_ids)


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


def data_events(events: Iterator[Event], count: int | None = None) -> list[Event]:
    """Events with data, as they come (priming events and comments skipped); ``count``:
    stop after that many."""
    got: list[Event] = []
    for event in events:
        if event.data:
            got.append(event)
            if count is not None and len(got) == count:
                break
    return got


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


PLAIN = {"content-type": "application/json", "accept": BOTH}


PING = json.dumps(request("p1", "ping")).encode()


#: A call of the fixture tool whose arguments are mirrored into Mcp-Param-* headers.
XMCP: dict[str, Any] = {"name": "test_x_mcp_header", "arguments": {"region": "eu-west1"}}
