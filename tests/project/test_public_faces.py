"""Each audience has one small public face, and its names are pinned here: a name added
to or dropped from a face is a decision, made by changing this file too."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

FACES = {
    # Server authors: an App (or a Server over generated handlers), what handlers return
    # and raise, the settings, and one verb to serve.
    "mcpgen.runtime": [
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
    ],
    # Clients: a session of either era, connecting, tasks, and the OAuth client.
    "mcpgen.runtime.client": [
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
    ],
    "mcpgen.runtime.client.auth": [
        "AuthFlow",
        "AuthSettings",
        "AuthorizationError",
        "Authorizer",
        "BrowserAuthorizer",
        "ClientCredentials",
        "ClientInfo",
        "ClientMetadata",
        "HeadlessAuthorizer",
        "MemoryTokenStore",
        "OAuth",
        "TokenStore",
        "Tokens",
    ],
    # Protecting an HTTP endpoint: verifiers and the resource server.
    "mcpgen.runtime.http.auth": [
        "IntrospectionVerifier",
        "InvalidToken",
        "JwtVerifier",
        "Principal",
        "ResourceServer",
        "ScopePolicy",
        "TokenVerifier",
        "VerifierUnavailable",
        "principal_of",
    ],
    # Operators running a server as several processes: what they share through Redis.
    "mcpgen.runtime.cluster": ["RedisBus", "RedisSessions", "STORE_ENV", "Shared"],
    # Gateways: an upstream server served again, on any transport, for any version.
    "mcpgen.runtime.gateway": [
        "Access",
        "ClientQuota",
        "Mount",
        "Proxy",
        "ProxyHttpApp",
        "Upstream",
    ],
    # Tests: a real client of an App or Server in the same event loop.
    "mcpgen.runtime.testing": ["client_class_of", "connect"],
    # Transport and driver writers: the sans-IO connection and the asyncio session.
    "mcpgen.runtime.lowlevel": [
        "CLIENT",
        "Connection",
        "DEFAULT",
        "ERAS",
        "Limits",
        "MemoryTransport",
        "RequestScope",
        "Session",
        "State",
        "StdioProcess",
        "StdioServerTransport",
        "Transport",
        "Versions",
        "WritesNow",
        "events",
        "jsonrpc",
        "memory_pair",
    ],
}


@pytest.mark.parametrize("face", sorted(FACES))
def test_each_face_exports_exactly_its_pinned_names(face: str) -> None:
    module = importlib.import_module(face)
    assert sorted(module.__all__) == sorted(FACES[face])
    assert len(set(module.__all__)) == len(module.__all__)
    for name in module.__all__:
        assert getattr(module, name) is not None, name


def test_every_exception_the_runtime_raises_derives_from_one_base() -> None:
    from mcpgen.runtime import McpgenError
    from mcpgen.runtime.client import AuthorizationError, TaskCancelled
    from mcpgen.runtime.http.auth import InvalidToken, VerifierUnavailable
    import mcpgen.runtime as rt

    for exc in (
        rt.McpError,
        rt.ConnectionClosed,
        rt.NegotiationError,
        rt.RequestTimeout,
        rt.ToolError,
        rt.RegistrationError,
        AuthorizationError,
        TaskCancelled,
        InvalidToken,
        VerifierUnavailable,
    ):
        assert issubclass(exc, McpgenError), exc
    assert issubclass(rt.RequestTimeout, TimeoutError)  # still caught as a timeout


def test_a_server_author_imports_no_client_http_or_auth_code() -> None:
    """``from mcpgen.runtime import App`` loads neither the client, nor the HTTP
    transport (the scope policy an App's tools may name aside), nor anything of the
    extras (uvicorn, httpx, joserfc, redis)."""
    code = (
        "import sys\n"
        "from mcpgen.runtime import App\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] in"
        " ('uvicorn', 'httpx', 'joserfc', 'redis')"
        " or m.startswith(('mcpgen.runtime.client', 'mcpgen.runtime.http.'))]\n"
        "print(sorted(loaded))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['mcpgen.runtime.http.auth', 'mcpgen.runtime.http.auth.policy']"
