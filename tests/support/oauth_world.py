"""A small OAuth world for the client's authorization tests: an authorization server and
an MCP server protected by it, as plain ASGI apps that exist only in the tests.

:class:`AuthServer` serves RFC 8414 metadata, ``/authorize`` (redirects at once with a
code, as if the user approved), ``/token`` (authorization code with PKCE checked,
refresh token, client credentials with ``client_secret_basic``/``_post`` or an RFC 7523
assertion checked with joserfc) and ``/register`` (RFC 7591); every request is logged.
:class:`Resource` puts a bearer check in front of an mcpgen server's HTTP app: protected
resource metadata at its well-known path, ``401`` with ``WWW-Authenticate`` without a
valid token, ``403 insufficient_scope`` for a method needing more. :class:`World` routes
by host (``as.test``, ``mcp.test``, …), so one ``httpx.ASGITransport`` reaches all of it
in process; ``knobs`` on each make them misbehave the ways hostile servers do.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import itertools
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote_plus, urlencode, urlsplit

import httpx

Asgi = Callable[[Any, Any, Any], Awaitable[None]]
_counter = itertools.count(1)


async def _body(receive: Any) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


async def respond(
    send: Any, status: int, body: Any = b"", headers: dict[str, str] | None = None
) -> None:
    if not isinstance(body, bytes):
        body = json.dumps(body).encode()
        headers = {"content-type": "application/json", **(headers or {})}
    raw = [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


def _s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


@dataclass
class Grant:
    client_id: str
    scope: str
    resource: str | None
    issuer: str
    expires_at: float


@dataclass
class AuthServer:
    """The test authorization server at ``issuer`` (``https://as.test`` by default)."""

    issuer: str = "https://as.test"
    #: Metadata served at this path (RFC 8414's by default).
    metadata_path: str = "/.well-known/oauth-authorization-server"
    metadata_issuer: str | None = None
    pkce: bool = True
    iss: str = "correct"  # correct, wrong, omit, normalized
    iss_supported: bool | None = True
    scopes_supported: list[str] | None = None
    auth_methods: list[str] = field(default_factory=lambda: ["none"])
    #: The method a registration answer names (None: none named).
    registered_method: str | None = None
    registration: bool = True
    cimd: bool = False
    expires_in: int = 3600
    refresh_tokens: bool = True
    #: Pre-registered clients: client_id → secret (None: public).
    clients: dict[str, str | None] = field(default_factory=dict)
    #: A public key (joserfc) that verifies client assertions, by client id.
    assertion_keys: dict[str, Any] = field(default_factory=dict)
    #: path → (status, body bytes, headers): answered instead of the real thing.
    override: dict[str, tuple[int, bytes, dict[str, str]]] = field(default_factory=dict)
    #: Seconds every answer waits before it is sent.
    delay: float = 0.0
    log: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    grants: dict[str, Grant] = field(default_factory=dict)
    codes: dict[str, dict[str, str]] = field(default_factory=dict)
    refresh: dict[str, Grant] = field(default_factory=dict)

    @property
    def host(self) -> str:
        return urlsplit(self.issuer).netloc

    @property
    def prefix(self) -> str:
        return urlsplit(self.issuer).path.rstrip("/")

    def seen(self, kind: str) -> list[dict[str, Any]]:
        return [entry for name, entry in self.log if name == kind]

    def metadata(self) -> dict[str, Any]:
        base = f"{urlsplit(self.issuer).scheme}://{self.host}{self.prefix}"
        doc: dict[str, Any] = {
            "issuer": self.metadata_issuer or self.issuer,
            "authorization_endpoint": f"{base}/authorize",
            "token_endpoint": f"{base}/token",
            "response_types_supported": ["code"],
            "token_endpoint_auth_methods_supported": self.auth_methods,
        }
        if self.registration:
            doc["registration_endpoint"] = f"{base}/register"
        if self.pkce:
            doc["code_challenge_methods_supported"] = ["S256"]
        if self.iss_supported is not None:
            doc["authorization_response_iss_parameter_supported"] = self.iss_supported
        if self.scopes_supported is not None:
            doc["scopes_supported"] = self.scopes_supported
        if self.cimd:
            doc["client_id_metadata_document_supported"] = True
        return doc

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        path = scope["path"]
        query = dict(parse_qsl(scope.get("query_string", b"").decode()))
        body = await _body(receive)
        headers = {k.decode(): v.decode() for k, v in scope["headers"]}
        if self.delay:
            await asyncio.sleep(self.delay)
        if path in self.override:
            status, raw, extra = self.override[path]
            return await respond(send, status, raw, extra)
        if path == self.metadata_path and scope["method"] == "GET":
            self.log.append(("metadata", {"path": path}))
            return await respond(send, 200, self.metadata())
        if path == f"{self.prefix}/authorize":
            return await self._authorize(send, query)
        if path == f"{self.prefix}/token" and scope["method"] == "POST":
            form = dict(parse_qsl(body.decode()))
            return await self._token(send, form, headers.get("authorization"))
        if path == f"{self.prefix}/register" and self.registration:
            return await self._register(send, json.loads(body))
        await respond(send, 404, {"error": "not_found"})

    async def _authorize(self, send: Any, query: dict[str, str]) -> None:
        self.log.append(("authorize", query))
        code = f"code-{next(_counter)}"
        self.codes[code] = query
        params = {"code": code, "state": query.get("state", "")}
        issuer = self.metadata_issuer or self.issuer
        extra = {"correct": issuer, "wrong": "https://evil.test", "normalized": issuer + "/"}
        if self.iss in extra:
            params["iss"] = extra[self.iss]
        target = f"{query['redirect_uri']}?{urlencode(params)}"
        await respond(send, 302, b"", {"location": target})

    def _client_of(self, form: dict[str, str], authorization: str | None) -> str | None:
        """The authenticated client id, or None when authentication fails."""
        if authorization and authorization.startswith("Basic "):
            pair = base64.b64decode(authorization[6:]).decode()
            client_id, _, secret = (unquote_plus(part) for part in pair.partition(":"))
            return client_id if self._secret_ok(client_id, secret) else None
        client_id = form.get("client_id", "")
        if "client_assertion" in form:
            return client_id if self._assertion_ok(client_id, form["client_assertion"]) else None
        if "client_secret" in form:
            return client_id if self._secret_ok(client_id, form["client_secret"]) else None
        return client_id if client_id in self.clients and self.clients[client_id] is None else None

    def _secret_ok(self, client_id: str, secret: str) -> bool:
        return client_id in self.clients and self.clients[client_id] == secret

    def _assertion_ok(self, client_id: str, assertion: str) -> bool:
        from joserfc import jwt
        from joserfc.errors import JoseError

        key = self.assertion_keys.get(client_id)
        if key is None:
            return False
        try:
            token = jwt.decode(assertion, key, algorithms=["ES256", "RS256", "Ed25519", "HS256"])
        except (JoseError, ValueError):
            return False
        claims = token.claims
        return (
            claims.get("iss") == client_id
            and claims.get("sub") == client_id
            and claims.get("aud") == self.issuer
            and claims.get("exp", 0) > time.time()
        )

    async def _token(self, send: Any, form: dict[str, str], authorization: str | None) -> None:
        self.log.append(("token", {**form, "authorization": authorization}))
        client_id = self._client_of(form, authorization)
        if client_id is None and not form.get("client_id", "").startswith("https://"):
            return await respond(send, 401, {"error": "invalid_client"})
        client_id = client_id or form["client_id"]  # a CIMD client: public
        grant_type = form.get("grant_type")
        if grant_type == "authorization_code":
            request = self.codes.pop(form.get("code", ""), None)
            if request is None or _s256(form.get("code_verifier", "")) != request.get(
                "code_challenge"
            ):
                return await respond(send, 400, {"error": "invalid_grant"})
            scope, resource = request.get("scope", ""), request.get("resource")
        elif grant_type == "refresh_token":
            grant = self.refresh.pop(form.get("refresh_token", ""), None)
            if grant is None:
                return await respond(send, 400, {"error": "invalid_grant"})
            scope, resource = grant.scope, form.get("resource")
        elif grant_type == "client_credentials":
            scope, resource = form.get("scope", ""), form.get("resource")
        else:
            return await respond(send, 400, {"error": "unsupported_grant_type"})
        token = f"at-{next(_counter)}"
        grant = Grant(client_id, scope, resource, self.issuer, time.time() + self.expires_in)
        self.grants[token] = grant
        answer: dict[str, Any] = {
            "access_token": token,
            "token_type": "Bearer",
            "expires_in": self.expires_in,
        }
        if scope:
            answer["scope"] = scope
        if self.refresh_tokens and grant_type != "client_credentials":
            refresh = f"rt-{next(_counter)}"
            self.refresh[refresh] = grant
            answer["refresh_token"] = refresh
        await respond(send, 200, answer)

    async def _register(self, send: Any, body: dict[str, Any]) -> None:
        self.log.append(("register", body))
        client_id = f"client-{next(_counter)}"
        method = self.registered_method or body.get("token_endpoint_auth_method") or "none"
        secret = None if method == "none" else f"secret-{next(_counter)}"
        self.clients[client_id] = secret
        answer: dict[str, Any] = {"client_id": client_id, **body}
        if secret:
            answer["client_secret"] = secret
        if self.registered_method:
            answer["token_endpoint_auth_method"] = self.registered_method
        await respond(send, 201, answer)


@dataclass
class Resource:
    """An MCP server's HTTP app behind a bearer check, at ``url``."""

    app: Asgi
    servers: list[AuthServer]
    url: str = "https://mcp.test/mcp"
    prm_path: str | None = "/.well-known/oauth-protected-resource/mcp"
    prm_resource: str | None = None
    prm_scopes: list[str] | None = None
    #: The scope named in a 401's challenge (None: none named).
    challenge_scope: str | None = None
    resource_metadata_in_challenge: bool = True
    #: Method → scopes it needs beyond a valid token (403 insufficient_scope otherwise).
    needs: dict[str, set[str]] = field(default_factory=dict)
    #: Answer 401 to every token (a server that never accepts one).
    reject_all: bool = False
    #: Answer 403 to every token whatever its scope.
    deny_all: bool = False
    override: dict[str, tuple[int, bytes, dict[str, str]]] = field(default_factory=dict)
    #: Tokens presented and accepted, in order.
    accepted: list[str] = field(default_factory=list)

    @property
    def host(self) -> str:
        return urlsplit(self.url).netloc

    def _challenge(self, error: str | None = None, scope: str | None = None) -> str:
        params = []
        if error:
            params.append(f'error="{error}"')
        if scope:
            params.append(f'scope="{scope}"')
        if self.prm_path and self.resource_metadata_in_challenge:
            scheme = urlsplit(self.url).scheme
            params.append(f'resource_metadata="{scheme}://{self.host}{self.prm_path}"')
        return "Bearer " + ", ".join(params) if params else "Bearer"

    def _grant(self, token: str) -> Grant | None:
        for server in self.servers:
            grant = server.grants.get(token)
            if grant is not None and grant.issuer == self.servers[0].issuer:
                return grant if grant.expires_at > time.time() else None
        return None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "websocket":
            await self._websocket(scope, receive, send)
            return
        path = scope["path"]
        if path in self.override:
            status, raw, extra = self.override[path]
            return await respond(send, status, raw, extra)
        if path == self.prm_path:
            doc: dict[str, Any] = {
                "resource": self.prm_resource or self.url,
                "authorization_servers": [self.servers[0].issuer],
            }
            if self.prm_scopes is not None:
                doc["scopes_supported"] = self.prm_scopes
            return await respond(send, 200, doc)
        if path != urlsplit(self.url).path:
            return await respond(send, 404, {"error": "not_found"})
        body = await _body(receive)
        headers = {k.decode(): v.decode() for k, v in scope["headers"]}
        auth = headers.get("authorization", "")
        grant = self._grant(auth[7:]) if auth.startswith("Bearer ") else None
        if grant is None or self.reject_all:
            challenge = self._challenge("invalid_token" if auth else None, self.challenge_scope)
            return await respond(
                send, 401, {"error": "invalid_token"}, {"www-authenticate": challenge}
            )
        method = _method(body)
        wanted = self.needs.get(method, set())
        if self.deny_all or not wanted <= set(grant.scope.split()):
            wanted_text = " ".join(sorted(wanted)) or "mcp:admin"
            challenge = self._challenge("insufficient_scope", wanted_text)
            return await respond(
                send, 403, {"error": "insufficient_scope"}, {"www-authenticate": challenge}
            )
        self.accepted.append(auth[7:])
        await self.app(scope, _replay(body), send)

    async def _websocket(self, scope: Any, receive: Any, send: Any) -> None:
        """A WebSocket handshake behind the same bearer check: refused with the 401
        challenge (the ASGI denial response), or handed to the app."""
        headers = {k.decode(): v.decode() for k, v in scope["headers"]}
        auth = headers.get("authorization", "")
        grant = self._grant(auth[7:]) if auth.startswith("Bearer ") else None
        if scope["path"] != urlsplit(self.url).path or grant is None or self.reject_all:
            challenge = self._challenge("invalid_token" if auth else None, self.challenge_scope)
            start = {"type": "websocket.http.response.start", "status": 401}
            start["headers"] = [(b"www-authenticate", challenge.encode())]
            await send(start)
            await send({"type": "websocket.http.response.body", "body": b"unauthorized"})
            return
        self.accepted.append(auth[7:])
        await self.app(scope, receive, send)


def _method(body: bytes) -> str:
    try:
        message = json.loads(body)
    except ValueError:
        return ""
    return message.get("method", "") if isinstance(message, dict) else ""


def _replay(body: bytes) -> Callable[[], Awaitable[dict[str, Any]]]:
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()  # the client stays until the answer ends
        return {"type": "http.disconnect"}

    return receive


@dataclass
class World:
    """Every app of a test, by host."""

    apps: dict[str, Asgi]

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            return
        host = dict(scope["headers"]).get(b"host", b"").decode()
        app = self.apps.get(host)
        if app is None:
            await respond(send, 502, {"error": f"no host {host}"})
            return
        await app(scope, receive, send)

    def http(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.ASGITransport(app=self))


def mcp_app(*hosts: str) -> Asgi:
    """An mcpgen server with two tools (``read``, ``write``) over HTTP (and WebSocket),
    accepting ``hosts``."""
    from mcpgen.generated.v2026_07_28 import server as stubs
    from mcpgen.runtime import App

    app = App("protected", binding=stubs)

    @app.tool
    def read() -> str:
        """Read something."""
        return "read ok"

    @app.tool
    def write(text: str) -> str:
        """Write something."""
        return f"wrote {text}"

    return app.http_app(allowed_hosts=list(hosts), websocket_path="/mcp")


def world(server: AuthServer | None = None, **resource: Any) -> tuple[World, AuthServer, Resource]:
    """The usual world: one authorization server, one protected mcpgen server."""
    server = server or AuthServer()
    protected = Resource(mcp_app("mcp.test"), [server], **resource)
    return World({server.host: server, protected.host: protected}), server, protected


@contextlib.asynccontextmanager
async def connected(
    place: World, auth: httpx.Auth, url: str = "https://mcp.test/mcp", mode: str = "modern"
) -> AsyncIterator[Any]:
    """A typed 2026-07-28 client of the server at ``url`` in ``place``, with ``auth``."""
    from mcpgen.generated.v2026_07_28 import client as c
    from mcpgen.runtime.client import CLIENT_LIMITS, ClientSession
    from mcpgen.runtime.client.http import HttpClientTransport

    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=place), auth=auth)
    transport = HttpClientTransport(url, client=http)
    session = ClientSession(
        c.Client.__binding__, limits=CLIENT_LIMITS.replace(request_timeout=10.0)
    )
    try:
        await session.connect(transport, mode=mode, timeout=10.0)  # type: ignore[arg-type]
        yield c.Client(session)
    finally:
        await session.close()
        await http.aclose()
