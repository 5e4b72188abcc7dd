"""The OAuth 2.1 resource server of the HTTP endpoint (``mcpgen[auth]``): the gate each
request on a protected endpoint passes (``resource_server``: 401/400/403/503 with
``WWW-Authenticate``), who a token speaks for (``principal``), scopes per method, tool,
prompt and resource (``policy``), RFC 9728 metadata and RFC 6750 challenges
(``metadata``), the verifiers (``jwt`` with ``jwks``; ``introspection``) and their
bounded fetches (``fetch``), verified tokens cached (``cache``).

May import: ``core``, ``aio``, ``http``'s own primitives (``asgi``, ``bounded``).
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .introspection import IntrospectionVerifier
    from .jwt import JwtVerifier
    from .policy import ScopePolicy
    from .principal import InvalidToken, Principal, TokenVerifier, VerifierUnavailable
    from .principal import principal_of
    from .resource_server import ResourceServer

#: Each name, loaded on first use from its module: importing one part of the resource
#: server (an App's scope policy, say) loads no other, and the verifiers need
#: ``mcpgen[auth]`` (joserfc, httpx).
_MODULES = {
    "IntrospectionVerifier": "introspection",
    "InvalidToken": "principal",
    "JwtVerifier": "jwt",
    "Principal": "principal",
    "ResourceServer": "resource_server",
    "ScopePolicy": "policy",
    "TokenVerifier": "principal",
    "VerifierUnavailable": "principal",
    "principal_of": "principal",
}


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_MODULES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "IntrospectionVerifier",
    "InvalidToken",
    "JwtVerifier",
    "Principal",
    "ResourceServer",
    "ScopePolicy",
    "TokenVerifier",
    "VerifierUnavailable",
    "principal_of",
]
