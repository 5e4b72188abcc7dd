"""MCP over WebSocket, served by the HTTP app (an opt-in transport: the spec names none).

A client opens a WebSocket with the subprotocol ``mcp`` (what the TypeScript SDK's
``WebSocketClientTransport`` and the Python SDK 1.x client ask for) and sends one JSON-RPC
message per text frame; the server answers the same way. Like stdio it is one persistent
connection, so either era may be spoken over it, and the session lives as long as the
connection.

Hostile input is answered as on stdio: a binary frame, or a text frame over
``Limits.max_message_bytes``, gets a -32600 error (with the request's id when it shows
one) and the connection serves on; invalid UTF-8 and frames over the ASGI server's own
size limit are the WebSocket protocol's to refuse (uvicorn closes with 1007 and 1009;
``runtime.http.serve`` sets its limit to ``max_message_bytes``). A connection that sends
nothing for ``Limits.session_idle_timeout`` while none of its requests runs is closed
(code 1000, reason ``idle``). ``Host``/``Origin`` and authorization are checked before the
handshake is accepted: a refusal is an HTTP response (403, or the 401 challenge) where
the ASGI server can send one, else the handshake is closed with 1008.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from ..core.errors import INVALID_REQUEST
from ..core.jsonrpc import RequestId, encode_error
from ..core.limits import Limits
from ..aio.line_ends import EDGE, identify
from .asgi import Message, Receive, Scope, Send

log = logging.getLogger("mcpgen.runtime.http.websocket")

#: The subprotocol MCP clients ask for.
SUBPROTOCOL = "mcp"
#: Close codes: normal, and a policy violation (a refused handshake).
NORMAL, POLICY = 1000, 1008
#: Close code of a server stopping (RFC 6455's registry: a restart): connect again.
SERVICE_RESTART = 1012


class WebSocketTransport:
    """A session transport over one accepted ASGI WebSocket."""

    def __init__(
        self,
        receive: Receive,
        send: Send,
        limits: Limits,
        gate: Callable[[bytes], bytes | None] | None = None,
    ) -> None:
        self._receive = receive
        self._send = send
        self.limits = limits
        #: The refusal of a message its sender may not send (per-request scopes), or None.
        self.gate = gate
        #: Whether a request of this connection is running (then it is not idle).
        self.busy: Callable[[], bool] = lambda: False
        self._closed = False

    async def receive(self) -> bytes | None:
        while not self._closed:
            try:
                message = await self._next()
            except TimeoutError:
                log.info("closing a WebSocket idle for %g s", self.limits.session_idle_timeout)
                await self._close(NORMAL, "idle")
                return None
            kind = message["type"]
            if kind == "websocket.disconnect":
                self._closed = True
                return None
            if kind != "websocket.receive":
                continue
            text = message.get("text")
            if text is None:
                await self._refuse(None, "binary frames are not MCP messages: send JSON as text")
                continue
            data = text.encode()
            if len(data) > self.limits.max_message_bytes:
                request_id, notification = identify(data[:EDGE], data[-EDGE:])
                if not notification:
                    message_ = (
                        f"Invalid request: message of {len(data)} bytes is over the limit of"
                        f" {self.limits.max_message_bytes} bytes"
                    )
                    await self._refuse(request_id, message_)
                continue
            refusal = self.gate(data) if self.gate is not None else None
            if refusal is not None:
                await self.send(refusal)
                continue
            return data
        return None

    async def _next(self) -> Message:
        """The next ASGI message; ``TimeoutError`` once idle past the limit."""
        idle = self.limits.session_idle_timeout
        while True:
            try:
                return await asyncio.wait_for(self._receive(), idle)
            except asyncio.TimeoutError:
                if not self.busy():
                    raise TimeoutError from None

    async def _refuse(self, request_id: RequestId | None, message: str) -> None:
        await self.send(encode_error(request_id, INVALID_REQUEST, message))

    async def send(
        self,
        data: bytes,
        related: RequestId | None = None,
        final: bool = False,
        status: int | None = None,
    ) -> None:
        if self._closed:
            raise ConnectionError("the WebSocket is closed")
        await self._send({"type": "websocket.send", "text": data.decode()})

    async def close(self) -> None:
        await self._close(NORMAL, "")

    async def restarting(self) -> None:
        """Close as a server that stops (1012: the client may connect again elsewhere)."""
        await self._close(SERVICE_RESTART, "the server is stopping; connect again")

    async def _close(self, code: int, reason: str) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            await self._send({"type": "websocket.close", "code": code, "reason": reason})
        except (OSError, RuntimeError):  # the client left first
            pass


def wants_mcp(scope: Scope) -> bool:
    """Whether the client asked for the ``mcp`` subprotocol (or for none at all)."""
    asked: list[str] = list(scope.get("subprotocols") or [])
    return not asked or SUBPROTOCOL in asked


def denial(scope: Scope, send: Send) -> Send:
    """A ``send`` that turns an HTTP response into the handshake's refusal: the ASGI
    server's denial response where it has one, else a close with 1008."""
    extensions: dict[str, Any] = scope.get("extensions") or {}
    if "websocket.http.response" in extensions:

        async def refuse(message: Message) -> None:
            kind = message["type"].replace("http.response", "websocket.http.response", 1)
            await send({**message, "type": kind})

        return refuse

    async def close(message: Message) -> None:
        if message["type"] == "http.response.start":
            await send({"type": "websocket.close", "code": POLICY})

    return close


__all__ = ["SUBPROTOCOL", "WebSocketTransport", "denial", "wants_mcp"]
