"""An untrusted server's HTTP answer read within bounds (httpx): what both the client
transport and the resource server's fetches from an authorization server read with."""

from __future__ import annotations

import httpx
from ..core.errors import McpgenError


class TooLarge(McpgenError):
    """A server's answer (a JSON body, one SSE event) is over ``max_message_bytes``."""


async def read_bounded(response: httpx.Response, limit: int) -> bytes:
    """A streamed response's whole body, read no further than ``limit`` bytes
    (:class:`TooLarge` past them): what every reader of an untrusted server's body uses."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise TooLarge(f"an answer over {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


__all__ = ["TooLarge", "read_bounded"]
