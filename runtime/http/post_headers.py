"""What a POST's HTTP headers say, read once and cheaply: whether its body is JSON, whether
its client takes both answers (JSON and SSE), and the MCP headers of a modern request
(``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*``)."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from typing import Any

from .asgi import Headers
from ..core.modern import HttpHeaders


def is_json(content_type: bytes) -> bool:
    """``Content-Type`` names JSON (parameters such as ``charset`` aside)."""
    return content_type == b"application/json" or _names_json(content_type)


# Verdicts on header values, remembered: clients repeat the same few on every request.
@functools.lru_cache(maxsize=256)
def _names_json(content_type: bytes) -> bool:
    return content_type.split(b";", 1)[0].strip().lower() == b"application/json"


@functools.lru_cache(maxsize=256)
def accepts_answers(accept: bytes) -> bool:
    """A POST's ``Accept`` must allow both a JSON answer and an SSE stream."""
    accept = accept.lower()
    return b"*/*" in accept or (b"application/json" in accept and b"text/event-stream" in accept)


def mcp_headers(
    headers: Headers, protocol_version: str | None, principal: Any = None
) -> HttpHeaders:
    """The MCP request headers of a modern request (``MCP-Protocol-Version`` read already)
    and, on a protected app, the principal its token was verified as."""
    method, name = headers.get(b"mcp-method"), headers.get(b"mcp-name")
    return HttpHeaders(
        protocol_version,
        None if method is None else method.decode("latin-1"),
        None if name is None else name.decode("latin-1"),
        ParamHeaders(headers),
        headers,
        principal,
    )


class ParamHeaders(Mapping[str, str]):
    """The ``Mcp-Param-*`` headers, keyed by the rest of their name; read on first use
    (only a call of a tool with header annotations needs them)."""

    __slots__ = ("_headers", "_params")

    def __init__(self, headers: Headers) -> None:
        self._headers = headers
        self._params: dict[str, str] | None = None

    def _read(self) -> dict[str, str]:
        if self._params is None:
            self._params = {
                k[10:].decode("latin-1"): v.decode("latin-1")
                for k, v in self._headers.items()
                if k.startswith(b"mcp-param-")
            }
        return self._params

    def __getitem__(self, key: str) -> str:
        return self._read()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._read())

    def __len__(self) -> int:
        return len(self._read())
