"""ASGI primitives the HTTP transport is written with: reading a bounded body in bounded
time, and writing JSON answers and server-sent events."""

from __future__ import annotations

import asyncio
from types import CoroutineType
from collections.abc import Awaitable, Callable, Coroutine, Generator, Iterator, MutableMapping
from typing import Any, Generic, TypeVar, cast

from ..aio.at_once import Resumed, carry_on
from ..core import jsonrpc
from ..core.errors import INVALID_REQUEST, McpgenError
from ..core.jsonrpc import RequestId

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
#: A request's headers as ASGI gives them (names lower-cased), the last of repeats kept.
Headers = dict[bytes, bytes]
T = TypeVar("T")


class BodyRefused(McpgenError):
    """The request body cannot be read: too large (413) or too slow (408). ``unread``:
    the client is still sending it (see :func:`linger`)."""

    def __init__(self, status: int, message: str, unread: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.unread = unread


def text(headers: Headers, name: bytes) -> str | None:
    """A request header's value (ASGI gives names lower-cased, values as latin-1 bytes)."""
    value = headers.get(name)
    return None if value is None else value.decode("latin-1")


def error_body(code: int, message: str, request_id: RequestId | None = None) -> bytes:
    return jsonrpc.encode_error(request_id, code, message)


async def read_body(receive: Receive, limit: int, timeout: float) -> bytes:
    """The request body (``b""`` if the client left first).

    Raises :class:`BodyRefused` when it exceeds ``limit`` bytes or has not fully arrived
    within ``timeout`` seconds. A body that came with its headers (nearly every one) is
    there on the first ``receive()``, which then completes without suspending: it is read
    with no timer and no task switch. Only a body that has to be waited for runs under the
    deadline.
    """
    body = body_now(receive, limit, timeout)
    if body.__class__ is CoroutineType:
        return await cast(Coroutine[Any, Any, bytes], body)
    return cast(bytes, body)


def body_now(receive: Receive, limit: int, timeout: float) -> bytes | Coroutine[Any, Any, bytes]:
    """:func:`read_body` with no coroutine of its own: the body when it came with the
    headers, else the coroutine that reads the rest of it, to await."""
    pending: Any = receive()  # Any: its kind is told apart by hand, as fast as it gets
    # A coroutine (what uvicorn and hypercorn give) is driven as it is; any other awaitable
    # by its iterator, when that is a generator. An iterator that only iterates (granian's
    # futures have no ``send``) is awaited as it is, under the deadline.
    waiting: Coroutine[Any, Any, Message] | Generator[Any, Any, Message]
    if pending.__class__ is CoroutineType:
        waiting = pending
    else:
        iterator: Any = pending.__await__()
        if not hasattr(iterator, "send"):
            first = Iterating[Message](iterator)
            return _within(timeout, _read_rest(receive, limit, first))
        waiting = iterator
    try:
        step = waiting.send(None)
    except StopIteration as done:
        message: Message = done.value
        if message["type"] == "http.request" and not message.get("more_body", False):
            body: bytes = message.get("body", b"")
            if len(body) > limit:
                raise BodyRefused(413, _too_large(limit)) from None
            return body
        return _within(timeout, _read_rest(receive, limit, message))
    return _within(timeout, _read_rest(receive, limit, Resumed(waiting, step)))


def _too_large(limit: int) -> str:
    return f"Payload Too Large: limit {limit} bytes"


async def _within(timeout: float, reading: Coroutine[Any, Any, bytes]) -> bytes:
    """``reading``, cancelled (408) when it takes longer than ``timeout``. The deadline is
    a timer on this task, not a task of its own."""
    task = asyncio.current_task()
    assert task is not None
    expired = False

    def expire() -> None:
        nonlocal expired
        expired = True
        task.cancel()

    deadline = asyncio.get_running_loop().call_later(timeout, expire)
    try:
        return await reading
    except asyncio.CancelledError:
        if not expired:
            raise
        uncancel = getattr(task, "uncancel", None)  # Python 3.11+
        if uncancel is not None:
            uncancel()
        raise BodyRefused(408, f"Request Timeout: body not received within {timeout:g} s")
    finally:
        deadline.cancel()


async def _read_rest(
    receive: Receive, limit: int, first: Message | Resumed[Message] | Iterating[Message]
) -> bytes:
    """The body, from its ``first`` message (or the ``receive()`` that will give it) on."""
    message = await first if isinstance(first, (Resumed, Iterating)) else first
    chunks: list[bytes] = []
    size = 0
    while message["type"] != "http.disconnect":
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        more = message.get("more_body", False)
        if size > limit:
            raise BodyRefused(413, _too_large(limit), unread=more)
        if not more:
            return b"".join((*chunks, chunk)) if chunks else chunk
        chunks.append(chunk)
        message = await receive()
    return b""


async def linger(receive: Receive, timeout: float) -> None:
    """Read and drop what is left of a request body refused as too large, for at most
    ``timeout`` seconds, before the refusal is sent: an ASGI server that closes a
    connection with unread data in it (hypercorn does, after an answer that came before
    the body) makes the kernel reset it, which can destroy the answer on its way."""

    async def drop() -> None:
        while True:
            message = await receive()
            if message["type"] != "http.request" or not message.get("more_body", False):
                return

    try:
        await asyncio.wait_for(drop(), timeout)
    except asyncio.TimeoutError:
        return


class Iterating(Generic[T]):
    """An awaitable of an awaitable's iterator that is no generator (it has no ``send``):
    awaiting it iterates it, which is all such an iterator allows."""

    __slots__ = ("iterator",)

    def __init__(self, iterator: Iterator[Any]) -> None:
        self.iterator = iterator

    def __await__(self) -> Generator[Any, Any, T]:
        return cast(T, (yield from self.iterator))


class OnSuspend(Generic[T]):
    """Awaits ``coro`` in the awaiting task, as ``await coro`` would, and calls ``hook`` the
    first time it suspends. A handler that answers without waiting costs nothing more; one
    that waits gets its disconnect watcher then (no timer or callback per request)."""

    __slots__ = ("coro", "hook")

    def __init__(self, coro: Coroutine[Any, Any, T], hook: Callable[[], None]) -> None:
        self.coro = coro
        self.hook = hook

    def __await__(self) -> Generator[Any, Any, T]:
        coro = self.coro
        try:
            step = coro.send(None)
        except StopIteration as done:
            return done.value
        self.hook()
        return (yield from carry_on(coro, step))


async def sse_comment(send: Send) -> None:
    """An SSE comment: bytes on a quiet stream (kept open by proxies), ignored by clients."""
    await send({"type": "http.response.body", "body": b": keepalive\n\n", "more_body": True})


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
    lines: list[bytes] = []
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
