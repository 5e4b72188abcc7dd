"""Test a server without a process or a socket: ``async with connect(app) as client:``
gives a real typed client of an :class:`~runtime.App` or :class:`~runtime.Server` in the
same event loop, joined through in-memory transports. Everything between them is what
goes over stdio: the same framing, negotiation, re-shaping and limits."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

from .app.app import App
from .client.in_memory import client_class_of
from .client.in_memory import connect as connect_server
from .client.session import Mode
from .server.server import Server


@asynccontextmanager
async def connect(
    server: App | Server,
    client_class: type | None = None,
    *,
    mode: Mode = "auto",
    handlers: Any = None,
    **options: Any,
) -> AsyncGenerator[Any, None]:
    """A typed client connected to ``server`` (an ``App`` or a ``Server``); ``mode``:
    ``auto`` probes the modern era, ``legacy`` speaks the handshake; ``handlers``
    answer sampling, elicitation and roots; other options go to ``ClientSession``."""
    target = server.server if isinstance(server, App) else server
    async with connect_server(
        target, client_class, mode=mode, handlers=handlers, **options
    ) as client:
        yield client


__all__ = ["client_class_of", "connect"]
