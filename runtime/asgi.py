"""ASGI primitives the HTTP transport is written with: reading a bounded body in bounded
time, and writing JSON answers and server-sent events."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from . import jsonrpc
from .errors import INVALID_REQUEST
from .jsonrpc import RequestId

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
#: A request's headers as ASGI gives them (names lower-cased), the last of repeats kept.
Headers = dict[bytes, bytes]


class BodyRefused(Exception):
    """The request body cannot be read: too large (413) or too slow (408)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def text(headers: Headers, name: bytes) -> str | None:
    """A request header's value (ASGI gives names lower-cased, values as latin-1 bytes)."""
    value = headers.get(name)
    return None if value is None else value.decode("latin-1")


def error_body(code: int, message: str, request_id: RequestId | None = None) -> bytes:
    return jsonrpc.encode_error(request_id, code, message)


async def read_body(receive: Receive, limit: int, timeout: float) -> bytes:
    """The request body (``b""`` if the client left first).

    Raises :class:`BodyRefused` when it exceeds ``limit`` bytes or has not fully arrived
    within ``timeout`` seconds. The deadline is a timer on this task, not a task of its
    own: most bodies are complete on the first ``receive()``, and then it costs nothing
    but arming and disarming the timer.
    """
    task = asyncio.current_task()
    assert task is not None
    expired = False

    def expire() -> None:
        nonlocal expired
        expired = True
        task.cancel()

    deadline = asyncio.get_running_loop().call_later(timeout, expire)
    try:
        return await _read_within(receive, limit)
    except asyncio.CancelledError:
        if not expired:
            raise
        uncancel = getattr(task, "uncancel", None)  # Python 3.11+
        if uncancel is not None:
            uncancel()
        raise BodyRefused(408, f"Request Timeout: body not received within {timeout:g} s")
    finally:
        deadline.cancel()


async def _read_within(receive: Receive, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    message = await receive()
    while message["type"] != "http.disconnect":
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyRefused(413, f"Payload Too Large: limit {limit} bytes")
        if not message.get("more_body", False):
            return b"".join((*chunks, chunk)) if chunks else chunk
        chunks.append(chunk)
        message = await receive()
    return b""


async def wait_disconnect(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


_JSON_TYPE = (b"content-type", b"application/json")


async def respond(
    send: Send,
    status: int,
    body: bytes,
    *,
    extra: dict[str, str] | None = None,
    allow: bool = False,
) -> None:
    """A whole response: ``body`` (JSON when not empty) with ``status``."""
    headers = [(b"content-length", b"%d" % len(body))]
    if body:
        headers.append(_JSON_TYPE)
    if allow:
        headers.append((b"allow", b"GET, POST, DELETE"))
    if extra:
        headers += [(name.encode(), value.encode()) for name, value in extra.items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def refuse(
    send: Send, status: int, message: str, request_id: RequestId | None = None
) -> None:
    """A 4xx (or 503) whose body is a JSON-RPC error saying why."""
    await respond(send, status, error_body(INVALID_REQUEST, message, request_id))


async def start_sse(send: Send, extra: dict[str, str] | None) -> None:
    headers = [
        (b"content-type", b"text/event-stream"),
        (b"cache-control", b"no-cache"),
        (b"x-accel-buffering", b"no"),
    ]
    for name, value in (extra or {}).items():
        headers.append((name.encode(), value.encode()))
    await send({"type": "http.response.start", "status": 200, "headers": headers})


async def sse_event(
    send: Send, data: bytes, event_id: str | None, retry: int | None = None
) -> None:
    lines = []
    if event_id is not None:
        lines.append(b"id: " + event_id.encode())
    if retry is not None:
        lines.append(b"retry: " + str(retry).encode())
    if data:
        lines.append(b"event: message")
    lines.append(b"data: " + data)
    await send(
        {"type": "http.response.body", "body": b"\n".join(lines) + b"\n\n", "more_body": True}
    )


async def end_body(send: Send) -> None:
    await send({"type": "http.response.body", "body": b"", "more_body": False})
