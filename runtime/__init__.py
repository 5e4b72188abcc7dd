"""mcpgen's runtime, for server authors: an ``App`` of typed functions (or a ``Server`` over
generated handlers) served to clients of every protocol version, over stdio or
Streamable HTTP, with one verb (``app.run()``, ``app.run("http", port=3001)``, or
``run(server)``).

Other audiences have faces of their own: ``mcpgen.runtime.client`` (connecting to
servers, the OAuth client), ``mcpgen.runtime.http.auth`` (protecting an HTTP endpoint),
``mcpgen.runtime.testing`` (an in-memory client of an app), ``mcpgen.runtime.lowlevel``
(the sans-IO connection and the asyncio session, for transport writers). The runtime
imports no generated module by name: the binding comes in with the handlers, except that
an ``App`` given none takes the newest dated version in ``mcpgen.generated``.
"""

from typing import TYPE_CHECKING, Any

from .aio.middleware import Call, Middleware, Next
from .aio.session import RequestScope
from .app.app import App, run
from .app.content import Audio, File, Image
from .app.schemas import RegistrationError, header
from .app.tools import ToolError
from .core.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    ConnectionClosed,
    McpError,
    McpgenError,
    NegotiationError,
    RequestTimeout,
)
from .core.extensions import Extension, ExtensionMethod
from .core.limits import Limits
from .core.outgoing import CacheHint, CachePolicy
from .server.server import Server

if TYPE_CHECKING:
    from .http.endpoint import McpHttpApp
    from .tasks.engine import Tasks
    from .tasks.redis_store import RedisTaskStore
    from .tasks.store import MemoryTaskStore, TaskRecord, TaskStore

#: Names loaded when first asked for: a server that runs no tasks never imports them.
_TASKS = {
    "Tasks": "engine",
    "MemoryTaskStore": "store",
    "TaskRecord": "store",
    "TaskStore": "store",
}


def __getattr__(name: str) -> Any:
    if name in _TASKS:
        import importlib

        return getattr(importlib.import_module(f".tasks.{_TASKS[name]}", __name__), name)
    if name == "RedisTaskStore":  # needs mcpgen[redis]: loaded when asked for
        from .tasks.redis_store import RedisTaskStore

        return RedisTaskStore
    if name == "McpHttpApp":  # a Server's ASGI app (an App is one itself)
        from .http.endpoint import McpHttpApp

        return McpHttpApp
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "App",
    "Audio",
    "CacheHint",
    "CachePolicy",
    "Call",
    "ConnectionClosed",
    "Extension",
    "ExtensionMethod",
    "File",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "Image",
    "Limits",
    "METHOD_NOT_FOUND",
    "McpError",
    "McpHttpApp",
    "McpgenError",
    "MemoryTaskStore",
    "Middleware",
    "NegotiationError",
    "Next",
    "PARSE_ERROR",
    "RedisTaskStore",
    "RegistrationError",
    "RequestScope",
    "RequestTimeout",
    "Server",
    "TaskRecord",
    "TaskStore",
    "Tasks",
    "ToolError",
    "header",
    "run",
]
