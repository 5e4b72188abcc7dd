"""A real client of a server in the same event loop: no subprocess, no socket.

``async with connect(server) as client:`` joins a :class:`ClientSession` to ``server``
through in-memory transports and yields the generated typed ``Client`` of the server's
version (or ``client_class``). Everything between them is what goes over stdio: the
same framing, negotiation (``mode``: ``auto`` probes the modern era, ``legacy`` speaks the
handshake), re-shaping and limits. Client handlers answer sampling, elicitation and roots.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
from collections.abc import AsyncGenerator
from typing import Any

from ..aio.memory import memory_pair
from ..core.negotiation import package_of
from ..server.server import Server
from .session import ClientSession, Mode

#: How long closing waits for the server's side to finish.
CLOSE_TIMEOUT = 5.0


def client_class_of(server: Server) -> type:
    """The generated ``Client`` of the version ``server``'s handlers are typed against."""
    types = server.local.binding.types
    name = types.__name__.rsplit(".", 1)[0] + ".client"
    try:
        return importlib.import_module(name).Client
    except (ImportError, AttributeError):  # a package generated without clients
        return importlib.import_module(package_of(server.local.binding) + "._support").Requester


@contextlib.asynccontextmanager
async def connect(
    server: Server,
    client_class: type | None = None,
    *,
    mode: Mode = "auto",
    handlers: Any = None,
    **options: Any,
) -> AsyncGenerator[Any, None]:
    """A typed client connected to ``server`` (options go to :class:`ClientSession`)."""
    client_class = client_class or client_class_of(server)
    client_end, server_end = memory_pair()
    serving = asyncio.create_task(server.serve(server_end))
    session = ClientSession(client_class.__binding__, handlers, **options)  # type: ignore[attr-defined]
    try:
        await session.connect(client_end, mode=mode, probe_timeout=1.0)
        yield client_class(session)
    finally:
        await session.close()
        await client_end.close()
        with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(serving, CLOSE_TIMEOUT)
