"""Error codes of JSON-RPC and MCP, and the exception that carries one."""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

from .json_values import as_object, objects

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
#: Implementation-defined (JSON-RPC's server-error range): too many requests in flight.
SERVER_BUSY = -32000
#: Legacy resource-not-found (2026-07-28 uses INVALID_PARAMS instead).
RESOURCE_NOT_FOUND = -32002
HEADER_MISMATCH = -32020
MISSING_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022
#: 2025-11-25 only: the request needs the user to visit URLs first (``data.elicitations``).
URL_ELICITATION_REQUIRED = -32042
#: Error codes only the modern era assigns; receiving one proves a modern peer.
MODERN_ERRORS = frozenset(
    {HEADER_MISMATCH, MISSING_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION}
)


class McpgenError(Exception):
    """What every exception the runtime raises derives from: ``except McpgenError`` catches
    them all (a JSON-RPC error from the peer, a closed connection, a refused token, ...)."""


class McpError(McpgenError):
    """A JSON-RPC error: raise it in a handler to answer with it; clients raise it when a
    request is answered with an error."""

    def __init__(self, code: int, message: str, data: Any = msgspec.UNSET) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code
        self.message = message
        self.data = data


class UrlElicitationRequired(McpError):
    """-32042 (2025-11-25): the request cannot go on until the user visited the pages of
    ``elicitations`` (URL-mode elicitation params: ``message``, ``url``, ``elicitationId``).

    A handler raises it with mappings (an ``elicitationId`` is made for one that has none;
    read it back from :attr:`elicitations`); what each client gets is its version's form
    (``runtime.aio.session.RequestScope.url_elicitation_required``). A client raises it
    when a request is answered with -32042, the elicitations read from the error's data
    (those that are not URL-mode params left out)."""

    def __init__(
        self, elicitations: Iterable[Mapping[str, Any]], message: str | None = None
    ) -> None:
        listed: list[dict[str, Any]] = []
        for given in elicitations:
            one: dict[str, Any] = {**given, "mode": "url"}
            if not isinstance(one.get("elicitationId"), str):
                one["elicitationId"] = uuid.uuid4().hex
            listed.append(one)
        #: The URL-mode elicitations, as plain JSON.
        self.elicitations = listed
        plural = "s" if len(listed) != 1 else ""
        super().__init__(
            URL_ELICITATION_REQUIRED,
            message or f"URL elicitation{plural} required",
            {"elicitations": listed},
        )

    @classmethod
    def from_error(cls, error: McpError) -> UrlElicitationRequired:
        """The -32042 ``error`` a server answered, its elicitations read from its data:
        objects whose ``message``, ``url`` and ``elicitationId`` are strings, in URL mode."""
        data = as_object(error.data) or {}
        kept = [
            one
            for one in objects(data.get("elicitations"))
            if one.get("mode", "url") == "url"
            and all(isinstance(one.get(key), str) for key in ("message", "url", "elicitationId"))
        ]
        received = cls(kept, error.message)
        received.data = error.data
        return received


def resource_not_found(uri: str) -> McpError:
    """The error for reading an unknown resource; its code follows the peer's era (the
    connection maps it to INVALID_PARAMS for modern peers)."""
    return McpError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}", {"uri": uri})


if sys.version_info >= (3, 11):
    _Timeout = TimeoutError  # asyncio's is the builtin one
else:

    class _Timeout(asyncio.TimeoutError, TimeoutError):
        """Caught by ``except asyncio.TimeoutError`` and ``except TimeoutError`` alike."""


#: What sets a side's timeout for its requests, when the caller of a request gives none.
TIMEOUT_SETTINGS = {
    "server": "Limits.request_timeout",
    "client": "Limits.request_timeout of ClientSession(limits=...)",
}
#: What sets the timeout a request's caller gives, by method.
GIVEN_TIMEOUTS = {"server/discover": "ClientSession.connect(probe_timeout=...)"}


class RequestTimeout(McpgenError, _Timeout):
    """A request ``side`` sent that its peer did not answer in time (it was cancelled at
    the peer): which one, after how many seconds, and the setting that set the timeout
    (``given``: the request's caller gave it, rather than ``side``'s own setting)."""

    def __init__(self, side: str, method: str, seconds: float, given: bool = False) -> None:
        setting = (
            GIVEN_TIMEOUTS.get(method, "the caller's timeout")
            if given
            else TIMEOUT_SETTINGS.get(side, "the request's timeout")
        )
        peer = "client" if side == "server" else "server"
        super().__init__(f"the {peer} did not answer {method} within {seconds:g} s ({setting})")
        self.method = method
        self.seconds = seconds
        self.setting = setting


class ConnectionClosed(McpgenError):
    """The peer went away (or the connection was closed) before an answer arrived."""


class NegotiationError(McpgenError):
    """The peers have no protocol version in common."""
