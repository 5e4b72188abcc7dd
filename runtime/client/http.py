"""Streamable HTTP client transport (httpx): each outgoing frame is a POST; the answers,
JSON or SSE, are queued for the session's read loop.

It sets the headers each era asks for (``MCP-Protocol-Version``, ``Mcp-Session-Id``; and
for modern requests ``Mcp-Method``, ``Mcp-Name`` and ``Mcp-Param-*``), resumes an SSE
stream that ends before its answer with ``GET`` + ``Last-Event-ID`` after the announced
``retry`` delay, and turns HTTP-level refusals into JSON-RPC errors for the request.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import httpx
import msgspec
from msgspec import UNSET, UnsetType

from ..core import jsonrpc
from ..core.errors import INTERNAL_ERROR, METHOD_NOT_FOUND
from ..core.events import CANCELLED
from ..core.jsonrpc import RequestId
from ..core.limits import CLIENT, Limits
from ..core.modern import NAME_FIELDS, PROTOCOL_VERSION, encode_header_value
from ..core.json_values import as_object
from ..http.bounded import TooLarge, read_bounded

log = logging.getLogger("mcpgen.runtime.client.http")

#: Builds ``Mcp-Param-*`` headers for a tool call: (tool name, arguments) → headers.
ParamHeaders = Callable[[str, Mapping[str, Any]], dict[str, str]]


class _Meta(msgspec.Struct):
    protocol_version: str | UnsetType = msgspec.field(default=UNSET, name=PROTOCOL_VERSION)


class _Params(msgspec.Struct):
    meta: _Meta | UnsetType = msgspec.field(default=UNSET, name="_meta")
    name: Any = UNSET
    uri: Any = UNSET
    arguments: Any = UNSET
    taskId: Any = UNSET  # tasks/get, tasks/update and tasks/cancel are routed by it
    requestId: Any = UNSET  # what notifications/cancelled cancels


class _Outgoing(msgspec.Struct):
    id: Any = UNSET
    method: Any = UNSET
    params: _Params | UnsetType = UNSET


_peek = msgspec.json.Decoder(_Outgoing)


class SseParser:
    """Incremental ``text/event-stream`` parser (only what MCP uses: event, id, data,
    retry).

    An event (or a line) longer than ``limit`` characters raises :class:`TooLarge`: a
    server cannot make the client hold an endless event."""

    def __init__(self, limit: int = CLIENT.max_message_bytes) -> None:
        self.data: list[str] = []
        self.size = 0
        self.limit = limit
        self.kind = "message"
        self.last_id: str | None = None
        self.retry_ms: int | None = None
        self.buffer = ""

    def feed(self, chunk: str) -> list[str]:
        """Complete ``message`` events' data from ``chunk`` (the JSON-RPC messages; empty
        data, e.g. priming events, skipped)."""
        return [data for kind, data in self.events(chunk) if kind == "message"]

    def events(self, chunk: str) -> list[tuple[str, str]]:
        """Complete events from ``chunk``: (type, data), those with no data skipped."""
        self.buffer += chunk
        if len(self.buffer) > self.limit:
            raise TooLarge(f"an SSE line over {self.limit} characters")
        events: list[tuple[str, str]] = []
        while "\n" in self.buffer:
            line, self.buffer = self.buffer.split("\n", 1)
            line = line.rstrip("\r")
            if not line:
                if self.data:
                    events.append((self.kind, "\n".join(self.data)))
                self.data, self.size, self.kind = [], 0, "message"
                continue
            if line.startswith(":"):
                continue
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "data":
                self.size += len(value)
                if self.size > self.limit:
                    raise TooLarge(f"an SSE event over {self.limit} characters")
                self.data.append(value)
            elif field == "event":
                self.kind = value
            elif field == "id":
                self.last_id = value
            elif field == "retry" and value.isdigit():
                self.retry_ms = int(value)
        return [(kind, data) for kind, data in events if data.strip()]


class HttpClientTransport:
    """Client side of Streamable HTTP for a ``ClientSession``."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        client: httpx.AsyncClient | None = None,
        timeout: float = 60.0,
        max_resumes: int = 5,
        limits: Limits = CLIENT,
        auth: httpx.Auth | None = None,
    ) -> None:
        self.url = url
        if auth is not None and client is not None:
            raise ValueError("give the httpx client its auth (httpx.AsyncClient(auth=...))")
        self.limits = limits
        self.extra_headers = dict(headers or {})
        # ``auth`` (``runtime.client.auth.oauth.OAuth``) sends the bearer token with every request
        # and answers the server's 401/403 challenges.
        self.http = client or httpx.AsyncClient(
            timeout=httpx.Timeout(timeout, connect=10.0), auth=auth
        )
        self._own_client = client is None
        self.max_resumes = max_resumes
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.session_id: str | None = None
        #: Legacy sessions the server forgot (a 404 to a request that carried the id):
        #: the ``ClientSession`` starts a new one with ``initialize``.
        self.sessions_lost = 0
        self.lost_session_id: str | None = None
        #: The status of the first answer to a POST: a 4xx there may mean a server of the
        #: older HTTP+SSE transport (``http_client`` then falls back to it).
        self.first_status: int | None = None
        #: Negotiated legacy version (sent as ``MCP-Protocol-Version`` after initialize).
        self.protocol_version: str | None = None
        self.param_headers: ParamHeaders | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        #: The POSTs of 2026-07-28 requests under way, by request id: such a request is
        #: cancelled by closing its stream, never by a notification.
        self._stateless: dict[RequestId, asyncio.Task[None]] = {}
        self._closed = False

    async def receive(self) -> bytes | None:
        return await self.queue.get()

    async def send(
        self, data: bytes, related: object = None, final: bool = False, status: object = None
    ) -> None:
        if self._closed:
            raise ConnectionError("transport closed")
        log.debug("→ %s", data[:500])
        try:
            out = _peek.decode(data)
        except msgspec.DecodeError:
            out = _Outgoing()
        params = out.params if isinstance(out.params, _Params) else _Params()
        if out.method == CANCELLED and out.id is UNSET:
            stateless = self._stateless.pop(params.requestId, None)
            if stateless is not None:  # 2026-07-28 over HTTP: closing the stream cancels
                stateless.cancel()
                return
        task = asyncio.create_task(self._post(data, out))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        if out.method is UNSET or out.id is UNSET:
            await asyncio.shield(task)  # notifications and answers go out in order
        elif isinstance(params.meta, _Meta) and isinstance(params.meta.protocol_version, str):
            request_id: RequestId = out.id
            self._stateless[request_id] = task
            task.add_done_callback(lambda _: self._forget(request_id, task))

    def _forget(self, request_id: RequestId, task: asyncio.Task[None]) -> None:
        if self._stateless.get(request_id) is task:
            del self._stateless[request_id]

    def _headers(self, out: _Outgoing) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **self.extra_headers,
        }
        params = out.params if isinstance(out.params, _Params) else _Params()
        meta = params.meta if isinstance(params.meta, _Meta) else _Meta()
        modern = isinstance(meta.protocol_version, str)
        version = meta.protocol_version if modern else self.protocol_version
        if isinstance(version, str):
            headers["MCP-Protocol-Version"] = version
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        if modern and isinstance(out.method, str):
            headers["Mcp-Method"] = out.method
            field = NAME_FIELDS.get(out.method)
            value = getattr(params, field, UNSET) if field else UNSET
            if isinstance(value, str):
                headers["Mcp-Name"] = encode_header_value(value)
            if out.method == "tools/call" and self.param_headers and isinstance(params.name, str):
                arguments = as_object(params.arguments) or {}
                headers.update(self.param_headers(params.name, arguments))
        return headers

    async def _post(self, data: bytes, out: _Outgoing) -> None:
        request_id = out.id if isinstance(out.id, (str, int)) else None
        headers = self._headers(out)
        try:
            async with self.http.stream(
                "POST", self.url, content=data, headers=headers
            ) as response:
                if self.first_status is None:
                    self.first_status = response.status_code
                if response.status_code == 404:
                    self._lost(headers.get("Mcp-Session-Id"))
                await self._answer(response, request_id)
        except (httpx.HTTPError, OSError, TooLarge, UnicodeDecodeError) as exc:
            if request_id is not None:
                self._fail(request_id, INTERNAL_ERROR, _failure(exc))
            else:
                log.debug("POST failed: %s", exc)
        except Exception as exc:  # a defect: the request fails now, not at its timeout
            log.exception("sending a request over HTTP failed")
            if request_id is not None:
                self._fail(request_id, INTERNAL_ERROR, f"sending the request failed: {exc}")

    async def _answer(self, response: httpx.Response, request_id: RequestId | None) -> None:
        session = response.headers.get("mcp-session-id")
        if session is not None and self.session_id is None:
            self.session_id = session
        kind = response.headers.get("content-type", "").split(";", 1)[0].strip()
        if response.status_code == 202:
            return
        if kind == "text/event-stream" and response.status_code == 200:
            await self._stream(response, request_id)
            return
        body = await read_bounded(response, self.limits.max_message_bytes)
        if response.is_success and body:
            self.queue.put_nowait(body)
            if request_id is not None and not _answers_among(body, request_id):
                # Whatever the session makes of it, the request it was for is answered
                # now, with an error saying why, instead of waiting out its timeout.
                self._fail(
                    request_id,
                    INTERNAL_ERROR,
                    "the server's answer is not a JSON-RPC response to the request",
                )
            return
        if request_id is None:
            log.debug("HTTP %s for a notification or answer", response.status_code)
            return
        messages, _ = jsonrpc.parse(body) if body else ([], False)
        if messages and isinstance(messages[0], jsonrpc.ErrorResponse):
            error = messages[0]
            self.queue.put_nowait(
                jsonrpc.encode_error(request_id, error.code, error.message, error.data)
            )
            return
        code = METHOD_NOT_FOUND if response.status_code == 404 else INTERNAL_ERROR
        self._fail(request_id, code, f"HTTP {response.status_code} {response.reason_phrase}")

    async def _stream(self, response: httpx.Response, request_id: RequestId | None) -> None:
        """Read an SSE answer; if it ends before the answer, resume it by GET."""
        parser = SseParser(self.limits.max_message_bytes)
        answered = await self._read_events(response.aiter_text(), parser, request_id)
        resumes = 0
        while not answered and request_id is not None and resumes < self.max_resumes:
            if parser.last_id is None or self._closed:
                break
            resumes += 1
            await asyncio.sleep((parser.retry_ms if parser.retry_ms is not None else 1000) / 1000)
            headers = {
                "Accept": "text/event-stream",
                "Last-Event-ID": parser.last_id,
                **self.extra_headers,
            }
            if self.session_id is not None:
                headers["Mcp-Session-Id"] = self.session_id
            if self.protocol_version is not None:
                headers["MCP-Protocol-Version"] = self.protocol_version
            try:
                async with self.http.stream("GET", self.url, headers=headers) as resumed:
                    if resumed.status_code != 200:
                        break
                    answered = await self._read_events(resumed.aiter_text(), parser, request_id)
            except (httpx.HTTPError, OSError, TooLarge, UnicodeDecodeError) as exc:
                log.debug("resuming the stream failed: %s", exc)
        if not answered and request_id is not None:
            self._fail(request_id, INTERNAL_ERROR, "the server closed the stream without an answer")

    async def _read_events(
        self, chunks: AsyncIterator[str], parser: SseParser, request_id: RequestId | None
    ) -> bool:
        """Queue every event; True once the answer to ``request_id`` went by (then stop)."""
        async for chunk in chunks:
            for event in parser.feed(chunk):
                log.debug("← %s", event[:500])
                frame = event.encode()
                self.queue.put_nowait(frame)
                if request_id is not None and _answers(frame, request_id):
                    return True
        return False

    def listen(self) -> None:
        """Open the session's GET stream, on which a legacy server sends what is not tied to
        a request (and may send its requests to the client); servers may refuse it."""
        task = asyncio.create_task(self._listen())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _listen(self) -> None:
        parser = SseParser(self.limits.max_message_bytes)
        for _ in range(self.max_resumes + 1):
            headers = {"Accept": "text/event-stream", **self.extra_headers}
            if self.session_id is not None:
                headers["Mcp-Session-Id"] = self.session_id
            if self.protocol_version is not None:
                headers["MCP-Protocol-Version"] = self.protocol_version
            if parser.last_id is not None:
                headers["Last-Event-ID"] = parser.last_id
            try:
                async with self.http.stream(
                    "GET", self.url, headers=headers, timeout=None
                ) as response:
                    if response.status_code != 200:
                        log.debug("no GET stream (HTTP %s)", response.status_code)
                        return
                    await self._read_events(response.aiter_text(), parser, None)
            except (httpx.HTTPError, OSError, TooLarge, UnicodeDecodeError) as exc:
                log.debug("GET stream ended: %s", exc)
            if self._closed:
                return
            await asyncio.sleep((parser.retry_ms if parser.retry_ms is not None else 1000) / 1000)

    def _lost(self, session_id: str | None) -> None:
        """A 404 to a request carrying ``session_id``: the server no longer knows it (the
        spec's cue for a new ``initialize``), unless another request already said so."""
        if session_id is not None and session_id == self.session_id:
            log.info("the server lost session %s; a new one will be initialized", session_id)
            self.lost_session_id, self.session_id, self.protocol_version = session_id, None, None
            self.sessions_lost += 1

    def _fail(self, request_id: RequestId, code: int, message: str) -> None:
        self.queue.put_nowait(jsonrpc.encode_error(request_id, code, message))

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for task in list(self._tasks):
            task.cancel()
        if self.session_id is not None:
            with contextlib.suppress(httpx.HTTPError, OSError):
                headers = {"Mcp-Session-Id": self.session_id, **self.extra_headers}
                if self.protocol_version is not None:
                    headers["MCP-Protocol-Version"] = self.protocol_version
                await self.http.delete(self.url, headers=headers, timeout=5.0)
        if self._own_client:
            await self.http.aclose()
        self.queue.put_nowait(None)


class _Answer(msgspec.Struct):
    id: Any = UNSET
    method: Any = UNSET


def _failure(exc: Exception) -> str:
    """Why an HTTP request failed, for the error its caller gets (httpx's timeouts say
    nothing themselves)."""
    if isinstance(exc, httpx.TimeoutException):
        return (
            f"HTTP request failed: {type(exc).__name__}: the server sent nothing within the"
            " HTTP client's timeout (HttpClientTransport(timeout=...))"
        )
    return f"HTTP request failed: {exc or type(exc).__name__}"


def _answers(frame: bytes, request_id: RequestId) -> bool:
    try:
        message = msgspec.json.decode(frame, type=_Answer)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return False
    return message.method is UNSET and message.id == request_id


def _answers_among(body: bytes, request_id: RequestId) -> bool:
    """Whether ``body`` (one message or a batch) holds the answer to ``request_id``."""
    if body.lstrip()[:1] != b"[":
        return _answers(body, request_id)
    try:
        messages = msgspec.json.decode(body, type=list[_Answer])
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return False
    return any(m.method is UNSET and m.id == request_id for m in messages)
