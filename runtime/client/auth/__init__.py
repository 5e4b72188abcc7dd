"""OAuth 2.1 for MCP clients over Streamable HTTP (``mcpgen[auth]``): the grants' public
names (``oauth``), what both grants share as an ``httpx.Auth`` flow (``flow``), finding
the authorization server and checking what it says (``discovery``), the exchanges with
it (``grants``), the step that needs the user (``interactive``), and what is stored and
bounded (``types``).

May import: what ``client`` may, and ``client``.
"""

from .oauth import (
    AuthFlow,
    AuthorizationError,
    Authorizer,
    AuthSettings,
    BrowserAuthorizer,
    ClientCredentials,
    ClientInfo,
    ClientMetadata,
    HeadlessAuthorizer,
    MemoryTokenStore,
    OAuth,
    TokenStore,
    Tokens,
)

__all__ = [
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
]
