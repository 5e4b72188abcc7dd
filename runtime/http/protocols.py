"""uvicorn's two HTTP/1.1 protocols, guarded so that no client holds a connection without end.

An ASGI app sees a request only once its headers are parsed, and sees nothing of a
connection between requests, so what a client can do to a connection itself is bounded
here, for both of uvicorn's implementations (httptools and h11):

* **headers**: a request's headers must be whole within ``Limits.header_timeout`` seconds of
  its first byte (every request of a keep-alive connection, not only the first), else
  ``408`` with a JSON-RPC error body and the connection is closed;
* **idle**: a connection with no request under way (after connecting, after each response)
  is closed after ``Limits.idle_timeout`` seconds (uvicorn's ``timeout_keep_alive``).
  Bytes that begin no request do not push that deadline back (uvicorn's own keep-alive
  timer is cancelled by any byte and was never armed again, so one late byte pinned a
  connection for good);
* **answered before the body**: a response sent before its request's body has all come (a
  refusal decided from the headers: 401, 403, 413 from ``Content-Length``, 415, or the 408
  of the body timeout) ends the connection, since what follows on it is the rest of a body
  nobody will read. The response says ``Connection: close`` (httptools; h11 would reset
  the connection on it, so there it says nothing); the server's side is shut at once (FIN after the response), what the
  client still sends is discarded for at most ``Limits.linger_timeout`` seconds, so that it
  can read the answer rather than a reset, then the connection is closed;
* **how many**: at most ``Limits.max_connections`` connections are open at once (fewer if
  the process's file-descriptor limit leaves no room for them); one more gets a ``503``
  with a JSON-RPC body and is closed at once, and a warning is logged at most every
  :data:`~runtime.http.guard.WARN_INTERVAL` seconds while it lasts
  (:class:`~runtime.http.guard.ConnectionGuard` counts what each guard cut:
  ``config.guard`` for a server run by ``runtime.http.serve``);
* a request uvicorn cannot parse (an unknown method, a malformed line) gets ``400`` with a
  JSON-RPC error body instead of plain text; pipelined requests are read only as fast as
  they are answered; a connection reset by the client is released at once.

Nothing else changes: once a request's headers are in, the app owns the request (the body
timeout, long SSE streams). The classes can be named on uvicorn's command line (``--http
mcpgen.runtime.http.protocols:GuardedHttpTools``); they then use the default limits.
"""

from __future__ import annotations

import asyncio
import importlib.util
from typing import TYPE_CHECKING, Any, Literal, cast

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

from .guard import HeaderDeadline, guard_of, raw_response

#: uvicorn's choice when asked for ``http="auto"``: httptools if it is installed.
HAVE_HTTPTOOLS = importlib.util.find_spec("httptools") is not None
if TYPE_CHECKING or HAVE_HTTPTOOLS:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle

HttpImpl = Literal["auto", "h11", "httptools"]
#: What a response that ends its connection says.
CLOSE = (b"connection", b"close")


class _Guards:
    """The state each guarded protocol adds to uvicorn's, and the steps both share."""

    __slots__ = ("guard", "limits", "header_deadline", "lingering", "linger_handle")

    def __init__(self, config: uvicorn.Config, loop: asyncio.AbstractEventLoop, state: Any) -> None:
        self.guard = guard_of(config)
        self.limits = self.guard.limits
        self.header_deadline = HeaderDeadline(loop, self.limits.header_timeout, state, self.guard)
        #: The connection's request was answered before its body came: it is ending.
        self.lingering = False
        self.linger_handle: asyncio.TimerHandle | None = None


def _admit(protocol: GuardedH11 | GuardedHttpTools) -> None:
    """A new connection: refused at the cap, otherwise idle until its first byte."""
    if not protocol.guards.guard.admit(len(protocol.connections)):
        protocol.transport.write(
            raw_response(
                503,
                "Service Unavailable",
                "Service Unavailable: too many connections (Limits.max_connections); retry later",
                protocol.server_state.default_headers,
            )
        )
        protocol.transport.close()
        return
    protocol.timeout_keep_alive_task = protocol.loop.call_later(
        protocol.timeout_keep_alive, protocol.timeout_keep_alive_handler
    )


def _idle_until(protocol: GuardedH11 | GuardedHttpTools) -> float | None:
    """When the connection's idle timer is due, if it is running."""
    task = protocol.timeout_keep_alive_task
    return None if task is None else task.when()


def _still_idle(protocol: GuardedH11 | GuardedHttpTools, due: float | None) -> None:
    """After bytes that began no request: the idle timer, cancelled by uvicorn on any
    byte, runs on to the deadline it had."""
    if due is not None and protocol.timeout_keep_alive_task is None:
        if not protocol.transport.is_closing():
            protocol.timeout_keep_alive_task = protocol.loop.call_at(
                due, protocol.timeout_keep_alive_handler
            )


def _end_unread(protocol: GuardedH11 | GuardedHttpTools) -> None:
    """The response went out before its request's body came: stop sending (FIN), discard
    what still comes for at most ``linger_timeout`` seconds, then close."""
    guards = protocol.guards
    guards.lingering = True
    guards.guard.ended_unread += 1
    guards.header_deadline.stop()
    protocol.server_state.total_requests += 1  # as uvicorn counts a finished response
    transport = protocol.transport
    protocol.flow.resume_reading()  # what still comes is read, to be discarded
    try:
        if not transport.can_write_eof():
            transport.close()
            return
        transport.write_eof()
    except (OSError, RuntimeError):
        transport.close()
        return
    guards.linger_handle = protocol.loop.call_later(guards.limits.linger_timeout, transport.close)


def _says_close_if_early(cycle: Any) -> None:
    """A request whose body is still coming after a chunk was read (httptools): should the
    app answer before the body has all come, the connection ends with the answer
    (``_end_unread``), so the answer says ``Connection: close`` and no client sends its
    next request on it. uvicorn, reading that header, would close the connection the
    moment the answer is out, resetting it under the unread body the client is still
    sending (which can cost the client the answer): it is kept from doing so, and the
    guard ends the connection with its linger instead, unless the body came meanwhile.
    Installed before the app first runs (its task starts on a later turn of the loop), and
    only for such requests: one whose body came with its headers pays nothing."""
    if cycle.response_started or getattr(cycle, "send_said_close", False):
        return
    send = cycle.send
    said = [False]

    async def sending(message: Any) -> None:
        kind = message["type"]
        if kind == "http.response.start" and cycle.more_body:
            message = {**message, "headers": [*message.get("headers", ()), CLOSE]}
            await send(message)
            said[0] = True
            cycle.keep_alive = True  # not closed at once: _end_unread lingers
            return
        if said[0] and kind == "http.response.body" and not message.get("more_body", False):
            cycle.keep_alive = cycle.more_body  # the body came meanwhile: close as said
        await send(message)

    cycle.send = sending
    cycle.send_said_close = True


def _released(protocol: GuardedH11 | GuardedHttpTools) -> None:
    guards = protocol.guards
    guards.header_deadline.stop()
    if guards.linger_handle is not None:
        guards.linger_handle.cancel()
        guards.linger_handle = None


def _upgraded(protocol: GuardedH11 | GuardedHttpTools) -> None:
    """The connection became a WebSocket's: this protocol's clocks stop, or the idle one
    would close the WebSocket's transport when it ran out."""
    _released(protocol)
    if protocol.timeout_keep_alive_task is not None:
        protocol.timeout_keep_alive_task.cancel()
        protocol.timeout_keep_alive_task = None


def _refuse_unparsable(protocol: GuardedH11 | GuardedHttpTools, message: str) -> None:
    """uvicorn's answer to bytes that are not an HTTP request it can parse (an unknown
    method, a malformed request line or header), with a JSON-RPC body instead of text."""
    headers = protocol.server_state.default_headers
    protocol.transport.write(raw_response(400, "Bad Request", f"Bad Request: {message}", headers))
    protocol.transport.close()


class GuardedH11(H11Protocol):
    """uvicorn's h11 protocol with the guards of this module.

    h11 reports nothing until a request's headers are whole, so after every step the
    connection's state tells: both sides idle (the previous exchange is over) with bytes
    buffered means a request has begun and its headers are incomplete; the client still
    sending a body the server has answered means the response came before the body.
    """

    def __init__(
        self,
        config: uvicorn.Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.guards = _Guards(config, self.loop, server_state)

    def connection_made(self, transport: asyncio.Transport) -> None:
        super().connection_made(transport)
        _admit(self)

    def connection_lost(self, exc: Exception | None) -> None:
        _released(self)
        super().connection_lost(exc)
        self._unset_keepalive_if_required()  # uvicorn keeps it for a reset connection

    def data_received(self, data: bytes) -> None:
        # Bytes on an idle connection are a request's start to h11 (or refused at once),
        # so they run against the header deadline: none leaves the connection idle.
        if self.guards.lingering:
            return
        super().data_received(data)
        if self.transport.get_protocol() is not self:  # upgraded: a WebSocket's now
            _upgraded(self)
            return
        conn = self.conn
        if conn.their_state is h11.IDLE and conn.our_state is h11.IDLE and conn.trailing_data[0]:
            self.guards.header_deadline.start(self.transport)
        else:
            self.guards.header_deadline.stop()

    def on_response_complete(self) -> None:
        if self.conn.their_state is h11.SEND_BODY and not self.transport.is_closing():
            _end_unread(self)
            return
        # The next request may already be buffered (pipelined): its clock starts now.
        super().on_response_complete()
        conn = self.conn
        if conn.their_state is h11.IDLE and conn.our_state is h11.IDLE and conn.trailing_data[0]:
            self.guards.header_deadline.start(self.transport)
        else:
            self.guards.header_deadline.stop()

    def send_400_response(self, msg: str) -> None:
        _refuse_unparsable(self, msg)


if TYPE_CHECKING or HAVE_HTTPTOOLS:

    class GuardedHttpTools(HttpToolsProtocol):
        """uvicorn's httptools protocol with the guards of this module.

        The parser says when a request begins (its first byte), when its headers are
        complete and when its body is; the header clock runs in between the first two,
        except while an earlier request's response is still under way (pipelining), when
        it starts once that response is done.
        """

        def __init__(
            self,
            config: uvicorn.Config,
            server_state: ServerState,
            app_state: dict[str, Any],
            _loop: asyncio.AbstractEventLoop | None = None,
        ) -> None:
            super().__init__(config, server_state, app_state, _loop)
            self.guards = _Guards(config, self.loop, server_state)
            self.reading_headers = False

        def connection_made(self, transport: asyncio.Transport) -> None:
            super().connection_made(transport)
            _admit(self)

        def connection_lost(self, exc: Exception | None) -> None:
            _released(self)
            super().connection_lost(exc)
            self._unset_keepalive_if_required()  # uvicorn keeps it for a reset connection

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self.reading_headers = True

        def on_headers_complete(self) -> None:
            self.reading_headers = False
            self.guards.header_deadline.stop()
            super().on_headers_complete()

        def data_received(self, data: bytes) -> None:
            if self.guards.lingering:
                return
            due = _idle_until(self)
            super().data_received(data)
            if self.transport.get_protocol() is not self:  # upgraded: a WebSocket's now
                _upgraded(self)
                return
            cycle = self._cycle()
            responding = cycle is not None and not cycle.response_complete
            if cycle is not None and cycle.more_body and not self.reading_headers:
                _says_close_if_early(cycle)
            if self.reading_headers:
                if not responding:
                    self.guards.header_deadline.start(self.transport)
            elif not responding and not self.pipeline:
                _still_idle(self, due)

        def on_response_complete(self) -> None:
            cycle = self._cycle()
            if (
                not self.pipeline
                and not self.reading_headers
                and cycle is not None
                and cycle.more_body
                and not self.transport.is_closing()
            ):
                _end_unread(self)
                return
            super().on_response_complete()
            if self.pipeline and not self.transport.is_closing():
                # uvicorn resumes reading after every response, so a client pipelining
                # requests faster than they are answered grows the queue without bound;
                # reading resumes once the queued requests have been answered.
                self.flow.pause_reading()
            # The next request may already be buffered (pipelined): its clock starts now.
            cycle = self._cycle()
            if self.reading_headers and (cycle is None or cycle.response_complete):
                self.guards.header_deadline.start(self.transport)

        def send_400_response(self, msg: str) -> None:
            _refuse_unparsable(self, msg)

        def _cycle(self) -> RequestResponseCycle | None:
            """The latest request's cycle (uvicorn types it as always there; it is None
            until the first request)."""
            return cast("RequestResponseCycle | None", self.cycle)


def protocol_class(http: HttpImpl = "auto") -> type[asyncio.Protocol]:
    """The protocol for ``http``, chosen as uvicorn chooses: ``auto`` is httptools if
    installed, else h11."""
    if http == "auto":
        http = "httptools" if HAVE_HTTPTOOLS else "h11"
    if http == "h11":
        return GuardedH11
    if http == "httptools":
        if not HAVE_HTTPTOOLS:
            raise ValueError("http='httptools' needs httptools: pip install 'mcpgen[http]'")
        return GuardedHttpTools
    raise ValueError(f"http must be 'auto', 'h11' or 'httptools', not {http!r}")


__all__ = ["GuardedH11", "GuardedHttpTools", "HttpImpl", "protocol_class"]
