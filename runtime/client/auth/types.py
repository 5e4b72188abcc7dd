"""What the client side of MCP authorization keeps, reads and is bounded by.

* :class:`Tokens` and :class:`ClientInfo` are what a :class:`TokenStore` keeps: the tokens
  for one MCP server (keyed by its URL) and the client registration at one authorization
  server (keyed by its issuer, so credentials never travel from one AS to another);
  :class:`MemoryTokenStore` keeps them in this process, bounded.
* The documents servers send (protected resource metadata, RFC 9728; authorization server
  metadata, RFC 8414 / OpenID Connect discovery; token and registration answers) decode
  into the Structs below: a field of the wrong JSON type is a clear error naming its path.
* :class:`AuthSettings` holds every bound the flows put on what a server or an
  authorization server can make the client wait for or hold.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Protocol, TypeVar

import httpx
import msgspec
from ...core.errors import McpgenError

V = TypeVar("V")


class AuthorizationError(McpgenError, httpx.HTTPError):
    """The client could not get (or was refused) authorization for an MCP server.

    The message says which step failed and why; the request that needed the token fails
    with it, and the client stays usable (a later request starts the flow again)."""

    def __init__(self, message: str) -> None:
        super().__init__(f"authorization failed: {message}")
        self.reason = message


class AuthSettings(msgspec.Struct, frozen=True, kw_only=True):
    """Bounds of the authorization flows (``OAuth(settings=AuthSettings(...))``)."""

    #: Seconds each request to a metadata document, an authorization server's token or
    #: registration endpoint (and the headless authorization step) may take.
    timeout: float = 30.0
    #: Largest answer read from any of those, in bytes; a larger one is refused.
    max_response_bytes: int = 256 * 1024
    #: Same-origin redirects followed when fetching a metadata document (one to another
    #: origin is refused, never followed).
    max_redirects: int = 3
    #: Re-authorizations in a row for ``403 insufficient_scope`` (step-up) before the
    #: request fails: a server that keeps asking for more is not asked again forever.
    max_step_ups: int = 2
    #: Fresh tokens in a row the server may answer with 401 before the request fails.
    max_reauthorizations: int = 2
    #: Seconds before a token's expiry at which it is refreshed ahead of use.
    refresh_skew: float = 30.0
    #: Token sets and client registrations a :class:`MemoryTokenStore` made by the flow
    #: keeps (least recently used dropped first).
    max_stored: int = 256
    #: Plain ``http://`` for authorization servers and metadata beyond loopback hosts
    #: (``localhost``, 127.0.0.0/8, ``::1``): off, as OAuth 2.1 asks.
    allow_http: bool = False
    #: Ask for ``offline_access`` (a refresh token) when the authorization server lists it
    #: in ``scopes_supported`` (SEP-2207).
    offline_access: bool = True
    #: When a server publishes no protected resource metadata and speaks 2025-03-26 (or
    #: has not said its version yet), use that revision's rules: the server's origin is
    #: the authorization server, with ``/authorize``, ``/token`` and ``/register`` when
    #: it publishes no metadata either.
    legacy_discovery: bool = True

    def __post_init__(self) -> None:
        for name in ("timeout", "max_response_bytes", "refresh_skew", "max_stored"):
            if getattr(self, name) <= 0:
                raise ValueError(f"AuthSettings.{name} must be positive")
        for name in ("max_redirects", "max_step_ups", "max_reauthorizations"):
            if getattr(self, name) < 0:
                raise ValueError(f"AuthSettings.{name} must not be negative")


class Tokens(msgspec.Struct, kw_only=True):
    """The tokens the client holds for one MCP server."""

    access_token: str
    token_type: str = "Bearer"
    #: Seconds since the epoch; None when the authorization server did not say.
    expires_at: float | None = None
    refresh_token: str | None = None
    #: The scope granted (or, when the answer did not say, the scope asked for).
    scope: str | None = None
    #: The issuer of the authorization server that granted them (a migration to another
    #: authorization server drops them instead of refreshing them there).
    issuer: str | None = None

    def expired(self, skew: float = 0.0) -> bool:
        return self.expires_at is not None and time.time() + skew >= self.expires_at

    def scopes(self) -> set[str]:
        return set((self.scope or "").split())


class ClientInfo(msgspec.Struct, kw_only=True):
    """The client's identity at one authorization server: pre-registered, from dynamic
    registration (RFC 7591), or a Client ID Metadata Document's URL."""

    client_id: str
    client_secret: str | None = None
    #: ``none``, ``client_secret_basic``, ``client_secret_post``, ``private_key_jwt``,
    #: ``client_secret_jwt``; None: chosen from what the authorization server supports.
    token_endpoint_auth_method: str | None = None
    #: Seconds since the epoch when the secret expires (0 or None: never).
    client_secret_expires_at: int | None = None
    #: The authorization server it belongs to; None (pre-registered only): any.
    issuer: str | None = None

    def usable(self) -> bool:
        expiry = self.client_secret_expires_at
        return not expiry or expiry > time.time()


class TokenStore(Protocol):
    """Where the flows keep tokens (per MCP server URL) and client registrations (per
    authorization server issuer). Implement it over a keychain or a database to keep them
    across runs; the default keeps them in memory."""

    async def load_tokens(self, server: str) -> Tokens | None: ...

    async def save_tokens(self, server: str, tokens: Tokens | None) -> None: ...

    async def load_client(self, issuer: str) -> ClientInfo | None: ...

    async def save_client(self, issuer: str, client: ClientInfo | None) -> None: ...


class MemoryTokenStore:
    """A :class:`TokenStore` in this process, holding at most ``max_entries`` token sets
    and as many registrations, the least recently used dropped first."""

    def __init__(self, max_entries: int = 256) -> None:
        if max_entries <= 0:
            raise ValueError("max_entries must be positive")
        self.max_entries = max_entries
        self._tokens: OrderedDict[str, Tokens] = OrderedDict()
        self._clients: OrderedDict[str, ClientInfo] = OrderedDict()

    async def load_tokens(self, server: str) -> Tokens | None:
        return _get(self._tokens, server)

    async def save_tokens(self, server: str, tokens: Tokens | None) -> None:
        _put(self._tokens, server, tokens, self.max_entries)

    async def load_client(self, issuer: str) -> ClientInfo | None:
        return _get(self._clients, issuer)

    async def save_client(self, issuer: str, client: ClientInfo | None) -> None:
        _put(self._clients, issuer, client, self.max_entries)


def _get(entries: OrderedDict[str, V], key: str) -> V | None:
    value = entries.get(key)
    if value is not None:
        entries.move_to_end(key)
    return value


def _put(entries: OrderedDict[str, V], key: str, value: V | None, bound: int) -> None:
    if value is None:
        entries.pop(key, None)
        return
    entries[key] = value
    entries.move_to_end(key)
    while len(entries) > bound:
        entries.popitem(last=False)


class ClientMetadata(msgspec.Struct, kw_only=True):
    """What the client says about itself when it registers dynamically (RFC 7591); the
    redirect URI, grant types and authentication method are filled in by the flow."""

    client_name: str = "mcpgen"
    client_uri: str | None = None
    logo_uri: str | None = None
    software_id: str | None = None
    software_version: str | None = None
    #: ``native`` or ``web`` (SEP-837); None: ``native`` for a loopback redirect URI.
    application_type: str | None = None


# --- documents from servers -------------------------------------------------------------


class ResourceMetadata(msgspec.Struct):
    """RFC 9728 protected resource metadata (the fields the client uses)."""

    resource: str
    authorization_servers: list[str] = msgspec.field(default_factory=list[str])
    scopes_supported: list[str] | None = None


class ServerMetadata(msgspec.Struct):
    """RFC 8414 authorization server metadata, or OpenID Connect discovery's superset."""

    issuer: str
    authorization_endpoint: str | None = None
    token_endpoint: str | None = None
    registration_endpoint: str | None = None
    scopes_supported: list[str] | None = None
    grant_types_supported: list[str] | None = None
    code_challenge_methods_supported: list[str] | None = None
    token_endpoint_auth_methods_supported: list[str] | None = None
    token_endpoint_auth_signing_alg_values_supported: list[str] | None = None
    authorization_response_iss_parameter_supported: bool | None = None
    client_id_metadata_document_supported: bool | None = None


class TokenAnswer(msgspec.Struct):
    """A token endpoint's successful answer (RFC 6749 §5.1)."""

    access_token: str
    token_type: str
    expires_in: float | None = None
    refresh_token: str | None = None
    scope: str | None = None


class RegistrationAnswer(msgspec.Struct):
    """A registration endpoint's answer (RFC 7591 §3.2.1)."""

    client_id: str
    client_secret: str | None = None
    token_endpoint_auth_method: str | None = None
    client_secret_expires_at: int | None = None


class ErrorAnswer(msgspec.Struct):
    """An OAuth error answer (RFC 6749 §5.2), read leniently for the message."""

    error: str | None = None
    error_description: str | None = None
