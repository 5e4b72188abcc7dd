"""The client: ``ClientSession`` speaks to a server of either era and gives the
generated typed ``Client`` (``session``), renewing a session a legacy server lost
(``recovery``); connecting over stdio or a URL (``transports``), the Streamable HTTP
client transport (``http``), a client in the same event loop as its server
(``in_memory``), and tasks followed from the requester's side (``tasks``). What the
server says changed (``listen``), every page of a list (``core.pages``), results kept as long
as the server allows (``cache``), each server's era kept for the next connection
(``eras``), and tool results checked against their ``outputSchema`` and converted to the
caller's type (``outputs``). ``auth`` is the OAuth 2.1 client.

May import: ``core``, ``aio``, ``tasks``, ``server``, ``http``.
"""

from typing import TYPE_CHECKING, Any

from ..core.limits import CLIENT as CLIENT_LIMITS
from ..core.limits import Limits
from .cache import CacheStore, MemoryStore, ResponseCache
from .eras import EraStore, FileEras, MemoryEras
from .listen import Change, ListenEnded, Listener
from ..core.pages import PaginationError
from .outputs import OutputValidation, OutputValidationError, ToolCallFailed
from .recovery import SAFE_TO_RETRY, Recovery, Restart, SessionLost, SessionRenewed
from .session import ClientSession, Mode
from .tasks import TaskCancelled, TaskHandle, TaskInfo, TaskPolling
from .transports import http_client, stdio_client, websocket_client

if TYPE_CHECKING:
    from .auth import (
        AuthorizationError,
        AuthSettings,
        BrowserAuthorizer,
        ClientCredentials,
        HeadlessAuthorizer,
        MemoryTokenStore,
        OAuth,
        TokenStore,
    )

#: The OAuth client's names, loaded on first use: they need ``mcpgen[auth]``.
_AUTH = frozenset(
    {
        "AuthSettings",
        "AuthorizationError",
        "BrowserAuthorizer",
        "ClientCredentials",
        "HeadlessAuthorizer",
        "MemoryTokenStore",
        "OAuth",
        "TokenStore",
    }
)


def __getattr__(name: str) -> Any:
    if name in _AUTH:
        from . import auth

        return getattr(auth, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AuthSettings",
    "AuthorizationError",
    "BrowserAuthorizer",
    "CLIENT_LIMITS",
    "CacheStore",
    "Change",
    "ClientCredentials",
    "ClientSession",
    "EraStore",
    "FileEras",
    "HeadlessAuthorizer",
    "Limits",
    "ListenEnded",
    "Listener",
    "MemoryEras",
    "MemoryStore",
    "MemoryTokenStore",
    "Mode",
    "OAuth",
    "OutputValidation",
    "OutputValidationError",
    "PaginationError",
    "Recovery",
    "ResponseCache",
    "Restart",
    "SAFE_TO_RETRY",
    "SessionLost",
    "SessionRenewed",
    "TaskCancelled",
    "TaskHandle",
    "TaskInfo",
    "TaskPolling",
    "TokenStore",
    "ToolCallFailed",
    "http_client",
    "stdio_client",
    "websocket_client",
]
