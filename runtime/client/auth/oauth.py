"""OAuth 2.1 for MCP clients over Streamable HTTP (``pip install 'mcpgen[auth]'``).

:class:`OAuth` (authorization code with PKCE, for apps acting for a user) and
:class:`ClientCredentials` (for agents with no user present) are ``httpx.Auth`` flows:
``http_client(Client, url, auth=OAuth(...))`` sends every request with the server's
bearer token, and answers the server's challenges by itself:

* ``401``: discovers the authorization server (``discovery``), refreshes the
  tokens when it can, otherwise obtains new ones, and sends the request again;
* ``403`` with ``error="insufficient_scope"`` (step-up): asks again for what was asked
  before plus the challenged scope, at most ``AuthSettings.max_step_ups`` times in a row;
* a protected resource metadata naming a new authorization server (migration): drops the
  old tokens and registers anew there (registrations are kept per issuer).

Concurrent requests share one authorization per server (a lock; those waiting retry with
its tokens). A failure raises :class:`AuthorizationError`, which fails the request that
needed the token with a message saying why; the client stays usable. What both grants
share is ``auth_client_flow.AuthFlow``; this module adds each grant's own step and names
the public API.
"""

from __future__ import annotations

import secrets
from urllib.parse import urlsplit

import httpx

from .discovery import Discovery, check_url
from .flow import AuthFlow
from .grants import (
    InvalidClient,
    JwtAssertion,
    authorization_code,
    authorization_url,
    pkce_pair,
    register,
    request_tokens,
    require_pkce,
)
from .interactive import Authorizer, BrowserAuthorizer, HeadlessAuthorizer
from .types import (
    AuthorizationError,
    AuthSettings,
    ClientInfo,
    ClientMetadata,
    MemoryTokenStore,
    Tokens,
    TokenStore,
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


class OAuth(AuthFlow):
    """The authorization code flow with PKCE, for a client acting for a user.

    The client's identity at an authorization server is, in this order: ``client_id``
    (and ``client_secret``) given here, pre-registered, for any authorization server or
    the one ``client_issuer`` names; one stored earlier for that issuer; the
    ``client_metadata_url`` (a Client ID Metadata Document, an https URL) when the server
    supports them; else dynamic client registration with ``client_metadata``.
    ``authorizer`` is the interactive step (default: the browser and a loopback callback).
    """

    def __init__(
        self,
        *,
        authorizer: Authorizer | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        client_auth_method: str | None = None,
        client_issuer: str | None = None,
        client_metadata_url: str | None = None,
        client_metadata: ClientMetadata | None = None,
        store: TokenStore | None = None,
        settings: AuthSettings | None = None,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        super().__init__(store=store, settings=settings, http=http)
        self._authorizer = authorizer
        self._made: BrowserAuthorizer | None = None
        self.client = (
            ClientInfo(
                client_id=client_id,
                client_secret=client_secret,
                token_endpoint_auth_method=client_auth_method,
                issuer=client_issuer,
            )
            if client_id
            else None
        )
        if client_metadata_url is not None:
            parts = urlsplit(client_metadata_url)
            if parts.scheme != "https" or parts.path in ("", "/") or parts.fragment:
                raise ValueError("client_metadata_url must be an https URL with a path")
        self.client_metadata_url = client_metadata_url
        self.client_metadata = client_metadata or ClientMetadata()

    @property
    def authorizer(self) -> Authorizer:
        if self._authorizer is None:
            self._authorizer = self._made = BrowserAuthorizer()
        return self._authorizer

    def close(self) -> None:
        """Release the loopback port of the browser authorizer made by default, if any."""
        if self._made is not None:
            self._made.close()

    @property
    def login_before_connect(self) -> bool:
        return self.authorizer.interactive

    async def _acquire(self, discovery: Discovery, scope: str | None) -> Tokens:
        metadata = discovery.metadata
        require_pkce(metadata)
        redirect_uri = self.authorizer.redirect_uri
        client, registered = await self._identity(discovery, redirect_uri)
        verifier, challenge = pkce_pair()
        state = secrets.token_urlsafe(24)
        url = authorization_url(
            metadata, client.client_id, redirect_uri, state, challenge, scope, discovery.resource
        )
        check_url(url, self.settings, "authorization endpoint")
        params = await self.authorizer.authorize(url, state)
        code = authorization_code(params, state, metadata)
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "code_verifier": verifier,
        }
        if discovery.resource:
            form["resource"] = discovery.resource
        try:
            async with self._client() as http:
                return await request_tokens(
                    http, metadata, client, form, self.settings, scope=scope
                )
        except InvalidClient:
            if registered:  # the server forgot the registration: register again next time
                await self.store.save_client(discovery.issuer, None)
            raise

    async def _identity(self, discovery: Discovery, redirect_uri: str) -> tuple[ClientInfo, bool]:
        """The client to present at ``discovery``'s authorization server, and whether it
        was registered dynamically."""
        issuer = discovery.issuer
        if self.client is not None and self.client.issuer in (None, issuer):
            return self.client, False
        stored = await self.store.load_client(issuer)
        if stored is not None and stored.issuer == issuer and stored.usable():
            return stored, True
        if self.client_metadata_url and discovery.metadata.client_id_metadata_document_supported:
            return (
                ClientInfo(
                    client_id=self.client_metadata_url,
                    token_endpoint_auth_method="none",
                    issuer=issuer,
                ),
                False,
            )
        async with self._client() as http:
            client = await register(
                http,
                discovery.metadata,
                self.client_metadata,
                redirect_uri,
                ["authorization_code", "refresh_token"],
                self.settings,
            )
        await self.store.save_client(issuer, client)
        return client, True

    async def _refresh_client(self, discovery: Discovery) -> ClientInfo:
        return (await self._identity(discovery, self.authorizer.redirect_uri))[0]


class ClientCredentials(AuthFlow):
    """The client credentials grant, for an agent acting for itself (no user, no browser):
    ``client_secret`` (``client_secret_basic``, or ``client_secret_post``/``client_secret_jwt``
    with ``method``), or ``private_key`` (a PEM or a joserfc key) signing JWT assertions
    with ``algorithm`` (``private_key_jwt``). ``scope`` overrides the scope selection."""

    def __init__(
        self,
        client_id: str,
        *,
        client_secret: str | None = None,
        private_key: object = None,
        algorithm: str = "ES256",
        method: str | None = None,
        scope: str | None = None,
        store: TokenStore | None = None,
        settings: AuthSettings | None = None,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        super().__init__(store=store, settings=settings, http=http)
        if client_secret is None and private_key is None:
            raise ValueError("ClientCredentials needs client_secret or private_key")
        if private_key is not None:
            method = method or "private_key_jwt"
            self.assertion: JwtAssertion | None = JwtAssertion(private_key, algorithm)
        else:
            self.assertion = None
        self.client = ClientInfo(
            client_id=client_id, client_secret=client_secret, token_endpoint_auth_method=method
        )
        self.scope = scope

    async def _acquire(self, discovery: Discovery, scope: str | None) -> Tokens:
        scope = self.scope or scope
        form = {"grant_type": "client_credentials"}
        if scope:
            form["scope"] = scope
        if discovery.resource:
            form["resource"] = discovery.resource
        async with self._client() as http:
            return await request_tokens(
                http,
                discovery.metadata,
                self.client,
                form,
                self.settings,
                self.assertion,
                scope=scope,
            )

    async def _refresh_client(self, discovery: Discovery) -> ClientInfo:
        return self.client

    def _assertion(self) -> JwtAssertion | None:
        return self.assertion
