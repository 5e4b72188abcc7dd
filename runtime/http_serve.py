"""Run an ASGI app with uvicorn, hardened against clients that send their headers slowly.

An ASGI app only sees a request once the server has parsed its headers, so a client that
sends a request line and then one header byte every few seconds (slowloris) holds a
connection, and the task reading it, for as long as it likes; enough of them exhaust the
server. uvicorn bounds the time a connection may sit idle *between* requests
(``timeout_keep_alive``) but not the time a request may take to deliver its headers. The
protocol classes here add that bound for both of uvicorn's HTTP/1.1 implementations:

* a request's headers must be complete within ``Limits.header_timeout`` seconds of its
  first byte (for every request of a keep-alive connection, not only the first), else the
  connection gets ``408`` with a JSON-RPC error body and is closed;
* a connection that sends nothing at all after connecting is idle, and closed by uvicorn's
  own keep-alive timer (uvicorn arms that timer only after a response, so a silent new
  connection would otherwise be held forever);
* a request the server cannot parse at all (an unknown method, a malformed line) gets
  uvicorn's ``400`` with a JSON-RPC error body instead of plain text;
* pipelined requests are read only as fast as they are answered (uvicorn's httptools
  protocol reads on after every response, queueing what a client sends without bound),
  and a connection reset by the client is released at once, not after the keep-alive;
* nothing else changes: once a request's headers are in, the app owns the request (the
  body timeout and long SSE streams are the app's business), and an idle keep-alive
  connection is left to ``timeout_keep_alive``.

``serve`` is what ``runtime.http.serve`` and scaffolded servers run; ``config`` builds the
``uvicorn.Config`` for embedding (``uvicorn.Server(config(app)).run()``). The classes can
also be named on uvicorn's command line (``--http mcpgen.runtime.http_serve:
HttpToolsHeaderTimeout``); they then use the default limits. This module is the only part
of the runtime that imports uvicorn (the ``http`` extra).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import socket
import sys
from typing import TYPE_CHECKING, Any, Literal

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

from . import limits as _limits
from .errors import INVALID_REQUEST
from .limits import Limits

if TYPE_CHECKING:
    from .server import Server

#: uvicorn's choice when asked for ``http="auto"``: httptools if it is installed.
HAVE_HTTPTOOLS = importlib.util.find_spec("httptools") is not None
if TYPE_CHECKING or HAVE_HTTPTOOLS:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

HttpImpl = Literal["auto", "h11", "httptools"]


class Config(uvicorn.Config):
    """``uvicorn.Config`` plus the ``limits`` this module's protocol classes enforce.

    The limits ride on the config because uvicorn builds one protocol object per
    connection from the config alone.
    """

    def __init__(self, app: Any, *, limits: Limits = _limits.DEFAULT, **options: Any) -> None:
        super().__init__(app, **options)
        self.limits = limits


def _limits_of(config: uvicorn.Config) -> Limits:
    return config.limits if isinstance(config, Config) else _limits.DEFAULT


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


def _refuse_unparsable(protocol: H11Protocol | HttpToolsProtocol, message: str) -> None:
    """uvicorn's answer to bytes that are not an HTTP request it can parse (an unknown
    method, a malformed request line or header), with a JSON-RPC body instead of text."""
    headers = protocol.server_state.default_headers
    protocol.transport.write(raw_response(400, "Bad Request", f"Bad Request: {message}", headers))
    protocol.transport.close()


class HeaderDeadline:
    """One connection's clock for the headers of the request it has begun.

    ``start`` is a no-op while the clock runs, so bytes trickling in do not push the
    deadline back. A protocol starts it only when a chunk of data leaves a request's
    headers incomplete, so a client that sends its headers in one piece (nearly every
    client) costs no timer at all.
    """

    __slots__ = ("_loop", "_timeout", "_server_state", "_transport", "_handle")

    def __init__(
        self, loop: asyncio.AbstractEventLoop, timeout: float, server_state: ServerState
    ) -> None:
        self._loop = loop
        self._timeout = timeout
        self._server_state = server_state  # its default headers (date) change every second
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
            transport.write(timeout_response(self._timeout, self._server_state.default_headers))
            transport.close()


def _close_if_silent(protocol: H11Protocol | HttpToolsProtocol) -> None:
    """Treat a new connection as idle until its first byte: uvicorn's keep-alive timer."""
    protocol.timeout_keep_alive_task = protocol.loop.call_later(
        protocol.timeout_keep_alive, protocol.timeout_keep_alive_handler
    )


class H11HeaderTimeout(H11Protocol):
    """uvicorn's h11 protocol with a deadline on each request's headers.

    h11 reports nothing until a request's headers are whole, so after every step the
    connection's state tells: both sides idle (the previous exchange is over) with bytes
    buffered means a request has begun and its headers are incomplete.
    """

    def __init__(
        self,
        config: uvicorn.Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        timeout = _limits_of(config).header_timeout
        self.header_deadline = HeaderDeadline(self.loop, timeout, server_state)

    def connection_made(self, transport: asyncio.Transport) -> None:
        super().connection_made(transport)
        _close_if_silent(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self.header_deadline.stop()
        super().connection_lost(exc)
        self._unset_keepalive_if_required()  # uvicorn keeps it for a reset connection

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch_headers()

    def on_response_complete(self) -> None:
        # The next request may already be buffered (pipelined): its clock starts now.
        super().on_response_complete()
        self._watch_headers()

    def send_400_response(self, msg: str) -> None:
        _refuse_unparsable(self, msg)

    def _watch_headers(self) -> None:
        conn = self.conn
        if conn.their_state is h11.IDLE and conn.our_state is h11.IDLE and conn.trailing_data[0]:
            self.header_deadline.start(self.transport)
        else:
            self.header_deadline.stop()


if TYPE_CHECKING or HAVE_HTTPTOOLS:

    class HttpToolsHeaderTimeout(HttpToolsProtocol):
        """uvicorn's httptools protocol with a deadline on each request's headers.

        The parser says when a request begins (its first byte) and when its headers are
        complete; the clock runs in between, except while an earlier request's response
        is still under way (pipelining), when it starts once that response is done.
        """

        def __init__(
            self,
            config: uvicorn.Config,
            server_state: ServerState,
            app_state: dict[str, Any],
            _loop: asyncio.AbstractEventLoop | None = None,
        ) -> None:
            super().__init__(config, server_state, app_state, _loop)
            timeout = _limits_of(config).header_timeout
            self.header_deadline = HeaderDeadline(self.loop, timeout, server_state)
            self.reading_headers = False

        def connection_made(self, transport: asyncio.Transport) -> None:
            super().connection_made(transport)
            _close_if_silent(self)

        def connection_lost(self, exc: Exception | None) -> None:
            self.header_deadline.stop()
            super().connection_lost(exc)
            self._unset_keepalive_if_required()  # uvicorn keeps it for a reset connection

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self.reading_headers = True

        def on_headers_complete(self) -> None:
            self.reading_headers = False
            self.header_deadline.stop()
            super().on_headers_complete()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._watch_headers()

        def on_response_complete(self) -> None:
            # The next request may already be buffered (pipelined): its clock starts now.
            super().on_response_complete()
            if self.pipeline and not self.transport.is_closing():
                # uvicorn resumes reading after every response, so a client pipelining
                # requests faster than they are answered grows the queue without bound;
                # reading resumes once the queued requests have been answered.
                self.flow.pause_reading()
            self._watch_headers()

        def send_400_response(self, msg: str) -> None:
            _refuse_unparsable(self, msg)

        def _watch_headers(self) -> None:
            cycle = self.cycle
            responding = bool(cycle) and not cycle.response_complete
            if self.reading_headers and not responding:
                self.header_deadline.start(self.transport)


def protocol_class(http: HttpImpl = "auto") -> type[asyncio.Protocol]:
    """The protocol for ``http``, chosen as uvicorn chooses: ``auto`` is httptools if
    installed, else h11."""
    if http == "auto":
        http = "httptools" if HAVE_HTTPTOOLS else "h11"
    if http == "h11":
        return H11HeaderTimeout
    if http == "httptools":
        if not HAVE_HTTPTOOLS:
            raise ValueError("http='httptools' needs httptools: pip install 'mcpgen[http]'")
        return HttpToolsHeaderTimeout
    raise ValueError(f"http must be 'auto', 'h11' or 'httptools', not {http!r}")


def config(
    app: Any,
    host: str = "127.0.0.1",
    port: int = 3001,
    limits: Limits | None = None,
    http: HttpImpl = "auto",
    **options: Any,
) -> Config:
    """uvicorn's settings for serving ``app`` with the header timeout of ``limits``.

    ``options`` go to ``uvicorn.Config`` as they are (``log_level`` defaults to
    ``warning``, where uvicorn prints nothing on a normal start).
    """
    options.setdefault("log_level", "warning")
    return Config(
        app,
        host=host,
        port=port,
        http=protocol_class(http),
        limits=limits if limits is not None else _limits.DEFAULT,
        **options,
    )


def url(host: str, port: int, path: str) -> str:
    """Where a client reaches the app (an IPv6 address in brackets)."""
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{port}{path}"


class AnnouncingServer(uvicorn.Server):
    """A uvicorn server that says where it listens, since at log level ``warning``
    uvicorn itself says nothing and a user is left guessing the port and path."""

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            print(f"mcpgen: serving MCP at {self.url}", file=sys.stderr, flush=True)

    @property
    def url(self) -> str:
        """The app's address: the host as configured, the port as bound (``port=0``)."""
        port = self.config.port
        servers = getattr(self, "servers", [])  # set by startup
        if servers and servers[0].sockets:
            port = servers[0].sockets[0].getsockname()[1]
        return url(self.config.host, port, getattr(self.config.app, "path", "/"))


def serve(
    server: Server,
    host: str = "127.0.0.1",
    port: int = 3001,
    *,
    limits: Limits | None = None,
    http: HttpImpl = "auto",
    log_level: str = "warning",
    **app_options: Any,
) -> None:
    """Serve ``server.http_app(**app_options)`` over HTTP until interrupted.

    ``limits`` defaults to the server's own (``server.limits``) when it has them.
    """
    if limits is None:
        limits = getattr(server, "limits", _limits.DEFAULT)
    app = server.http_app(**app_options)
    settings = config(app, host, port, limits, http, log_level=log_level)
    try:
        AnnouncingServer(settings).run()
    except KeyboardInterrupt:  # uvicorn re-raises the Ctrl-C it shut down on
        pass


__all__ = [
    "AnnouncingServer",
    "Config",
    "H11HeaderTimeout",
    "HeaderDeadline",
    "HttpToolsHeaderTimeout",
    "config",
    "protocol_class",
    "serve",
    "raw_response",
    "timeout_response",
]
