"""The thin runtime under generated bindings: JSON-RPC framing, a sans-IO connection,
version negotiation, an asyncio session, and transports.

It imports no generated module: the application's generated handlers or client class
carry their version's binding in, and sibling versions come from the same package.
"""

from typing import TYPE_CHECKING, Any

from .app import App
from .connection import Connection, State
from .content import Audio, File, Image
from .errors import (
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
from .extensions import Extension, ExtensionMethod
from .limits import Limits
from .memory import MemoryTransport, memory_pair
from .middleware import Call, Middleware, Next
from .negotiation import ERAS, Versions
from .schemas import header
from .server import Server
from .request_scope import RequestScope
from .session import Session, Transport
from .task_store import MemoryTaskStore, TaskRecord, TaskStore
from .tasks import Tasks
from .tools import ToolError
from .wire import CacheHint, CachePolicy

if TYPE_CHECKING:
    from .auth_introspection import IntrospectionVerifier
    from .auth_jwt import JwtVerifier
    from .auth_policy import ScopePolicy
    from .auth_principal import InvalidToken, Principal, TokenVerifier, VerifierUnavailable
    from .auth_principal import principal_of
    from .auth_server import ResourceServer
    from .client import ClientSession
    from .client_transports import http_client, stdio_client
    from .testing import connect

#: Client-side names load on first use: a server need not import the client. So do the
#: authorization ones: the verifiers need ``mcpgen[auth]`` (joserfc, httpx).
_LAZY = {
    "IntrospectionVerifier": ".auth_introspection",
    "InvalidToken": ".auth_principal",
    "TokenVerifier": ".auth_principal",
    "VerifierUnavailable": ".auth_principal",
    "JwtVerifier": ".auth_jwt",
    "Principal": ".auth_principal",
    "ResourceServer": ".auth_server",
    "ScopePolicy": ".auth_policy",
    "principal_of": ".auth_principal",
    "ClientSession": ".client",
    "connect": ".testing",
    "http_client": ".client_transports",
    "stdio_client": ".client_transports",
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
