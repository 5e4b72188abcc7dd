"""The thin runtime under generated bindings: JSON-RPC framing, a sans-IO connection,
version negotiation, an asyncio session, and transports.

It imports no generated module: the application's generated handlers or client class
carry their version's binding in, and sibling versions come from the same package.
"""

from typing import TYPE_CHECKING, Any

from .app.app import App
from .core.connection import Connection, State
from .app.content import Audio, File, Image
from .core.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    ConnectionClosed,
    McpError,
    NegotiationError,
    RequestTimeout,
)
from .core.extensions import Extension, ExtensionMethod
from .core.limits import Limits
from .aio.memory import MemoryTransport, memory_pair
from .aio.middleware import Call, Middleware, Next
from .core.negotiation import ERAS, Versions
from .app.schemas import header
from .server.server import Server
from .aio.session import RequestScope
from .aio.session import Session, Transport
from .tasks.store import MemoryTaskStore, TaskRecord, TaskStore
from .tasks.engine import Tasks
from .app.tools import ToolError
from .core.outgoing import CacheHint, CachePolicy

if TYPE_CHECKING:
    from .http.auth.introspection import IntrospectionVerifier
    from .http.auth.jwt import JwtVerifier
    from .http.auth.policy import ScopePolicy
    from .http.auth.principal import InvalidToken, Principal, TokenVerifier, VerifierUnavailable
    from .http.auth.principal import principal_of
    from .http.auth.resource_server import ResourceServer
    from .client.session import ClientSession
    from .client.transports import http_client, stdio_client
    from .testing import connect

#: Client-side names load on first use: a server need not import the client. So do the
#: authorization ones: the verifiers need ``mcpgen[auth]`` (joserfc, httpx).
_LAZY = {
    "IntrospectionVerifier": ".http.auth.introspection",
    "InvalidToken": ".http.auth.principal",
    "TokenVerifier": ".http.auth.principal",
    "VerifierUnavailable": ".http.auth.principal",
    "JwtVerifier": ".http.auth.jwt",
    "Principal": ".http.auth.principal",
    "ResourceServer": ".http.auth.resource_server",
    "ScopePolicy": ".http.auth.policy",
    "principal_of": ".http.auth.principal",
    "ClientSession": ".client.session",
    "connect": ".testing",
    "http_client": ".client.transports",
    "stdio_client": ".client.transports",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "App",
    "Audio",
    "CacheHint",
    "Call",
    "CachePolicy",
    "ClientSession",
    "Connection",
    "ConnectionClosed",
    "ERAS",
    "Extension",
    "ExtensionMethod",
    "File",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "Image",
    "IntrospectionVerifier",
    "InvalidToken",
    "JwtVerifier",
    "Limits",
    "METHOD_NOT_FOUND",
    "McpError",
    "MemoryTaskStore",
    "MemoryTransport",
    "Middleware",
    "NegotiationError",
    "Next",
    "PARSE_ERROR",
    "Principal",
    "ResourceServer",
    "RequestScope",
    "RequestTimeout",
    "ScopePolicy",
    "Server",
    "Session",
    "State",
    "TaskRecord",
    "TaskStore",
    "Tasks",
    "TokenVerifier",
    "ToolError",
    "Transport",
    "VerifierUnavailable",
    "Versions",
    "connect",
    "header",
    "http_client",
    "memory_pair",
    "principal_of",
    "stdio_client",
]
