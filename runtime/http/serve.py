"""Run an ASGI app with uvicorn, its connections guarded (``runtime.http.protocols``).

``serve`` is what ``runtime.run(..., "http")``, ``App.run("http")`` and scaffolded servers run;
``config`` builds the ``uvicorn.Config`` for embedding (``uvicorn.Server(config(app)).run()``),
with uvicorn's keep-alive timeout taken from ``Limits.idle_timeout`` and a
:class:`~runtime.http.guard.ConnectionGuard` that counts what was cut (``.guard``).
This module and ``protocols`` are the only parts of the runtime that import uvicorn
(the ``http`` extra).
"""

from __future__ import annotations

import logging

import socket
import sys
from typing import Any

import uvicorn

from ..core import limits as _limits
from .endpoint import McpHttpApp
from .guard import ConnectionGuard
from .protocols import HttpImpl, protocol_class
from ..core.limits import Limits
from .served import HttpServed


class Config(uvicorn.Config):
    """``uvicorn.Config`` plus the ``limits`` the guarded protocols enforce and the
    ``guard`` that counts what they cut (shared by every connection of the server).

    The limits ride on the config because uvicorn builds one protocol object per
    connection from the config alone.
    """

    def __init__(self, app: Any, *, limits: Limits = _limits.DEFAULT, **options: Any) -> None:
        options.setdefault("timeout_keep_alive", limits.idle_timeout)
        options.setdefault("timeout_graceful_shutdown", limits.shutdown_grace)
        super().__init__(app, **options)
        self.limits = limits
        self.guard = ConnectionGuard(limits)


def config(
    app: Any,
    host: str = "127.0.0.1",
    port: int = 3001,
    limits: Limits | None = None,
    http: HttpImpl = "auto",
    **options: Any,
) -> Config:
    """uvicorn's settings for serving ``app`` with the connection guards of ``limits``.

    ``options`` go to ``uvicorn.Config`` as they are (``log_level`` defaults to
    ``warning``, where uvicorn prints nothing on a normal start).
    """
    options.setdefault("log_level", "warning")
    chosen = limits if limits is not None else _limits.DEFAULT
    # A WebSocket frame up to twice the message limit is read and answered with -32600
    # (runtime.http.websocket); a longer one is refused by the protocol (close 1009).
    options.setdefault("ws_max_size", 2 * chosen.max_message_bytes)
    # No per-message compression by default: its zlib state costs every WebSocket about
    # 300 KiB, and a flood of tiny compressed frames packs several times more requests
    # into what the server reads at once (measured: 12 MiB against 2 MiB for 40,000
    # unread calls). JSON-RPC messages are small; pass ws_per_message_deflate=True to
    # trade that memory for bandwidth.
    options.setdefault("ws_per_message_deflate", False)
    return Config(
        app,
        host=host,
        port=port,
        http=protocol_class(http),
        limits=chosen,
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

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """Stop accepting, then have the app close its long-lived streams (so that their
        clients go to another process at once, rather than when the grace runs out), then
        uvicorn's own shutdown: the requests in flight finish within the grace."""
        for server in getattr(self, "servers", []):
            server.close()
        drain = getattr(self.config.app, "drain", None)
        if drain is not None:
            try:
                await drain()
            except Exception:  # stopping goes on whatever the app says
                logging.getLogger("mcpgen.runtime.http.serve").exception("draining failed")
        await super().shutdown(sockets)

    @property
    def url(self) -> str:
        """The app's address: the host as configured, the port as bound (``port=0``); a
        WebSocket's when the app takes WebSockets at its own path (``run("websocket")``)."""
        port = self.config.port
        servers = getattr(self, "servers", [])  # set by startup
        if servers and servers[0].sockets:
            port = servers[0].sockets[0].getsockname()[1]
        app = self.config.app
        path = getattr(app, "path", "/")
        if getattr(app, "websocket_path", None) == path:
            return "ws" + url(self.config.host, port, path).removeprefix("http")
        return url(self.config.host, port, path)


def serve(
    server: HttpServed,
    host: str = "127.0.0.1",
    port: int = 3001,
    *,
    limits: Limits | None = None,
    http: HttpImpl = "auto",
    log_level: str = "warning",
    **app_options: Any,
) -> None:
    """Serve ``McpHttpApp(server, **app_options)`` over HTTP until interrupted.

    ``limits`` defaults to the server's own (``server.limits``) when it has them.
    """
    if limits is None:
        limits = getattr(server, "limits", _limits.DEFAULT)
    app = McpHttpApp(server, **app_options)
    serve_app(app, host, port, limits=limits, http=http, log_level=log_level)


def serve_app(
    app: Any,
    host: str = "127.0.0.1",
    port: int = 3001,
    *,
    limits: Limits | None = None,
    http: HttpImpl = "auto",
    log_level: str = "warning",
) -> None:
    """Serve an ASGI ``app`` (an MCP endpoint of its own making, e.g. a proxy's) with the
    guarded connections of ``limits`` until interrupted, saying where it listens."""
    settings = config(app, host, port, limits, http, log_level=log_level)
    try:
        AnnouncingServer(settings).run()
    except KeyboardInterrupt:  # uvicorn re-raises the Ctrl-C it shut down on
        pass


__all__ = [
    "AnnouncingServer",
    "Config",
    "HttpImpl",
    "config",
    "protocol_class",
    "serve",
    "serve_app",
    "url",
]
