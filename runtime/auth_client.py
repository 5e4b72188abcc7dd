"""OAuth 2.1 for MCP clients over Streamable HTTP (``pip install 'mcpgen[auth]'``).

:class:`OAuth` (authorization code with PKCE, for apps acting for a user) and
:class:`ClientCredentials` (for agents with no user present) are ``httpx.Auth`` flows:
``http_client(Client, url, auth=OAuth(...))`` sends every request with the server's
bearer token, and answers the server's challenges by itself:

* ``401``: discovers the authorization server (``auth_client_discovery``), refreshes the
  tokens when it can, otherwise obtains new ones, and sends the request again;
* ``403`` with ``error="insufficient_scope"`` (step-up): asks again for what was asked
  before plus the challenged scope, at most ``AuthSettings.max_step_ups`` times in a row;
* a protected resource metadata naming a new authorization server (migration): drops the
  old tokens and registers anew there (registrations are kept per issuer).

Concurrent requests share one authorization per server (a lock; those waiting retry with
its tokens). A failure raises :class:`AuthorizationError`, which fails the request that
needed the token with a message saying why; the client stays usable.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections import OrderedDict
from collections.abc import AsyncGenerator, Generator
from urllib.parse import urlsplit

import httpx

from .auth_client_discovery import Challenge, Discovery, canonical, check_url, discover
from .auth_client_discovery import parse_challenge
from .auth_client_grants import (
    InvalidClient,
    JwtAssertion,
    authorization_code,
    authorization_url,
    pkce_pair,
    register,
    request_tokens,
    require_pkce,
    select_scope,
)
from .auth_client_interactive import Authorizer, BrowserAuthorizer, HeadlessAuthorizer
from .auth_client_types import (
    AuthorizationError,
    AuthSettings,
    ClientInfo,
    ClientMetadata,
    MemoryTokenStore,
    Tokens,
    TokenStore,
)

__all__ = [
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

_PING = b'{"jsonrpc":"2.0","id":"mcpgen-login","method":"ping"}'


class _Server:
    """What the flow knows of one MCP server."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.lock = asyncio.Lock()
        self.loaded = False
        self.tokens: Tokens | None = None
        self.discovery: Discovery | None = None
        #: The scope last asked for (a step-up asks for it again, plus the new scope).
        self.scope: str | None = None
        #: Step-ups and refused fresh tokens since the last successful answer.
        self.step_ups = 0
        self.rejected = 0


class _Flow(httpx.Auth):
    """What both grants share: tokens per server, challenges, discovery, refresh."""

    requires_request_body = True

    def __init__(
        self,
        *,
        store: TokenStore | None,
        settings: AuthSettings | None,
        http: httpx.AsyncClient | None,
    ) -> None:
        self.settings = settings or AuthSettings()
        self.store: TokenStore = store or MemoryTokenStore(self.settings.max_stored)
        #: The client for requests to authorization servers (None: a fresh one per flow).
        self.http = http
        self._servers: OrderedDict[str, _Server] = OrderedDict()

    @property
    def login_before_connect(self) -> bool:
        """Whether ``http_client`` should :meth:`login` before it connects (so that no
        request's timeout runs while a person signs in)."""
        return False

    def sync_auth_flow(
        self, request: httpx.Request
    ) -> Generator[httpx.Request, httpx.Response, None]:
        raise RuntimeError("mcpgen's OAuth flows need an httpx.AsyncClient")
        yield request  # pragma: no cover

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        server = self._server(request.url)
        tokens = await self._current(server)
        _attach(request, tokens)
        response = yield request
        while request.method != "DELETE":  # ending a session never starts a sign-in
            challenge = _challenge(response)
            if challenge is None:
                break
            version = request.headers.get("mcp-protocol-version")
            tokens = await self._answer(server, challenge, tokens, version)
            _attach(request, tokens)
            response = yield request
        if response.status_code < 400:
            server.step_ups = server.rejected = 0

    async def login(self, url: str) -> None:
        """Authorize for the MCP server at ``url`` now, if it asks for authorization (a
        ``ping`` it answers with 401), rather than during the connection's first request."""
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        async with self._client() as http:
            async with http.stream("POST", url, content=_PING, headers=headers, auth=self):
                pass

    async def tokens_for(self, url: str) -> Tokens | None:
        """The tokens held for the MCP server at ``url``, if any."""
        return await self._current(self._server(httpx.URL(url)))

    # --- per server ---------------------------------------------------------------------

    def _server(self, url: httpx.URL) -> _Server:
        key = canonical(str(url.copy_with(query=None, fragment=None)))
        server = self._servers.get(key)
        if server is None:
            server = self._servers[key] = _Server(key)
            while len(self._servers) > self.settings.max_stored:
                self._servers.popitem(last=False)
        self._servers.move_to_end(key)
        return server

    async def _current(self, server: _Server) -> Tokens | None:
        if not server.loaded:
            async with server.lock:
                if not server.loaded:
                    server.tokens = await self.store.load_tokens(server.url)
                    server.loaded = True
        tokens = server.tokens
        if (
            tokens is None
            or not tokens.refresh_token
            or not tokens.expired(self.settings.refresh_skew)
        ):
            return tokens
        async with server.lock:
            if server.tokens is tokens:  # nobody refreshed them meanwhile
                try:
                    discovery = server.discovery or await self._discover(
                        server, Challenge(401), None
                    )
                    await self._keep(server, await self._refresh(server, tokens, discovery))
                except AuthorizationError:
                    await self._drop(server)  # the next 401 starts afresh
            return server.tokens

    async def _answer(
        self, server: _Server, challenge: Challenge, used: Tokens | None, version: str | None
    ) -> Tokens:
        async with server.lock:
            current = server.tokens
            wanted = set((challenge.scope or "").split())
            if current is not None and current is not used:
                if challenge.status == 401 or wanted <= current.scopes():
                    return current  # another request got these meanwhile
            limits = self.settings
            if challenge.status == 403:
                server.step_ups += 1
                if server.step_ups > limits.max_step_ups:
                    raise AuthorizationError(
                        f"{server.url} still answers 403 insufficient_scope (scope "
                        f"{challenge.scope!r}) after {limits.max_step_ups} step-up(s)"
                    )
            elif used is not None:
                server.rejected += 1
                if server.rejected > limits.max_reauthorizations:
                    raise AuthorizationError(
                        f"{server.url} still answers 401 after {limits.max_reauthorizations} "
                        "new token(s)"
                    )
            discovery = await self._discover(server, challenge, version)
            if current is not None and current.issuer != discovery.issuer:
                current = None  # another authorization server now: its tokens are not ours
                await self._drop(server)
            if challenge.status == 401 and current is not None and current.refresh_token:
                try:
                    return await self._keep(server, await self._refresh(server, current, discovery))
                except AuthorizationError:
                    pass  # refused or unreachable: authorize afresh
            previous = server.scope if challenge.status == 403 else None
            scope = select_scope(
                challenge.scope, discovery.scopes_supported, discovery.metadata, previous, limits
            )
            tokens = await self._acquire(discovery, scope)
            server.scope = scope
            return await self._keep(server, tokens)

    async def _discover(
        self, server: _Server, challenge: Challenge, version: str | None
    ) -> Discovery:
        async with self._client() as http:
            server.discovery = await discover(http, server.url, challenge, self.settings, version)
        return server.discovery

    async def _refresh(self, server: _Server, tokens: Tokens, discovery: Discovery) -> Tokens:
        assert tokens.refresh_token is not None
        form = {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token}
        if discovery.resource:
            form["resource"] = discovery.resource
        client = await self._refresh_client(discovery)
        async with self._client() as http:
            return await request_tokens(
                http, discovery.metadata, client, form, self.settings, self._assertion(), tokens
            )

    async def _keep(self, server: _Server, tokens: Tokens) -> Tokens:
        server.tokens = tokens
        await self.store.save_tokens(server.url, tokens)
        return tokens

    async def _drop(self, server: _Server) -> None:
        server.tokens = None
        await self.store.save_tokens(server.url, None)

    @contextlib.asynccontextmanager
    async def _client(self) -> AsyncGenerator[httpx.AsyncClient, None]:
        if self.http is not None:
            yield self.http
        else:
            async with httpx.AsyncClient() as http:
                yield http

    # --- what each grant does -----------------------------------------------------------

    async def _acquire(self, discovery: Discovery, scope: str | None) -> Tokens:
        raise NotImplementedError

    async def _refresh_client(self, discovery: Discovery) -> ClientInfo:
        raise NotImplementedError

    def _assertion(self) -> JwtAssertion | None:
        return None


class OAuth(_Flow):
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
            self._authorizer = BrowserAuthorizer()
        return self._authorizer

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


class ClientCredentials(_Flow):
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


def _attach(request: httpx.Request, tokens: Tokens | None) -> None:
    if tokens is not None:
        request.headers["Authorization"] = f"Bearer {tokens.access_token}"


def _challenge(response: httpx.Response) -> Challenge | None:
    """The challenge to answer: any 401, or a 403 for ``insufficient_scope``."""
    if response.status_code not in (401, 403):
        return None
    challenge = parse_challenge(response.status_code, response.headers.get_list("www-authenticate"))
    if response.status_code == 403 and challenge.error != "insufficient_scope":
        return None
    return challenge
