"""ASGI servers other than uvicorn, serving an app on a socket of 127.0.0.1 for the tests,
stopped however the test ends: ``ThreadedHypercorn`` (hypercorn in a daemon thread, on a
socket bound here, with the same face as ``http_servers.ThreadedUvicorn``) and
``SERVERS``, the name of each server the HTTP tests run under and how to make it."""

from __future__ import annotations

import asyncio
import os
import socket
import threading
from collections.abc import Callable
from typing import Any, Protocol

from hypercorn.asyncio import serve as hypercorn_serve
from hypercorn.config import Config as HypercornConfig

from support.http_servers import ThreadedUvicorn


class Threaded(Protocol):
    port: int

    def start(self, timeout: float = 10.0) -> None: ...

    def stop(self, timeout: float = 10.0) -> None: ...


class ThreadedHypercorn:
    """hypercorn serving ``app`` in a daemon thread, with a loop of its own, on a socket
    bound here (127.0.0.1)."""

    def __init__(self, app: Any, port: int = 0) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))
        self.sock.listen(128)
        self.port: int = self.sock.getsockname()[1]
        self.config = HypercornConfig()
        # A duplicate: hypercorn closes the socket it serves on when it stops.
        self.config.bind = [f"fd://{os.dup(self.sock.fileno())}"]
        self.config.graceful_timeout = 2
        self.config.loglevel = "WARNING"
        self.app = app
        self.started = threading.Event()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.stopping: asyncio.Event | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        async def main() -> None:
            self.loop = asyncio.get_running_loop()
            self.stopping = asyncio.Event()
            self.loop.call_soon(self.started.set)
            await hypercorn_serve(self.app, self.config, shutdown_trigger=self.stopping.wait)

        asyncio.run(main())

    def start(self, timeout: float = 10.0) -> None:
        self.thread.start()
        assert self.started.wait(timeout), "hypercorn did not start in time"

    def stop(self, timeout: float = 10.0) -> None:
        if self.loop is not None and self.stopping is not None:
            self.loop.call_soon_threadsafe(self.stopping.set)
        if self.thread.ident is not None:
            self.thread.join(timeout)
        self.sock.close()
        assert not self.thread.is_alive(), "hypercorn did not stop in time"


#: Each ASGI server the HTTP tests run under: its name, and how it serves an app.
SERVERS: dict[str, Callable[[Any], Threaded]] = {
    "uvicorn": ThreadedUvicorn,
    "hypercorn": ThreadedHypercorn,
}
