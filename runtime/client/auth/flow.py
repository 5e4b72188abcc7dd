"""What both OAuth grants of the client share, as an ``httpx.Auth`` flow.

:class:`AuthFlow` sends each request with the MCP server's bearer token and answers its
challenges: a ``401`` by discovering the authorization server (``discovery``),
refreshing the tokens when it can, else obtaining new ones (the grant's own step,
``auth_client.OAuth``/``ClientCredentials``); a ``403`` for ``insufficient_scope`` by a
step-up that asks for what was asked before plus the challenged scope. A protected resource
metadata naming another authorization server than the tokens' (migration) drops them.

Per server, one authorization at a time (a lock; requests waiting on it retry with its
tokens), and at most ``AuthSettings.max_step_ups`` step-ups and
``max_reauthorizations`` refused fresh tokens in a row before the request fails with
:class:`AuthorizationError`; the flow stays usable.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict
from collections.abc import AsyncGenerator, AsyncIterator, Generator, Sequence

import httpx

from .discovery import Challenge, Discovery, canonical, discover, parse_challenge
from .grants import JwtAssertion, request_tokens, select_scope
from .types import (
    AuthorizationError,
    AuthSettings,
    ClientInfo,
    MemoryTokenStore,
    Tokens,
    TokenStore,
)

_PING = b'{"jsonrpc":"2.0","id":"mcpgen-login","method":"ping"}'


class ServerState:
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


class AuthFlow(httpx.Auth):
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
        self._servers: OrderedDict[str, ServerState] = OrderedDict()

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
            # httpx reads the challenge's body before sending the retry: bounded.
            response.stream = _Bounded(response.stream, self.settings.max_response_bytes)
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

    async def token_for(
        self, url: str, refused: tuple[int, Sequence[str]] | None = None
    ) -> str | None:
        """The access token to present to the MCP server at ``url`` (``http``/``https``) on
        a connection httpx does not carry, a WebSocket's handshake: the one held (refreshed
        when it expired), or, given ``refused`` (the status and ``WWW-Authenticate`` values
        of a refused handshake), the one this flow gets in answer to that challenge. None:
        no token held and no challenge to answer."""
        server = self._server(httpx.URL(url))
        tokens = await self._current(server)
        if refused is not None:
            status, values = refused
            challenge = parse_challenge(status, list(values))
            if status == 401 or challenge.error == "insufficient_scope":
                tokens = await self._answer(server, challenge, tokens, None)
        return tokens.access_token if tokens is not None else None

    # --- per server ---------------------------------------------------------------------

    def _server(self, url: httpx.URL) -> ServerState:
        key = canonical(str(url.copy_with(query=None, fragment=None)))
        server = self._servers.get(key)
        if server is None:
            server = self._servers[key] = ServerState(key)
            while len(self._servers) > self.settings.max_stored:
                self._servers.popitem(last=False)
        self._servers.move_to_end(key)
        return server

    async def _current(self, server: ServerState) -> Tokens | None:
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
        self, server: ServerState, challenge: Challenge, used: Tokens | None, version: str | None
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
        self, server: ServerState, challenge: Challenge, version: str | None
    ) -> Discovery:
        async with self._client() as http:
            server.discovery = await discover(http, server.url, challenge, self.settings, version)
        return server.discovery

    async def _refresh(self, server: ServerState, tokens: Tokens, discovery: Discovery) -> Tokens:
        assert tokens.refresh_token is not None
        form = {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token}
        if discovery.resource:
            form["resource"] = discovery.resource
        client = await self._refresh_client(discovery)
        async with self._client() as http:
            return await request_tokens(
                http, discovery.metadata, client, form, self.settings, self._assertion(), tokens
            )

    async def _keep(self, server: ServerState, tokens: Tokens) -> Tokens:
        server.tokens = tokens
        await self.store.save_tokens(server.url, tokens)
        return tokens

    async def _drop(self, server: ServerState) -> None:
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


class _Bounded(httpx.AsyncByteStream):
    """A challenge answer's body, refused past ``limit`` bytes (a server cannot make the
    flow hold an endless 401 page)."""

    def __init__(self, stream: httpx.SyncByteStream | httpx.AsyncByteStream, limit: int) -> None:
        self.inner = stream
        self.limit = limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        assert isinstance(self.inner, httpx.AsyncByteStream)
        size = 0
        async for chunk in self.inner:
            size += len(chunk)
            if size > self.limit:
                raise AuthorizationError(f"the server's challenge is over {self.limit} bytes")
            yield chunk

    async def aclose(self) -> None:
        if isinstance(self.inner, httpx.AsyncByteStream):
            await self.inner.aclose()
