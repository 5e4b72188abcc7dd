"""The client side of MCP over WebSocket (an opt-in transport; see ``runtime.http.websocket``
for the server): one JSON-RPC message per text frame, the subprotocol ``mcp``, one
persistent connection like stdio. Built on ``websockets`` (``pip install 'mcpgen[websocket]'``),
which does the protocol: handshake, masking, fragmentation, ping/pong keep-alive and the
closing handshake.

A frame over ``Limits.max_message_bytes`` closes the connection (the library's size limit,
code 1009): a server cannot make the client hold an endless message. A binary frame is
skipped with a warning. When the connection ends, every request waiting for an answer
fails at once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import Protocol

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed as SocketClosed
from websockets.exceptions import InvalidHandshake, InvalidStatus

from ..core.errors import ConnectionClosed
from ..core.jsonrpc import RequestId
from ..core.limits import CLIENT, Limits

log = logging.getLogger("mcpgen.runtime.client.websocket")

SUBPROTOCOL = "mcp"


class TokenSource(Protocol):
    """What gives a WebSocket's handshake its bearer token: ``OAuth`` and
    ``ClientCredentials`` (``runtime.client.auth``) are ones."""

    async def token_for(
        self, url: str, refused: tuple[int, Sequence[str]] | None = None
    ) -> str | None: ...


class WebSocketClientTransport:
    """A ``ClientSession`` transport over a WebSocket to ``url`` (``ws://`` or ``wss://``);
    ``headers`` go with the handshake (an ``Authorization`` header, say); ``open()`` before
    use. ``ping_interval``/``ping_timeout`` (seconds, None: off) keep the connection alive
    and notice a dead peer; ``compression`` asks for per-message deflate (off: its zlib
    state costs about 300 KiB a connection, and MCP messages are small)."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        limits: Limits = CLIENT,
        open_timeout: float = 10.0,
        ping_interval: float | None = 20.0,
        ping_timeout: float | None = 20.0,
        compression: bool = False,
        auth: TokenSource | None = None,
    ) -> None:
        self.url = url
        self.headers = dict(headers or {})
        self.limits = limits
        self.open_timeout = open_timeout
        self.ping_interval, self.ping_timeout = ping_interval, ping_timeout
        self.compression = compression
        #: Where the bearer token comes from (``runtime.client.auth``'s flows are one).
        self.auth = auth
        self.socket: ClientConnection | None = None

    async def open(self) -> None:
        """Connect; ``ConnectionClosed`` saying why when the server refuses. With ``auth``,
        the handshake carries its token, and a refusal that challenges for one (401, or
        403 ``insufficient_scope``) is answered by the flow, then the handshake tried again
        (the flow bounds how often)."""
        resource = "http" + self.url.removeprefix("ws")  # as the server names itself
        refused: tuple[int, Sequence[str]] | None = None
        while True:
            headers = dict(self.headers)
            if self.auth is not None:
                token = await self.auth.token_for(resource, refused)
                if token is not None:
                    headers["Authorization"] = f"Bearer {token}"
            try:
                self.socket = await connect(
                    self.url,
                    subprotocols=[SUBPROTOCOL],  # type: ignore[list-item]
                    additional_headers=headers,
                    max_size=self.limits.max_message_bytes,
                    open_timeout=self.open_timeout,
                    ping_interval=self.ping_interval,
                    ping_timeout=self.ping_timeout,
                    compression="deflate" if self.compression else None,
                )
                break
            except InvalidStatus as exc:
                status = exc.response.status_code
                if self.auth is None or status not in (401, 403):
                    raise ConnectionClosed(f"no WebSocket at {self.url}: {exc}") from None
                refused = (status, exc.response.headers.get_all("WWW-Authenticate"))
            except (InvalidHandshake, OSError, asyncio.TimeoutError) as exc:
                raise ConnectionClosed(f"no WebSocket at {self.url}: {exc}") from None
        if self.socket.subprotocol not in (SUBPROTOCOL, None):
            await self.socket.close()
            raise ConnectionClosed(f"{self.url} chose the subprotocol {self.socket.subprotocol}")

    async def receive(self) -> bytes | None:
        socket = self.socket
        if socket is None:
            return None
        while True:
            try:
                frame = await socket.recv()
            except SocketClosed as exc:
                log.debug("WebSocket %s closed: %s", self.url, exc)
                return None
            if isinstance(frame, str):
                return frame.encode()
            log.warning("skipped a binary frame of %d bytes from %s", len(frame), self.url)

    async def send(
        self,
        data: bytes,
        related: RequestId | None = None,
        final: bool = False,
        status: int | None = None,
    ) -> None:
        if self.socket is None:
            raise ConnectionError("the WebSocket is not open")
        try:
            await self.socket.send(data.decode())
        except SocketClosed as exc:
            raise ConnectionError(f"the WebSocket is closed: {exc}") from None

    async def close(self) -> None:
        if self.socket is not None:
            await self.socket.close()


__all__ = ["WebSocketClientTransport"]
