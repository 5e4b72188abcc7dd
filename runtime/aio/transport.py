"""What a session needs of a transport: frames in and out, and, where a transport can,
a frame written without a coroutine.

A transport moves whole frames (one JSON-RPC message or batch each, as bytes). The
session reads them in one loop (:meth:`Transport.receive`, None at the end) and sends
through :meth:`Transport.send`, saying which request a frame relates to, whether it is
that request's last, and an HTTP status hint, so that a transport that routes frames by
request (an HTTP response stream) can. A transport whose frames all go one way (stdio,
in memory) may also offer :class:`WritesNow`: the session then writes an answer it has
at once with no coroutine made for it.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Protocol

from ..core.jsonrpc import RequestId


class Transport(Protocol):
    async def receive(self) -> bytes | None: ...
    async def send(
        self,
        data: bytes,
        related: RequestId | None = None,
        final: bool = False,
        status: int | None = None,
    ) -> None: ...
    async def close(self) -> None: ...


class WritesNow(Protocol):
    """A transport whose frames all go one way (no routing by request, no status), which
    can start a frame's writing without a coroutine: a session writes the answers it has
    at once through it (``stdio``)."""

    def write_now(self, data: bytes) -> Awaitable[None] | None:
        """Write ``data`` (a frame); None when the peer took it all, else what to await
        until it has (the transport's backpressure)."""
        ...
