"""What the HTTP connections of one server may hold: how many at once (the file-descriptor
limit considered), each request's header deadline, and the raw answers written where no
request is there for the server's HTTP machinery to answer. ``runtime.http.protocols``
applies them to uvicorn's protocols; :class:`ConnectionGuard` counts what they cut, for
operators."""

from __future__ import annotations

import asyncio
import json
import logging
import time

import uvicorn
from uvicorn.server import ServerState

from ..core import limits as _limits
from ..core.errors import INVALID_REQUEST
from ..core.limits import Limits

log = logging.getLogger("mcpgen.runtime.http.endpoint")

#: Seconds between two warnings that connections are being refused at the cap.
WARN_INTERVAL = 10.0
#: File descriptors kept free of connections for everything else a server opens (its
#: listening socket, the event loop, logs, a task store, an authorization server).
DESCRIPTOR_RESERVE = 64


def descriptor_room(asked: int) -> int:
    """``asked``, or fewer when the process may open fewer files than that plus
    :data:`DESCRIPTOR_RESERVE` (a connection is a file descriptor)."""
    try:
        import resource
    except ImportError:  # not on POSIX
        return asked
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft - DESCRIPTOR_RESERVE >= asked:
        return asked
    room = max(1, soft - DESCRIPTOR_RESERVE)
    log.info(
        "mcpgen: at most %d connections, not Limits.max_connections=%d: the process may open "
        "%d files (ulimit -n) and keeps %d for the rest",
        room,
        asked,
        soft,
        DESCRIPTOR_RESERVE,
    )
    return room


class ConnectionGuard:
    """What the connections of one server may hold, and counts of what was cut, for
    operators: ``refused`` (over ``max_connections``), ``ended_unread`` (answered before
    their body, then ended), ``header_timeouts`` (408 for slow headers)."""

    def __init__(self, limits: Limits = _limits.DEFAULT) -> None:
        self.limits = limits
        self.max_connections = descriptor_room(limits.max_connections)
        self.refused = 0
        self.ended_unread = 0
        self.header_timeouts = 0
        self._warned_at = -WARN_INTERVAL
        self._refused_at_warning = 0

    def admit(self, open_now: int) -> bool:
        """Whether a connection that makes ``open_now`` open may stay."""
        if open_now <= self.max_connections:
            return True
        self.refused += 1
        now = time.monotonic()
        if now - self._warned_at >= WARN_INTERVAL:
            log.warning(
                "mcpgen: %d connections open, refusing more (Limits.max_connections=%d); "
                "%d refused since the last warning, %d in all",
                open_now - 1,
                self.max_connections,
                self.refused - self._refused_at_warning,
                self.refused,
            )
            self._warned_at = now
            self._refused_at_warning = self.refused
        return False


#: The guard of protocols run with a plain ``uvicorn.Config`` (named on uvicorn's command
#: line): the default limits.
_default_guard: ConnectionGuard | None = None


def guard_of(config: uvicorn.Config) -> ConnectionGuard:
    """The guard ``config`` carries (``runtime.http.serve.Config``), else the default one."""
    guard = getattr(config, "guard", None)
    if isinstance(guard, ConnectionGuard):
        return guard
    global _default_guard
    if _default_guard is None:
        _default_guard = ConnectionGuard()
    return _default_guard


def raw_response(
    status: int, reason: str, message: str, default_headers: list[tuple[bytes, bytes]]
) -> bytes:
    """A whole response whose body is a JSON-RPC error (id null) saying ``message``, then
    the connection's end. Written raw, where there is no request for the server's HTTP
    machinery to answer; its body is like every other rejection of the MCP endpoint."""
    error = {"code": INVALID_REQUEST, "message": message}
    body = json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": error}, separators=(",", ":")
    ).encode()
    lines = [b"HTTP/1.1 %d %s" % (status, reason.encode())]
    lines += [name + b": " + value for name, value in default_headers]
    lines += [
        b"content-type: application/json",
        b"content-length: " + str(len(body)).encode(),
        b"connection: close",
    ]
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


def timeout_response(seconds: float, default_headers: list[tuple[bytes, bytes]]) -> bytes:
    """The 408 that ends a connection whose headers came too slowly."""
    message = f"Request Timeout: headers not received within {seconds:g} s"
    return raw_response(408, "Request Timeout", message, default_headers)


class HeaderDeadline:
    """One connection's clock for the headers of the request it has begun.

    ``start`` is a no-op while the clock runs, so bytes trickling in do not push the
    deadline back. A protocol starts it only when a chunk of data leaves a request's
    headers incomplete, so a client that sends its headers in one piece (nearly every
    client) costs no timer at all.
    """

    __slots__ = ("_loop", "_timeout", "_server_state", "_guard", "_transport", "_handle")

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        timeout: float,
        server_state: ServerState,
        guard: ConnectionGuard,
    ) -> None:
        self._loop = loop
        self._timeout = timeout
        self._server_state = server_state  # its default headers (date) change every second
        self._guard = guard
        self._transport: asyncio.Transport | None = None
        self._handle: asyncio.TimerHandle | None = None

    def start(self, transport: asyncio.Transport) -> None:
        if self._handle is None and not transport.is_closing():
            self._transport = transport
            self._handle = self._loop.call_later(self._timeout, self._expire)

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _expire(self) -> None:
        # Started only while no response is under way (see the protocols), so nothing has
        # been sent for this request and a whole 408 can go out before the close.
        self._handle = None
        transport = self._transport
        if transport is not None and not transport.is_closing():
            self._guard.header_timeouts += 1
            transport.write(timeout_response(self._timeout, self._server_state.default_headers))
            transport.close()


__all__ = [
    "ConnectionGuard",
    "HeaderDeadline",
    "descriptor_room",
    "guard_of",
    "raw_response",
    "timeout_response",
]
