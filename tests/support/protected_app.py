"""A protected app (``peers.auth_app``) whose verifier reaches the test-only authorization
server (``support.auth_server``) in process through an ``httpx`` ASGI transport, driven
with ``support.asgi_driver``: no socket, every wait bounded; and what a refusal must look
like (``assert_refused``: a status, a JSON-RPC error body, a ``WWW-Authenticate``
challenge, no data at all)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

import httpx

from mcpgen.runtime.http.auth import IntrospectionVerifier, JwtVerifier

from peers.auth_app import BASE_SCOPE, ISSUER, RESOURCE, make_app
from support.asgi_driver import Reply, call, request
from support.auth_server import AuthServer

MODERN = "2026-07-28"


META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}


METADATA_URL = "http://127.0.0.1:3001/.well-known/oauth-protected-resource/mcp"


def run(coro: Awaitable[Any]) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 20))  # type: ignore[arg-type]


class Setup:
    """An authorization server and a protected app whose verifier reaches it in process."""

    def __init__(self, verifier: str = "jwt", **options: Any) -> None:
        self.az = AuthServer(ISSUER, RESOURCE)
        transport = httpx.ASGITransport(app=self.az)  # type: ignore[arg-type]
        self.http = httpx.AsyncClient(transport=transport, base_url=ISSUER)
        if verifier == "jwt":
            options.setdefault("jwks_uri", f"{ISSUER}/jwks")
            self.verifier: Any = JwtVerifier(
                issuer=ISSUER, audience=RESOURCE, http=self.http, **options
            )
        else:
            self.verifier = IntrospectionVerifier(
                audience=RESOURCE, issuer=ISSUER, http=self.http, **options
            )
        self.app = make_app(self.verifier).http_app()

    def token(self, scope: str = BASE_SCOPE, **claims: Any) -> str:
        return self.az.mint(scope, **claims)

    async def tool(
        self, name: str, token: str | None, arguments: dict[str, Any] | None = None, **h: str
    ) -> Reply:
        """A stateless 2026-07-28 ``tools/call`` (headers-first lane)."""
        body = request(1, "tools/call", {"name": name, "arguments": arguments or {}, "_meta": META})
        headers = {"mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": name}
        if token is not None:
            headers["authorization"] = f"Bearer {token}"
        return await call(self.app, body=body, headers={**headers, **h})

    async def good(self) -> None:
        """A good request is served."""
        reply = await self.tool("echo", self.token(), {"text": "hi"})
        assert reply.status == 200, reply
        assert reply.json()["result"]["content"][0]["text"] == "echo: hi"


def challenge(reply: Reply) -> dict[str, str]:
    """The auth-params of the reply's ``WWW-Authenticate: Bearer`` challenge."""
    header = reply.headers["www-authenticate"]
    assert header.startswith("Bearer "), header
    params: dict[str, str] = {}
    for part in header[len("Bearer ") :].split('", '):
        key, _, value = part.partition("=")
        params[key.strip()] = value.strip().strip('"')
    return params


def assert_refused(reply: Reply, status: int, error: str | None) -> dict[str, str]:
    """Refused with ``status``, a JSON-RPC error body and no data at all."""
    assert reply.status == status, reply
    body = reply.json()
    assert set(body) == {"jsonrpc", "id", "error"}, body
    assert "result" not in reply.body.decode() and "echo:" not in reply.body.decode()
    params = challenge(reply)
    assert params["resource_metadata"] == METADATA_URL
    assert params.get("error") == error, params
    return params
